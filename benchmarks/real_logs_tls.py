"""TLS drive gains on 100 Hz twin recordings with a flange payload: the warning and the fixed-gain remedy.

Run: ``.venv/bin/python -m benchmarks.real_logs_tls`` (about two minutes); ``benchmarks/bench_real_logs.py``
runs it as its second part.

The UR5e twin runs the built-in optimized excitation twice and its logger keeps ~100 Hz of each
(``dynid simulate --log-rate 100``: jittery stamps, single gaps, positions rounded to 1e-4 rad, glitch rows,
UR RTDE's CSV), read back through ``dynid import --preset ur_rtde``. The true drive gains are up to ±10 % off
the nominal ones (one seed for both runs, so that they share them): once without payload and once with a
known 3 kg point mass on the flange axis (``--payload-com 0,0,0.05``), which puts no torque on the
last joint. Gautier & Briot's IDIM-TLS with the known payload then

1. must warn on the joints whose gain the payload does not determine (``tls_unexcited_joints_warned``:
   the warning names wrist_3_joint, the joint the payload does not load), and
2. with those gains held at the twin's truth (``--fix-drive-gain``) must recover the others within 2 %
   (``tls_fixed_gain_max_error_percent``: the largest error of a free gain against the truth).
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from pathlib import Path

import yaml

from dynid.cli import main
from dynid.excite.trajectory import builtin_excitation_path

RATE_HZ = 100.0
DURATION_S = 20.0
PAYLOAD_KG = 3.0
UNLOADED_JOINT = 'wrist_3_joint'  # a point mass on the flange axis puts no torque on it


def _cli(*args: str) -> None:
    with contextlib.redirect_stdout(sys.stderr):  # stdout ends with the one JSON line
        code = main([str(a) for a in args])
    if code != 0:
        raise RuntimeError(f'dynid {" ".join(map(str, args))} exited {code}')


def _gain_document(path: Path) -> dict:
    return yaml.safe_load(path.read_text())['drive_gains']


def measure_tls(workdir, quick: bool = False) -> dict:
    """The two TLS figures of ``bench_real_logs`` (module docstring), computed in ``workdir``."""
    work = Path(workdir)
    excitation = builtin_excitation_path('ur5e')
    common = ['--trajectory', excitation, '--duration', DURATION_S, '--log-rate', RATE_HZ, '--drive-gain-error', 0.1,
              '--quiet']
    # one seed: the seed draws the true gains too, and both runs must share them
    _cli('simulate', *common, '--seed', 1, '-o', work / 'tls_empty')
    _cli('simulate', *common, '--seed', 1, '--payload', PAYLOAD_KG, '--payload-com', '0,0,0.05',
         '-o', work / 'tls_flange')
    for name in ('tls_empty', 'tls_flange'):
        _cli('import', work / name / 'log.csv', '--preset', 'ur_rtde', '-o', work / f'{name}_imported')
    truth = yaml.safe_load((work / 'tls_empty' / 'truth.yaml').read_text())['plant']['drives']
    identify = ['identify', work / 'tls_empty_imported', work / 'tls_flange_imported',
                '--payload-mass', f'0,{PAYLOAD_KG}', '--payload-com', '0,0,0.05', '--method', 'tls',
                '--quiet', '--force']
    _cli(*identify, '-o', work / 'tls_free.yaml')
    warned = _gain_document(work / 'tls_free.yaml')['diagnostics']['unexcited_joints']
    fixes = [f'--fix-drive-gain={joint}={truth[joint]["drive_gain"]}' for joint in warned]
    _cli(*identify, *fixes, '-o', work / 'tls_fixed.yaml')
    gains = _gain_document(work / 'tls_fixed.yaml')['values']
    errors = {joint: 100.0 * abs(gains[joint] / truth[joint]['drive_gain'] - 1.0) for joint in gains
              if joint not in warned}
    free = _gain_document(work / 'tls_free.yaml')['values']
    return {'tls_unexcited_joints_warned': UNLOADED_JOINT in warned,
            'tls_warned_joints': warned,
            'tls_fixed_gain_max_error_percent': max(errors.values()),
            'tls_free_gain_max_error_percent': max(100.0 * abs(free[j] / truth[j]['drive_gain'] - 1.0) for j in free)}


if __name__ == '__main__':
    with tempfile.TemporaryDirectory(prefix='real_logs_tls_') as folder:
        figures = measure_tls(folder)
    print(f'TLS with a {PAYLOAD_KG:g} kg payload on the flange axis, {RATE_HZ:g} Hz twin real logs of '
          f'{DURATION_S:g} s', file=sys.stderr)
    print(f'  joints warned: {", ".join(figures["tls_warned_joints"]) or "none"} (expected: {UNLOADED_JOINT})',
          file=sys.stderr)
    print(f'  largest free-gain error: {figures["tls_free_gain_max_error_percent"]:.3g} % without fixing, '
          f'{figures["tls_fixed_gain_max_error_percent"]:.3g} % with the warned gains fixed (target < 2 %)',
          file=sys.stderr)
    print(json.dumps({'benchmark': 'real_logs_tls', **figures}))
