"""Every result ``dynid identify`` writes on ``bench_contact.py``'s real logs, by default and by each advice it prints,
taken by the contact observer.

The UR10e's training run and the LBR's first 70 % (:mod:`contact_real`) are identified as there, the output read
(not ``--quiet``'s progress: every line the command prints); each advice that names a setting is followed as written
(:func:`advised`) and the identification it asks for run and read again, to :data:`DEPTH` steps. Advice that asks
for another recording (a longer or optimized excitation) or for data the log does not hold (a rotor's velocity,
motor currents, a payload) is no way out of this log: listed, not followed. Each result written is then given to
:class:`dynid.contact.monitor.ContactMonitor` on the log's other data (UR10e: calibrated on every free run, the
pushes detected; LBR: the held-out 30 %, the RMS of τ̂_ext over KUKA's): accepted when neither refuses it.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np

from benchmarks import contact_real
from benchmarks.public_datasets import say
from dynid.cli.flags import ADVICE
from dynid.contact.monitor import ContactMonitor
from dynid.errors import InputError
from dynid.identify.result.result import IdentificationResult
from dynid.model import load_robot

DEPTH = 2
#: at most this many identifications a log
LIMIT = 16
#: the friction laws richer than a Coulomb-viscous one (``--friction``): what "the model misses a term there
#: (friction model, ...)" leaves to try
RICHER_FRICTION = ('load_squared', 'load_absolute', 'hamon', 'comprehensive')
#: (words of the output, the option groups that follow it as written)
PHRASES = (
    ('against the plain fit (--no-prior)', [('--no-prior',)]),
    ('physical consistency, when asked for', [('--physical',)]),
    ('the model misses a term there (friction model', [('--friction', law) for law in RICHER_FRICTION]),
    ('a method that needs no per-joint noise (ols or iirls)', [('--method', 'ols'), ('--method', 'iirls')]),
)
#: (words of the output, why it is no way out of the log)
NOT_FOLLOWED = (
    ('a longer or optimized excitation', 'a new recording'),
    ('give a longer recording', 'a new recording'),
    ('rotor inertia, torque source, payload', 'the log holds no rotor velocity, no motor current and no payload'),
)


def advised(text: str) -> tuple[list[tuple], list[str]]:
    """The option groups ``text`` (an identification's output) advises, as written (module docstring), and the
    advice not followed (with why). A smaller decimation is half the one the text names ('one in N')."""
    groups, skipped = [], []
    for words, follow in PHRASES:
        if words in text:
            groups += follow
    decimation = re.search(r'a smaller decimation.*?one in (\d+)', text, re.S)
    if decimation and int(decimation.group(1)) > 1:
        groups.append(('--decimation', str(int(decimation.group(1)) // 2)))
    for line in text.splitlines():
        if not line.startswith(('warning:', 'dynid identify: error:')):
            continue
        for template in ADVICE.values():
            if '{}' not in template or template.startswith('without'):
                continue
            for value in re.findall(re.escape(template).replace(r'\{\}', r'([^\s,;()]+)'), line):
                groups.append((template.split()[0], value.rstrip('.')))
    skipped += [f'{words}: {why}' for words, why in NOT_FOLLOWED if words in text]
    return list(dict.fromkeys(groups)), skipped


def merged(groups: tuple, group: tuple) -> tuple:
    """``groups`` with ``group`` in place of any group of the same option."""
    return tuple(sorted([g for g in groups if g[0] != group[0]] + [group]))


def identify(arguments: list[str]) -> tuple[int, str]:
    """``dynid ARGUMENTS`` in this process: its exit code and everything it printed."""
    from dynid.cli import main

    text = io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
        code = main(arguments)
    return code, text.getvalue()


def follow(log: list[str], folder: Path, label: str) -> tuple[list[dict], list[str]]:
    """The identifications of ``log`` (``dynid identify`` arguments but ``-o``): by default, then by each advice
    (module docstring). One row each: its flags, the advice it followed, whether it wrote a result and where."""
    queue, seen, rows, skipped = [((), 'default', 0)], set(), [], []
    while queue and len(rows) < LIMIT:
        groups, why, depth = queue.pop(0)
        if groups in seen:
            continue
        seen.add(groups)
        path = folder / f'ways_{label}_{len(rows)}.yaml'
        flags = [part for group in groups for part in group]
        code, text = identify(['identify', *log, *flags, '-o', str(path), '--force', '--quiet'])
        last = [line for line in text.splitlines() if line.startswith('dynid identify: error')]
        rows.append({'flags': ' '.join(flags) or '(defaults)', 'advice': why, 'written': code == 0 and path.is_file(),
                     'path': str(path), 'refused': last[0][:300] if code and last else None})
        groups_advised, not_followed = advised(text)
        skipped += not_followed
        if depth < DEPTH:
            queue += [(merged(groups, group), ' '.join(group), depth + 1) for group in groups_advised]
    return rows, list(dict.fromkeys(skipped))


def _ur10e_accepts(robot, free, pushes, rate, settings):
    def accepts(result) -> dict:
        monitor = ContactMonitor(result, robot, settings, rate, wrench=False)
        monitor.calibrate([free[name] for name in sorted(free)])
        return {'pushes_detected': f'{contact_real._pushes(monitor, pushes)[0]}_of_10'}
    return accepts


def _lbr_accepts(robot, signals, kuka, settings):
    def accepts(result) -> dict:
        out = ContactMonitor(result, robot, settings, 100.0, wrench=False).run(**signals)
        ratio = np.sqrt(np.mean(out.external[10:] ** 2, axis=0)) / np.sqrt(np.mean(kuka[10:] ** 2, axis=0))
        return {'rms_over_kuka': [round(float(v), 3) for v in ratio]}
    return accepts


def judge(rows: list[dict], accepts) -> None:
    """Each written result given to ``accepts`` (a refusal: InputError): ``accepted`` and what it measured."""
    for row in rows:
        if not row['written']:
            continue
        try:
            row.update(accepts(IdentificationResult.load(row['path'])), accepted=True)
        except InputError as error:
            row.update(accepted=False, observer_refused=str(error)[:300])


def ways_out(dyncal: Path | None, lbr: Path | None, folder: Path, settings) -> dict:
    """Both logs' rows (:func:`follow`, :func:`judge`) and the count of results accepted of those written."""
    logs = {}
    if dyncal is not None:
        robot, _, free, pushes, rate = contact_real.ur10e_logs(dyncal, folder)
        train = folder / f'ur10e_identification_data_{contact_real.DYNCAL_TRAIN}'
        logs['ur10e'] = ([str(train), '--robot', 'ur10e', '--drives', str(folder / 'ur10e_drives.yaml')],
                         _ur10e_accepts(robot, free, pushes, rate, settings))
    if lbr is not None:
        urdf = lbr / 'urdf' / 'med' / 'med7dock.urdf'
        rows = (lbr / 'src' / 'test' / 'measurements.csv').read_text().splitlines()[1:]
        table = np.array([[float(x) for x in row.split(',')] for row in rows])
        held, signals = contact_real.lbr_held_out(table, int(contact_real.LBR_SPLIT * len(rows)))
        logs['lbr'] = ([str(folder / 'lbr_train'), '--robot', str(urdf), '--torque-sign', 'all=-1'],
                       _lbr_accepts(load_robot(str(urdf)), signals, -held[:, 14:21], settings))
    out, written, accepted = {}, 0, 0
    for label, (log, accepts) in logs.items():
        rows, skipped = follow(log, folder, label)
        judge(rows, accepts)
        written += sum(row['written'] for row in rows)
        accepted += sum(bool(row.get('accepted')) for row in rows)
        out[label] = {'identifications': rows, 'advice_not_followed': skipped}
        say(f'{label}: {sum(r["written"] for r in rows)} results written of {len(rows)} identifications, '
            f'{sum(bool(r.get("accepted")) for r in rows)} accepted')
    return {'accepted': f'{accepted}_of_{written}', **out}
