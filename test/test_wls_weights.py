"""WLS weights that cannot blow up: per-joint noise floored at pooled·max(0.05, 1/√(ν+1)), joints without
degrees of freedom refused by name with their counts (synthetic systems: exact, fast)."""

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.identify.solve.solvers import NOISE_FLOOR_FRACTION, irls, joint_noise, ols, wls

NAMES = [f'p{i}' for i in range(8)]
JOINTS = ('shoulder', 'elbow', 'wrist')


def _system(first_rows: int, seed: int = 0):
    """Joint 0 has ``first_rows`` rows that its own columns fit almost exactly (1e-9 noise) with parameters
    0.5 off the truth (a model error there); joints 1 and 2 have 1000 rows each with σ = 0.1."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=8)
    rows = first_rows + 2000
    w = rng.normal(size=(rows, 8))
    joint = np.concatenate([np.zeros(first_rows, int), np.arange(2000) % 2 + 1])
    y = w @ truth + 0.1 * rng.normal(size=rows)
    first = joint == 0
    y[first] = w[first] @ (truth + 0.5) + 1e-9 * rng.normal(size=first_rows)
    return w, y, joint, truth


def test_an_almost_exact_joint_is_floored_and_does_not_swamp_the_fit():
    w, y, joint, truth = _system(first_rows=9)  # 1 degree of freedom on joint 0
    noise = joint_noise(w, y, joint)
    assert noise.estimated[0] < 1e-6  # what the unfloored weight 1/σ was built on
    assert noise.floored.tolist() == [True, False, False]
    assert noise.sigma[0] == pytest.approx(noise.pooled / np.sqrt(2), rel=1e-12)  # ν = 1: 1/√2 of the pool
    np.testing.assert_allclose(noise.sigma[1:], 0.1, rtol=0.1)
    estimate = wls(w, y, joint, NAMES, JOINTS)
    # Floored, joint 0's 9 rows weigh as 18 of the others' 2000: the fit stays near the truth (with its own
    # estimate, a weight 1e8 times the others', WLS fits joint 0 exactly: errors of ~0.5 on every parameter).
    assert np.abs(estimate.values - truth).max() < 0.02
    text = estimate.extra['noise'].floored_text(JOINTS)
    assert text.startswith('WLS noise estimates floored') and '9 rows for 8 parameters' in text
    assert 'elbow' not in text
    record = estimate.extra['noise'].to_dict(JOINTS)
    assert record['floored'] == ['shoulder'] and record['joints']['shoulder']['rows'] == 9


def test_a_joint_with_no_more_rows_than_parameters_is_refused_by_name_with_the_counts():
    w, y, joint, _ = _system(first_rows=7)
    with pytest.raises(InputError, match=r'WLS cannot estimate the noise of shoulder \(7 rows for 8 parameters\)'):
        wls(w, y, joint, NAMES, JOINTS)
    # IRLS starts from the floor there (its robust scale replaces it at once) and OLS needs no per-joint noise.
    assert np.isfinite(irls(w, y, joint, NAMES).values).all()
    assert np.isfinite(ols(w, y, joint, NAMES).values).all()


def test_the_floor_falls_with_the_degrees_of_freedom_down_to_a_fixed_fraction():
    w, y, joint, _ = _system(first_rows=9)
    noise = joint_noise(w, y, joint)
    freedom = noise.rows - noise.ranks
    np.testing.assert_allclose(noise.floor, noise.pooled * np.maximum(NOISE_FLOOR_FRACTION, 1 / np.sqrt(freedom + 1)))
    assert noise.floor[0] > noise.floor[1]  # 1 degree of freedom against 992
    rng = np.random.default_rng(5)
    many = rng.normal(size=(30000, 8))
    joints = np.arange(30000) % 3
    quiet = np.array([1e-4, 1.0, 1.0])  # 1e4 times quieter than the pool: the fixed fraction holds it
    noise = joint_noise(many, many @ np.ones(8) + quiet[joints] * rng.normal(size=30000), joints)
    assert noise.floored.tolist() == [True, False, False]
    assert noise.sigma[0] == pytest.approx(NOISE_FLOOR_FRACTION * noise.pooled, rel=1e-12)


def test_ordinary_data_keep_their_own_weights():
    rng = np.random.default_rng(4)
    w = rng.normal(size=(3000, 8))
    joint = np.arange(3000) % 3
    sigma = np.array([0.05, 0.2, 1.0])  # 20x apart: each above 5 % of the pooled σ (~0.59)
    y = w @ rng.normal(size=8) + sigma[joint] * rng.normal(size=3000)
    noise = joint_noise(w, y, joint)
    assert not noise.floored.any()
    np.testing.assert_allclose(noise.sigma, sigma, rtol=0.1)
    assert noise.floored_text(JOINTS) is None


def test_a_bad_floor_fraction_is_refused_naming_it():
    w, y, joint, _ = _system(first_rows=9)
    with pytest.raises(InputError, match='noise_floor_fraction must be within'):
        wls(w, y, joint, NAMES, floor_fraction=0.0)


def test_dependent_columns_are_refused_or_left_unknown_for_a_prior():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(600, 4))
    w = np.column_stack([w, w[:, 1] - 2.0 * w[:, 2]])  # the data cannot tell p4 from p1 and p2
    truth = np.array([1.0, -0.5, 0.25, 2.0, 0.0])
    joint = np.arange(600) % 3
    y = w @ truth + 0.01 * rng.normal(size=600)
    names = NAMES[:5]
    with pytest.raises(InputError, match='cannot separate'):
        wls(w, y, joint, names, JOINTS)
    estimate = wls(w, y, joint, names, JOINTS, dependent_unknown=True)
    unknown = estimate.extra['dependent']
    assert len(unknown) == 1 and unknown[0] in ('p1', 'p2', 'p4')
    k = names.index(unknown[0])
    assert estimate.values[k] == 0.0 and np.isinf(estimate.std[k])
    known = [i for i in range(5) if i != k]
    assert np.all(np.isfinite(estimate.std[known]))
    np.testing.assert_allclose(w @ estimate.values, w @ truth, atol=0.01)  # the same fit as the truth's
    np.testing.assert_allclose(estimate.values[0], truth[0], atol=0.01)  # p0 is not in the dependent group
    full = wls(w[:, :4], y, joint, names[:4], JOINTS, dependent_unknown=True)  # full rank: as without the flag
    np.testing.assert_array_equal(full.values, wls(w[:, :4], y, joint, names[:4], JOINTS).values)
    assert 'dependent' not in full.extra
