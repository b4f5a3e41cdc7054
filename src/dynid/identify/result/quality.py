"""Whether an identification can be trusted: data that cannot identify the model, model misfit, absurd fits.

- **Identifiability** (:func:`identifiability_problems`): the condition number of the regressor with
  unit-norm columns above :data:`COND_SCALED_MAX`, or more than :data:`POOR_FRACTION_MAX` of the
  parameters with a relative standard deviation above :data:`POORLY_IDENTIFIED_PERCENT` (those whose σ moves
  the torque by less than :data:`NEGLIGIBLE_TORQUE_FRACTION` of its RMS left out: a parameter determined to be
  ~0, :func:`negligible_parameters`), mean the
  trajectory does not excite the model (``dynid simulate`` recordings at 1 kHz identified with the
  defaults: 15 s of the twin's built-in gentle motion, cond 1.0e4 and 37 of 54 parameters above 50 %;
  one 10 s period of the shipped optimized excitation, cond 20 and 17 of 54). ``dynid identify`` and
  identifier_node refuse such a result (:func:`identifiability_refusal`) unless forced.
- **Misfit** (:func:`residual_autocorrelation`, :func:`misfit_warning`): the residual of a model that
  holds is the measurement noise, close to white at the decimated rate (lag-1 autocorrelation 0.2–0.5
  on the twin, the anti-aliasing filter correlating neighbours a little); a model missing a term
  leaves that term's smooth torque in the residual (0.83–0.99 on the twin for motor-side torque taken
  as joint torque, or friction left out). Above :data:`MISFIT_AUTOCORRELATION` a joint's residual is
  structure, not noise, and the parameters' σ understate their errors.
- **Absurd fits** (:func:`validation_warnings`): an NRMSE fit below 0 % predicts worse than the
  recording's mean torque, on a joint whose torque there rises above the noise.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dynid.errors import InputError, spell
from dynid.identify.registry import flagged_names
from dynid.identify.result.metrics import failed_text
from dynid.identify.settings import PRIOR_OFF

COND_SCALED_MAX = 1000.0
POORLY_IDENTIFIED_PERCENT = 50.0
POOR_FRACTION_MAX = 0.5
#: a parameter whose σ moves the predicted torque by less than this share of the measured torque's RMS is
#: determined (near zero) whatever its relative σ: σ_i·RMS(W_i) < NEGLIGIBLE_TORQUE_FRACTION·RMS(y)
NEGLIGIBLE_TORQUE_FRACTION = 0.01
MISFIT_AUTOCORRELATION = 0.7
#: A validation fit below 0 % is claimed absurd only where the joint's torque varies by at least this many times
#: the identification's training RMSE (:func:`validation_warnings`).
NOISE_SPREAD_FACTOR = 2.0
ROWS_PER_PARAMETER = 10  # fewer equations per parameter than this: the refusal names the rate and the filters


def identifiability_problems(condition_scaled: float, relative_std_percent: np.ndarray,
                             judged: str = 'parameters', condition_of: str = 'cond(W)') -> list[str]:
    """Why the data cannot identify the model (empty when they can); module docstring. ``judged``: what the
    relative σ are of, in words (the parameters, or those whose σ matters); ``condition_of``: what the condition
    number is of, in the words the result's summary uses (:meth:`IdentificationResult.condition_text`)."""
    problems = []
    if np.isfinite(condition_scaled) and condition_scaled > COND_SCALED_MAX:
        problems.append(f'{condition_of} = {condition_scaled:.3g} with unit-norm columns is above '
                        f'{COND_SCALED_MAX:g}')
    relative = np.asarray(relative_std_percent, dtype=float)
    poor = int(np.count_nonzero(~(relative <= POORLY_IDENTIFIED_PERCENT)))
    if relative.size and poor > POOR_FRACTION_MAX * relative.size:
        problems.append(f'{poor} of {relative.size} {judged} have a relative standard deviation above '
                        f'{POORLY_IDENTIFIED_PERCENT:g} % (more than {100 * POOR_FRACTION_MAX:g} %)')
    return problems


def relative_std_percent(values, std) -> np.ndarray:
    """100·σ/|value| per parameter [%]; inf where the value is 0, NaN where σ is."""
    values, std = np.asarray(values, dtype=float), np.asarray(std, dtype=float)
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.where(values != 0, 100.0 * std / np.abs(values), np.inf)


