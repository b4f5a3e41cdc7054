"""What a result is written as: the HTML report, the comparison's page, URDF and MJCF."""
