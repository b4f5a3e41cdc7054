"""Speed of the digital twin, UR5e at 1 kHz: real-time factor and cost per output sample.

Run: ``make bench`` or ``.venv/bin/python -m benchmarks.bench_sim [--seconds S --sample-seconds S --repeats R]``.

Reference: at least 20× faster than real time for the UR5e at 1 kHz output on this machine (2 cores,
shared; 5× was the first requirement; ``bench_house.py`` measures the same twin_rtf). We time
``DigitalTwin.run`` (plant, controller, sensors) and the whole
``dynid simulate`` path (simulation plus writing the rosbag2) as real-time factors, and the cost per
output sample of the three ways to advance the twin: ``step()`` (one sample per call),
``advance(5)`` (what ``sim_node`` does: a few samples per timer turn) and ``run()`` (long batches).
``sim_node`` must also publish four messages per sample at 1 kHz, so ``advance(5)`` has a budget of
250 µs per sample. Each figure is the best and the median of several repeats (the machine's speed
varies between runs; the three stepping modes are timed alternately within each repeat). The last
line is JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import SimulationSettings, simulate_recording
from dynid.sim.twin import DigitalTwin, gentle_motion

REFERENCE_RTF = 20.0
ADVANCE_BUDGET_US = 250.0
NODE_BATCH = 5


def _per_sample_us(twin: DigitalTwin, samples: int, mode: str) -> float:
    """Wall time per output sample [µs] of ``samples`` samples advanced in the given mode."""
    start = time.perf_counter()
    if mode == 'step':
        for _ in range(samples):
            twin.step()
    elif mode == 'advance':
        for _ in range(samples // NODE_BATCH):
            twin.advance(NODE_BATCH)
    else:
        twin.run(samples / twin.rate_hz)
    return (time.perf_counter() - start) / samples * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=10.0, help='simulated seconds per repeat (default 10)')
    parser.add_argument('--sample-seconds', type=float, default=2.0,
                        help='simulated seconds per stepping mode and repeat for the cost per sample (default 2)')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--rate', type=float, default=1000.0)
    args = parser.parse_args()

    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    physics, pipeline = [], []
    cost: dict[str, list[float]] = {'step': [], 'advance': [], 'run': []}
    samples = max(NODE_BATCH, int(round(args.sample_seconds * args.rate)) // NODE_BATCH * NODE_BATCH)
    for _ in range(args.repeats):
        twin = DigitalTwin(params, rate_hz=args.rate)
        twin.follow(gentle_motion(robot))
        start = time.perf_counter()
        twin.run(args.seconds)
        physics.append(args.seconds / (time.perf_counter() - start))
        for mode in cost:
            twin = DigitalTwin(params, rate_hz=args.rate)
            twin.follow(gentle_motion(robot))
            cost[mode].append(_per_sample_us(twin, samples, mode))
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            simulate_recording(robot, Path(folder) / 'rec', None,
                               SimulationSettings(duration_s=args.seconds, rate_hz=args.rate), quiet=True)
            pipeline.append(args.seconds / (time.perf_counter() - start))

    print(f'dynid twin benchmark: UR5e, {args.rate:g} Hz output, {args.seconds:g} s simulated, '
          f'{args.repeats} repeats (internal step {1e3 / args.rate / twin.substeps:g} ms)')
    print(f'command: .venv/bin/python -m benchmarks.bench_sim --seconds {args.seconds:g} '
          f'--sample-seconds {args.sample_seconds:g} --repeats {args.repeats} --rate {args.rate:g}')
    print(f'{"measure":<44} {"best":>8} {"median":>8}   reference')
    print(f'{"real-time factor, twin (plant+control+sensors)":<44} {max(physics):>7.1f}× '
          f'{statistics.median(physics):>7.1f}×   ≥ {REFERENCE_RTF:g}×')
    print(f'{"real-time factor, dynid simulate (+ bag)":<44} {max(pipeline):>7.1f}× '
          f'{statistics.median(pipeline):>7.1f}×   -')
    labels = {'step': 'cost per sample, step()', 'advance': f'cost per sample, advance({NODE_BATCH}) (sim_node)',
              'run': 'cost per sample, run()'}
    for mode, label in labels.items():
        reference = f'≤ {ADVANCE_BUDGET_US:g} µs (sim_node at 1 kHz)' if mode == 'advance' else '-'
        print(f'{label:<44} {min(cost[mode]):>6.0f}µs {statistics.median(cost[mode]):>6.0f}µs   {reference}')
    print(json.dumps({'benchmark': 'sim_realtime_factor', 'robot': 'ur5e', 'rate_hz': args.rate,
                      'simulated_s': args.seconds, 'reference_rtf': REFERENCE_RTF,
                      'twin_rtf_best': max(physics), 'twin_rtf_median': statistics.median(physics),
                      'simulate_rtf_best': max(pipeline), 'simulate_rtf_median': statistics.median(pipeline),
                      'twin_rtf_all': physics, 'simulate_rtf_all': pipeline,
                      'advance_batch': NODE_BATCH, 'advance_budget_us': ADVANCE_BUDGET_US,
                      **{f'{mode}_us_per_sample_best': min(values) for mode, values in cost.items()},
                      **{f'{mode}_us_per_sample_median': statistics.median(values) for mode, values in cost.items()},
                      **{f'{mode}_us_per_sample_all': values for mode, values in cost.items()}}))


if __name__ == '__main__':
    main()
