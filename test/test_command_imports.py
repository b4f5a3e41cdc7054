"""Each ``dynid`` command imports what it uses and nothing heavier: numba where an estimator or the twin's compiled
loops run, cvxpy only for the SCS solver (the default physical solve is Clarabel's own interface), matplotlib where a
plot is drawn, mujoco where a MuJoCo model is written or run, Dask for a fleet, psycopg for a PostgreSQL record, rclpy
in the nodes. Each command runs its job for real in a fresh process (a module-scoped set of recordings and results
made here) and reports the modules it loaded; ``--help`` loads none of them, and ``dynid --help`` not even numpy."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_run import run_dynid

#: the libraries that cost a command seconds to import, or need a service or a display
HEAVY = ('numba', 'cvxpy', 'matplotlib', 'mujoco', 'dask', 'distributed', 'psycopg', 'rclpy')
#: what each command uses (whatever its options): the twin's loops and the estimators are compiled with numba, the
#: friction experiments' E-GMS fit runs the E-GMS
USES = {'simulate': {'numba'}, 'estimate': {'numba'}, 'identify-friction': {'numba'}, 'export-mjcf': {'mujoco'},
        'batch': {'dask', 'distributed'}, 'bringup': {'rclpy'}, 'demo': {'rclpy'}}
#: the ``--help`` of a command that loads one of them: estimate's settings class lives beside its estimators
HELP_USES = {'estimate': {'numba'}}
SUBCOMMANDS = ('model', 'simulate', 'import', 'excite', 'identify', 'export-urdf', 'export-mjcf', 'validate',
               'compare', 'identify-friction', 'estimate', 'health', 'payload', 'batch', 'fleet', 'bringup', 'demo')

#: ``python -c`` program: ``dynid.cli.main(argv)`` in a fresh process, then its exit code and the modules loaded
#: (JSON, the last line of stdout)
AUDIT = f'''
import json, sys
from dynid.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit_:
    code = exit_.code
print(json.dumps({{"code": code, "loaded": sorted(name for name in sys.modules if name.split(".")[0] in
                                                 {(*HEAVY, "numpy", "scipy", "pinocchio", "rosbags")!r})}}))
'''


def loaded(*argv: str, cwd: Path | None = None) -> tuple[int, set[str]]:
    """(exit code, the top-level packages of :data:`HEAVY` and numpy, scipy, pinocchio, rosbags it loaded) of
    ``dynid <argv>`` run in a fresh process."""
    done = subprocess.run([sys.executable, '-c', AUDIT, *argv], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report['code'], {name.split('.')[0] for name in report['loaded']}


@pytest.fixture(scope='module')
def files(tmp_path_factory) -> Path:
    """Recordings (UR5e twin at 1 kHz: 4 s plain, one 10 s period of its excitation with 2 kg on the flange, a 4 s
    RTDE log; the plateaus of one joint), results (WLS, physically consistent), a URDF of the arm and a health record
    with one session."""
    folder = tmp_path_factory.mktemp('commands')
    payload = ('--payload', '2', '--payload-com', '0,0,0.05')
    for argv in (('model', '--robot', 'ur5e', '--urdf', 'ur5e.urdf'),
                 ('simulate', '--duration', '4', '-o', 'rec', '--quiet'),
                 ('simulate', '--duration', '10', *payload, '--seed', '2', '-o', 'held', '--quiet'),
                 ('simulate', '--duration', '4', '--log-rate', '100', '--seed', '3', '-o', 'rtde', '--quiet'),
                 ('identify', 'rec', '-o', 'result.yaml', '--force', '--quiet'),
                 ('identify', 'rec', '--physical', '-o', 'physical.yaml', '--force', '--quiet'),
                 ('estimate', 'rec', '--params', 'result.yaml', '-o', 'estimate.yaml', '--db', 'health.sqlite3',
                  '--quiet'),
                 ('excite', '--robot', 'ur5e', '--experiment', 'plateaus', '--joint', 'wrist_3_joint', '-o',
                  'plateaus.yaml'),
                 ('simulate', '--trajectory', 'plateaus.yaml', '--rate', '250', '-o', 'plateaus', '--quiet')):
        done = run_dynid(*argv, cwd=folder)
        assert done.returncode == 0, (argv, done.stderr[-2000:])
    return folder


def test_the_top_level_help_loads_no_numerics():
    code, modules = loaded('--help')
    assert code == 0 and modules == set(), modules


@pytest.mark.parametrize('command', SUBCOMMANDS)
def test_a_commands_help_loads_no_heavy_library(command):
    code, modules = loaded(command, '--help')
    assert code == 0
    assert modules & set(HEAVY) <= HELP_USES.get(command, set()), modules


PAYLOAD = ('--payload-mass', '2', '--payload-com', '0,0,0.05')
RUNS = [  # (argv, what the options add to what the command uses: loaded whenever they run, or where they run)
    (('model', '--robot', 'ur5e'), ()),
    (('excite', '--robot', 'ur5e', '--harmonics', '2', '--period', '4', '-o', '{out}/traj.yaml'), ()),
    (('excite', '--robot', 'ur5e', '--harmonics', '2', '--period', '4', '-o', '{out}/traj.yaml', '--plot',
      '{out}/traj.png'), ('matplotlib',)),
    (('simulate', '--duration', '1', '-o', '{out}/sim', '--quiet'), ()),
    (('import', 'rtde/log.csv', '--preset', 'ur_rtde', '-o', '{out}/imported'), ()),
    (('identify', 'rec', '-o', '{out}/result.yaml', '--force', '--quiet'), ()),
    (('identify', 'rec', '--physical', '-o', '{out}/result.yaml', '--force', '--quiet'), ()),
    (('identify', 'rec', '--physical', '--physical-solver', 'scs', '-o', '{out}/result.yaml', '--force', '--quiet'),
     ('cvxpy?',)),  # SCS runs only where the unconstrained estimate is not consistent
    (('identify', 'rec', '-o', '{out}/result.yaml', '--report', '{out}/report', '--force', '--quiet'),
     ('matplotlib',)),
    (('validate', 'held', '--params', 'result.yaml', *PAYLOAD), ()),
    (('compare', 'result.yaml', 'physical.yaml', '--bag', 'held', *PAYLOAD), ()),
    (('estimate', 'rec', '--params', 'result.yaml', '-o', '{out}/estimate.yaml', '--no-record', '--quiet'), ()),
    (('health', '--db', 'health.sqlite3'), ()),
    (('payload', 'held', '--params', 'result.yaml', '-o', '{out}/payload.yaml'), ()),
    (('export-urdf', 'physical.yaml', '--robot', 'ur5e.urdf', '-o', '{out}/identified.urdf'), ()),
    (('export-mjcf', 'physical.yaml', '-o', '{out}/identified.xml'), ()),
    (('identify-friction', 'plateaus', '--params', 'result.yaml', '-o', '{out}/friction.yaml'), ()),
]


@pytest.mark.parametrize('argv, added', RUNS, ids=[' '.join(argv[:1] + tuple(a for a in argv[1:] if a.startswith('--')))
                                                  for argv, _ in RUNS])
def test_a_command_loads_what_it_uses_and_no_more(files, tmp_path, argv, added):
    code, modules = loaded(*(part.format(out=tmp_path) for part in argv), cwd=files)
    assert code == 0
    allowed = USES.get(argv[0], set()) | {name.rstrip('?') for name in added}
    assert modules & set(HEAVY) <= allowed, sorted(modules & set(HEAVY) - allowed)
    assert {name for name in added if not name.endswith('?')} <= modules  # what the option runs on is loaded


def test_the_health_listing_from_stored_judgements_loads_no_scipy_or_robot_model(files):
    """``dynid health`` lists the judgements its writers stored (``dynid estimate --db`` stores one after its
    session): reading them needs neither scipy (the trend's statistics) nor the robot model (the friction law)."""
    from dynid.health.record import HealthRecord
    from dynid.health.settings import HealthSettings
    from dynid.health.stored import read_judgements

    with HealthRecord(str(files / 'health.sqlite3'), readonly=True) as record:
        stored, stale, _ = read_judgements(record, HealthSettings())
    assert stored and not stale  # the listing reads the stored judgement, judges nothing
    code, modules = loaded('health', '--db', 'health.sqlite3', cwd=files)
    assert code == 0
    assert not modules & {'scipy', 'pinocchio'}, sorted(modules)