def prior_beats_robot_file(result) -> tuple[bool, str]:
    """(whether the prior's cross-validation found the data predict held-out stretches of the recording better than
    the robot file's links, the numbers in words): the combined held-out score at the chosen relative σ s against
    the one at the grid's smallest s (the robot file's links held, friction and rotor inertia fitted). False where
    the prior was not used or its weight was given."""
    prior = result.prior_section or {}
    cross_validation = prior.get('cross_validation') or {}
    scores, grid = cross_validation.get('held_out_score'), cross_validation.get('grid')
    if not (prior.get('used') and scores and grid):
        return False, ''
    chosen = int(np.argmin(scores))
    return chosen > 0 and scores[chosen] < scores[0], (
        f'held-out score {scores[chosen]:.4g} at s = {grid[chosen]:g} against {scores[0]:.4g} with the robot file\'s '
        f'links held (s = {grid[0]:g})')


def result_identifiability_problems(result) -> list[str]:
    """:func:`identifiability_problems` of an :class:`~dynid.identify.result.result.IdentificationResult`, judging the
    problem that was solved.

    With the robot file as a prior, that is the data with the prior: the condition number of both together
    (the result's) and the posterior σ of the Gaussian problem (``prior.posterior_std``), so that a recording
    the prior completes is not refused for what the prior supplies; and where the prior's cross-validation found
    the result predicts held-out stretches better than the robot file (:func:`prior_beats_robot_file`), parameters
    the prior holds near the robot file's values are not a reason to refuse (a short or weakly exciting log: the
    regularized result is the better model; :func:`poorly_identified_note` says it). A physically consistent result
    without a prior is judged by the linear fit it started from: a constrained estimate has no σ (NaN), and whether
    the data identify the model does not depend on the constraints. Parameters held at a value (``model.held``)
    are not judged.
    """
    prior = result.prior_section or {}
    fit = (result.physical_section or {}).get('unconstrained')
    if prior.get('used') and prior.get('posterior_std') is not None:
        relative = relative_std_percent(result.values, prior['posterior_std'])
    elif fit is not None:
        relative = relative_std_percent(fit['values'], fit['std'])
    else:
        relative = result.relative_std
    # held at a value, not identified (dynid.identify.equations.held)
    held = set((result.model or {}).get('held') or ())
    judged = np.array([name not in held for name in result.parameter_names])
    negligible = negligible_parameters(result, prior['posterior_std'] if prior.get('used') and
                                       prior.get('posterior_std') is not None else
                                       (fit['std'] if fit is not None else result.std))
    relative = np.asarray(relative)[judged & ~negligible]
    if prior_beats_robot_file(result)[0]:
        relative = np.zeros(0)  # the prior completes them, and the held-out stretches say the result is better
    judged_as = f'parameters whose σ moves the torque by at least {100 * NEGLIGIBLE_TORQUE_FRACTION:g} % of its RMS'
    condition_of = 'cond of the data with the prior' if prior.get('used') else 'cond(W)'
    return identifiability_problems(result.condition_number_scaled, relative, judged_as, condition_of)


def negligible_parameters(result, std) -> np.ndarray:
    """(parameters,) bool: those whose σ moves the predicted torque by less than
    :data:`NEGLIGIBLE_TORQUE_FRACTION` of the measured torque's RMS (a product of inertia, a friction or an offset
    the data put at ~0 with a small σ: its relative σ is large only because its value is); all False where the
    result does not hold the column sizes."""
    model = result.model or {}
    return negligible_mask(std, model.get('column_rms'), model.get('torque_rms'))


def negligible_mask(std, column_rms, torque_rms) -> np.ndarray:
    """(parameters,) bool: σ_i·RMS(W_i) < :data:`NEGLIGIBLE_TORQUE_FRACTION`·RMS(y) (:func:`negligible_parameters`);
    all False where the column sizes are not given or do not match."""
    std = np.asarray(std, dtype=float)
    if column_rms is None or not torque_rms or len(column_rms) != std.size:
        return np.zeros(std.size, dtype=bool)
    with np.errstate(invalid='ignore'):
        return np.asarray(std * np.asarray(column_rms, float) < NEGLIGIBLE_TORQUE_FRACTION * torque_rms)


def poorly_identified_note(result) -> str | None:
    """A warning where the σ criterion of :func:`identifiability_problems` would refuse but the prior's
    cross-validation found the result predicts held-out stretches better than the robot file; None otherwise."""
    beats, numbers = prior_beats_robot_file(result)
    if not beats:
        return None
    prior = result.prior_section or {}
    std = prior.get('posterior_std') or result.std
    relative = np.asarray(relative_std_percent(result.values, std))[~negligible_parameters(result, std)]
    poor = int(np.count_nonzero(~(relative <= POORLY_IDENTIFIED_PERCENT)))
    if not (relative.size and poor > POOR_FRACTION_MAX * relative.size):
        return None
    return (f'{poor} of the {relative.size} parameters whose σ matters (moves the torque by at least '
            f'{100 * NEGLIGIBLE_TORQUE_FRACTION:g} % of its RMS) keep a relative standard deviation above '
            f'{POORLY_IDENTIFIED_PERCENT:g} % with the robot file\'s prior: the recording excites too little to '
            f'determine them, and the prior holds them near the robot file\'s values; kept because the result predicts '
            f'held-out stretches of the recording better than the robot file ({numbers}); a longer or optimized '
            f'excitation (dynid excite --optimize) determines them')


