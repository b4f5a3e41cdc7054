"""Generated inputs for dynid's readers and importers, and the one rule they are held to (issue 31, item 5):
every outcome is a success or dynid's InputError with a one-line message (exit 2 at the CLI), never another
exception, and a refusal leaves no partial output behind.

Shared by test/test_fuzz_inputs.py (a few tens of examples per reader) and benchmarks/diagnostics_fuzz.py
(thousands). The inputs are hypothesis strategies; each ``run_*`` function takes one drawn input and
returns an :class:`Outcome` instead of raising, so that a caller can count as well as assert.
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from hypothesis import strategies as st

from dynid.cli import main
from dynid.errors import InputError
from dynid.files import STAGING_SUFFIX

JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
          'wrist_3_joint')
HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])


@dataclass
class Outcome:
    """What one input did: ``ok`` (read or written), ``refused`` (InputError / exit 2 with one line), or
    ``traceback`` (any other exception, or a refusal that is not one line); ``partial`` when a refusal left
    an output (or a staging folder) behind."""

    kind: str
    detail: str = ''
    partial: bool = False

    @property
    def bad(self) -> bool:
        return self.kind == 'traceback' or self.partial


# ------------------------------------------------------------------------------------------ runners
def run_cli(args: list[str], outputs: list[Path]) -> Outcome:
    """``dynid ARGS``: exit 0 or exit 2 with one line on stderr; after exit 2 none of ``outputs`` (nor any
    staging folder beside them) exists."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(args)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - counting what escapes (SystemExit included) is the point
        return Outcome('traceback', f'{type(error).__name__}: {error}\n{traceback.format_exc(limit=-3)}')
    lines = err.getvalue().strip().splitlines()
    if code == 0:
        return Outcome('ok')
    if code != 2 or len(lines) != 1 or ': error: ' not in lines[0]:
        return Outcome('traceback', f'exit {code}: {err.getvalue()[-600:]}')
    left = [str(p) for p in outputs if p.exists()] + [
        str(p) for folder in {o.parent for o in outputs} if folder.exists()
        for p in folder.iterdir() if p.name.endswith(STAGING_SUFFIX)]
    return Outcome('refused', lines[0], partial=bool(left))


def run_reader(read, *args) -> Outcome:
    """``read(*args)``: returns, or raises InputError with a one-line message."""
    try:
        read(*args)
    except InputError as error:
        text = str(error)
        return Outcome('refused', text) if text and '\n' not in text else Outcome('traceback', f'message: {text!r}')
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001
        return Outcome('traceback', f'{type(error).__name__}: {error}\n{traceback.format_exc(limit=-3)}')
    return Outcome('ok')


# ------------------------------------------------------------------------------------------ CSV logs
ODD_NUMBERS = st.sampled_from(['nan', 'NaN', 'inf', '-inf', '1e308', '-1e308', '', 'x', '0x10', '1,5', '--1',
                               '1e-320', '3.4.5', ' ', '"7"'])
TIME_KINDS = ('from zero', 'offset', 'negative', 'wall clock', 'milliseconds', 'jittered', 'duplicates',
              'unsorted', 'constant', 'huge', 'tiny steps', 'backwards')


