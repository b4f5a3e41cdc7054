"""Identification uses the data it is given: short gaps bridged before filtering, short pieces kept usable, and
the share of each recording used reported (a warning below 90 %)."""

import dataclasses

import numpy as np
import pytest

from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.equations.bridging import bridge_gaps
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import validate
from dynid.io.dataset import Dataset, Reference
from dynid.signal.preprocess import FilterSettings, minimum_samples
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import DigitalTwin, home_configuration


def _lose(dataset, keep):
    return dataset.taken(keep)


def test_bridge_fills_isolated_short_gaps_and_splits_at_the_others():
    t = np.arange(3000) * 1e-3
    q = np.column_stack([np.sin(2 * t), 0.3 * np.cos(5 * t)])
    dataset = Dataset(('a', 'b'), t, q, np.gradient(q, t, axis=0), tau=2.0 * q)
    keep = np.ones(t.size, dtype=bool)
    keep[[100, 700, 701]] = False          # a repeated state dropped, two in a row
    keep[1200:1208] = False                # a logger's stall of 8 ticks
    keep[1500:1540] = False                # 40 ms: longer than the 20 ms bridge
    keep[2000:2400:3] = False              # a stretch that lost a third of its samples: gaps of 1 between runs of 2
    keep[2600:2700] = keep[2600:2700] & (np.arange(100) % 10 == 0)  # lost most: runs of 1 between gaps of 9
    holed = _lose(dataset, keep)
    bridged = bridge_gaps(holed, 0.02, 1e-3)
    summary = holed.gaps(1e-3)
    # The isolated gaps and the stretch with runs as long as its gaps are filled; the 40 ms gap and the
    # stretch where filled samples would outnumber measured ones split the recording.
    filled = np.setdiff1d(np.round(bridged.dataset.t / 1e-3).astype(int), np.round(holed.t / 1e-3).astype(int))
    assert np.array_equal(filled, np.concatenate([[100, 700, 701], np.arange(1200, 1208), np.arange(2000, 2400, 3)]))
    assert bridged.bridged_samples == filled.size and bridged.split_gaps == len(summary.gaps) - bridged.bridged_gaps
    assert bridged.split_gaps == 1 + 10  # the 40 ms gap and the ten gaps of 9 in the lossy stretch
    # Positions by a cubic through two samples on each side: within 1e-7 rad of the motion even across 8 ms.
    index = np.round(bridged.dataset.t / 1e-3).astype(int)
    assert np.abs(bridged.dataset.q - q[index]).max() < 1e-7
    # The other signals linearly: within Δt²·max|τ''|/8 = (9 ms)²·15/8 = 1.5e-4 N·m across the stall.
    assert np.abs(bridged.dataset.tau - 2.0 * q[index]).max() < 1.6e-4
    starts = [a for a, _ in bridged.pieces]
    # Pieces: before the 40 ms gap, up to the lossy stretch, after its last sample (its single samples left out).
    assert len(bridged.pieces) == 3 and bridged.dataset.t[starts[1:]] == pytest.approx([1.540, 2.700])


def test_the_controllers_reference_is_bridged_with_the_signals_it_mirrors():
    """A recording that holds the controller's reference keeps it through bridging: q_r filled as a position (the
    cubic), q̇_r and the commanded effort linearly, on the same grid as the joint signals."""
    t = np.arange(1000) * 1e-3
    q = np.column_stack([np.sin(2 * t), 0.3 * np.cos(5 * t)])
    dq = np.gradient(q, t, axis=0)
    reference = Reference(q + 0.01, dq, effort=3.0 * q, source='test')
    keep = np.ones(t.size, dtype=bool)
    keep[[100, 500, 501]] = False
    holed = dataclasses.replace(_lose(Dataset(('a', 'b'), t, q, dq), keep),
                                reference=reference.taken(keep))
    bridged = bridge_gaps(holed, 0.02, 1e-3).dataset
    index = np.round(bridged.t / 1e-3).astype(int)
    assert bridged.reference.q.shape == bridged.q.shape == (1000, 2) and bridged.reference.source == 'test'
    assert np.abs(bridged.reference.q - (q[index] + 0.01)).max() < 1e-7
    assert np.abs(bridged.reference.effort - 3.0 * q[index]).max() < 1e-4
    assert bridged.reference.ddq is None


