"""Motor-side columns of a log (``dynid import``): the motors' encoders and torques turned into the joints' signals
through the drives' transmission (:mod:`dynid.model.drives`: gear ratio, encoder offset, coupling, drive gain)."""

from __future__ import annotations

import numpy as np

from dynid.errors import InputError
from dynid.io.csv_log import MOTOR_SIGNALS
from dynid.model.drives import JointDrives


def motor_side_signals(signals: dict[str, np.ndarray], drives: JointDrives | None, source) -> dict[str, np.ndarray]:
    """Joint signals from motor-side ones (:data:`dynid.io.csv_log.MOTOR_SIGNALS`; :mod:`dynid.model.drives`: gear
    ratio r, offset, coupling C and drive gain K_τ per motor):

    - ``motor_q`` [rad on the shafts]: the motors' angles in link units θ = (θ_m − motor_offset)/r (``theta``, the
      recording's motor_states), and q = C⁻¹·θ where the log has no joint positions; ``motor_dq`` alike;
    - ``motor_torque`` [N·m on the shafts]: each motor's torque in link units r·τ_m is a drive's torque K_τ·i, with
      the rotor's inertia and friction in it: it is kept as the motor current i = r·τ_m / K_τ = τ_m / k_t
      (``current``, the recording's joint_currents), which identification reads through the same drive gains
      (K_τ·i = r·τ_m, whatever K_τ is) as one equation per motor; the joints get τ = Cᵀ·(r·τ_m).

    Signals without motor-side columns are returned as they are; InputError without drive data, or where the log
    gives a motor torque beside a joint torque or a current."""
    if not any(name in signals for name in MOTOR_SIGNALS):
        return signals
    if drives is None:
        given = ', '.join(name for name in MOTOR_SIGNALS if name in signals)
        raise InputError(f'{source}: motor-side columns ({given}) need the drives\' gear ratios: give a drives file '
                         f'({{drives}})', fields=('drives',))
    if 'motor_torque' in signals and ('tau' in signals or 'current' in signals):
        other = 'tau' if 'tau' in signals else 'current'
        raise InputError(f'{{columns}}: motor_torque and {other} are two measures of the drives\' torque: give one',
                         fields=('columns',))
    out = {name: values for name, values in signals.items() if name not in MOTOR_SIGNALS}
    if 'motor_q' in signals:
        out['theta'] = drives.motor_positions_to_link_units(signals['motor_q'])
        out.setdefault('q', drives.motors_to_joints(out['theta']))
    if 'motor_dq' in signals:
        out['dtheta'] = signals['motor_dq'] / drives.gear_ratio
        out.setdefault('dq', drives.motors_to_joints(out['dtheta']))
    if 'motor_torque' in signals:
        out['current'] = drives.joint_torque_to_current(drives.motor_torque_to_joint_torque(signals['motor_torque']))
    return out


def motor_side_notes(given: dict, drives: JointDrives | None, by: str) -> list[str]:
    """The import report's notes on what the drives (``by``: which, for people) made of the motor-side columns
    among the signals ``given`` (:func:`motor_side_signals`)."""
    if not any(name in given for name in MOTOR_SIGNALS):
        return []
    coupled = drives.coupling is not None
    notes = []
    if 'motor_q' in given or 'motor_dq' in given:
        notes.append('motor-side columns turned into joint positions'
                     + (' and velocities' if 'motor_dq' in given else '') + f' by {by}'
                     + (' (coupled joints: q = C⁻¹·θ)' if coupled else '')
                     + '; the motors\' angles are the recording\'s motor_states')
    if 'motor_torque' in given:
        notes.append(f'motor torques τ_m [N·m on the shafts] kept as the motor currents i = r·τ_m / K_τ by {by} '
                     f'(joint_currents: a drive\'s torque, the rotor\'s inertia and friction in it); dynid identify '
                     f'and validate read them through the same drives file, one equation per motor '
                     + ('(joint torques τ = Cᵀ·(r·τ_m): validate scores both)' if coupled else '(joint torques r·τ_m)'))
    return notes
