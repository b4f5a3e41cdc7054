"""Clearance of an arm's links along a motion: against the floor and against each other.

What is checked (:meth:`Clearance.describe` says which applies to a robot):

- **Collision geometry**, where the robot comes from a URDF whose ``<collision>`` elements load
  (pinocchio's ``buildGeomFromUrdf`` over coal; ``package://`` meshes are looked for next to the URDF,
  in its parent folders, in example-robot-data and on ROS_PACKAGE_PATH). For the floor each object
  becomes points in its joint frame whose lowest one is the object's lowest point: a mesh's
  vertices, a box's corners, the centre of a sphere or the two axis ends of a capsule (less their
  radius), 32 points on each rim of a cylinder (a tilted rim's lowest point is missed by at most
  0.5 % of its radius); other shapes their bounding box. Self-collision: pinocchio's
  ``computeCollisions`` between objects on joints at least two apart in the chain (neighbours
  touch at their joint); pairs already in contact at home are left out, as an SRDF's
  ``disable_collisions`` would, so the home itself is taken as collision-free.
- **Link frames** otherwise (DH robots, URDFs without collision geometry or with meshes that are
  not found): every frame origin of the kinematic chain (joint frames, link frames, the flange).
  A straight link between two of them is covered (a segment's lowest point is one of its ends);
  its thickness is not, so give the floor with a margin. No self-collision check.

The floor is the plane z = ``floor`` [m] of the base frame. A point fails when the motion takes it
below the floor **and** below its own height at home: parts that already sit lower at home (the base
housing, the joint-1 frame at z = 0) may move, but not further down.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from dynid.errors import InputError
from dynid.model.robot import RobotModel, native_stderr
from dynid.package_files import example_robot_path

_RIM_POINTS = 32


@dataclass(frozen=True)
class Body:
    """Points of one link (or collision object) for the floor check.

    Attributes:
        name: link or collision object name. joint: pinocchio index of the joint that moves it.
        points: (k, 3) in that joint's frame [m]. radius: distance below each point still part of it [m].
    """

    name: str
    joint: int
    points: np.ndarray
    radius: float = 0.0


def _package_dirs(urdf: str | None) -> list[str]:
    dirs = []
    if urdf and not urdf.lstrip().startswith('<'):
        dirs += [str(p) for p in list(Path(urdf).resolve().parents)[:5]]
    try:  # the share folder that package://example-robot-data/... resolves in
        dirs.append(str(example_robot_path('ur_description/urdf/ur5_robot.urdf').parents[4]))
    except InputError:
        pass
    return dirs + [d for d in os.environ.get('ROS_PACKAGE_PATH', '').split(os.pathsep) if d]


def collision_geometry(robot: RobotModel) -> tuple[pin.GeometryModel | None, str]:
    """(the URDF's collision geometry on the robot's joints, or None; a phrase saying why not)."""
    if robot.urdf is None:
        return None, 'not a URDF robot'
    is_xml = robot.urdf.lstrip().startswith('<')
    with native_stderr():  # urdfdom and the mesh loader print to fd 2
        try:
            full = pin.buildModelFromXML(robot.urdf) if is_xml else pin.buildModelFromUrdf(robot.urdf)
            geometry = (pin.buildGeomFromUrdfString(full, robot.urdf, pin.COLLISION, package_dirs=_package_dirs(None))
                        if is_xml else pin.buildGeomFromUrdf(full, robot.urdf, pin.COLLISION,
                                                             package_dirs=_package_dirs(robot.urdf)))
        except (RuntimeError, ValueError, OSError) as error:
            return None, f'collision geometry not loaded ({" ".join(str(error).split())})'
    if robot.urdf_joints is not None:
        lock, reference = RobotModel.locked_joints(full, robot.urdf_joints, robot.source)
        _, geometry = pin.buildReducedModel(full, geometry, lock, reference)
    if not any(g.parentJoint > 0 for g in geometry.geometryObjects):
        return None, 'the URDF has no collision geometry on its moving links'
    return geometry, ''


def _shape_points(shape) -> tuple[np.ndarray, float]:
    """(points in the shape's own frame, radius) whose lowest point is the shape's lowest point."""
    kind = type(shape).__name__
    if kind.startswith('BVHModel') or kind.startswith('Convex'):
        try:
            return np.asarray(shape.vertices(), dtype=float).reshape(-1, 3), 0.0
        except (AttributeError, TypeError):
            pass
    if kind == 'Box':
        corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
        return corners * np.asarray(shape.halfSide), 0.0
    if kind == 'Sphere':
        return np.zeros((1, 3)), float(shape.radius)
    if kind == 'Capsule':
        return np.array([[0.0, 0.0, -shape.halfLength], [0.0, 0.0, shape.halfLength]]), float(shape.radius)
    if kind == 'Cylinder':
        angle = np.linspace(0.0, 2 * np.pi, _RIM_POINTS, endpoint=False)
        rim = np.column_stack([shape.radius * np.cos(angle), shape.radius * np.sin(angle)])
        return np.vstack([np.column_stack([rim, np.full(_RIM_POINTS, z)])
                          for z in (-shape.halfLength, shape.halfLength)]), 0.0
    shape.computeLocalAABB()
    low, high = np.asarray(shape.aabb_local.min_), np.asarray(shape.aabb_local.max_)
    corners = np.array(np.meshgrid(*zip(low, high, strict=True))).reshape(3, -1).T
    return corners, 0.0


class Clearance:
    """Floor and self-collision checks of one robot (module docstring).

    Args:
        robot: the arm.
        geometry: its collision geometry (:func:`collision_geometry`) or None for link frames.
        note: why there is no geometry, for :meth:`describe`.
    """

    def __init__(self, robot: RobotModel, geometry: pin.GeometryModel | None = None, note: str = '') -> None:
        self.robot = robot
        self.geometry = geometry
        self.note = note
        model = robot.pinocchio_model
        self._data = model.createData()
        if geometry is None:
            self.bodies = self._frame_bodies(model)
        else:
            self.bodies = []
            for obj in geometry.geometryObjects:
                if obj.parentJoint == 0:
                    continue
                points, radius = _shape_points(obj.geometry)
                placed = points @ obj.placement.rotation.T + obj.placement.translation
                self.bodies.append(Body(obj.name, obj.parentJoint, placed, radius))
            self._geometry_data = geometry.createData()
            self._add_collision_pairs(model, geometry)
        self._home_heights = None

    @classmethod
    def of(cls, robot: RobotModel) -> Clearance:
        """The clearance checks of ``robot``: its collision geometry where it has some, else link frames."""
        geometry, note = collision_geometry(robot)
        return cls(robot, geometry, note)

    @staticmethod
    def _frame_bodies(model: pin.Model) -> list[Body]:
        bodies = []
        for joint in range(1, model.njoints):
            frames = [f for f in model.frames if f.parentJoint == joint]
            points = np.vstack([np.zeros(3)] + [f.placement.translation for f in frames])
            link = next((f.name for f in frames if f.type == pin.FrameType.BODY), model.names[joint])
            bodies.append(Body(link, joint, points))
        return bodies

    def _add_collision_pairs(self, model: pin.Model, geometry: pin.GeometryModel) -> None:
        objects = geometry.geometryObjects
        for a in range(len(objects)):
            for b in range(a + 1, len(objects)):
                if abs(objects[a].parentJoint - objects[b].parentJoint) >= 2:
                    geometry.addCollisionPair(pin.CollisionPair(a, b))
        self._geometry_data = geometry.createData()

    def describe(self) -> str:
        """What is checked, in one phrase."""
        if self.geometry is None:
            return (f'link frames ({sum(len(b.points) for b in self.bodies)} frame origins, no link thickness'
                    + (f'; {self.note}' if self.note else '') + ')')
        return (f'collision geometry ({len(self.bodies)} objects; '
                f'{len(self.geometry.collisionPairs)} pairs checked for self-collision)')

    def prepare(self, home: np.ndarray) -> None:
        """Take ``home`` [rad] as the start: heights there, and the pairs in contact there left out."""
        self._home_heights = self.heights(np.asarray(home, dtype=float)[None, :])[0]
        if self.geometry is not None:
            model = self.robot.pinocchio_model
            pin.computeCollisions(model, self._data, self.geometry, self._geometry_data,
                                  self.robot.configuration_vector(home), False)
            touching = [k for k, result in enumerate(self._geometry_data.collisionResults) if result.isCollision()]
            for k in reversed(touching):
                self.geometry.removeCollisionPair(self.geometry.collisionPairs[k])
            self._geometry_data = self.geometry.createData()

    def below_floor_at_home(self, floor: float) -> list[tuple[str, float]]:
        """(body, height [m]) of the bodies whose lowest point is already below ``floor`` at home."""
        if self._home_heights is None:
            raise InputError('Clearance.prepare(home) must come before the floor check')
        return [(body.name, float(h)) for body, h in zip(self.bodies, self._home_heights, strict=True)
                if h < floor - 1e-6]

    def heights(self, q: np.ndarray) -> np.ndarray:
        """Height z [m] of the lowest point of every body (:attr:`bodies`) for configurations (N, n)."""
        model, data = self.robot.pinocchio_model, self._data
        config = self.robot.configuration(np.atleast_2d(q))
        rows = np.empty((config.shape[0], model.njoints, 3))
        lift = np.empty((config.shape[0], model.njoints))
        for k, c in enumerate(config):
            pin.forwardKinematics(model, data, c)
            for j in range(1, model.njoints):
                rows[k, j] = data.oMi[j].rotation[2]
                lift[k, j] = data.oMi[j].translation[2]
        return np.column_stack([(rows[:, b.joint] @ b.points.T).min(axis=1) + lift[:, b.joint] - b.radius
                                for b in self.bodies])

    def floor_margin(self, q: np.ndarray, floor: float) -> np.ndarray:
        """(N, bodies) margins [m], >= 0 where allowed: height − min(floor, height at home)."""
        if self._home_heights is None:
            raise InputError('Clearance.prepare(home) must come before the floor check')
        return self.heights(q) - np.minimum(floor, self._home_heights - 1e-9)

    def first_collision(self, q: np.ndarray) -> tuple[int, str, str] | None:
        """(sample index, object, object) of the first self-collision in configurations (N, n), or None."""
        if self.geometry is None or not len(self.geometry.collisionPairs):
            return None
        model = self.robot.pinocchio_model
        for k, c in enumerate(self.robot.configuration(np.atleast_2d(q))):
            if pin.computeCollisions(model, self._data, self.geometry, self._geometry_data, c, True):
                for pair, result in zip(self.geometry.collisionPairs, self._geometry_data.collisionResults,
                                        strict=True):
                    if result.isCollision():
                        objects = self.geometry.geometryObjects
                        return k, objects[pair.first].name, objects[pair.second].name
        return None
