"""Robots as the vendors' descriptions name them: the built-in arms and their sources, a description recognized by
its joints and kinematics whatever its <robot name>, joints matched by name behind the vendors' prefixes, and a
URDF whose <dynamics> values are invalid still giving its inertials. None of it needs the vendors' files: the
descriptions are built from example-robot-data's URDFs and from the URDFs dynid writes of its DH built-ins."""

import json
import re

import numpy as np
import pytest
import yaml

from dynid.cli import main
from dynid.errors import InputError
from dynid.io.bag import write_bag
from dynid.io.dataset import Dataset
from dynid.io.recorder import read_recording
from dynid.model import RobotModel, load_robot
from dynid.model.dh_urdf import robot_urdf
from dynid.model.naming import match_joint_names, parse_joint_map
from dynid.model.robots import BUILTINS, builtin_for, example_robot_path

ARMS = {'ur3', 'ur5', 'ur10', 'ur3e', 'ur5e', 'ur10e', 'ur16e', 'ur20', 'ur30', 'panda', 'fr3'}


def panda_urdf(prefix: str, robot_name: str) -> str:
    """example-robot-data's Panda with its joints and links renamed as franka_description names them."""
    text = example_robot_path('panda_description/urdf/panda.urdf').read_text()
    text = re.sub(r'<robot name="[^"]*"', f'<robot name="{robot_name}"', text, count=1)
    return text.replace('panda_', prefix)


def test_model_list_names_every_builtin_with_its_sources(capsys):
    assert main(['model', '--list', '--json']) == 0
    rows = {row['robot']: row for row in json.loads(capsys.readouterr().out)}
    assert ARMS <= set(rows)
    for name, row in rows.items():
        assert row['model_source'] and row['drives_source'], name
        assert row['joints'] == (7 if BUILTINS[name].family == 'franka' else 6)
    assert rows['panda']['aliases'] == ['fer']
    assert {rows[name]['rate_hz'] for name in ('ur3', 'ur5', 'ur10')} == {125.0}


@pytest.mark.parametrize('name', sorted(ARMS))
def test_every_builtin_has_drive_data_for_its_joints(name):
    robot = load_robot(name)
    assert robot.builtin == name and robot.drives is not None and robot.drives.joint_names == robot.joint_names
    assert np.all(robot.drives.drive_gain > 0) and np.all(robot.effort_limits > 0)


def test_fr3_flange_sits_on_link8():
    fr3 = load_robot('fr3')
    assert fr3.flange == 'fr3_link8'
    np.testing.assert_allclose(fr3.flange_placement.translation, [0.0, 0.0, 0.107], atol=1e-12)


@pytest.mark.parametrize('builtin, prefix, robot_name', [('panda', 'fer_', 'fer'), ('fr3', 'fr3_', 'fr3'),
                                                         ('panda', 'left_fer_', 'my_arm')])
def test_a_franka_description_is_recognized_whatever_its_name(builtin, prefix, robot_name):
    robot = load_robot(panda_urdf(prefix, robot_name))
    assert robot.name == robot_name and robot.builtin == builtin
    assert robot.joint_names == tuple(f'{prefix}joint{i}' for i in range(1, 8))
    np.testing.assert_allclose(robot.drives.drive_gain, load_robot(builtin).drives.drive_gain)
    assert robot.flange == f'{prefix}link8'
    assert any('recognized as the built-in' in note for note in robot.notes)


@pytest.mark.parametrize('name', ['ur3', 'ur10', 'ur10e', 'ur20'])
def test_a_ur_description_named_ur_is_its_arm(name):
    text = robot_urdf(name).replace(f'<robot name="{name}"', '<robot name="ur"', 1)
    robot = load_robot(text)
    assert (robot.name, robot.builtin) == ('ur', name)  # UR10 and UR10e differ by 3 mm RMS in their axes
    np.testing.assert_array_equal(robot.drives.drive_gain, load_robot(name).drives.drive_gain)


def test_an_arm_dynid_does_not_know_keeps_no_drive_data():
    text = example_robot_path('ur_description/urdf/ur5_robot.urdf').read_text()
    robot = load_robot(text.replace('xyz="0.0 -0.1197 0.425"', 'xyz="0.0 -0.1197 0.465"'))
    assert robot.builtin is None and robot.drives is None


def test_vendor_launch_arguments_name_builtins():
    assert builtin_for('ur_type', 'ur10e') == 'ur10e' and builtin_for('ur_type', 'ur7e') is None
    assert builtin_for('robot_type', 'fer') == 'panda' and builtin_for('robot_type', 'fr3') == 'fr3'
    assert load_robot('fer').name == 'panda'


# ---------------------------------------------------------------------------------------- joint names
UR = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']


def test_joints_match_behind_the_vendors_prefixes():
    assert match_joint_names(UR, [f'left_{n}' for n in UR] + ['gripper']) == tuple(f'left_{n}' for n in UR)
    panda = [f'panda_joint{i}' for i in range(1, 8)]
    recorded = ['fr3_finger_joint1'] + [f'fr3_joint{i}' for i in range(7, 0, -1)]
    assert match_joint_names(panda, recorded) == tuple(f'fr3_joint{i}' for i in range(1, 8))
    assert match_joint_names(UR, UR) == tuple(UR)