def identifiability_refusal(result, tried: str | None = None) -> str | None:
    """Why the data of ``result`` cannot identify its model and what to do instead, in one phrase
    (:func:`result_identifiability_problems` and a remedy); None when they can.

    The remedy: where a known payload leaves joints unloaded (their drive gains then follow from
    nothing), hold those gains or move the payload off the joint axes; else a richer excitation. Where the
    rate is below 100 Hz or the equations are fewer than :data:`ROWS_PER_PARAMETER` per parameter, the rate and
    the filter settings that made them so few are named too, with the settings that give more. ``tried``: the
    settings tried on these data and ranked by their held-out error (:func:`dynid.identify.job.ways_out.ways_out`),
    named first; the remedy then follows as not scored (it needs new data or a value), without the prior the
    settings tried hold.
    """
    problems = result_identifiability_problems(result)
    if not problems:
        return None
    unloaded = (result.drive_gain_diagnostics or {}).get('unexcited_joints')
    remedy = (f'the known payload does not load {", ".join(unloaded)}: hold '
              f'{"its gain" if len(unloaded) == 1 else "their gains"} ({{fix_drive_gain}} JOINT=VALUE) or place '
              f'the payload off the joint axes' if unloaded else
              'record an optimized excitation (dynid excite --optimize, then run it)')
    prior = result.prior_section or {}
    if tried is None and not prior.get('used') and str(prior.get('reason') or '').startswith(PRIOR_OFF):
        remedy += '; or identify with the robot file\'s prior ({prior}: it completes what the data lack)'
    filters = result.provenance.get('filters') or {}
    rows, parameters = (result.metrics.get('train') or {}).get('rows'), len(result.parameter_names)
    rate = filters.get('rate_hz')
    if rate and rows and (rate < 100.0 or rows < ROWS_PER_PARAMETER * parameters):
        remedy += (f'; at {rate:.4g} Hz the filters (decimation cut-off {filters["decimation_cutoff_hz"]:.3g} Hz, '
                   f'one sample in {filters["decimation"]} kept, {filters["trim_s"]:.3g} s trimmed at each end) keep '
                   f'{rows} equations for {parameters} parameters: a longer recording gives more')
    if tried:
        remedy = f'{tried}; not scored (new data or a value dynid cannot try): {remedy}'
    return f'the data cannot identify the model: {"; ".join(problems)}; {remedy}'


#: the settings a refusal (:func:`identifiability_refusal`) names, written ``{field}``, beside the methods' flagged
#: options (:func:`dynid.identify.registry.flagged_names`: ``{fix_drive_gain}``): the front end spells them
REFUSAL_FIELDS = ('prior',)


def refuse_unless_forced(result, force: bool, ways_out=None, spelling: Mapping[str, str] | None = None) -> None:
    """Raise InputError where the data cannot identify ``result``'s model (:func:`identifiability_refusal`)
    unless ``force`` (the error names the field ``force``, for the front end to spell); then the reason is kept as
    the result's first warning, naming ``force`` as ``spelling`` spells it (the front end's, as for the diagnosis's
    advice; default the field's name). ``ways_out``: called on a refusal, one phrase naming the settings tried that
    succeed as written (or that none did), added to the refusal. Otherwise a note where the prior kept a result
    the σ criterion alone would refuse (:func:`poorly_identified_note`)."""
    refusal, fields = identifiability_refusal(result), (*REFUSAL_FIELDS, *flagged_names())
    if refusal and not force:
        refusal = identifiability_refusal(result, ways_out() if ways_out is not None else None)
        raise InputError(f'{refusal} ({{force}} keeps the result anyway)',
                         fields=('force', *(field for field in fields if f'{{{field}}}' in refusal)))
    if refusal:
        spelled = spell(refusal, fields, lambda field: (spelling or {}).get(field, field))
        result.warnings.insert(0, f'kept with {(spelling or {}).get("force", "force")} although {spelled}')
        return
    note = poorly_identified_note(result)
    if note:
        result.warnings.append(note)


