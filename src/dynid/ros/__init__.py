"""ROS plumbing shared by the nodes (imports rclpy): the state-topic intake, how node processes run and
stop (runner), launch-file helpers, parameter declaration and the parameter page, the commanding node's
lifecycle, message conversions and diagnostics. The nodes themselves are :mod:`dynid.nodes`."""
