"""dynid's benchmarks: scripts that measure dynid beside the seeds' figures (``bench_*.py``) and the modules they
share, one package, so that they import each other as ``benchmarks.…`` without touching ``sys.path``.

Run one from the repository root as a module: ``.venv/bin/python -m benchmarks.bench_house`` (``README.md`` gives
each recorded run's command). The test suite does not import this package; its own tests are in ``tests/``.
"""