@st.composite
def csv_logs(draw) -> tuple[str, str]:
    """(CSV text, --columns spec): a UR5e log of 0-120 rows with an odd time column (starting at 0, negative,
    ms, duplicated, unsorted, ...), optional columns, and cells or lines replaced by odd text."""
    rows = draw(st.integers(0, 120))
    rate = draw(st.sampled_from([30.0, 100.0, 125.0, 500.0, 1000.0]))
    kind = draw(st.sampled_from(TIME_KINDS))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    k = np.arange(rows, dtype=float)
    t = k / rate
    unit = 's'
    if kind == 'offset':
        t = t + draw(st.floats(0.0, 1e4))
    elif kind == 'negative':
        t = t - draw(st.floats(1e-4, 1e3))
    elif kind == 'wall clock':
        t = t + 1.7e9 + rng.uniform(0.0, 0.3 / rate, rows)
    elif kind == 'milliseconds':
        t, unit = 1e3 * t, 'ms'
    elif kind == 'jittered':
        t = t + rng.uniform(0.0, draw(st.floats(0.0, 2.0)) / rate, rows)
    elif kind == 'duplicates' and rows:
        t = t[np.sort(rng.integers(0, rows, rows))]
    elif kind == 'unsorted':
        t = rng.permutation(t)
    elif kind == 'constant':
        t = np.zeros(rows)
    elif kind == 'huge':
        t = t + 1e17
    elif kind == 'tiny steps':
        t = k * 1e-12
    elif kind == 'backwards':
        t = -t
    if kind == 'jittered' and rows:
        t[0] = t[0] + 0.3 / rate  # the first stamp lags most: its tick lies before the first stamp
    if kind in ('from zero', 'jittered') and rows:
        t = t - t[0]
    amplitude = draw(st.sampled_from([0.0, 1e-3, 0.3, 2.0, 50.0]))
    q = HOME + amplitude * np.sin(2 * np.pi * 0.4 * k[:, None] / rate + np.arange(6))
    if draw(st.booleans()):
        q = np.round(q, draw(st.integers(0, 6)))
    signals = {'q': q}
    if draw(st.booleans()):
        signals['dq'] = np.gradient(q, axis=0) * rate if rows > 1 else np.zeros_like(q)
    effort = draw(st.sampled_from([None, 'tau', 'current']))
    if effort:
        signals[effort] = rng.normal(0.0, 5.0, (rows, 6))
    if draw(st.booleans()):
        signals['temperature'] = 25.0 + rng.normal(0.0, 1.0, (rows, 6))
    header = ['t'] + [f'{name}{j}' for name in signals for j in range(6)]
    table = [[repr(float(t[i]))] + [repr(float(v)) for name in signals for v in signals[name][i]]
             for i in range(rows)]
    for _ in range(draw(st.integers(0, 6))):  # odd cells
        if rows:
            table[rng.integers(rows)][rng.integers(len(header))] = draw(ODD_NUMBERS)
    lines = [','.join(header)] + [','.join(row) for row in table]
    for _ in range(draw(st.integers(0, 3))):  # odd lines: garbage, short, long, blank, a second header
        line = draw(st.sampled_from(['garbage', ',,,', '1,2', ','.join(['1'] * 60), '', lines[0], '#comment']))
        lines.insert(int(rng.integers(1, len(lines) + 1)), line)
    if draw(st.booleans()) and rows:  # a column missing from the header
        lines[0] = ','.join(header[:-1])
    spec = [f'time=t,time_unit={unit}'] if draw(st.integers(0, 9)) else []
    spec += [f'{name}={name}{{i}}' for name in signals]
    return '\n'.join(lines) + ('\n' if draw(st.booleans()) else ''), ','.join(spec)


def run_import(folder: Path, case: tuple[str, str], number: int) -> Outcome:
    """``dynid import`` of one generated CSV log; a success must read back as a recording."""
    text, spec = case
    log = folder / f'log_{number}.csv'
    log.write_text(text)
    output = folder / f'imported_{number}'
    args = ['import', str(log), '--columns', spec, '--robot', 'ur5e', '-o', str(output)]
    if 'time=' not in spec:
        args += ['--rate', '100']
    outcome = run_cli(args, [output])
    if outcome.kind == 'ok':
        from dynid.io.bag import read_bag

        read = run_reader(read_bag, output)
        if read.kind != 'ok':
            return Outcome('traceback', f'an imported bag does not read back: {read.detail}')
    shutil.rmtree(output, ignore_errors=True)
    log.unlink()
    return outcome


# ------------------------------------------------------------------------------------------ YAML files
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 20, 10 ** 20),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                   st.lists(st.floats(allow_nan=True), max_size=4), st.just({}), st.just([]),
                   st.just({'a': [1, 2]}))


def _paths(document, prefix=()):
    """Every key path of a nested document (dicts and lists)."""
    yield prefix
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for i, value in enumerate(document[:6]):
            yield from _paths(value, (*prefix, i))


@st.composite
def mutations(draw, document) -> list:
    """1-4 edits of ``document``: a value replaced by an odd one, a key deleted, or a list emptied/shortened."""
    paths = [p for p in _paths(document) if p]
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(paths))
        edits.append((path, draw(st.sampled_from(['replace', 'replace', 'delete', 'truncate'])), draw(LEAVES)))
    return edits


