"""Friction and joint models: static maps, load and temperature dependence, GMS, E-GMS, stiffness.

All models are vectorized over samples and joints (joints on the last axis), state units and frames
in their docstrings, and expose regressor columns with parameter names where they are linear in
(some of) their parameters. Stateful models (GMS, E-GMS, JointFriction) have ``reset``, ``step``
(one sample, all joints) and a batch ``run``. Fits for the seeds' dedicated experiments are in
:mod:`dynid.friction.fit`.
"""

from dynid.friction.egms import EGMS, element_laws, periodic_lookup
from dynid.friction.gms import GMS
from dynid.friction.joint_friction import JointFriction
from dynid.friction.load import HamonQuadrantFriction, LoadDependentCoulomb
from dynid.friction.static import AsymmetricCoulombViscous, CoulombViscous, PowerLawViscous, StribeckMap
from dynid.friction.stiffness import OddPolynomialStiffness
from dynid.friction.temperature import ReferenceTemperatureFriction, TemperatureFriction

__all__ = [
    'EGMS',
    'GMS',
    'AsymmetricCoulombViscous',
    'CoulombViscous',
    'HamonQuadrantFriction',
    'JointFriction',
    'LoadDependentCoulomb',
    'OddPolynomialStiffness',
    'PowerLawViscous',
    'ReferenceTemperatureFriction',
    'StribeckMap',
    'TemperatureFriction',
    'element_laws',
    'periodic_lookup',
]
