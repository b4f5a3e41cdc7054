"""flexible_joint: the motor-side reference correction of the flexible-joint feedforward.

With elastic joints the link equation M(q)q̈ + C(q, q̇)q̇ + g(q) = τ_E(φ), φ = θ − q, fixes the
deflection along the desired motion: φ_d = τ_E⁻¹(τ_J,d). The rotor must then follow θ_d = q_d + φ_d,
and the rotor equation B·θ̈ + f + τ_J = τ_m asks for B·θ̈_d = B·q̈_d + B·φ̈_d. The rigid law (thesis
ch.2 eq. (2.63); terms rigid_body, rotor_inertia and friction) supplies B·q̈_d; this term adds

    τ_flex = B·φ̈_d      (linear stiffness K: B·K⁻¹·τ̈_J,d = B·K⁻¹·[M(q)q⁽⁴⁾ + c(q, q̇, q̈, q⁽³⁾)])

the flexible-joint feedforward of Madsen 2020, thesis ch.2 eq. (2.69) (erratum: the printed law adds B·q̈
twice; the derivation from eqs. (2.64)–(2.65) gives the form above), with the nonlinear spring of the
strain-wave gear τ_E(φ) = Σ α_p·φ^(2p−1) (:class:`dynid.friction.stiffness.OddPolynomialStiffness`) inverted for φ_d.
τ [N·m, link side], B [kg·m², link side], φ [rad].

**How φ̈_d is obtained (decision).** A term sees q, q̇, q̈ but not the jerk and snap eq. (2.69) needs,
so φ̈_d is the second difference of φ_d over the samples at the sample period T (rate option):
(φ_k − 2φ_{k−1} + φ_{k−2})/T², the same causal stencil in ``evaluate`` and ``step`` (so ``step`` equals
``evaluate``); it is the central second derivative at sample k−1, one sample late. The first two
samples after a reset give 0.

**Smooth enough (decision).** The correction is the fourth derivative of the motion in disguise: an
acceleration step of Δ between two samples makes φ̈_d jump by about Δ·M/(K·T²) — tens of N·m from a
trapezoidal profile. The trajectory counts as smooth enough at sample k where the snap estimated with
the same stencil, |q̈_k − 2q̈_{k−1} + q̈_{k−2}|/T², stays within ``max_snap`` on every joint (default
2·10⁴ rad/s⁴: a 0.5 rad sinusoid up to 2.2 Hz passes, an acceleration step of 0.05 rad/s² at 1 kHz does
not); elsewhere the correction is 0. Bang-coast-bang and trapezoidal profiles therefore get no correction
at their switching instants (which is where eq. (2.69) is not defined).

**The motor-side reference (position channel).** The same eq. (2.69) sets the rotor reference
θ_d = q_d + φ_d: the static part of the deflection cannot travel through the effort channel (a torque
that would bend the joint by φ_d is held by the position loop as an error), so a controller that
closes its loop on the motor position θ needs φ_d added to its position reference, and a controller
that closes on the link position q must not get it. :meth:`FlexibleJointTerm.reference_correction`
gives (φ_d, φ̇_d, φ̈_d) for a whole sampled trajectory (the trajectory mode's grid): φ_d = τ_E⁻¹(τ_J,d)
at every sample; φ̇_d and φ̈_d are the central first and second differences of φ_d at the sample
period (the trajectory is known ahead, so no lag), 0 where the trajectory is not smooth enough by the
rule below (evaluated on the central stencil q̈_{k+1} − 2q̈_k + q̈_{k−1}) and at the two ends. φ_d itself
is given everywhere: at an acceleration step it steps by M·Δq̈/τ_E' (microradians on the UR5e), which
is what the static deflection does there.

B is the rotor inertia of the drive data, or the identified Ia_j where the result holds it as a base
parameter (option ``rotor_inertia`` overrides); the stiffness has no default (option ``stiffness``:
e.g. the online estimate α̂ of :class:`dynid.estimate.StiffnessEstimator`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dynid.checks import positive
from dynid.control.context import FeedforwardContext
from dynid.control.joint_torque import JointTorqueInput
from dynid.control.plugins import TermPlugin
from dynid.control.term import (
    DEFAULT_RATE_HZ,
    FeedforwardTerm,
    per_joint,
    term_options,
)
from dynid.errors import InputError
from dynid.friction.stiffness import OddPolynomialStiffness
from dynid.identify import IdentificationResult, rotor_inertia
from dynid.model.robot import RobotModel

#: Largest snap [rad/s⁴] of a trajectory "smooth enough" for the correction (module docstring).
DEFAULT_MAX_SNAP = 2e4


def stiffness_of(value, robot: RobotModel) -> OddPolynomialStiffness:
    """τ_E per joint from a number or one per joint (linear K [N·m/rad]), or per-joint coefficient lists
    [α1, α3, ...] ((n, P) or {joint: [α1, α3]}); α1 > 0 and α_p >= 0 (an invertible spring)."""
    if value is None:
        raise InputError('flexible_joint needs the joint stiffness (option stiffness: K [N·m/rad] per joint, '
                         'or [alpha1, alpha3, ...] per joint)')
    names = robot.joint_names
    if isinstance(value, Mapping):
        missing = [name for name in names if name not in value]
        if missing:
            raise InputError(f'flexible_joint: stiffness missing for joints {missing}')
        value = [value[name] for name in names]
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        array = np.full((0,), np.nan)
    if array.ndim < 2:
        array = per_joint(array, names, 'flexible_joint: stiffness')[:, None]
    if array.ndim != 2 or array.shape[0] != robot.n or not np.all(np.isfinite(array)):
        raise InputError(f'flexible_joint: stiffness must be K per joint or ({robot.n}, P) coefficients, got {value!r}')
    if np.any(array[:, 0] <= 0) or np.any(array[:, 1:] < 0):
        raise InputError(f'flexible_joint: stiffness needs alpha1 > 0 and higher coefficients >= 0, '
                         f'got {array.tolist()}')
    return OddPolynomialStiffness(array)


class FlexibleJointTerm(JointTorqueInput, FeedforwardTerm):
    """τ_flex = B·φ̈_d [N·m] (module docstring).

    Args:
        robot, result: the robot and its identification (τ_J,d when the context lacks it).
        inertia: B (n,) [kg·m²]. stiffness: the spring τ_E(φ). rate_hz: sample rate [Hz].
        max_snap: largest |q⁽⁴⁾| [rad/s⁴] of a smooth-enough sample.
    """

    name = 'flexible_joint'

    def __init__(self, robot: RobotModel, result: IdentificationResult | None, inertia,
                 stiffness: OddPolynomialStiffness, rate_hz: float = DEFAULT_RATE_HZ,
                 max_snap: float = DEFAULT_MAX_SNAP) -> None:
        self._use_joint_torque(robot, result)
        self.inertia = np.asarray(inertia, dtype=float)
        self.stiffness = stiffness
        self.rate_hz = positive(rate_hz, 'flexible_joint: rate_hz')
        self.max_snap = positive(max_snap, 'flexible_joint: max_snap [rad/s⁴]')
        self._linear = stiffness.order == 1
        self.reset()

    @classmethod
    def from_result(cls, robot: RobotModel, result: IdentificationResult | None, options=None) -> FlexibleJointTerm:
        """Factory. Options: ``stiffness`` (required), ``rotor_inertia`` [kg·m²], ``max_snap`` [rad/s⁴]
        (default 2e4), ``rate_hz`` (default 1000; the Feedforward passes its own)."""
        o = term_options(cls.name, options, {'stiffness': None, 'rotor_inertia': None, 'max_snap': DEFAULT_MAX_SNAP,
                                             'rate_hz': DEFAULT_RATE_HZ})
        inertia = rotor_inertia(robot, result, regrouped_as_zero=False) if o['rotor_inertia'] is None else \
            per_joint(o['rotor_inertia'], robot.joint_names, 'flexible_joint: rotor_inertia', 0.0)
        return cls(robot, result, inertia, stiffness_of(o['stiffness'], robot), o['rate_hz'], o['max_snap'])

    def deflection(self, torque: np.ndarray) -> np.ndarray:
        """φ = τ_E⁻¹(τ) [rad]."""
        if self._linear:
            return torque / self.stiffness.alpha[:, 0]
        return self.stiffness.deflection(torque)

    def reference_correction(self, q, dq, ddq, context: FeedforwardContext):
        """(φ_d, φ̇_d, φ̈_d), each (N, n) [rad, rad/s, rad/s²], of N consecutive samples at ``rate_hz``:
        the motor-side reference correction θ_d − q_d of eq. (2.69) (module docstring). Pure (no memory)."""
        phi = self.deflection(self.joint_torque(q, dq, ddq, context))
        rate = self.rate_hz
        velocity, acceleration = np.zeros(phi.shape), np.zeros(phi.shape)
        if phi.shape[0] >= 3:
            snap = (ddq[2:] - 2.0 * ddq[1:-1] + ddq[:-2]) * rate**2
            smooth = np.all(np.abs(snap) <= self.max_snap, axis=1)[:, None]
            velocity[1:-1] = np.where(smooth, 0.5 * (phi[2:] - phi[:-2]) * rate, 0.0)
            acceleration[1:-1] = np.where(smooth, (phi[2:] - 2.0 * phi[1:-1] + phi[:-2]) * rate**2, 0.0)
        return phi, velocity, acceleration

    def reset(self) -> None:
        """Forget the last two samples (the next two steps give 0)."""
        self._history: list[tuple[np.ndarray, np.ndarray]] = []

    def evaluate(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        out = np.zeros(q.shape)
        if q.shape[0] < 3:
            return out
        phi = self.deflection(self.joint_torque(q, dq, ddq, context))
        square = self.rate_hz**2
        snap = (ddq[2:] - 2.0 * ddq[1:-1] + ddq[:-2]) * square
        smooth = np.all(np.abs(snap) <= self.max_snap, axis=1)
        out[2:] = np.where(smooth[:, None], self.inertia * (phi[2:] - 2.0 * phi[1:-1] + phi[:-2]) * square, 0.0)
        return out

    def step(self, q, dq, ddq, context: FeedforwardContext) -> np.ndarray:
        phi = self.deflection(self.joint_torque(q, dq, ddq, context, single=True))
        history = self._history
        out = np.zeros(q.shape)
        if len(history) == 2:
            (phi2, ddq2), (phi1, ddq1) = history
            square = self.rate_hz**2
            if np.all(np.abs((ddq - 2.0 * ddq1 + ddq2) * square) <= self.max_snap):
                out = self.inertia * (phi - 2.0 * phi1 + phi2) * square
            history.pop(0)
        history.append((phi, np.array(ddq, dtype=float)))
        return out


FLEXIBLE_JOINT = TermPlugin('flexible_joint', "B·φ̈_d of the joints' elastic deflection", FlexibleJointTerm.from_result)
