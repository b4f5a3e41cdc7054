"""dynid: dynamics of robot arms for ROS 2 — identify, estimate online, feed forward.

The core subpackages (model, friction, signal, identify, estimate, control, excite, sim, io) never
import rclpy; only :mod:`dynid.ros`, :mod:`dynid.nodes` and :mod:`dynid.suite` do.
"""

__version__ = '0.1.0'
