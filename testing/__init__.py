"""What the test suite (``test/``) and the benchmarks (``benchmarks/``) both need around dynid, in one place both
import, so that neither imports the other: a throwaway PostgreSQL server (``pg_server``), an ament prefix of this
tree for launch files (``launch_prefix``), the launch-file visitor (``launch_visit``), generated inputs for
dynid's readers with the rule they are held to (``fuzz_inputs``) and the import graph of dynid's source
(``import_graph``). Not part of the installed package: it is imported
from the repository root (pytest.ini's ``pythonpath``, ``python -m benchmarks.…``).
"""
