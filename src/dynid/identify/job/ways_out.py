"""A refused identification's ways out: the settings that make its data identify the model, tried, and ranked by how
well each predicts motion it did not see.

On a refusal (the data cannot identify the model: :func:`dynid.identify.result.quality.identifiability_refusal`, or too
few equations) the settings that change it are tried as a user would give them: higher decimation cut-offs (more
equations from the same recordings: :data:`WAY_OUT_CUTOFF_FACTORS`), the robot file's prior where the setting left it
out, and, where the method was left to dynid, each other method registered as a way out (:func:`way_out_methods`)
that takes the method options given (another's advice would be refused as written). Each setting that identifies the
model is a way out, and so is keeping the refused result (``force``). Each is then
**measured**, not assumed, and they are named best first by the relative error ‖y − ŷ‖/‖y‖ (each model predicting
with its own filters): on the recordings the user gave to validate on, where there are some (each way identified on
all the data); else each of :data:`HELD_OUT_BLOCKS` equal blocks of each recording's time is held out in turn, the way
identified as written on the rest, and the errors pooled. A way whose identification fails without some block is
ranked after those scored on every block. One held-out end is not enough where the motion is weak: the refused
result can predict the end of its own motion best and other motion worst (docs/methods/diagnosis.md, "Refusals lead
somewhere"). Where no block can be scored, the ways out are named as tried and said to be unscored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dynid.errors import InputError
from dynid.identify.registry import START_METHOD, identification_method, identification_methods
from dynid.identify.result.quality import identifiability_refusal, result_identifiability_problems
from dynid.identify.solve.physical import PhysicalSettings
from dynid.identify.steps.run import identify
from dynid.identify.validation.validate import predict

#: the decimation cut-offs a refusal tries, as multiples of the one used (capped below the rate's Nyquist margin)
WAY_OUT_CUTOFF_FACTORS = (2.5, 5.0)
#: the equal blocks of each recording's time a way out is scored on, each held out in turn, identified on the rest
HELD_OUT_BLOCKS = 4
#: the share of each recording's time (its end) one held-out score keeps out (:func:`held_out_error`)
HOLDOUT_SHARE = 0.3
#: how the ways out are spelled where the front end gives no spelling of its own: the field and the value
WAY_OUT_SPELLING = {'decimation_cutoff_hz': 'decimation_cutoff_hz {}', 'method': 'method {}', 'prior': 'prior',
                    'force': 'force'}


@dataclass
class WayOut:
    """One way out: its option as written, the identification it runs, its result on all the data (the refused one
    for ``force``), what it gave ('identifies it (cond …)'), and its held-out error (None: not scored) on how many of
    the blocks tried (``blocks``: (scored, tried); None: scored on the recordings given to validate on)."""

    option: str
    identification: object
    result: object
    detail: str = ''
    figures: str = ''
    score: float | None = None
    blocks: tuple[int, int] | None = None

    def phrase(self) -> str:
        """'--decimation-cutoff 10 identifies it (cond 674; held out 0.00994)'."""
        figures = [self.figures] if self.figures else []
        scored, tried = self.blocks or (0, 0)
        if scored < tried:
            figures.append(f'without {tried - scored} of the {tried} blocks the rest cannot identify it'
                           + (f', scored on the other {scored}' if scored else ''))
        figures.append('not scored' if self.score is None else f'held out {self.score:.3g}')
        return f'{self.option} {self.detail} ({"; ".join(figures)})'

    def rank(self) -> tuple:
        """Best first: scored on every block before scored on some, then by the error; not scored last."""
        missing = 0 if self.blocks is None else self.blocks[1] - self.blocks[0]
        return self.score is None, missing, self.score if self.score is not None else 0.0


def ways_out(robot, recordings: Sequence, identification, drives, filters: dict, progress: Callable[[str], None],
             refused=None, validation: Sequence = (), methods: Sequence[str] = ()) -> str:
    """The ways out of a refused identification (module docstring), one phrase naming them best first, or saying that
    no setting tried identifies the model (with what each gave). ``filters``: the refused run's rate and cut-off
    ('rate_hz', 'decimation_cutoff_hz': a result's provenance); ``refused``: the refused result where there is one
    (it is then a way out itself, kept with ``force``; its method is not tried again); ``validation``: (name,
    recording) pairs of other motion the user gave to validate on, which then score the ways out; ``methods``: other
    methods the refusal names (too few rows for a per-joint noise: the methods that need none), tried too."""
    spell = {**WAY_OUT_SPELLING, **(identification.spelling or {})}
    found, failed = [], []
    for option, variant in _variants(identification, filters, spell, refused, methods):
        progress(f'refused; trying {option}')
        try:
            trial = identify(robot, list(recordings), variant.spec, variant.filters, variant.options, drives=drives)
        except InputError as error:
            failed.append(f'{option}: {str(error).split(":")[0]}')
            continue
        if not np.isfinite(trial.condition_number_scaled):  # columns left unknown: predicts nothing it did not fit
            failed.append(f'{option}: columns the data cannot separate (cond inf)')
        elif identifiability_refusal(trial) is None:
            found.append(WayOut(option, variant, trial, 'identifies it', f'cond {trial.condition_number_scaled:.3g}'))
        else:
            failed.append(f'{option}: ' + '; '.join(result_identifiability_problems(trial)))
    if not found:
        return '' if not failed else ('no setting tried makes these data identify the model (' + '; '.join(failed)
                                      + ')')
    if refused is not None:
        found.append(WayOut(spell['force'], identification, refused, 'keeps this result'))
    for way in found:
        _score(way, robot, recordings, drives, validation, progress)
    ranked = sorted(found, key=WayOut.rank)
    if all(way.score is None for way in found):
        why = ('the recordings given to validate on could not be predicted' if validation else
               'no block of the recordings could be held out with the rest identifying a way')
        return f'ways out, not scored ({why}): ' + '; '.join(way.phrase() for way in found)
    how = ('on the recordings given to validate on (each identified as written on all these data, ‖y − ŷ‖/‖y‖ '
           'there)' if validation else
           f'on motion they did not see (each identified as written on each recording with one of '
           f'{HELD_OUT_BLOCKS} equal blocks of its time left out, ‖y − ŷ‖/‖y‖ on that block, each block in turn, '
           f'pooled)')
    return f'ways out, best first by their error {how}: ' + '; '.join(way.phrase() for way in ranked)


def _score(way: WayOut, robot, recordings: Sequence, drives, validation: Sequence, progress) -> None:
    """``way``'s held-out error: on the recordings given to validate on where there are some, else on the blocks of
    the recordings' time (:func:`held_out_blocks`), pooled over the blocks it could be identified without."""
    if validation:
        progress(f'scoring {way.option} on the recordings given to validate on')
        way.score = relative_error(way.result, robot, [(None, dataset, None) for _, dataset in validation], drives)
        return
    progress(f'scoring {way.option} on {HELD_OUT_BLOCKS} blocks of each recording\'s time, each held out in turn')
    blocks = held_out_blocks(robot, recordings, way.identification, drives)
    scored = [block for block in blocks if block is not None]
    energy = sum(block[1] for block in scored)
    way.score = float(np.sqrt(sum(block[0] for block in scored) / energy)) if energy > 0 else None
    way.blocks = (len(scored), len(blocks))


def _variants(identification, filters: dict, spell: dict, refused, methods: Sequence[str] = ()):
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
    with_prior = _with_prior(identification.options.physical)
    if with_prior is not None:
        yield spell['prior'], dataclasses.replace(identification, options=dataclasses.replace(
            identification.options, physical=with_prior))
    tried = list(methods)
    if refused is not None and identification.options.method == 'auto':
        tried += [method for method in way_out_methods() if method != refused.method and method not in tried]
    given = identification.options.method_options or {}
    for method in tried:  # one that refuses an option given is no way out: its advice would be refused as written
        if method != identification.options.method and set(given) <= {
                option.name for option in identification_method(method).method_options}:
            yield (spell['method'].format(method), dataclasses.replace(
                identification, options=dataclasses.replace(identification.options, method=method)))


def _with_prior(physical: PhysicalSettings | None) -> PhysicalSettings | None:
    """The physical settings with the robot file's prior where the setting left it out (None: it is in)."""
    if physical is None:
        return PhysicalSettings()
    return None if physical.prior else dataclasses.replace(physical, prior=True)


def way_out_methods() -> list[str]:
    """The methods a refusal tries where the method was left to dynid (``auto``): the start method, then every other
    registered as a way out, in the registry's order."""
    names = [method.name for method in identification_methods() if method.way_out]
    return sorted(names, key=lambda name: name != START_METHOD)


def held_out_blocks(robot, recordings: Sequence, identification, drives) -> list[tuple[float, float] | None]:
    """(‖y − ŷ‖², ‖y‖²) of each of :data:`HELD_OUT_BLOCKS` equal blocks of the recordings' time (block k of every
    recording together) predicted by ``identification`` identified on the rest of each recording (the parts
    before and after the block, each a recording of its own; each model predicts with its own filters), None
    where the rest does not identify it or the block is too short to score."""
    blocks = []
    for k in range(HELD_OUT_BLOCKS):
        split = [(recording, _split_block(recording.dataset, k)) for recording in recordings]
        rest = [dataclasses.replace(recording, dataset=part) for recording, (before, _, after) in split
                for part in (before, after) if part is not None]
        try:
            result = identify(robot, rest, identification.spec, identification.filters, identification.options,
                              drives=drives)
            blocks.append(_squares(result, robot, [(r, block, r.payload_mass) for r, (_, block, _) in split], drives))
        except InputError:
            blocks.append(None)
    return blocks


def _split_block(dataset, k: int):
    """(the samples before block k of :data:`HELD_OUT_BLOCKS` equal blocks of ``dataset``'s time span, the block,
    the samples after it); a part of fewer than 2 samples is None."""
    t = dataset.t
    edges = np.searchsorted(t, t[0] + (t[-1] - t[0]) * np.arange(HELD_OUT_BLOCKS + 1) / HELD_OUT_BLOCKS)
    edges[-1] = len(t)
    cuts = ((0, edges[k]), (edges[k], edges[k + 1]), (edges[k + 1], len(t)))
    return tuple(dataset.sliced(a, b) if b - a >= 2 else None for a, b in cuts)


def _squares(result, robot, parts: Sequence, drives) -> tuple[float, float]:
    """(‖y − ŷ‖², ‖y‖²) of ``result`` over ``parts`` ((recording input or None, dataset, payload mass)); raises
    InputError where a part is too short to predict."""
    error = energy = 0.0
    for recording, dataset, payload_mass in parts:
        if dataset is None:
            raise InputError('a held-out block has fewer than 2 samples')
        prediction = predict(result, robot, dataset, None if recording is None else recording.payload, drives=drives,
                             payload_mass=payload_mass)
        error += float(np.sum((prediction.measured - prediction.predicted) ** 2))
        energy += float(np.sum(prediction.measured ** 2))
    return error, energy


def held_out_error(robot, recordings: Sequence, identification, drives) -> float | None:
    """‖y − ŷ‖/‖y‖ over the last :data:`HOLDOUT_SHARE` of each recording's time of ``identification`` identified on
    the rest (one split, a quarter of the blocks' cost: the torque sources' comparison), None where a part is too
    short to identify or to score."""
    parts = [(dataclasses.replace(r, dataset=first), last) for r in recordings
             for first, last in [r.dataset.split_holdout(HOLDOUT_SHARE)]]
    try:
        result = identify(robot, [first for first, _ in parts], identification.spec, identification.filters,
                          identification.options, drives=drives)
    except InputError:
        return None
    return relative_error(result, robot, [(r, last, r.payload_mass) for r, last in parts], drives)


def relative_error(result, robot, parts: Sequence, drives) -> float | None:
    """‖y − ŷ‖/‖y‖ of ``result`` over ``parts`` (as :func:`_squares` takes them), None where one cannot be scored."""
    try:
        error, energy = _squares(result, robot, parts, drives)
    except InputError:
        return None
    return float(np.sqrt(error / energy)) if energy > 0 else None
