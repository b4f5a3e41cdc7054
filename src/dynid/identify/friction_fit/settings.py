"""How the joint friction is identified (:class:`FrictionSettings`,
:func:`~dynid.identify.friction_fit.identify.identify_joint_friction`), apart from the fit and the recordings'
reading."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dynid.errors import InputError
from dynid.settings import setting

#: The friction experiments (``dynid excite --experiment``'s plus ``warm_up``,
#: :mod:`~dynid.identify.friction_fit.recordings`).
EXPERIMENTS = ('plateaus', 'warm_up', 'gravity_sweep', 'reciprocating')
#: Where the motor torque comes from (:class:`dynid.identify.friction_fit.recordings.FrictionTorque`).
TORQUE_SOURCES = ('auto', 'current', 'effort')


@dataclass(frozen=True)
class FrictionSettings:
    """Settings of the joint friction identification (:mod:`dynid.identify.friction_fit.identify`).

    egms_initial: (backlash [rad], r_Δ, r_k) to start the search from (the backlash also sets the settling
    travel, ``SETTLE_BACKLASHES``).
    """

    torque: str = setting('auto', 'motor torque: currents × drive gains (current), or the joint_states effort where '
                                  'the driver reports motor torque there (effort); auto: currents where recorded',
                          choices=TORQUE_SOURCES)
    cutoff_hz: float = setting(30.0, 'zero-phase low-pass of positions and motor torque (at most fs/10)', unit='Hz')
    min_temperature_span_c: float = setting(3.0, 'a plateau run whose temperature spans this is a warm-up',
                                            unit='°C')
    t0_c: float = setting(20.0, 'reference temperature T0', unit='°C', low=5.0, high=80.0)
    egms_elements: int = setting(4, 'M, the elements of the E-GMS model', low=1, high=1000)
    egms_initial: tuple[float, float, float] = setting((1e-3, 4.0, 2.0), 'backlash [rad], r_delta, r_k to start the '
                                                                         'E-GMS search from', items=float)
    iterations: int = setting(30, 'most rounds of the coupled static/load fits', low=1, high=10000)
    payload_com: tuple[float, float, float] = setting((0.0, 0.0, 0.0), 'payload centre of mass x,y,z in the flange '
                                                                       'frame', unit='m', items=float)

    def __post_init__(self) -> None:
        for name in ('cutoff_hz', 'min_temperature_span_c'):
            if not math.isfinite(getattr(self, name)) or getattr(self, name) <= 0:
                raise InputError(f'{name} must be > 0, got {getattr(self, name)!r}')
        if not 5.0 <= self.t0_c <= 80.0:
            raise InputError(f't0_c must be within 5–80 °C, got {self.t0_c!r}')
        if int(self.egms_elements) != self.egms_elements or self.egms_elements < 1:
            raise InputError(f'egms_elements must be a positive integer, got {self.egms_elements!r}')
        if len(self.egms_initial) != 3 or self.egms_initial[0] <= 0 or self.egms_initial[1] <= 0:
            raise InputError(f'egms_initial needs (backlash > 0, r_delta > 0, r_k), got {self.egms_initial!r}')
        if int(self.iterations) != self.iterations or self.iterations < 1:
            raise InputError(f'iterations must be a positive integer, got {self.iterations!r}')
        if len(self.payload_com) != 3:
            raise InputError(f'{{payload_com}} needs three values x,y,z [m], got {self.payload_com!r}',
                             fields=('payload_com',))
