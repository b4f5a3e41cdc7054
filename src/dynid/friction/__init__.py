"""Friction and joint models: static maps, load and temperature dependence, GMS, E-GMS, stiffness.

All models are vectorized over samples and joints (joints on the last axis), state units and frames
in their docstrings, and expose regressor columns with parameter names where they are linear in
(some of) their parameters. Stateful models (GMS, E-GMS, JointFriction) have ``reset``, ``step``
(one sample, all joints) and a batch ``run``. Fits for the seeds' dedicated experiments are in
:mod:`dynid.identify.friction_fit.fit`.

The identified model's laws (the identification's columns, the feedforward's friction): :mod:`~dynid.friction.law`
and their registry :mod:`~dynid.friction.laws`. Each model is imported from its module, so that one model does not
load the others' machinery (the E-GMS and the stiffness are compiled with numba): :mod:`~dynid.friction.static`
(``CoulombViscous``, ``AsymmetricCoulombViscous``, ``PowerLawViscous``, ``StribeckMap``), :mod:`~dynid.friction.load`
(``LoadDependentCoulomb``), :mod:`~dynid.friction.temperature` (``TemperatureFriction``,
``ReferenceTemperatureFriction``), :mod:`~dynid.friction.gms` (``GMS``), :mod:`~dynid.friction.egms` (``EGMS``,
``element_laws``, ``periodic_lookup``), :mod:`~dynid.friction.joint_friction` (``JointFriction``) and
:mod:`~dynid.friction.stiffness` (``OddPolynomialStiffness``).
"""
