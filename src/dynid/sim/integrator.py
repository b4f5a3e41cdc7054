"""The plant's step, compiled: the linearly implicit step of :mod:`dynid.sim.plant` over packed arrays.

A step of the 6-joint plant is a few hundred floating-point operations; as numpy calls on (n,)
arrays it cost ~130 µs (the price of ~100 calls), compiled it costs ~1 µs. The plant holds its
parameters and its state as two arrays of rows × n (:data:`COEFFICIENT_ROWS`, :data:`WORK_ROWS`)
so that a step is one call with few arguments (numba's dispatch costs ~0.25 µs per argument);
pinocchio's M(q) and c(q, q̇) are computed by the caller and passed in.

The functions are compiled on a machine's first use (~6 s of CPU) and cached beside the sources
(``cache=True``). numba's cache notices changes of the file that holds a function only: after editing
a compiled function they call in another file (:func:`dynid.friction.egms.advance_joint`, the
stiffness in :mod:`dynid.friction.stiffness`), clear ``src/dynid/sim/__pycache__``.
"""

from __future__ import annotations

import numba
import numpy as np

from dynid.friction.egms import STICK_MARGIN, advance_joint
from dynid.friction.stiffness import torque_and_stiffness_scalar

#: Rows of the coefficient array (per joint): drive, thermal and friction parameters of the step.
COEFFICIENT_ROWS = ('damping', 'drive_gain', 'rotor_inertia', 'winding_resistance', 'thermal_capacity',
                    'thermal_resistance', 'ambient', 'sensor_lag', 'coulomb', 'static_excess', 'stribeck_velocity',
                    'stribeck_shape', 'viscous1', 'viscous2', 'viscous3', 'load_coefficient', 'excess_height',
                    'temperature_linear', 'temperature_cubic', 'temperature_offset', 'temperature_min',
                    'temperature_max', 'smoothing', 'has_egms', 'squared_load', 'has_temperature')
(DAMPING, DRIVE_GAIN, ROTOR_INERTIA, WINDING_RESISTANCE, THERMAL_CAPACITY, THERMAL_RESISTANCE, AMBIENT,
 SENSOR_LAG, COULOMB, STATIC_EXCESS, STRIBECK_VELOCITY, STRIBECK_SHAPE, VISCOUS1, VISCOUS2, VISCOUS3,
 LOAD_COEFFICIENT, EXCESS_HEIGHT, TEMPERATURE_LINEAR, TEMPERATURE_CUBIC, TEMPERATURE_OFFSET, TEMPERATURE_MIN,
 TEMPERATURE_MAX, SMOOTHING, HAS_EGMS, SQUARED_LOAD, HAS_TEMPERATURE) = range(len(COEFFICIENT_ROWS))

#: Rows of the work array (per joint). The first :data:`RECORDED` rows are what a twin sample records,
#: in the order of the twin's truth fields (``current`` the command applied over the step that ended
#: at the sample, ``command`` the one computed there); the rest is what the next step needs.
WORK_ROWS = ('q', 'dq', 'theta', 'dtheta', 'joint_torque', 'friction', 'current', 'command', 'temperature',
             'rotor_acceleration', 'link_acceleration', 'sensed_temperature', 'spring', 'deflection_rate',
             'friction_position_slope', 'friction_velocity_slope', 'friction_temperature', 'egms_input',
             'backlash', 'q_half', 'dq_half')
(Q, DQ, THETA, DTHETA, JOINT_TORQUE, FRICTION, CURRENT, COMMAND, TEMPERATURE, ROTOR_ACCELERATION,
 LINK_ACCELERATION, SENSED_TEMPERATURE, SPRING, DEFLECTION_RATE, FRICTION_POSITION_SLOPE, FRICTION_VELOCITY_SLOPE,
 FRICTION_TEMPERATURE, EGMS_INPUT, BACKLASH, Q_HALF, DQ_HALF) = range(len(WORK_ROWS))
RECORDED = 12

#: β of the linearly implicit step (½: trapezoidal, no numerical damping of a linear spring).
BETA = 0.5


