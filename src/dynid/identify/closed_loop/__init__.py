"""The closed loop the recording was taken in, simulated: the controller's model
(:mod:`dynid.identify.closed_loop.controller`), the direct dynamics of the identified model under it
(:mod:`.simulation`), and the equations of the simulated states (the instruments of IDIM-IV and the regressor of DIDIM,
:mod:`.instruments`).

The package itself holds what the closed-loop methods declare (their options, laws and why no prior applies), light
to import, so that a front end reads the declarations without loading the simulation (pinocchio).
"""

from __future__ import annotations

from dynid.identify.registry import MethodOption

#: the controller laws (:mod:`dynid.identify.closed_loop.controller`)
CONTROLLER_MODELS = ('auto', 'pid', 'pid+model')
#: why the robot file's prior does not apply to the closed-loop methods
NO_PRIOR = 'the closed-loop methods keep their own estimate (the prior weights a least-squares solution)'
#: the friction laws the closed-loop simulation takes (a sum of features of the velocity)
FRICTION = ('none', 'viscous_coulomb')


def options(iterations: int) -> tuple[MethodOption, ...]:
    """The options of a closed-loop method (:class:`dynid.identify.closed_loop.controller.ClosedLoopSettings`),
    ``iterations`` the default bound."""
    return (
        MethodOption('controller_gains', 'str', '', "YAML file of the joint controller's PID gains (kp [N·m/rad], "
                     'kd [N·m·s/rad], ki [N·m/(rad·s)]: one value, a list in joint order or {joint: value}); empty: '
                     'identified by least squares from the reference and the motor current'),
        MethodOption('controller_model', 'str', 'auto', "the joint controller's law: pid, or pid+model (a PID beside "
                     'the model-based feedforward of the reference, W(q_r, q̇_r, q̈_r)·χ_ff, identified from the '
                     'recording); auto: pid+model where it explains the commanded torque markedly better, or where '
                     "the gains file says feedforward: model", choices=CONTROLLER_MODELS),
        MethodOption('feedforward', 'bool', True, "the reference's commanded effort is added to the controller's "
                     'torque'),
        MethodOption('max_iterations', 'int', iterations, 'most simulations of the loop', low=1, high=1000),
        MethodOption('tolerance', 'float', 1e-3, 'stop where the parameters change by less than this (relative norm)',
                     low=0.0, high=1.0),
        MethodOption('max_step_s', 'float', 1e-3, 'longest step of the simulation', unit='s', low=1e-5, high=0.01),
    )
