"""The result and its evaluation: what the rest of the house reads (the result file and its schema, the torque
it predicts, its metrics and quality, the robot it came from)."""