@numba.njit(cache=True)
def _friction(c, j, theta, velocity, joint_torque, temperature, egms_state, egms_laws, backlash_table, work,
              step_egms):
    """(f, ∂f/∂θ, ∂f/∂θ̇) of joint j [N·m, N·m/rad, N·m·s/rad] (thesis ch.6 eqs. (3), (11), (20)).

    ``step_egms``: advance the E-GMS operators to θ (a step; work[EGMS_INPUT] and work[BACKLASH] follow),
    else only their pre-sliding slope at the current deformations (f is then not computed: 0).
    """
    w = abs(velocity)
    direction = np.tanh(velocity / c[SMOOTHING, j])
    decay = np.exp(-((w / c[STRIBECK_VELOCITY, j]) ** c[STRIBECK_SHAPE, j]))
    if c[SQUARED_LOAD, j] != 0.0:
        level = c[COULOMB, j] + c[LOAD_COEFFICIENT, j] * joint_torque**2
    else:
        level = c[COULOMB, j] + c[LOAD_COEFFICIENT, j] * abs(joint_torque)
    fv1, fv2, fv3 = c[VISCOUS1, j], c[VISCOUS2, j], c[VISCOUS3, j]
    remainder = direction * c[STATIC_EXCESS, j] * decay + velocity * (fv1 + w * (fv2 + w * fv3))
    if c[HAS_TEMPERATURE, j] != 0.0:  # sgn(ω)·√|ω|·(Ft1·(T − T0) + Ft2·(T⁻³ − T0⁻³)), T clamped
        t = min(max(temperature, c[TEMPERATURE_MIN, j]), c[TEMPERATURE_MAX, j])
        remainder = remainder + np.copysign(np.sqrt(w), velocity) * (
            c[TEMPERATURE_LINEAR, j] * t + c[TEMPERATURE_CUBIC, j] * t**-3.0 + c[TEMPERATURE_OFFSET, j])
    sech2 = 1.0 - direction**2
    k_velocity = fv1 + w * (2.0 * fv2 + 3.0 * fv3 * w) + c[EXCESS_HEIGHT, j] * decay * sech2
    if c[HAS_EGMS, j] == 0.0:  # smoothed static Coulomb: its slope is a velocity slope
        return level * direction + remainder, 0.0, k_velocity + level * sech2 / c[SMOOTHING, j]
    if step_egms:
        hysteresis, slope, backlash = advance_joint(j, theta, work[EGMS_INPUT, j], egms_state, egms_laws[0],
                                                    egms_laws[1], backlash_table, True)
        work[EGMS_INPUT, j], work[BACKLASH, j] = theta, backlash
        return level * hysteresis + remainder, level * slope, max(k_velocity, 0.0)
    b, sticking = work[BACKLASH, j], 0.0
    for i in range(egms_state.shape[1]):
        if abs(egms_state[j, i]) < b * egms_laws[1, j, i] * STICK_MARGIN:
            sticking += egms_laws[0, j, i]
    return 0.0, level * sticking / b, max(k_velocity, 0.0)


@numba.njit(cache=True)
def joint_terms(c, alpha, egms_state, egms_laws, backlash_table, work, step_egms):
    """τ_j, k(φ), φ̇ and the friction's slopes at the state in ``work`` (rows written in place).

    ``step_egms`` True also writes the friction f (the E-GMS operators see the input θ again: at the
    same θ their deformations do not move), as after a change of the joint parameters; False leaves
    the friction as it is (the start of a step from a state set from outside).
    """
    for j in range(work.shape[1]):
        theta = work[THETA, j]
        spring_torque, spring = torque_and_stiffness_scalar(alpha, j, theta - work[Q, j])
        deflection_rate = work[DTHETA, j] - work[DQ, j]
        tau_j = spring_torque + c[DAMPING, j] * deflection_rate
        friction, k_friction, c_friction = _friction(c, j, theta, work[DTHETA, j], tau_j,
                                                     work[FRICTION_TEMPERATURE, j], egms_state, egms_laws,
                                                     backlash_table, work, step_egms)
        work[JOINT_TORQUE, j], work[SPRING, j], work[DEFLECTION_RATE, j] = tau_j, spring, deflection_rate
        work[FRICTION_POSITION_SLOPE, j], work[FRICTION_VELOCITY_SLOPE, j] = k_friction, c_friction
        if step_egms:
            work[FRICTION, j] = friction


@numba.njit(cache=True)
def _solve(system, rhs):
    """x of system·x = rhs for a symmetric system given by its upper triangle: Cholesky UᵀU (positive
    definite, the usual case), else Gaussian elimination with partial pivoting."""
    size = rhs.size
    upper = np.zeros((size, size))
    for j in range(size):
        total = system[j, j]
        for k in range(j):
            total -= upper[k, j] * upper[k, j]
        if not total > 0.0:
            return _eliminate(system, rhs)
        pivot = np.sqrt(total)
        upper[j, j] = pivot
        for i in range(j + 1, size):
            total = system[j, i]
            for k in range(j):
                total -= upper[k, j] * upper[k, i]
            upper[j, i] = total / pivot
    x = np.empty(size)
    for i in range(size):  # Uᵀ·y = rhs
        total = rhs[i]
        for k in range(i):
            total -= upper[k, i] * x[k]
        x[i] = total / upper[i, i]
    for i in range(size - 1, -1, -1):  # U·x = y
        total = x[i]
        for k in range(i + 1, size):
            total -= upper[i, k] * x[k]
        x[i] = total / upper[i, i]
    return x


