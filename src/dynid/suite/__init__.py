"""The nodes composed (imports rclpy): ``dynid bringup`` (in one process or in processes), the demo run
over DDS and its operator node."""
