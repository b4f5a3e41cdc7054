"""How the suite's topics reach a robot's controllers, resolved as rcl resolves remapping rules (the first rule
whose source matches wins), and which controllers take efforts; no launch tooling needed."""

from pathlib import Path

import pytest

from dynid.model.description import missing_effort_commands
from dynid.ros.wiring import (
    EFFORT_TOPIC,
    JTC_TOPIC,
    command_interfaces,
    node_rules,
    resolve,
    shared_rules,
    takes_effort,
)
from dynid.suite.bringup import plan_suite

CONFIG = Path(__file__).resolve().parents[1] / 'config'
SCALED = 'scaled_joint_trajectory_controller'


def test_the_first_matching_rule_wins():
    rules = [(JTC_TOPIC, 'a/joint_trajectory'), (JTC_TOPIC, 'b/joint_trajectory')]
    assert resolve(rules, JTC_TOPIC) == 'a/joint_trajectory'
    assert resolve(rules, 'joint_states') == 'joint_states'  # no rule: the name itself


def test_a_nodes_own_rule_wins_over_the_shared_one_whatever_order_they_were_given():
    shared = shared_rules(SCALED, 'forward_effort_controller', 'joint_states')
    assert shared == [(JTC_TOPIC, f'{SCALED}/joint_trajectory')]
    own = [(JTC_TOPIC, 'feedforward_node/reference')]
    assert resolve(shared + own, JTC_TOPIC) == f'{SCALED}/joint_trajectory'  # what went wrong by luck before
    assert resolve(node_rules(shared, own), JTC_TOPIC) == 'feedforward_node/reference'
    # a node's rule onto a shared name follows that name's remap: rcl remaps a name once, rules do not chain
    assert resolve(node_rules(shared, [('~/reference', JTC_TOPIC)]), '~/reference') == f'{SCALED}/joint_trajectory'


def wiring(feedforward, controller, joint_states='joint_states'):
    """{node: {topic: where it goes}} of the suite against a robot, as suite.launch.py wires it."""
    shared = shared_rules(controller, 'forward_effort_controller', joint_states)
    plan = plan_suite(simulate=False, estimator=True, feedforward=feedforward)
    return {node.name: {topic: resolve(node_rules(shared, node.remappings), topic)
                        for topic in (JTC_TOPIC, EFFORT_TOPIC, 'joint_states', '~/reference')} for node in plan}


def test_trajectory_feedforward_sits_between_the_excitation_and_an_effort_controller():
    topics = wiring('trajectory', 'joint_trajectory_controller')
    assert topics['excitation_node'][JTC_TOPIC] == 'feedforward_node/reference'
    assert topics['feedforward_node'][JTC_TOPIC] == JTC_TOPIC and topics['feedforward_node']['~/reference'] == \
        '~/reference'


def test_without_feedforward_the_excitation_goes_straight_to_the_controller():
    topics = wiring(None, SCALED, 'franka/joint_states')
    assert 'feedforward_node' not in topics
    assert topics['excitation_node'][JTC_TOPIC] == f'{SCALED}/joint_trajectory'
    assert {t['joint_states'] for t in topics.values()} == {'franka/joint_states'}


def test_streaming_feedforward_follows_the_controllers_trajectory_and_streams_efforts():
    topics = wiring('streaming', 'joint_trajectory_controller')
    assert topics['excitation_node'][JTC_TOPIC] == JTC_TOPIC  # the excitation drives the controller
    assert topics['feedforward_node']['~/reference'] == JTC_TOPIC and \
        topics['feedforward_node'][EFFORT_TOPIC] == EFFORT_TOPIC


@pytest.mark.parametrize('file, controller, effort', [
    ('ur_controllers.yaml', 'joint_trajectory_controller', True), ('ur_controllers.yaml', SCALED, False),
    ('franka_controllers.yaml', 'joint_trajectory_controller', True),
    ('gazebo_ur5e_controllers.yaml', 'joint_trajectory_controller', True),
    ('gazebo_panda_controllers.yaml', 'joint_trajectory_controller', True),
    ('mujoco_ur5e_controllers.yaml', 'joint_trajectory_controller', True),
    ('mujoco_panda_controllers.yaml', 'joint_trajectory_controller', True),
    ('ur_controllers.yaml', 'no_such_controller', False)])
def test_which_controllers_take_efforts(file, controller, effort):
    assert takes_effort(CONFIG / file, controller) is effort
    if controller == SCALED:
        assert command_interfaces(CONFIG / file, controller) == ['position']


def test_a_description_without_effort_command_interfaces_is_found_out():
    joints = ['j1', 'j2']
    effort = '<command_interface name="effort"/>'
    blocks = ''.join(f'<joint name="{j}"><command_interface name="position"/>{effort if j == "j1" else ""}</joint>'
                     for j in joints)
    urdf = f'<robot name="r"><link name="a"/><ros2_control name="s" type="system">{blocks}</ros2_control></robot>'
    assert missing_effort_commands(urdf, joints) == ['j2']
    assert missing_effort_commands('<robot name="r"><link name="a"/></robot>', joints) is None  # nothing to check
