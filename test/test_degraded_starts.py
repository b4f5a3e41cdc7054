"""Nodes degrade instead of dying on a robot dynid has no drive data or no shipped excitation for: the feedforward
runs the terms it can and says which it dropped, the estimator leaves out what needs drive data, an excitation is
designed within the description's limits; each says so (log and ``/diagnostics``). A term asked for explicitly
still refuses with the reason."""

import os

import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter

from dynid.control.commander import FeedforwardCommander, node_statuses
from dynid.control.configuration import FeedforwardSettings
from dynid.errors import InputError
from dynid.estimate.online import OnlineEstimation
from dynid.excite.experiments import check_robot_limits
from dynid.excite.home import default_home
from dynid.excite.schedule import excitation_trajectory
from dynid.io.stream import StateBatch
from dynid.model import load_robot
from dynid.model.dh_urdf import robot_urdf
from dynid.model.robots import example_robot_path

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'


@pytest.fixture(scope='module')
def unknown_arm() -> str:
    """URDF XML of an arm dynid does not know (a UR5 with a longer upper arm): no drive data, no excitation."""
    text = example_robot_path('ur_description/urdf/ur5_robot.urdf').read_text()
    return text.replace('<robot name="ur5"', '<robot name="my_arm"', 1).replace(
        'xyz="0.0 -0.1197 0.425"', 'xyz="0.0 -0.1197 0.465"')


def test_the_feedforward_runs_the_terms_it_can_and_says_which_it_dropped(unknown_arm):
    with pytest.warns(UserWarning) as said:  # the default terms
        commander = FeedforwardCommander.from_settings(FeedforwardSettings(unknown_arm))
    said = [str(w.message) for w in said]
    assert any('feedforward without rotor_inertia' in w for w in said), said
    assert any('feedforward without friction' in w for w in said), said
    feedforward = commander.feedforward
    assert list(feedforward.terms) == ['rigid_body']
    assert feedforward.left_out['rotor_inertia'].startswith('dropped: ') and 'rotor inertia' in \
        feedforward.left_out['rotor_inertia']
    assert 'identification result' in feedforward.left_out['friction_static']
    statuses = {name: (level, message) for name, level, message, _ in
                node_statuses(commander, 'active', 'trajectory', {'stale_events': 0}, '', None, 0.1)}
    assert statuses['terms'][0] == 'warn' and 'rotor_inertia dropped' in statuses['terms'][1]
    assert 'rotor_inertia left out' in commander.describe()


def test_a_term_asked_for_explicitly_still_refuses(unknown_arm):
    with pytest.raises(InputError, match='rotor inertia of'):
        FeedforwardSettings(unknown_arm, terms=('rigid_body', 'rotor_inertia')).build()
    with pytest.raises(InputError, match='distinct'):
        FeedforwardSettings(unknown_arm, terms=('rigid_body', 'rigid_body?')).build()


def test_the_estimator_leaves_out_what_needs_drive_data_and_keeps_running(unknown_arm):
    robot = load_robot(unknown_arm)
    assert robot.drives is None
    estimation = OnlineEstimation(robot, rate_hz=500.0)
    assert estimation.stiffness is None and estimation.friction is None
    assert any('drive data' in reason for reason in estimation.left_out)
    assert ('warn', estimation.left_out[0]) in estimation.notes
    q = np.zeros((10, robot.n))
    estimation.update(StateBatch(np.arange(10, dtype=np.int64) * 2_000_000, q, q, q, theta=q, current=q))
    assert estimation.last_sample_time is not None and estimation.joint_states(0.15) == []
    assert np.all(np.isnan(estimation.stiffness_table()))


def test_an_arm_without_a_shipped_excitation_gets_one_designed_within_its_limits():
    fr3, warnings = load_robot('fr3'), []
    trajectory = excitation_trajectory(fr3, 'builtin', harmonics=3, period_s=8.0, warn=warnings.append)
    assert warnings and warnings[0].startswith('no shipped excitation for fr3')
    assert trajectory.joint_names == fr3.joint_names
    check_robot_limits(fr3, trajectory)  # raises where a limit is crossed


def test_the_shipped_excitation_follows_the_descriptions_joint_names():
    text = robot_urdf('ur5e').replace('<robot name="ur5e"', '<robot name="ur"', 1)
    for joint in ('shoulder_pan', 'shoulder_lift', 'elbow', 'wrist_1', 'wrist_2', 'wrist_3'):
        text = text.replace(f'name="{joint}_joint"', f'name="left_{joint}_joint"')
    robot = load_robot(text)
    assert robot.builtin == 'ur5e' and robot.joint_names[0] == 'left_shoulder_pan_joint'
    trajectory = excitation_trajectory(robot, 'builtin')
    assert trajectory.joint_names == robot.joint_names
    assert default_home(robot)[1].startswith('UR home')  # the family's home behind the prefix


def test_the_nodes_start_on_an_arm_without_drive_data(unknown_arm, ros_domain):
    from dynid.nodes import EstimatorNode, ExcitationNode
    from dynid.nodes.feedforward_node import FeedforwardNode

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    description = Parameter('robot_description', value=unknown_arm)
    nodes = []
    try:
        nodes.append(EstimatorNode(context=context, parameter_overrides=[description]))
        nodes.append(ExcitationNode(context=context, parameter_overrides=[
            description, Parameter('trajectory_file', value='builtin'), Parameter('harmonics', value=2),
            Parameter('period', value=4.0)]))
        nodes.append(FeedforwardNode(context=context, parameter_overrides=[description,
                                                                           Parameter('autostart', value=True)]))
        estimator, excitation, feedforward = nodes
        assert any('drive data' in status.message for status in estimator._statuses())
        assert excitation.warnings and 'no shipped excitation for my_arm' in excitation.warnings[0]
        assert list(feedforward.commander.feedforward.terms) == ['rigid_body']
        levels = {s.name.rsplit(': ', 1)[-1]: s.message for s in feedforward._statuses()}
        assert 'rotor_inertia dropped' in levels['terms']
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
