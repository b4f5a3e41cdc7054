"""What the arm feels: the external joint torque, the flange wrench and contacts, from the identified model.

The generalized momentum observer (:mod:`dynid.contact.observer`) over the identification result as it is
(:mod:`dynid.contact.dynamics`), its state-dependent σ (:mod:`dynid.contact.uncertainty`), contact detection
with hysteresis calibrated on contact-free motion (:mod:`dynid.contact.detection`) and the flange wrench
(:mod:`dynid.contact.wrench`). The estimates are advisory: they never replace the robot's safety function.
"""
