"""Payload identification: mass, centre of mass and inertia of a flange payload from one short motion,
and the arguments of the robots' own payload settings (UR ``set_payload``, Franka ``setLoad``)."""

from dynid.payload.estimate import PayloadEstimate, PayloadSettings, identify_payload

__all__ = ['PayloadEstimate', 'PayloadSettings', 'identify_payload']
