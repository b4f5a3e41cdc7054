"""Generated inputs through every reader, import, identify and validate: how many end in a traceback or leave a
partial output.

Every outcome of a reader or importer is a success or dynid's one-line refusal (exit 2), never another exception,
and a refusal leaves nothing behind. The inputs are the hypothesis strategies of test/test_fuzz_inputs.py
(testing/fuzz_inputs.py): CSV logs with odd time columns (starting at 0, negative, wall clock, ms, jittered,
duplicated, unsorted, constant, beyond 2262), NaN and odd cells, odd lines and headers; damaged recordings
(truncated, overwritten bytes, odd or missing metadata.yaml); every file kind a user hands dynid (result, drives,
trajectory, robot file, payload, stiffness baseline, batch manifest, the suite's ROS parameter file, checked
against every node's declarations) with any field's value replaced by one of another type or shape (null,
true/false, huge integers, NaN and infinities, text, lists, mappings), deleted or truncated, or the whole file
replaced by odd text; health records whose cells an older writer filled with odd values (start times of 1e300
or in nanoseconds, infinities, 64-bit counts, joint names that are not a JSON list, a damaged stored
judgement), listed and paged; validate on odd results and damaged bags; identify on damaged bags. Each kind runs
as one hypothesis search with a fixed seed, so a run is repeatable. Needs the ROS environment (the nodes are
built once for their parameters: ``AMENT_PREFIX_PATH``).

    python -m benchmarks.diagnostics_fuzz [--cases 2000] [--seed 0] [--quick]

prints a table of outcomes per kind and ends with one JSON line
``{"benchmark": "diagnostics_fuzz", "fuzz_cases": N, "fuzz_tracebacks": N, "partial_outputs": N, ...}``.
:func:`run_fuzz` returns the counts (benchmarks/bench_diagnostics.py imports it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Share of the cases per kind: mostly cheap imports and readers, fewer validations, few identifications.
SHARES = {'import': 0.36, 'bag': 0.08, 'result': 0.12, 'drives+trajectory': 0.10, 'robot file': 0.06,
          'payload+baseline': 0.05, 'manifest': 0.03, 'parameter file': 0.04, 'health record': 0.03,
          'validate': 0.10, 'identify': 0.03}


def _kinds(folder: Path, twin: dict):
    """{kind: (strategy, run(drawn) -> Outcome)} over the twin's files in ``folder``."""
    from hypothesis import strategies as st

    from dynid.estimate.online import load_baseline
    from dynid.excite.trajectory import load_trajectory
    from dynid.fleet.batch import discover
    from dynid.identify.result.result import IdentificationResult
    from dynid.io.bag import read_bag
    from dynid.model import load_robot
    from dynid.model.drives import load_drives
    from dynid.payload.document import load_payload
    from testing.fuzz_inputs import (
        RAW_TEXT,
        bag_damage,
        csv_logs,
        damaged_bag,
        damaged_record,
        dump,
        mutated,
        mutations,
        record_damage,
        run_cli,
        run_health,
        run_import,
        run_parameter_file,
        run_reader,
    )

    number = itertools.count()

    def bag(damage):
        damaged = damaged_bag(folder / 'bag', folder, damage, next(number))
        first = run_reader(read_bag, damaged, None)
        output = folder / f'imported_{next(number)}'
        second = run_cli(['import', str(damaged), '--robot', 'ur5e', '-o', str(output)], [output])
        return first if first.bad else second

    def result(drawn):
        edits, raw = drawn
        path = folder / f'result_{next(number)}.yaml'
        path.write_text(raw if raw is not None else dump(mutated(twin['result'], edits)))
        return run_reader(IdentificationResult.load, path)

    def drives_trajectory(drawn):
        drive_edits, trajectory_edits, raw = drawn
        path = folder / f'drives_{next(number)}.yaml'
        path.write_text(dump(mutated(twin['drives'], drive_edits)))
        first = run_reader(load_drives, path, twin['joints'])
        path = folder / f'trajectory_{next(number)}.yaml'
        path.write_text(raw if raw is not None else dump(mutated(twin['trajectory'], trajectory_edits)))
        second = run_reader(load_trajectory, path)
        return first if first.bad else second

    def document(kind, drawn, suffix='.yaml'):
        """The mutated document of ``kind`` (or raw text) written to a new file; its path."""
        edits, raw = drawn
        path = folder / f'{kind}_{next(number)}{suffix}'
        path.write_text(raw if raw is not None else dump(mutated(twin['files'][kind], edits)))
        return path

    def robot_file(drawn):
        return run_reader(load_robot, str(document('robot_file', drawn)))

    def payload_baseline(drawn):
        payload, baseline = drawn
        first = run_reader(load_payload, document('payload', payload), twin['robot'])
        return first if first.bad else run_reader(load_baseline, document('baseline', baseline), twin['robot'])

    def manifest(drawn):
        return run_reader(discover, document('manifest', drawn))

    def parameter_file(drawn):
        return run_parameter_file(document('parameters', drawn), twin['declarations'])

    def health(edits):
        k = next(number)
        return run_health(damaged_record(twin['record'], folder, edits, k), folder, k)

    def validate(drawn):
        edits, damage = drawn
        k = next(number)
        params = folder / f'params_{k}.yaml'
        params.write_text(dump(mutated(twin['result'], edits)))
        recording = damaged_bag(folder / 'bag', folder, damage, k) if damage is not None else folder / 'bag'
        verdict = folder / f'verdict_{k}.json'
        return run_cli(['validate', str(recording), '--params', str(params), '--json', str(verdict)], [verdict])

    def identify(damage):
        k = next(number)
        out = folder / f'identified_{k}.yaml'
        return run_cli(['identify', str(damaged_bag(folder / 'bag', folder, damage, k)), '-o', str(out), '--quiet'],
                       [out])

    raw_or_none = st.one_of(st.none(), st.none(), st.none(), RAW_TEXT)
    files = twin['files']
    return {
        'import': (csv_logs(), lambda case: run_import(folder, case, next(number))),
        'bag': (bag_damage(), bag),
        'result': (st.tuples(mutations(twin['result']), raw_or_none), result),
        'drives+trajectory': (st.tuples(mutations(twin['drives']), mutations(twin['trajectory']), raw_or_none),
                              drives_trajectory),
        'robot file': (st.tuples(mutations(files['robot_file']), raw_or_none), robot_file),
        'payload+baseline': (st.tuples(st.tuples(mutations(files['payload']), raw_or_none),
                                       st.tuples(mutations(files['baseline']), raw_or_none)), payload_baseline),
        'manifest': (st.tuples(mutations(files['manifest']), raw_or_none), manifest),
        'parameter file': (st.tuples(mutations(files['parameters']), raw_or_none), parameter_file),
        'health record': (record_damage(), health),
        'validate': (st.tuples(mutations(twin['result']), st.one_of(st.none(), bag_damage())), validate),
        'identify': (bag_damage(), identify),
    }


