"""Batch inverse-dynamic identification (IDIM) as a pipeline of pure steps, in wings that show it (each imports only
the wings below it; test/test_code_shape.py holds them to that order):

- :mod:`~dynid.identify.job`: the job (the workflow ``dynid identify`` and identifier_node share, the node's session,
  a refused identification's ways out); :mod:`~dynid.identify.friction_fit`: the friction experiments' own job;
- :mod:`~dynid.identify.outputs`: the report, URDF and MJCF;
- :mod:`~dynid.identify.validation`: validation and comparison;
- :mod:`~dynid.identify.methods`: one module per method, registered (the registry and contract,
  :mod:`~dynid.identify.registry`, stand at the bottom);
- :mod:`~dynid.identify.steps`: diagnose, choose, fit, check, the result assembled, and ``identify()`` running them;
- :mod:`~dynid.identify.selection`: the model choice's candidates, folds and table;
- :mod:`~dynid.identify.equations`: the request, the recordings read and the equations prepared once, the problem;
- :mod:`~dynid.identify.solve`: the solvers and the priors' sources (the robot file, a previous result, a fleet);
- :mod:`~dynid.identify.result`: the result and its evaluation, what the rest of the house reads;
- at the bottom: the names and settings a front end reads without loading the pipeline (:mod:`~dynid.identify.choices`,
  :mod:`~dynid.identify.settings`, the methods' registry).
"""
