"""Friction and joint models (static maps, load and temperature dependence, GMS, E-GMS, stiffness).

Planned in the issue "Friction and joint models"; the basic per-joint Coulomb, viscous, offset and
rotor-inertia columns already live in :mod:`dynid.model.joint_terms`.
"""