def test_two_arms_or_missing_joints_ask_for_a_joint_map():
    both = [f'left_{n}' for n in UR] + [f'right_{n}' for n in UR]
    with pytest.raises(InputError, match="several prefixes.*joint_map"):
        match_joint_names(UR, both)
    mapping = parse_joint_map(','.join(f'right_{n}={n}' for n in UR))
    assert match_joint_names(UR, both, mapping) == tuple(f'right_{n}' for n in UR)
    with pytest.raises(InputError, match=r"lacks joints \['elbow_joint'\]"):
        match_joint_names(UR, [n for n in UR if n != 'elbow_joint'])
    for text in ('a1=', 'a1=x,a2=x', 'a1'):
        with pytest.raises(InputError, match='joint_map'):
            parse_joint_map(text)


def test_a_bag_of_fer_or_fr3_joints_reads_against_the_builtin_panda(tmp_path):
    panda = load_robot('panda')
    q, dq, ddq = panda.random_states(200, seed=4)
    t = np.arange(200) / 500.0
    for prefix in ('fer_', 'fr3_'):
        names = tuple(f'{prefix}joint{i}' for i in range(1, 8))
        bag = write_bag(tmp_path / prefix, Dataset(names, t, q, dq, tau=panda.inverse_dynamics(q, dq, ddq)))
        dataset = read_recording(bag, panda.joint_names)
        assert dataset.joint_names == panda.joint_names and dataset.source['recorded_joint_names'] == list(names)
        np.testing.assert_allclose(dataset.q, q)


# ------------------------------------------------------------------------------------- tolerant URDF
def test_invalid_dynamics_values_are_reported_and_the_inertials_load(tmp_path):
    clean = example_robot_path('ur_description/urdf/ur5_robot.urdf').read_text()
    assert clean.count('<dynamics damping="0.0" friction="0.0"/>') == 6
    broken = clean.replace('<dynamics damping="0.0" friction="0.0"/>', '<dynamics damping="nan" friction="-0.4"/>', 1)
    path = tmp_path / 'third_party.urdf'
    path.write_text(broken)
    for source in (str(path), broken):
        robot = RobotModel.from_urdf(source)
        assert len(robot.notes) == 2 and all('ignored' in note for note in robot.notes)
        assert 'friction="-0.4"' in robot.notes[1] and 'damping="nan"' in robot.notes[0]
        np.testing.assert_array_equal(robot.standard_parameters, RobotModel.from_urdf(clean).standard_parameters)
    assert RobotModel.from_urdf(clean).notes == ()


def test_dynid_identify_takes_a_fer_bag_against_the_builtin_panda(tmp_path, capsys):
    panda = load_robot('panda')
    t = np.arange(0.0, 12.0, 1.0 / 200.0)
    home = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    rng = np.random.default_rng(3)
    frequencies, phases = rng.uniform(0.1, 0.6, (3, 7)), rng.uniform(0, 2 * np.pi, (3, 7))
    angle = 2 * np.pi * frequencies[None] * t[:, None, None] + phases[None]
    q = home + 0.25 * np.sin(angle).sum(axis=1) / 3
    dq = 0.25 * (2 * np.pi * frequencies * np.cos(angle)).sum(axis=1) / 3
    ddq = -0.25 * ((2 * np.pi * frequencies) ** 2 * np.sin(angle)).sum(axis=1) / 3
    fer = tuple(f'fer_joint{i}' for i in range(1, 8))
    bag = write_bag(tmp_path / 'fer_bag', Dataset(fer, t, q, dq, tau=panda.inverse_dynamics(q, dq, ddq)))
    out = tmp_path / 'result.yaml'
    code = main(['identify', str(bag), '--robot', 'panda', '--torque', 'joint_torque', '--friction', 'none', '-o',
                 str(out), '--quiet', '--force'])
    assert code == 0, capsys.readouterr().err
    document = yaml.safe_load(out.read_text())
    assert document['robot'] == 'panda' and document['joint_names'] == list(panda.joint_names)
    fits = [m['nrmse_fit_percent'] for m in document['metrics']['train']['joints'].values()]
    assert min(fits) > 99.0, fits  # exact inverse-dynamics torques of the same model


def test_a_joint_map_gives_the_model_the_drivers_names():
    ur5e = load_robot('ur5e')
    renamed = load_robot('ur5e', joint_map=','.join(f'a{i}={name}' for i, name in enumerate(UR[:3], start=1)))
    assert renamed.joint_names == ('a1', 'a2', 'a3', *UR[3:]) and renamed.drives.joint_names == renamed.joint_names
    np.testing.assert_array_equal(renamed.drives.drive_gain, ur5e.drives.drive_gain)
    q, dq, ddq = ur5e.random_states(4, seed=2)
    np.testing.assert_array_equal(renamed.inverse_dynamics(q, dq, ddq), ur5e.inverse_dynamics(q, dq, ddq))
    with pytest.raises(InputError, match='not joints of robot'):
        load_robot('ur5e', joint_map='a1=no_such_joint')
