"""Robot model over pinocchio: URDF/DH robots, inverse dynamics, regressors, base parameters, drives.

Main entry points::

    from dynid.model import load_robot
    robot = load_robot('ur5e')                       # or a URDF path/XML, or a dynid robot file
    tau = robot.inverse_dynamics(q, dq, ddq)         # (N, n)
    Y = robot.regressor(q, dq, ddq)                  # (N*n, 10*n), rows grouped sample by sample
    Yb = robot.base.columns(Y)                       # (N*n, 36) for the UR5e
    chi_b = robot.base.from_standard(robot.standard_parameters)
"""

from dynid.model.base_parameters import BaseParameters, compute_base_parameters
from dynid.model.dh import DHJoint, build_dh_model
from dynid.model.drives import JointDrives
from dynid.model.inertial import INERTIAL_PARAMETER_NAMES, Payload
from dynid.model.joint_terms import JOINT_TERM_SYMBOLS
from dynid.model.robot import RobotModel
from dynid.model.robots import BUILTIN_ROBOTS, load_robot

__all__ = [
    'BUILTIN_ROBOTS',
    'BaseParameters',
    'DHJoint',
    'INERTIAL_PARAMETER_NAMES',
    'JOINT_TERM_SYMBOLS',
    'JointDrives',
    'Payload',
    'RobotModel',
    'build_dh_model',
    'compute_base_parameters',
    'load_robot',
]
