"""bench_public's reading of the data authors' models (benchmarks/public_datasets.py): FloBaRoID's identified URDF is
its links' inverse dynamics plus each joint's ``<dynamics friction>`` as Coulomb's F_c and ``damping`` as the viscous
F_v, as FloBaRoID reads a URDF, in the order of the joints asked for."""

import numpy as np

from benchmarks import public_datasets
from dynid.model import load_robot

LINK = ('<link name="{name}"><inertial><origin xyz="0.1 0.02 0"/><mass value="{mass}"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>')
JOINT = ('<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
         '<origin xyz="{x} 0 0" rpy="0 0 0"/><axis xyz="0 {y} {z}"/><limit effort="10" lower="-3" upper="3" '
         'velocity="2"/><dynamics damping="{damping}" friction="{friction}"/></joint>')


def _urdf(folder):
    links = '<link name="base"/>' + LINK.format(name='a', mass=2.0) + LINK.format(name='b', mass=1.0)
    joints = (JOINT.format(name='j1', parent='base', child='a', x=0.0, y=1, z=0, damping=0.5, friction=0.3)
              + JOINT.format(name='j2', parent='a', child='b', x=0.3, y=0, z=1, damping=0.2, friction=-0.1))
    path = folder / public_datasets.FLOBAROID_IDENTIFIED
    path.parent.mkdir(parents=True)
    path.write_text(f'<?xml version="1.0"?><robot name="arm">{links}{joints}</robot>')
    return path


def test_flobaroids_identified_model_adds_coulomb_and_viscous_friction_in_the_joints_order(tmp_path):
    robot = load_robot(str(_urdf(tmp_path)))
    rng = np.random.default_rng(0)
    q, dq, ddq = (rng.normal(size=(20, 2)) for _ in range(3))
    links = robot.inverse_dynamics(q, dq, ddq)
    expected = links + np.array([0.3, -0.1]) * np.sign(dq) + np.array([0.5, 0.2]) * dq
    ordered = public_datasets.flobaroid_identified(tmp_path, robot.joint_names)
    np.testing.assert_allclose(ordered(q, dq, ddq), expected, rtol=1e-12, atol=1e-12)
    swapped = public_datasets.flobaroid_identified(tmp_path, robot.joint_names[::-1])
    np.testing.assert_allclose(swapped(q[:, ::-1], dq[:, ::-1], ddq[:, ::-1]), expected[:, ::-1], rtol=1e-12,
                               atol=1e-12)
    assert public_datasets.flobaroid_identified(tmp_path / 'elsewhere', robot.joint_names) is None