@pytest.fixture(scope='module')
def twin(ur5e):
    """20 s of the shipped UR5e excitation (training) and 10 s of a random Fourier motion (held out), 500 Hz, the
    friction the identified model has (as test_identify's twin_data)."""
    params = PlantParameters.defaults(ur5e)
    params.joints.friction_model = 'coulomb_viscous'
    home = home_configuration(ur5e)
    design = FourierDesign(ur5e.joint_names, 5, 10.0)
    other = design.trajectory(random_design(design, home, default_limits(ur5e, home), np.random.default_rng(7),
                                            np.linspace(0, 10, 4000, endpoint=False)))
    recordings = []
    for trajectory, seconds, seed in ((load_trajectory(builtin_excitation_path('ur5e')), 20.0, 1), (other, 10.0, 2)):
        trajectory = dataclasses.replace(trajectory, duration_s=seconds)
        twin = DigitalTwin(params, rate_hz=500.0, seed=seed, initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
        twin.follow(trajectory)
        recordings.append(record_to_dataset(twin.run(seconds), None, {}))
    return recordings


def _fits(result, robot, dataset):
    return np.array([m['nrmse_fit_percent'] for m in validate(result, robot, dataset)['joints'].values()])


def test_dropped_repeats_and_stalls_cost_nothing(twin, ur5e):
    train, held_out = twin
    rng = np.random.default_rng(3)
    keep = rng.random(train.n_samples) >= 0.05      # 5 % of the samples (repeated states) dropped
    for start in rng.choice(np.arange(500, train.n_samples - 500), 6, replace=False):
        keep[start:start + int(rng.integers(2, 9))] = False  # stalls of 2–8 ticks
    keep[:2] = keep[-2:] = True
    holed = _lose(train, keep)
    spec, options = ModelSpec(), IdentifyOptions('wls')
    clean = identify(ur5e, [RecordingInput(train, name='clean')], spec, options=options)
    result = identify(ur5e, [RecordingInput(holed, name='holed')], spec, options=options)
    (entry,) = result.provenance['inputs']
    assert entry['gaps']['pieces'] == 1 and entry['gaps']['used_fraction'] == pytest.approx(1.0)
    assert entry['gaps']['bridged_gaps'] == len(holed.gaps().gaps) and 'used 100 % of the recording' in \
        entry['gaps']['summary']
    # Held-out fit within 0.5 points of the clean recording's on every joint (the target).
    assert np.abs(_fits(result, ur5e, held_out) - _fits(clean, ur5e, held_out)).max() < 0.5
    metrics = validate(result, ur5e, _lose(held_out, keep[:held_out.n_samples]))
    assert metrics['used_fraction'] == pytest.approx(1.0) and 'used 100 %' in metrics['usage']


def test_short_pieces_are_used_and_little_use_is_warned_about(twin, ur5e):
    train, _ = twin
    settings = FilterSettings().validated(500.0)
    full, short = minimum_samples(settings, 500.0), minimum_samples(settings, 500.0, short=True)
    assert (full, short) == (250, 106)
    keep = np.zeros(train.n_samples, dtype=bool)
    keep[:3000] = True
    keep[4000:4200] = True  # short for the 0.15 s trim, usable with the 0.075 s of a short piece
    keep[5000:5100] = True  # too short for either
    spec = ModelSpec(torque_source='joint_torque')
    result = identify(ur5e, [RecordingInput(_lose(train, keep), name='pieces')], spec, options=IdentifyOptions('wls'))
    (entry,) = result.provenance['inputs']
    assert entry['gaps']['pieces_used'] == 2 and entry['gaps']['pieces_skipped'] == 1
    assert entry['gaps']['used_samples'] == 3200 and entry['gaps']['used_fraction'] == pytest.approx(3200 / 5100)
    (line,) = [w for w in result.warnings if 'recording' in w]
    assert line.startswith('pieces: only 62.7 % of the recording was used (3200 of its 3300 samples; less than 90 %)')