def mutated(document, edits):
    """A deep copy of ``document`` with ``edits`` (from :func:`mutations`) applied where they still apply."""
    document = copy.deepcopy(document)
    for path, how, value in edits:
        parent = document
        try:
            for key in path[:-1]:
                parent = parent[key]
            key = path[-1]
            if how == 'delete':
                del parent[key]
            elif how == 'truncate' and isinstance(parent[key], list | dict | str):
                parent[key] = parent[key][:len(parent[key]) // 2] if not isinstance(parent[key], dict) else {}
            else:
                parent[key] = value
        except (KeyError, IndexError, TypeError):
            continue
    return document


def dump(document) -> str:
    """YAML of a document that may hold NaN and infinities (as YAML's .nan/.inf)."""
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


RAW_TEXT = st.one_of(st.text(max_size=200), st.sampled_from(
    ['', '---', '- 1\n- 2', 'a: [', '\x00\x01', 'dynid_result: 99', '{}', 'joint_names: 5', ': :',
     '!!python/object:os.system {}']))


# ------------------------------------------------------------------------------------------ bags
BAG_DAMAGE = ('truncate', 'overwrite', 'metadata', 'no metadata', 'empty file', 'extra file')


@st.composite
def bag_damage(draw) -> tuple:
    """One way of damaging a recording: where (a fraction of the file) and what."""
    return (draw(st.sampled_from(BAG_DAMAGE)), draw(st.floats(0.0, 1.0)), draw(st.binary(min_size=1, max_size=64)),
            draw(RAW_TEXT))


def damaged_bag(template: Path, folder: Path, damage: tuple, number: int) -> Path:
    """A copy of the bag directory ``template`` damaged as ``damage`` says."""
    how, where, data, text = damage
    bag = folder / f'bag_{number}'
    shutil.copytree(template, bag)
    storage = next(p for p in bag.iterdir() if p.suffix in ('.mcap', '.db3'))
    size = storage.stat().st_size
    if how == 'truncate':
        with storage.open('r+b') as stream:
            stream.truncate(int(where * size))
    elif how == 'overwrite':
        with storage.open('r+b') as stream:
            stream.seek(min(int(where * size), size - 1))
            stream.write(data)
    elif how == 'metadata':
        (bag / 'metadata.yaml').write_text(text)
    elif how == 'no metadata':
        (bag / 'metadata.yaml').unlink()
    elif how == 'empty file':
        storage.write_bytes(b'')
    else:
        (bag / f'extra{storage.suffix}').write_bytes(data)
    return bag


def finite_or_none(value) -> bool:
    return value is None or (isinstance(value, float) and math.isfinite(value))


# ------------------------------------------------------------------------------------------ the other files
def file_documents(folder: Path, joints=JOINTS) -> dict:
    """The other files a user hands dynid, as parsed documents to mutate: the built-in UR5e's robot file, a payload
    file, a batch manifest (naming ``folder / 'bag'``), a stiffness baseline and the suite's parameter file."""
    from importlib import resources

    from dynid.files import load_yaml

    root = Path(__file__).resolve().parents[1]
    return {
        'robot_file': load_yaml(resources.files('dynid.model').joinpath('data/ur5e.yaml').read_text()),
        'payload': {'dynid_payload': 1, 'robot': 'ur5e', 'joint_names': list(joints), 'frame': 'tool0',
                    'mass': 2.0, 'mass_std': 0.01, 'com': [0.0, 0.01, 0.05], 'com_std': [0.001, 0.001, 0.002],
                    'inertia': [[0.01, 0.0, 0.0], [0.0, 0.01, 0.0], [0.0, 0.0, 0.005]], 'inertia_std': None,
                    'inertia_identified': True, 'inertia_note': '',
                    'parameters': [2.0, 0.0, 0.02, 0.1, 0.015, 0.0, 0.015, 0.0, 0.0, 0.005],
                    'offsets': {j: 0.01 for j in joints}, 'warnings': [],
                    'provenance': {'recording': 'bag', 'settings': {'inertia': 'auto', 'joint_offsets': True}}},
        'manifest': {'recordings': [{'bag': str(folder / 'bag'), 'robot': 'cell-1', 'model': 'ur5e'},
                                    {'bag': 'bag', 'robot': 'cell-2'}]},
        'baseline': {'robot': 'ur5e', 'k0': {j: 3.0e4 + 1e3 * k for k, j in enumerate(joints)}},
        'parameters': load_yaml((root / 'config' / 'suite.yaml').read_text()),
    }


def node_declarations(domain_id: int) -> dict:
    """{fully qualified node name: {parameter: Declared}} of every dynid node, each built once with its defaults on a
    private context (what a parameter file is checked against)."""
    from dynid.ros.parameter_docs import build_nodes
    from dynid.ros.parameter_file import declared_parameters

    return {f'/{name}': declared_parameters(node) for name, node in build_nodes(domain_id)}


def run_parameter_file(path: Path, declarations: dict) -> Outcome:
    """Every dynid node's check of the parameter file ``path``: the first refusal, or ok."""
    from dynid.ros.parameter_file import check_parameter_file

    for node, declared in declarations.items():
        outcome = run_reader(check_parameter_file, path, node, declared)
        if outcome.kind != 'ok':
            return outcome
    return Outcome('ok')


# ------------------------------------------------------------------------------------------ health records
RECORD_CELLS = (  # (table, column, what the database lets an older writer or a hand store there)
    ('sessions', 'started_utc', 'real'), ('sessions', 'duration_s', 'real'), ('sessions', 'operating_hours', 'real'),
    ('sessions', 'payload_kg', 'real'), ('joint_sessions', 'stiffness', 'real'),
    ('joint_sessions', 'friction_scale', 'real'), ('joint_sessions', 'temperature_c', 'real'),
    ('joint_sessions', 'coulomb_nm', 'real'), ('joint_sessions', 'samples', 'integer'),
    ('joint_sessions', 'stiffness_std', 'real'), ('events', 'time_utc', 'real'), ('robots', 'joint_names', 'json'),
    ('judgements', 'judgement', 'blob'), ('judgements', 'sessions', 'integer'), ('sessions', 'mounting', 'text'))
ODD_REALS = st.one_of(st.sampled_from([1e300, -1e300, 1.7e18, 1.7e12, -1.0, 0.0, float('inf'), float('-inf'),
                                       float('nan'), 1e-300, 2.0**63]), st.floats(allow_nan=True))
ODD_JSON = st.one_of(st.sampled_from(['', '[]', '{}', '[1, 2]', '"a"', 'null', '[["a"]]', '[' * 50, '{"a": 1}']),
                     st.text(max_size=30))


@st.composite
def record_damage(draw) -> list:
    """1-3 cells of a health record set to odd values of their column's type (:data:`RECORD_CELLS`)."""
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        table, column, kind = draw(st.sampled_from(RECORD_CELLS))
        if kind == 'real':
            value = draw(ODD_REALS)
        elif kind == 'integer':
            value = draw(st.sampled_from([2**31, 2**63 - 1, -(2**63), -1, 0, 10**15]))
        elif kind == 'json':
            value = draw(ODD_JSON)
        elif kind == 'blob':
            value = draw(st.binary(max_size=40))
        else:
            value = draw(st.text(max_size=20))
        edits.append((table, column, draw(st.integers(0, 10**6)), value))
    return edits


def health_record(folder: Path) -> Path:
    """A small SQLite health record: two twin robots of 8 sessions, an event, one robot's judgement stored."""
    from dynid.fleet.synthetic import wear_sessions
    from dynid.health.record import Event, HealthRecord
    from dynid.health.stored import store_judgement
    from dynid.sim.wear import SessionSchedule

    path = folder / 'health.sqlite3'
    with HealthRecord(path) as record:
        for r in range(2):
            for session in wear_sessions(f'cell-{r}', SessionSchedule.regular(8, seed=r), seed=r):
                record.append(session)
        record.add_event('cell-0', Event('maintenance', 1.7e9 + 3 * 86400.0, None, 'grease'))
        store_judgement(record, 'cell-1')
    return path


def damaged_record(template: Path, folder: Path, edits: list, number: int) -> Path:
    """A copy of the record ``template`` with ``edits`` (:func:`record_damage`) written into it directly, as an
    older dynid or another tool could have."""
    import sqlite3

    path = folder / f'health_{number}.sqlite3'
    shutil.copyfile(template, path)
    connection = sqlite3.connect(path)
    for table, column, row, value in edits:
        keys = connection.execute(f'SELECT rowid FROM {table}').fetchall() if table != 'joint_sessions' else \
            connection.execute('SELECT session_id, joint FROM joint_sessions').fetchall()
        if not keys:
            continue
        key = keys[row % len(keys)]
        where = 'session_id = ? AND joint = ?' if table == 'joint_sessions' else 'rowid = ?'
        try:
            connection.execute(f'UPDATE {table} SET {column} = ? WHERE {where}', (value, *key))
        except (sqlite3.DatabaseError, OverflowError):  # the database refuses it (a type, a constraint): not stored
            continue
    connection.commit()
    connection.close()
    return path


def run_health(path: Path, folder: Path, number: int) -> Outcome:
    """``dynid health`` (the listing) and its fleet page on a damaged record: exit 0, or 2 with one line."""
    listing = run_cli(['health', '--db', str(path)], [])
    if listing.bad:
        return listing
    page = folder / f'fleet_{number}'
    outcome = run_cli(['health', '--db', str(path), '--fleet-report', str(page)], [page])
    shutil.rmtree(page, ignore_errors=True)
    return outcome
