"""Identification that says why the data cannot identify the model (issue 13, items 6 and 11)."""

import dataclasses

import numpy as np
import pytest
import scipy.signal

from dynid.cli import main
from dynid.errors import InputError
from dynid.identify.solve.solvers import check_identifiable


def test_a_dependency_names_every_parameter_of_its_group():
    rng = np.random.default_rng(3)
    w = rng.normal(size=(200, 5))
    w = np.column_stack([w, w[:, 1] - 2.0 * w[:, 3]])  # f = b − 2d: the group is b, d, f (a, c, e are free)
    with pytest.raises(InputError) as error:
        check_identifiable(w, list('abcdef'))
    group = str(error.value).split('dependent groups: ')[1].split(')')[0].split(', ')
    assert sorted(group) == ['b', 'd', 'f']
    assert 'dynid excite optimizes one' in str(error.value)


@pytest.fixture(scope='module')
def unloaded_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp('hamon')
    assert main(['simulate', '--duration', '15', '--rate', '250', '--quiet', '-o', str(folder / 'run0')]) == 0
    return folder / 'run0'


def test_hamon_without_payload_runs_names_the_structural_dependency_and_the_remedy(unloaded_run, tmp_path, capsys):
    out = tmp_path / 'r.yaml'
    assert main(['identify', str(unloaded_run), '--friction', 'hamon', '--quiet', '-o', str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'structural' in err[0] and '--payload-mass' in err[0], err
    assert 'richer excitation' not in err[0]
    assert not out.exists()


def test_bounds_of_identifiability():
    from dynid.identify.result.quality import identifiability_problems

    assert identifiability_problems(20.8, np.full(54, 10.0)) == []
    assert identifiability_problems(20.8, np.r_[np.full(27, 10.0), np.full(27, 80.0)]) == []  # half: kept
    problems = identifiability_problems(1.1e4, np.r_[np.full(15, 10.0), np.full(39, 80.0), [np.inf]])
    assert len(problems) == 2 and '1.1e+04' in problems[0] and '40 of 55' in problems[1]


def test_a_fit_below_zero_is_absurd_only_where_the_torque_rises_above_the_noise():
    """A joint whose validation torque varies no more than the noise (a twin's wrist 3: the plant's own links fit
    it at -0.3 %) says nothing of the model; a joint that varies well above it and is predicted worse than its mean
    does (on 30 fault-free twin logs validated with their identifications: 10 such claims before, 3 left, each on
    a joint the robot file's own model predicts far better)."""
    from dynid.identify.result.quality import validation_warnings

    train = {'joints': {'a': {'rmse': 0.05}, 'b': {'rmse': 0.05}, 'c': {'rmse': None}}}
    metrics = {'joints': {'a': {'rmse': 0.052, 'nrmse_fit_percent': -2.5},  # spread 0.051: at the noise
                          'b': {'rmse': 0.30, 'nrmse_fit_percent': -50.0},  # spread 0.2: four times the noise
                          'c': {'rmse': 0.1, 'nrmse_fit_percent': -1.0}}}  # no training figure: judged as before
    [warning] = validation_warnings(metrics, train)
    assert 'b NRMSE fit -50' in warning and 'c NRMSE fit -1' in warning and 'a NRMSE' not in warning
    assert 'a NRMSE fit -2.5' in validation_warnings(metrics)[0]  # without the training figures, as before


def test_structured_residuals_warn_and_white_ones_do_not():
    from dynid.identify.result.quality import misfit_warning, residual_autocorrelation

    rng = np.random.default_rng(0)
    joints = np.tile(np.arange(2), 500)
    residual = rng.normal(size=1000)
    residual[joints == 1] += 5.0 * np.sin(np.linspace(0.0, 20.0, 500))  # a smooth term the model misses
    rho = residual_autocorrelation(residual, joints, 2)
    assert abs(rho[0]) < 0.15 and rho[1] > 0.9
    warning = misfit_warning(rho, ['a', 'b'])
    assert 'b (lag-1' in warning and 'a (lag-1' not in warning
    assert misfit_warning(rho[:1], ['a']) is None


def test_gentle_motion_is_refused_unless_forced_and_validation_flags_absurd_fits(unloaded_run, tmp_path, capsys):
    # The plain fit (--no-prior) cannot identify the model from the twin's gentle motion (cond 1.1e4).
    out = tmp_path / 'r.yaml'
    assert main(['identify', str(unloaded_run), '--no-prior', '--quiet', '-o', str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'cannot identify the model' in err[0] and 'dynid excite --optimize' in err[0], err
    assert not out.exists()
    assert main(['identify', str(unloaded_run), '--no-prior', '--quiet', '--force', '-o', str(out), '--report',
                 str(tmp_path / 'report')]) == 0
    assert 'kept with --force' in capsys.readouterr().out
    # the forced result names the parameters left poorly excited, and only those whose σ matters in torque
    from dynid.identify.result.quality import negligible_parameters
    from dynid.identify.result.result import IdentificationResult

    forced = IdentificationResult.load(out)
    [poorly] = [w for w in forced.warnings if 'poorly excited' in w]
    named = set(poorly.split(': ')[-1].split(', '))
    negligible = negligible_parameters(forced, forced.std)
    relative = forced.relative_std
    assert named == {n for n, r, tiny in zip(forced.parameter_names, relative, negligible, strict=True)
                     if r > 50.0 and not tiny}, poorly
    assert any(r > 50.0 and tiny for r, tiny in zip(relative, negligible, strict=True))  # some left unnamed
    page = (tmp_path / 'report' / 'index.html').read_text()
    assert 'kept with --force' in page and 'residual lag-1 autocorrelation' in page
    # a payload the identification never saw: its torque is missing from the prediction
    assert main(['validate', str(unloaded_run), '--params', str(out), '--payload-mass', '40']) == 0
    printed = capsys.readouterr().out
    assert 'payload 40 kg differs from those of the identification (0 kg declared)' in printed
    assert 'absurd fit' in printed


def test_the_prior_completes_what_the_gentle_motion_leaves_open(unloaded_run, tmp_path, capsys):
    # The default identification is judged as it is solved, the data with the robot file's inertias as a
    # prior: the condition number of both together (in base parameters, measured 339 against the data's
    # 1.1e4) and the posterior σ; the same recording is then kept without --force.
    from dynid.identify.result.result import IdentificationResult

    out = tmp_path / 'r.yaml'  # the model fixed: the one whose data alone are ill-conditioned (with the offsets)
    assert main(['identify', str(unloaded_run), '--quiet', '-o', str(out), '--method', 'wls', '--friction',
                 'viscous_coulomb']) == 0
    printed = capsys.readouterr().out
    assert 'for the data with the prior' in printed and 'kept with --force' not in printed
    result = IdentificationResult.load(out)
    assert result.prior_used and result.condition_number_scaled < 1000
    assert result.prior_section['data_condition_number_scaled'] > 1000
    # a refusal names the condition number it judged as the summary does: that of the data with the prior
    from dynid.identify.result.quality import result_identifiability_problems

    [line] = [p for p in result_identifiability_problems(dataclasses.replace(result, condition_number_scaled=5e3))
              if 'unit-norm' in p]
    assert line == 'cond of the data with the prior = 5e+03 with unit-norm columns is above 1000'


def test_the_sigma_inflation_matches_the_scatter_of_estimates_with_autocorrelated_residuals():
    """A slowly varying regressor and AR(1) residual rows (ρ = 0.5): the least squares' σ understate the scatter of
    the estimate over 400 draws by about √3, which std_inflation of the measured lag-1 autocorrelation gives (within
    15 %); white residual rows need none."""
    from dynid.identify.result.quality import residual_autocorrelation, std_inflation

    rng = np.random.default_rng(4)
    rows, draws = 2000, 400
    x = np.column_stack([np.sin(np.linspace(0, 6 * np.pi, rows)), np.ones(rows)])
    for rho in (0.0, 0.5):
        estimates, sigmas, found = [], [], []
        for _ in range(draws):
            e = scipy.signal.lfilter([np.sqrt(1 - rho ** 2)], [1.0, -rho], rng.standard_normal(rows))
            y = x @ [1.5, 0.2] + 0.1 * e
            a, residual, *_ = np.linalg.lstsq(x, y, rcond=None)
            variance = residual[0] / (rows - 2)
            estimates.append(a[0])
            sigmas.append(np.sqrt(variance * np.linalg.inv(x.T @ x)[0, 0]))
            found.append(residual_autocorrelation(y - x @ a, np.zeros(rows, dtype=int), 1)[0])
        understated = np.std(estimates) / np.mean(sigmas)
        assert understated == pytest.approx(std_inflation([np.mean(found)]), rel=0.15), (rho, understated)
    assert std_inflation([0.5, np.nan, None]) == pytest.approx(np.sqrt(3.0))
    assert std_inflation([]) == std_inflation([-0.2]) == 1.0
