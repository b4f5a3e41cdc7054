"""A refused identification's ways out: the settings that make its data identify the model, tried, and ranked by how
well each predicts motion it did not see.

On a refusal (the data cannot identify the model: :func:`dynid.identify.result.quality.identifiability_refusal`, or too
few equations) the settings that change it are tried as a user would give them: higher decimation cut-offs (more
equations from the same recordings: :data:`WAY_OUT_CUTOFF_FACTORS`) and, where the method was left to dynid, each other
method registered as a way out (:func:`way_out_methods`) as given. Each setting that identifies the model is a way out,
and so is keeping the refused result (``force``). Each is then **measured**, not assumed: identified as written on the
first part of each recording's time and scored on the last :data:`HOLDOUT_SHARE` (the relative error ‖y − ŷ‖/‖y‖ over
all of them, each model predicting with its own filters), and they are named best first. A higher cut-off gives more
equations, not a better model: on a 100 Hz chirp of a six-axis arm the cut-off that identified it predicted other
motion worse (rel. 0.080) than the refused result (0.063) and than WLS (0.061). Where the recordings are too short to
hold a part out, the ways out are named as tried and said to be unscored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.identify.registry import START_METHOD, identification_methods
from dynid.identify.result.quality import identifiability_refusal, result_identifiability_problems
from dynid.identify.steps.run import identify
from dynid.identify.validation.validate import predict

#: the decimation cut-offs a refusal tries, as multiples of the one used (capped below the rate's Nyquist margin)
WAY_OUT_CUTOFF_FACTORS = (2.5, 5.0)
#: the share of each recording's time (its end) a way out is scored on, identified on the rest
HOLDOUT_SHARE = 0.3
#: how the ways out are spelled where the front end gives no spelling of its own: the field and the value
WAY_OUT_SPELLING = {'decimation_cutoff_hz': 'decimation_cutoff_hz {}', 'method': 'method {}', 'force': 'force'}


@dataclass
class WayOut:
    """One way out: its option as written, the identification it runs (``None``: the refused one, kept), what it
    gave on all the data ('identifies it (cond …)'), and its held-out error (None: not scored)."""

    option: str
    identification: object
    detail: str = ''
    figures: str = ''
    score: float | None = None

    def phrase(self) -> str:
        """'--decimation-cutoff 10 identifies it (cond 674; held out 0.00994)'."""
        score = 'not scored' if self.score is None else f'held out {self.score:.3g}'
        return f'{self.option} {self.detail} ({self.figures + "; " if self.figures else ""}{score})'


def ways_out(robot, recordings: Sequence, identification, drives, filters: dict, progress: Callable[[str], None],
             refused=None) -> str:
    """The ways out of a refused identification (module docstring), one phrase naming them best first, or saying that
    no setting tried identifies the model (with what each gave). ``filters``: the refused run's rate and cut-off
    ('rate_hz', 'decimation_cutoff_hz': a result's provenance); ``refused``: the refused result where there is one
    (it is then a way out itself, kept with ``force``; its method is not tried again)."""
    spell = {**WAY_OUT_SPELLING, **(identification.spelling or {})}
    found, failed = [], []
    for option, variant in _variants(identification, filters, spell, refused):
        progress(f'refused; trying {option}')
        try:
            trial = identify(robot, list(recordings), variant.spec, variant.filters, variant.options, drives=drives)
        except InputError as error:
            failed.append(f'{option}: {str(error).split(":")[0]}')
            continue
        if identifiability_refusal(trial) is None:
            found.append(WayOut(option, variant, 'identifies it', f'cond {trial.condition_number_scaled:.3g}'))
        else:
            failed.append(f'{option}: ' + '; '.join(result_identifiability_problems(trial)))
    if not found:
        return '' if not failed else ('no setting tried makes these data identify the model (' + '; '.join(failed)
                                      + '): record a longer or optimized excitation')
    if refused is not None:
        found.append(WayOut(spell['force'], identification, 'keeps this result'))
    for way in found:
        progress(f'scoring {way.option} on the last {HOLDOUT_SHARE:.0%} of each recording')
        way.score = held_out_error(robot, recordings, way.identification, drives)
    ranked = sorted(found, key=lambda way: (way.score is None, way.score if way.score is not None else 0.0))
    if all(way.score is None for way in found):
        return ('ways out, not scored (the recordings are too short to hold a part out): '
                + '; '.join(way.phrase() for way in found))
    return (f'ways out, best first by their error on motion they did not see (each identified as written on the '
            f'first {100 * (1 - HOLDOUT_SHARE):g} % of each recording\'s time, ‖y − ŷ‖/‖y‖ on the rest): '
            + '; '.join(way.phrase() for way in ranked))


def _variants(identification, filters: dict, spell: dict, refused):
    """(option as written, the identification it runs) of each setting tried (module docstring)."""
    rate, cutoff = filters.get('rate_hz'), filters.get('decimation_cutoff_hz')
    values = []
    for factor in WAY_OUT_CUTOFF_FACTORS if rate and cutoff else ():
        value = float(f'{min(cutoff * factor, 0.4 * rate):.2g}')
        if value <= 1.2 * cutoff or value in values:
            continue
        values.append(value)
        yield (spell['decimation_cutoff_hz'].format(f'{value:g}'),
               dataclasses.replace(identification, filters=dataclasses.replace(identification.filters,
                                                                               decimation_cutoff_hz=value)))
    if refused is None or identification.options.method != 'auto':
        return
    for method in way_out_methods():
        if method != refused.method:
            yield (spell['method'].format(method), dataclasses.replace(
                identification, options=dataclasses.replace(identification.options, method=method)))


def way_out_methods() -> list[str]:
    """The methods a refusal tries where the method was left to dynid (``auto``): the start method, then every other
    registered as a way out, in the registry's order."""
    names = [method.name for method in identification_methods() if method.way_out]
    return sorted(names, key=lambda name: name != START_METHOD)


def held_out_error(robot, recordings: Sequence, identification, drives) -> float | None:
    """‖y − ŷ‖/‖y‖ over the last :data:`HOLDOUT_SHARE` of each recording's time of ``identification`` identified on
    the rest (its own filters predict its own rows), or None where a part is too short to identify or to score."""
    parts = [(dataclasses.replace(r, dataset=first), last) for r in recordings
             for first, last in [r.dataset.split_holdout(HOLDOUT_SHARE)]]
    try:
        result = identify(robot, [first for first, _ in parts], identification.spec, identification.filters,
                          identification.options, drives=drives)
        error = energy = 0.0
        for recording, last in parts:
            prediction = predict(result, robot, last, recording.payload, drives=drives,
                                 payload_mass=recording.payload_mass)
            error += float(np.sum((prediction.measured - prediction.predicted) ** 2))
            energy += float(np.sum(prediction.measured ** 2))
    except InputError:
        return None
    return float(np.sqrt(error / energy)) if energy > 0 else None
