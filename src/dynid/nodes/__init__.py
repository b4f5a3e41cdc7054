"""The thin rclpy nodes of dynid (their shared machinery is :mod:`dynid.ros`, their composition :mod:`dynid.suite`).

The node classes take the usual rclpy ``Node`` keyword arguments (``context``, ``namespace``,
``parameter_overrides``, ``cli_args`` for remappings, ...), so they compose with a user's own nodes
in one process and one executor. A user's node that watches the twin and the online estimates::

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from std_msgs.msg import Float64MultiArray

    from dynid.nodes import EstimatorNode, SimNode

    class StiffnessWatch(Node):                    # the user's own node
        def __init__(self, **kwargs):
            super().__init__('stiffness_watch', **kwargs)
            self.create_subscription(Float64MultiArray, 'estimator_node/stiffness', self.on_estimate, 10)

        def on_estimate(self, message):
            self.get_logger().info(f'k0 of the first joint: {message.data[2]:.0f} N·m/rad')

    rclpy.init()
    nodes = [SimNode(namespace='arm', parameter_overrides=[Parameter('rate', value=200.0)]),
             EstimatorNode(namespace='arm'), StiffnessWatch(namespace='arm')]
    executor = SingleThreadedExecutor()
    for node in nodes:
        executor.add_node(node)
    try:
        executor.spin()
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()

``dynid bringup --no-processes`` composes the whole suite this way (:mod:`dynid.suite.bringup`). The
classes are imported on first use, so ``import dynid.nodes`` stays light.
"""

from importlib import import_module

#: exported class -> module of dynid.nodes that defines it
_CLASSES = {'SimNode': 'sim_node', 'ExcitationNode': 'excitation_node', 'IdentifierNode': 'identifier_node',
            'EstimatorNode': 'estimator_node', 'FeedforwardNode': 'feedforward_node', 'ContactNode': 'contact_node'}
__all__ = sorted(_CLASSES)


def __getattr__(name: str):
    if name in _CLASSES:
        return getattr(import_module(f'{__name__}.{_CLASSES[name]}'), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
