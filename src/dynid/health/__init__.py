"""Joint health over a robot's life: the record of every estimation session, trends, forecasts, a page.

- :mod:`dynid.health.record`, :mod:`dynid.health.schema`: the SQLite record and its versioned schema.
- :mod:`dynid.health.session`: a session's per-joint values from a replay (and the reduction a node uses).
- :mod:`dynid.health.trend`, :mod:`dynid.health.assessment`: one quantity's changes, trend and forecast;
  a robot's judgement.
- :mod:`dynid.health.online`: a running estimator's sessions and the judgement for diagnostics.
- :mod:`dynid.health.page`, :mod:`dynid.health.job`: the HTML page; ``dynid health``'s work.
- :mod:`dynid.health.settings`: the one settings object of the job.
"""
