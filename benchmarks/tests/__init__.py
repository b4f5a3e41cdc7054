"""The benchmarks' own tests: their scoring checked on cases whose answer is known. ``make test`` runs them
(pytest.ini's testpaths); they import the benchmarks as the package ``benchmarks`` and nothing of ``test/``."""
