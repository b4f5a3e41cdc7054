"""Recordings and files: the Dataset type, rosbag2/MCAP read and write (rosbags), YAML results."""

from dynid.io.dataset import Dataset

__all__ = ['Dataset']
