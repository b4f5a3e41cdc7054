"""The robots' own payload settings, filled with an identified payload: UR's ``set_payload`` and Franka's ``setLoad``.

**Universal Robots** — the ``io_and_status_controller`` (ur_controllers/GPIOController) of the UR ROS 2 driver
serves ``~/set_payload`` (``ur_msgs/srv/SetPayload``): ``mass`` [kg] and ``center_of_gravity``
(geometry_msgs/Vector3) [m] from the tool flange, in the flange frame ``tool0``; the ur_msgs of the Kilted
driver add ``ixx, iyy, izz, ixy, ixz, iyz`` [kg·m²] (inertia about the centre of gravity, flange axes) and
``transition_time``; older ur_msgs have mass and centre of gravity only.

**Franka** — libfranka's ``Robot::setLoad(load_mass, F_x_Cload, load_inertia)``: the mass [kg], the
translation from the flange to the load's centre of mass in the flange frame F [m], and the inertia about
the centre of mass [kg·m²] as 9 numbers, column-major. franka_ros2 serves it as
``/service_server/set_load`` (``franka_msgs/srv/SetLoad``: ``mass``, ``center_of_mass``, ``load_inertia``);
the robot accepts it in idle mode only. A load is what the end effector configured in Desk does not
already carry, so the arm must have been identified with that end effector mounted.

Where the robot model's payload frame (its flange) is not the vendor's frame (``tool0``, ``<prefix>_link8``)
but that frame is in the model on the same link, the payload is expressed in the vendor's frame.
"""

from __future__ import annotations

import numpy as np

from dynid.model.inertial import Payload, transform_parameters
from dynid.model.naming import family
from dynid.model.robot import RobotModel, frame_index

UR_SERVICE = '/io_and_status_controller/set_payload'
UR_TYPE = 'ur_msgs/srv/SetPayload'
FRANKA_SERVICE = '/service_server/set_load'
FRANKA_TYPE = 'franka_msgs/srv/SetLoad'


def robot_family(robot: RobotModel) -> str | None:
    """'ur' or 'franka' by the joint names (:func:`dynid.model.naming.family`), else None."""
    return family(robot.joint_names)


def payload_in_frame(robot: RobotModel, payload: Payload, frame: str) -> Payload:
    """``payload`` (given in the robot's flange frame) expressed in ``frame``, a frame of the last link."""
    if frame == robot.flange:
        return payload
    model = robot.pinocchio_model
    flange = robot.flange_placement  # flange in the last joint's frame
    target = model.frames[frame_index(model, frame)].placement
    relative = target.actInv(flange)  # flange in the target frame
    phi = transform_parameters(payload.parameters(), relative.rotation, relative.translation)
    return Payload.from_parameters(phi) if payload.mass > 0 else payload


def vendor_frame(robot: RobotModel, family: str) -> str:
    """The vendor's payload frame where the model has it on the last link (``tool0``; ``*link8``), else the flange."""
    model = robot.pinocchio_model
    last = model.njoints - 1
    wanted = ('tool0',) if family == 'ur' else tuple(f.name for f in model.frames if f.name.endswith('link8'))
    for name in wanted:
        index = frame_index(model, name)
        if index is not None and model.frames[index].parentJoint == last:
            return name
    return robot.flange


def _rounded(values, digits: int = 6) -> list[float]:
    return [float(round(float(v), digits)) for v in np.asarray(values).reshape(-1)]


def ur_set_payload(robot: RobotModel, payload: Payload, inertia_identified: bool) -> dict:
    """The request of UR's ``set_payload`` (module docstring) for ``payload``, and the frame it is in."""
    frame = vendor_frame(robot, 'ur')
    expressed = payload_in_frame(robot, payload, frame)
    c = _rounded(expressed.com)
    request = {'mass': round(float(expressed.mass), 6), 'center_of_gravity': {'x': c[0], 'y': c[1], 'z': c[2]}}
    if inertia_identified:
        i = expressed.inertia
        request.update({name: round(float(i[a, b]), 8) for name, (a, b) in
                        (('ixx', (0, 0)), ('iyy', (1, 1)), ('izz', (2, 2)), ('ixy', (0, 1)), ('ixz', (0, 2)),
                         ('iyz', (1, 2)))})
    inertia = ''.join(f', {k}: {request[k]}' for k in ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz') if k in request)
    text = f'{{mass: {request["mass"]}, center_of_gravity: {{x: {c[0]}, y: {c[1]}, z: {c[2]}}}{inertia}}}'
    return {'service': UR_SERVICE, 'type': UR_TYPE, 'frame': frame, 'request': request,
            'command': f'ros2 service call {UR_SERVICE} {UR_TYPE} "{text}"',
            'note': 'inertia fields (ixx … iyz, about the centre of gravity) are in the ur_msgs of the Kilted driver; '
                    'older ur_msgs take mass and center_of_gravity only' if inertia_identified else
                    'inertia not identified: mass and center_of_gravity only'}


def franka_set_load(robot: RobotModel, payload: Payload, inertia_identified: bool) -> dict:
    """The arguments of Franka's ``setLoad`` and the franka_ros2 request (module docstring)."""
    frame = vendor_frame(robot, 'franka')
    expressed = payload_in_frame(robot, payload, frame)
    inertia = expressed.inertia if inertia_identified else np.zeros((3, 3))
    column_major = _rounded(inertia.T.reshape(-1), 8)
    com = _rounded(expressed.com)
    mass = round(float(expressed.mass), 6)
    return {'libfranka': {'load_mass': mass, 'F_x_Cload': com, 'load_inertia': column_major},
            'service': FRANKA_SERVICE, 'type': FRANKA_TYPE, 'frame': frame,
            'request': {'mass': mass, 'center_of_mass': com, 'load_inertia': column_major},
            'command': f'ros2 service call {FRANKA_SERVICE} {FRANKA_TYPE} "{{mass: {mass}, center_of_mass: {com}, '
                       f'load_inertia: {column_major}}}"',
            'note': 'idle mode only; the load comes on top of the end effector configured in Desk'
                    + ('' if inertia_identified else '; inertia not identified: zeros (a point mass)')}

