"""Thin rclpy nodes: the only modules of dynid that import rclpy (planned)."""