@numba.njit(cache=True)
def _eliminate(system, rhs):
    """x of system·x = rhs, the symmetric matrix of the upper triangle, by Gaussian elimination with
    partial pivoting (NaN where singular)."""
    size = rhs.size
    a = np.empty((size, size + 1))
    for i in range(size):
        for j in range(size):
            a[i, j] = system[i, j] if j >= i else system[j, i]
        a[i, size] = rhs[i]
    for col in range(size):
        best = col
        for row in range(col + 1, size):
            if abs(a[row, col]) > abs(a[best, col]):
                best = row
        for j in range(size + 1):
            a[col, j], a[best, j] = a[best, j], a[col, j]
        for row in range(col + 1, size):
            factor = a[row, col] / a[col, col]
            for j in range(col, size + 1):
                a[row, j] -= factor * a[col, j]
    x = np.empty(size)
    for i in range(size - 1, -1, -1):
        total = a[i, size]
        for k in range(i + 1, size):
            total -= a[i, k] * x[k]
        x[i] = total / a[i, i]
    return x


@numba.njit(cache=True)
def plant_step(mass, bias, c, alpha, egms_state, egms_laws, backlash_table, work, h):
    """One step of h [s] with the current work[COMMAND] [A] held (zero-order hold), in place.

    ``mass`` M and ``bias`` c·q̇ + g at the half step (work[Q_HALF], work[DQ_HALF], pinocchio; upper
    triangle of M read). Linearized torques at t + β·h: τ_β = τ0 + G·(Δw − Δv), G = β·(hβ·k + D), and
    f_β = f + βh·K_f·(θ̇ + Δw) + β·C_f·Δw give one symmetric positive definite system in the link and
    rotor velocity changes:

        (M + h·G)·Δv − h·G·Δw = h·(τ0 − c)
        −h·G·Δv + d·Δw = h·r,   d = B + h·G + h·G_f,  G_f = β²h·K_f + β·C_f,

    with r = K_τ·i − f − βh·K_f·θ̇ − τ0. Afterwards ``work`` holds the new state, τ_j, f, the slopes,
    the accelerations and the next half step; work[CURRENT] the command applied.
    """
    n = work.shape[1]
    beta_h, half_h = BETA * h, 0.5 * h
    system = np.zeros((2 * n, 2 * n))
    rhs = np.empty(2 * n)
    for j in range(n):
        for i in range(j + 1):
            system[i, j] = mass[i, j]
        spring_h = beta_h * work[SPRING, j]                                  # βh·k
        tau0 = work[JOINT_TORQUE, j] + spring_h * work[DEFLECTION_RATE, j]
        hg = beta_h * spring_h + h * BETA * c[DAMPING, j]                    # h·G = hβ·(βh·k) + hβ·D
        friction_h = beta_h * work[FRICTION_POSITION_SLOPE, j]               # βh·K_f
        system[j, j] += hg
        system[n + j, n + j] = c[ROTOR_INERTIA, j] + hg + beta_h * (friction_h + work[FRICTION_VELOCITY_SLOPE, j])
        system[j, n + j] = -hg
        current = work[COMMAND, j]
        work[CURRENT, j] = current
        rhs[j] = h * (tau0 - bias[j])
        rhs[n + j] = h * (c[DRIVE_GAIN, j] * current - work[FRICTION, j] - friction_h * work[DTHETA, j] - tau0)
    change = _solve(system, rhs)                                             # [Δv, Δw]

    for j in range(n):
        dv, dw = change[j], change[n + j]
        q = work[Q, j] + h * (work[DQ, j] + BETA * dv)
        theta = work[THETA, j] + h * (work[DTHETA, j] + BETA * dw)
        dq, dtheta = work[DQ, j] + dv, work[DTHETA, j] + dw
        work[LINK_ACCELERATION, j], work[ROTOR_ACCELERATION, j] = dv / h, dw / h
        work[Q, j], work[DQ, j], work[THETA, j], work[DTHETA, j] = q, dq, theta, dtheta
        temperature = work[TEMPERATURE, j]
        work[FRICTION_TEMPERATURE, j] = temperature
    joint_terms(c, alpha, egms_state, egms_laws, backlash_table, work, True)

    for j in range(n):
        # C_th·Ṫ = R·i² + |f·θ̇| − (T − T_amb)/R_th, explicit: T ← (1 − h/(C_th·R_th))·T + h/C_th·heat + …
        heating = h / c[THERMAL_CAPACITY, j]
        loss = heating / c[THERMAL_RESISTANCE, j]
        temperature, current = work[TEMPERATURE, j], work[CURRENT, j]
        heat = c[WINDING_RESISTANCE, j] * current**2 + abs(work[FRICTION, j] * work[DTHETA, j])
        sensed = work[SENSED_TEMPERATURE, j]
        work[SENSED_TEMPERATURE, j] = sensed + h / c[SENSOR_LAG, j] * (temperature - sensed)
        work[TEMPERATURE, j] = (1.0 - loss) * temperature + heating * heat + loss * c[AMBIENT, j]
        # Rigid-body terms of the next step at its half step q + h/2·q̇, with q̇ advanced by the last
        # acceleration (position Verlet: second order for the conservative gravity forces).
        work[Q_HALF, j] = work[Q, j] + half_h * work[DQ, j]
        work[DQ_HALF, j] = work[DQ, j] + half_h * work[LINK_ACCELERATION, j]

