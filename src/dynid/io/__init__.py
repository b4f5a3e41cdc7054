"""Recordings (rosbag2/MCAP through rosbags), result files and datasets (planned)."""
