"""Excitation: Fourier trajectories, their optimization, the seeds' special experiments, trajectory files.

- :mod:`dynid.excite.trajectory`: Fourier and point trajectories, the dynid trajectory file.
- :mod:`dynid.excite.fourier`: rest-to-rest Fourier parameterization, limits, random feasible designs.
- :mod:`dynid.excite.optimize`: identifiability criteria (cond, weighted, D-optimal) and the optimizer.
- :mod:`dynid.excite.design`: the Fourier excitation about a home as ``dynid excite`` designs it.
- :mod:`dynid.excite.experiments`: plateaus, gravity sweep, reciprocating sweep, bang-coast-bang,
  waypoint cycle, payload schedule.
"""
