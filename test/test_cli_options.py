"""Every option of every ``dynid`` subcommand stays: the option sets recorded from the one-file cli before
it became the ``dynid.cli`` package. An option may be added (record it here); one that disappears fails."""

import argparse

import pytest

from dynid.cli import build_parser

RECORDED = {
    'model': ['--robot', '--list', '--joints', '--json', '--urdf', '--force', '--drives'],
    'simulate': ['--robot', '--trajectory', '--duration', '--rate', '--payload', '--payload-com', '--drive-gain-error',
                 '--temperature', '--seed', '--change', '-o', '--output', '--quiet', '--log-rate', '--log-jitter',
                 '--log-gap-rate', '--log-rounding', '--log-glitches', '--log-format', '--log-stamps', '--log-repeats',
                 '--log-gap-periods', '--log-no-time', '--storage', '--joints', '--engine', '--mjcf',
                 '--joint-states-effort', '--robot-payload'],
    'import': ['csv', '-o', '--output', '--preset', '--columns', '--robot', '--rate', '--bridge', '--current-limit',
               '--timing', '--storage', '--joint-states-effort', '--joints', '--drives', '--start', '--end'],
    'excite': ['--robot', '-o', '--output', '--force', '--plot', '--seed', '--home', '--harmonics', '--period',
               '--optimize', '--criterion', '--starts', '--iterations', '--workers', '--position-range',
               '--velocity-fraction', '--acceleration', '--torque-fraction', '--floor', '--experiment', '--joint',
               '--payloads', '--joints', '--payload-only', '--params', '--duration', '--payload-joints',
               '--torque-noise'],
    'identify': ['bags', '--robot', '--drives', '--method', '--friction', '--temperature', '--torque',
                 '--no-rotor-compensation', '--payload-mass', '--payload-com', '--weight-function', '--fix-drive-gain',
                 '--physical', '--prior-std', '--no-prior', '--physical-solver', '--validate', '--joint-states-effort',
                 '--torque-sign', '-o', '--output', '--force', '--report', '--quiet', '--position-cutoff',
                 '--decimation-cutoff', '--motion-bandwidth', '--decimation', '--stiction-velocity', '--bridge-ms',
                 '--trim', '--joints', '--exclude-joint'],
    'export-urdf': ['result', '--robot', '-o', '--output', '--force'],
    'export-mjcf': ['result', '--robot', '-o', '--output', '--force'],
    'validate': ['bags', '--params', '--robot', '--compare-robot', '--drives', '--payload-mass', '--payload-com',
                 '--recover-payload', '--joint-states-effort', '--joint-map', '--require-fit', '--json', '--force',
                 '--torque-sign', '--joints'],
    'compare': ['result_a', 'result_b', '--bag', '--payload-mass', '--payload-com', '--robot', '--drives', '--top',
                '--report', '--json', '--force', '--joint-states-effort', '--joint-map', '--torque-sign'],
    'identify-friction': ['bags', '--params', '--robot', '-o', '--output', '--force', '--experiment', '--torque',
                          '--payload-mass', '--payload-com', '--cutoff', '--t0', '--temperature-span', '--egms-initial',
                          '--quiet', '--joint-states-effort', '--drives', '--joint-map', '--torque-sign', '--joints'],
    'estimate': ['bag', '--params', '--robot', '-o', '--output', '--force', '--report', '--batch', '--no-stiffness',
                 '--no-friction', '--damping', '--order', '--forgetting', '--freeze', '--min-velocity', '--quiet',
                 '--joint-states-effort', '--drives', '--friction-change', '--bound-sigmas', '--alpha1-bounds',
                 '--alpha2-bounds', '--joint-map', '--db', '--health-robot', '--no-record', '--torque-sign',
                 '--joints'],
    'health': ['--db', '--robot', '--report', '--json', '--stiffness-limit', '--friction-limit', '--warn-days',
               '--fleet-report', '--fleet-json', '--store-judgements', '--fleet-results', '--false-flag-rate'],
    'batch': ['source', '--robot', '--identify-args', '--workers', '--scheduler', '--db', '--force', '--json'],
    'fleet': ['fleet_action'],
    'payload': ['bag', '--params', '--robot', '--drives', '--joint-states-effort', '--joint-map', '--torque-sign',
                '-o', '--output', '--force',
                '--inertia', '--joint-offsets', '--no-joint-offsets', '--load-friction', '--no-load-friction',
                '--inertia-relative-std-max', '--mass-relative-std-max', '--com-std-max-m', '--wrist-motion-min-rad',
                '--residual-ratio-max'],
    'bringup': ['--processes', '--no-processes', '--robot', '--namespace', '--no-sim', '--params-file', '--rate',
                '--trajectory', '--output-directory', '--estimator', '--feedforward', '--result'],
    'demo': ['-o', '--output', '--robot', '--namespace', '--rate', '--periods', '--holdout-seed', '--method',
             '--friction', '--processes', '--no-processes', '--quiet', '--engine'],
}


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.fixture(scope='module')
def parsers():
    return subcommands()


def test_every_recorded_subcommand_is_there(parsers):
    assert set(RECORDED) <= set(parsers), sorted(set(RECORDED) - set(parsers))


@pytest.mark.parametrize('name', sorted(RECORDED))
def test_no_option_of_a_subcommand_went_missing(parsers, name):
    present = {string for action in parsers[name]._actions
               for string in (action.option_strings or [action.dest])}
    missing = [option for option in RECORDED[name] if option not in present]
    assert not missing, f'dynid {name} lost {missing}'