def residual_autocorrelation(residual: np.ndarray, joints: np.ndarray, n: int) -> np.ndarray:
    """Lag-1 autocorrelation of each joint's residual rows (in time order), NaN for fewer than 3 rows."""
    out = np.full(n, np.nan)
    for j in range(n):
        r = residual[joints == j]
        r = r - r.mean() if r.size else r
        energy = r @ r
        if r.size >= 3 and energy > 0:
            out[j] = float(r[1:] @ r[:-1] / energy)
    return out


#: the largest lag-1 autocorrelation :func:`std_inflation` takes (beyond it a residual is structure: a misfit)
INFLATION_AUTOCORRELATION_MAX = 0.9


def std_inflation(autocorrelation) -> float:
    """How much a result's σ understate its parameters' errors where its residual rows are autocorrelated: the least
    squares' σ take the rows as independent, and with a residual of lag-1 autocorrelation ρ about slowly varying
    regressors (AR(1); the effective number of rows is n·(1 − ρ)/(1 + ρ)) the variance of an estimate grows by
    (1 + ρ)/(1 − ρ); this is its square root, with ρ the median over the joints of
    ``autocorrelation`` (per joint, NaN where unknown; :func:`residual_autocorrelation`), clipped to
    [0, :data:`INFLATION_AUTOCORRELATION_MAX`]; 1 where none is known."""
    rho = np.asarray([np.nan if v is None else float(v) for v in autocorrelation], dtype=float)
    rho = rho[np.isfinite(rho)]
    if rho.size == 0:
        return 1.0
    r = float(np.clip(np.median(rho), 0.0, INFLATION_AUTOCORRELATION_MAX))
    return float(np.sqrt((1.0 + r) / (1.0 - r)))


def result_std_inflation(metrics: Mapping | None) -> float:
    """:func:`std_inflation` of a result's training residual (``metrics['train']['residual_lag1_autocorrelation']``,
    per joint); 1 where the result holds none."""
    found = ((metrics or {}).get('train') or {}).get('residual_lag1_autocorrelation') or {}
    return std_inflation(list(found.values()))


def misfit_warning(autocorrelation: np.ndarray, joint_names) -> str | None:
    """One warning naming the joints whose residual is structured (module docstring), or None."""
    structured = [(name, rho) for name, rho in zip(joint_names, autocorrelation, strict=True)
                  if rho > MISFIT_AUTOCORRELATION]
    if not structured:
        return None
    return ('model misfit: the residual of ' + ', '.join(f'{name} (lag-1 autocorrelation {rho:.2f})'
                                                         for name, rho in structured)
            + f' is structured, not noise (above {MISFIT_AUTOCORRELATION:g}): the model misses a term there '
            '(friction model, rotor inertia, torque source, payload) and the σ of the parameters understate '
            'their errors')


def validation_warnings(metrics: dict, train: dict | None = None) -> list[str]:
    """Warnings on validation metrics: joints fitted worse than their mean (NRMSE fit < 0 %), where the
    recording's torque on the joint varies by at least :data:`NOISE_SPREAD_FACTOR` times the identification's
    training RMSE there (``train``: the result's ``metrics['train']``). Below, the joint's torque hardly rises
    above the noise, and a fit near or under 0 % says nothing of the model: even the plant's own links fit a
    twin's wrist 3 at −0.3 % there. A model that fails on the motion (``metrics['failed']``) is named as such
    instead."""
    if metrics.get('failed'):  # no fit of a failed model is a figure of the arm: its failure is said instead
        return ['absurd fit: the model ' + failed_text(metrics['failed']) + '; a model that does not belong to this '
                'recording (another payload, robot, torque source or drives) or an identification the data could not '
                'support']
    trained = (train or {}).get('joints') or {}

    def above_noise(name: str, m: dict) -> bool:
        noise = (trained.get(name) or {}).get('rmse')
        fit, rmse = m.get('nrmse_fit_percent'), m.get('rmse')
        if noise is None or rmse is None or fit is None or fit >= 100.0:
            return True
        return rmse / (1.0 - fit / 100.0) >= NOISE_SPREAD_FACTOR * noise  # the spread ‖y − ȳ‖/√N from the fit

    absurd = [(name, m['nrmse_fit_percent']) for name, m in metrics['joints'].items()
              if m.get('nrmse_fit_percent') is not None and m['nrmse_fit_percent'] < 0.0 and above_noise(name, m)]
    if not absurd:
        return []
    return ['absurd fit: ' + ', '.join(f'{name} NRMSE fit {fit:.4g} %' for name, fit in absurd)
            + ' (worse than predicting the mean torque): a model that does not belong to this recording (another '
            'payload, robot, torque source or drives) or an identification the data could not support']
