"""dynid's node classes, exported from ``dynid.nodes``, run in one process with a user's own node.

What the module docstring of dynid.nodes shows: SimNode and EstimatorNode in one executor with a
user's node that takes the estimates, all under one namespace; no launch needed (rclpy over DDS,
an isolated domain, localhost only).
"""

import os
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

import dynid.nodes
from dynid.nodes import EstimatorNode, SimNode

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'


class StiffnessWatch(Node):
    """A user's node: keeps the estimates and the joint states it sees."""

    def __init__(self, **kwargs):
        super().__init__('stiffness_watch', **kwargs)
        self.estimates, self.states = [], []
        self.create_subscription(Float64MultiArray, 'estimator_node/stiffness', self.estimates.append, 10)
        self.create_subscription(JointState, 'joint_states', self.states.append, qos_profile_sensor_data)


def test_exports_are_the_node_classes():
    from dynid.nodes.feedforward_node import FeedforwardNode
    assert dynid.nodes.FeedforwardNode is FeedforwardNode
    assert set(dynid.nodes.__all__) == {'SimNode', 'ExcitationNode', 'IdentifierNode', 'EstimatorNode',
                                        'FeedforwardNode', 'ContactNode'}
    assert 'from dynid.nodes import EstimatorNode, SimNode' in dynid.nodes.__doc__


def test_node_classes_compose_with_a_users_node_in_one_process(ros_domain):
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    nodes = [SimNode(context=context, namespace='arm', parameter_overrides=[Parameter('rate', value=200.0)]),
             EstimatorNode(context=context, namespace='arm'), StiffnessWatch(context=context, namespace='arm')]
    executor = SingleThreadedExecutor(context=context)
    for node in nodes:
        executor.add_node(node)
    watch = nodes[-1]
    try:
        end = time.monotonic() + 60.0
        while len(watch.estimates) < 3 and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
        assert watch.states and watch.states[-1].name[0] == 'shoulder_pan_joint'
        assert len(watch.estimates) >= 3, 'no ~/stiffness reached the user node'
        assert [d.size for d in watch.estimates[-1].layout.dim] == [6, 6]
        assert {n.get_fully_qualified_name() for n in nodes} == {'/arm/sim_node', '/arm/estimator_node',
                                                                 '/arm/stiffness_watch'}
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
