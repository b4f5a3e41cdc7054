"""Digital twin: flexible-joint robot with friction, heating, sensors and a joint controller (planned)."""