def _twin(folder: Path, seed: int) -> dict:
    """A 100 Hz twin recording of the UR5e's built-in excitation, its identification and its files; the other
    files a user hands dynid (testing/fuzz_inputs.file_documents), a small health record, the nodes' parameters."""
    import yaml

    from dynid.cli import main
    from dynid.excite.trajectory import builtin_excitation_path
    from dynid.model import load_robot
    from testing.fuzz_inputs import file_documents, health_record, node_declarations

    assert main(['simulate', '--rate', '100', '--duration', '8', '--quiet', '-o', str(folder / 'bag'),
                 '--trajectory', str(builtin_excitation_path('ur5e'))]) == 0
    assert main(['identify', str(folder / 'bag'), '-o', str(folder / 'result.yaml'), '--quiet']) == 0
    robot = load_robot('ur5e')
    return {'result': yaml.safe_load((folder / 'result.yaml').read_text()),
            'drives': {'drives': robot.drives.to_dict()}, 'joints': robot.joint_names, 'robot': robot,
            'trajectory': yaml.safe_load(builtin_excitation_path('ur5e').read_text()),
            'files': file_documents(folder, robot.joint_names), 'record': health_record(folder),
            'declarations': node_declarations(150 + seed % 50)}


def run_fuzz(n_cases: int = 2000, seed: int = 0, report=None) -> dict:
    """Run about ``n_cases`` generated inputs (split by :data:`SHARES`) with hypothesis seeded by ``seed``.

    Returns ``{"fuzz_cases", "fuzz_tracebacks", "partial_outputs", "by_kind": {kind: {outcome: count}},
    "examples": [first tracebacks]}``; ``report(kind, counts, seconds)`` is called after each kind.
    """
    import contextlib
    import io

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    by_kind, examples = {}, []
    with tempfile.TemporaryDirectory(prefix='dynid_fuzz_') as name:
        folder = Path(name)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            twin = _twin(folder, seed)
        def search(kind, strategy, run, cases, counts):
            @hypothesis_seed(seed)
            @settings(max_examples=cases, deadline=None, database=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck))
            @given(strategy)
            def one(drawn):
                outcome = run(drawn)
                counts[outcome.kind] += 1
                counts['partial'] += outcome.partial
                if outcome.bad and len(examples) < 5:
                    examples.append(f'{kind}: {outcome.detail[:800]}')
            one()

        for kind, (strategy, run) in _kinds(folder, twin).items():
            counts = Counter()
            started = time.perf_counter()
            search(kind, strategy, run, max(1, round(SHARES[kind] * n_cases)), counts)
            by_kind[kind] = dict(counts)
            if report:
                report(kind, counts, time.perf_counter() - started)
            for leftover in folder.iterdir():  # the cases' files; the twin's stay
                if leftover.name not in ('bag', 'result.yaml', 'health.sqlite3'):
                    if leftover.is_dir():
                        import shutil

                        shutil.rmtree(leftover, ignore_errors=True)
                    else:
                        leftover.unlink()
    total = sum(sum(v for k, v in c.items() if k != 'partial') for c in by_kind.values())
    return {'fuzz_cases': total, 'fuzz_tracebacks': sum(c.get('traceback', 0) for c in by_kind.values()),
            'partial_outputs': sum(c.get('partial', 0) for c in by_kind.values()), 'by_kind': by_kind,
            'examples': examples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--cases', type=int, default=2000, help='generated inputs in all (default 2000)')
    parser.add_argument('--seed', type=int, default=0, help='hypothesis seed (default 0)')
    parser.add_argument('--quick', action='store_true', help='200 cases')
    args = parser.parse_args()
    cases = 200 if args.quick else args.cases
    print(f'{"kind":<20} {"cases":>6} {"ok":>6} {"refused":>8} {"traceback":>10} {"partial":>8} {"s":>7}')

    def report(kind, counts, seconds):
        n = sum(v for k, v in counts.items() if k != 'partial')
        print(f'{kind:<20} {n:>6} {counts["ok"]:>6} {counts["refused"]:>8} {counts["traceback"]:>10} '
              f'{counts["partial"]:>8} {seconds:>7.1f}', flush=True)

    started = time.perf_counter()
    figures = run_fuzz(cases, args.seed, report)
    for example in figures['examples']:
        print(f'  {example}')
    print(json.dumps({'benchmark': 'diagnostics_fuzz', 'fuzz_cases': figures['fuzz_cases'],
                      'fuzz_tracebacks': figures['fuzz_tracebacks'], 'partial_outputs': figures['partial_outputs'],
                      'seed': args.seed, 'seconds': round(time.perf_counter() - started, 1),
                      'by_kind': figures['by_kind']}))


if __name__ == '__main__':
    main()
