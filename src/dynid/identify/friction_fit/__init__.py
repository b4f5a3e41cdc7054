"""Joint friction identified from the seeds' dedicated experiments (Madsen 2020 ch.4 and ch.6): constant-velocity
plateaus, slow reversals, temperature runs and stiffness sweeps, fitted into the result's ``joint_friction`` section.

:mod:`~dynid.identify.friction_fit.identify` runs the job (``dynid identify-friction``),
:mod:`~dynid.identify.friction_fit.recordings` reads the experiments' recordings,
:mod:`~dynid.identify.friction_fit.fit`
and :mod:`~dynid.identify.friction_fit.static_fit` fit the laws of :mod:`dynid.friction`, and
:mod:`~dynid.identify.friction_fit.identified` turns a result's section back into those laws.
"""
