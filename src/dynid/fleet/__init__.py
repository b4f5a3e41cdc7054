"""Many robots and recordings at once: the fleet's page over one health record, re-identification on Dask.

- :mod:`dynid.fleet.report`: every robot's joints ranked by forecast time to a limit and by recent
  changes; the fleet's page, JSON, and each robot's page.
- :mod:`dynid.fleet.synthetic`: a fleet's sessions from the twin's wear model (tests, benchmarks).
- :mod:`dynid.fleet.prior`: the results of robots of one model pooled into a fleet prior (``dynid fleet prior``).
- :mod:`dynid.fleet.standing`: each robot's parameters against the other robots', the ones standing apart named.
"""
