"""The joint friction model of Madsen 2020, ch.6, identified from recordings of its dedicated experiments.

::

    f = F(τ_j)·H(θ) + F_V(ω, T)                                                           eqs. (3), (5)
    F(τ_j) = Fc0 + Fc1·τ_j²                                                                   eq. (20)
    F_V = sgn(ω)·(Fs − Fc0)·exp(−(|ω|/Vs)^mu) + Fv1·ω + Fv2·|ω|·ω + Fv3·ω³
          + sgn(ω)·√|ω|·(Ft1·(T − T0) + Ft2·(T⁻³ − T0⁻³))                     eq. (11), erratum A1 option (a)
    H = E-GMS output (M elements, laws r_Δ, r_k, constant backlash B)                    eqs. (14)–(18)

(:class:`dynid.friction.joint_friction.JointFriction`). The friction torque of each recording comes from
:mod:`dynid.identify.friction_fit.recordings` (f = K_τ·i − B·θ̈ − τ_j with τ_j from the identified rigid-body model).
What each experiment gives, with the landed fits of :mod:`dynid.identify.friction_fit.fit`:

==================  ================================================================================
fit                 data and method
==================  ================================================================================
``static``          plateau means of the ``plateaus`` and ``warm_up`` runs (samples count once the joint has
                    moved ``SETTLE_BACKLASHES`` backlashes since a reversal: no pre-sliding), less the load
                    term sgn(ω)·Fc1·τ_j²: the Stribeck map, with the temperature term Ft1, Ft2 in the same
                    least squares when a ``warm_up`` run exists (:func:`dynid.identify.friction_fit.static_fit.
                    fit_plateau_map`, :func:`fit_stribeck` with temperature columns) and a torque offset
                    (the rigid-body model's error at the plateaus' poses: reported in the fit, not kept);
                    Coulomb and polynomial viscous terms where the plateaus do not fix the Stribeck excess
``temperature``     its own fit % on the plateaus less the map (:func:`fit_temperature`; σ: the joint fit's)
``direction``       the plateaus less the map's Stribeck, polynomial and temperature terms: Coulomb and viscous
                    per direction (:func:`fit_coulomb_viscous_per_direction`, Fcp, Fvp, Fcn, Fvn)
``load``            ``gravity_sweep`` samples at steady speed (|ω| >= half the run's 90th percentile, settled):
                    F(τ_j) of eq. (19) (:func:`fit_load_coulomb`) with F_V of the static fit taken out;
                    without a sweep, a ``reciprocating`` run whose |τ_j| spans ``LOADED_SPAN_NM`` gives
                    (Fc0, Fc1) by least squares on [H, τ_j²·H] with its fitted E-GMS
``egms``            the longest ``reciprocating`` run: f − F_V against F(τ_j)·H(θ) (:func:`fit_egms`,
                    Nelder–Mead on backlash, r_Δ, r_k; the level F(τ_j) from the fits above, else a fitted
                    scale ``Fc``); the first samples, until θ has moved ten initial backlashes, only set the
                    operators' state. Where the static map has a Stribeck excess, the excess stays in the
                    data and is fitted beside F·H with its sign tanh(ω/ε), ε (``excess_band``) searched too:
                    it turns over at the reversals, on the samples where the first elements slip, and
                    removed beforehand with the thesis' sgn(ω) it biased the laws
==================  ================================================================================

``static`` and ``load`` share unknowns (the plateaus of a loaded joint need Fc1, the sweep needs F_V), so
they are repeated in turn until their parameters settle (at most ``iterations`` rounds).
The complete model is then run on every recording of the joint (E-GMS on the measured θ; the thesis' laws
where none were identified) and its NRMSE fit to the measured friction is reported per recording.

Each joint's parameters take their values and σ from the fit that identifies them: Fc0 from ``static``
(the no-load Coulomb level is the Stribeck map's Coulomb level), else ``load``, else the E-GMS scale; Fs, Vs,
mu, Fv1–Fv3 from ``static``; Ft1, Ft2 from ``temperature`` (with the σ of the joint fit); Fc1 from ``load``;
backlash, r_delta, r_k, excess_band from ``egms``. σ of the E-GMS parameters (which :func:`fit_egms` leaves
undefined) come here from the residual's numeric Jacobian at the optimum, σ̂²·(JᵀJ)⁻¹, as for the Stribeck map;
they hold the noise only, not the error of modelling a position-dependent backlash by a constant. A fit the data
cannot support (too few plateaus, no load variation) is skipped with a note, not an error.

The result is the result file's ``joint_friction`` section (:meth:`JointFrictionIdentification.section`, schema in
:mod:`dynid.identify.result.result`); :mod:`~dynid.identify.friction_fit.identified` writes it, builds the joints' laws.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from dynid import __version__
from dynid.errors import InputError
from dynid.friction.egms import EGMS
from dynid.friction.linear import sgn
from dynid.friction.static import StribeckMap
from dynid.friction.temperature import ReferenceTemperatureFriction
from dynid.identify.friction_fit.fit import (
    FitResult,
    _numeric_jacobian,
    constant_velocity_plateaus,
    fit_coulomb_viscous_per_direction,
    fit_egms,
    fit_load_coulomb,
    fit_temperature,
    linear_fit,
)
from dynid.identify.friction_fit.identified import ABSENT, EQUATION, PARAMETERS, joint_friction_model
from dynid.identify.friction_fit.recordings import FrictionRecording, FrictionTorque, JointSignals
from dynid.identify.friction_fit.settings import FrictionSettings
from dynid.identify.friction_fit.static_fit import fit_plateau_map
from dynid.identify.result.metrics import nrmse_fit
from dynid.identify.result.result import IdentificationResult, plain_data
from dynid.model.drives import JointDrives
from dynid.model.robot import RobotModel

#: A reciprocating run whose |τ_j| spans this [N·m] identifies the load dependence when no sweep does.
LOADED_SPAN_NM = 10.0
#: Plateau and sweep samples count once the joint has moved this many initial backlashes since a reversal.
SETTLE_BACKLASHES = 3.0
PLATEAU_KINDS = ('plateaus', 'warm_up')
STATIC_NAMES = ('Fs', 'Vs', 'mu', 'Fv1', 'Fv2', 'Fv3')


@dataclass
class Fit:
    """One fit of one joint: the landed :class:`FitResult` and the recordings it used."""

    result: FitResult
    experiments: list[str]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        r = self.result
        out = {'experiments': list(self.experiments), 'parameters': dict(r.parameters), 'std': dict(r.std),
               'nrmse_fit_percent': r.nrmse_fit, 'rms_residual_nm': r.rms_residual, 'samples': r.samples}
        if 'converged' in r.extra:
            out['converged'] = bool(r.extra['converged'])
        if self.notes:
            out['notes'] = list(self.notes)
        return out


@dataclass
class JointFit:
    """The identified friction of one joint: combined parameters, their σ and sources, the fits behind them."""

    joint: str
    parameters: dict[str, float] = field(default_factory=dict)
    std: dict[str, float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    fits: dict[str, Fit] = field(default_factory=dict)
    model_fit_percent: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def forget(self, fit_name: str) -> None:
        """Drop the parameters taken from fit ``fit_name`` (before it is redone)."""
        for name in [n for n, source in self.sources.items() if source == fit_name]:
            del self.parameters[name], self.std[name], self.sources[name]

    def take(self, fit_name: str, names: dict[str, str]) -> None:
        """Parameters {ours: the fit's} from fit ``fit_name`` into the joint's parameters."""
        fit = self.fits[fit_name].result
        for ours, theirs in names.items():
            self.parameters[ours], self.std[ours] = fit.parameters[theirs], fit.std[theirs]
            self.sources[ours] = fit_name

    def to_dict(self) -> dict:
        order = [name for name in PARAMETERS if name in self.parameters]
        relative = {n: (100.0 * self.std[n] / abs(self.parameters[n]) if self.parameters[n] else float('inf'))
                    for n in order}
        return {'parameters': {n: self.parameters[n] for n in order}, 'std': {n: self.std[n] for n in order},
                'relative_std_percent': relative, 'sources': {n: self.sources[n] for n in order},
                'fits': {name: fit.to_dict() for name, fit in self.fits.items()},
                'model_fit_percent': dict(self.model_fit_percent), 'notes': list(self.notes)}


# ------------------------------------------------------------------------------------------- data
@dataclass
class _Plateaus:
    """Plateau means of the plateau runs of one joint (one row per plateau)."""

    omega: np.ndarray
    friction: np.ndarray
    load_squared: np.ndarray
    temperature: np.ndarray  # NaN where the run has no temperature
    recordings: list[str]    # one per run

    @classmethod
    def of(cls, runs: Sequence[JointSignals], settle: float) -> _Plateaus:
        columns: list[list[np.ndarray]] = [[], [], [], []]
        for s in runs:
            # Samples before the joint has moved ``settle`` since its last reversal count as standing still,
            # so that no plateau mean holds pre-sliding (the E-GMS has not saturated yet).
            omega = np.where(settled(s.theta, s.omega, settle), s.omega, 0.0)
            w, f, _ = constant_velocity_plateaus(s.t, omega, s.friction)
            load = constant_velocity_plateaus(s.t, omega, s.load**2)[1]
            temperature = np.full(w.size, np.nan) if s.temperature is None else \
                constant_velocity_plateaus(s.t, omega, s.temperature)[1]
            for column, values in zip(columns, (w, f, load, temperature), strict=True):
                column.append(values)
        return cls(*(np.concatenate(c) if c else np.zeros(0) for c in columns), [s.recording for s in runs])


def settled(theta: np.ndarray, omega: np.ndarray, travel: float) -> np.ndarray:
    """True where θ has moved at least ``travel`` [rad] since the last sign change of ω (sliding, not pre-sliding)."""
    index = np.arange(omega.size)
    turns = np.concatenate([[True], np.sign(omega[1:]) != np.sign(omega[:-1])])
    last = np.maximum.accumulate(np.where(turns, index, 0))
    return np.abs(theta - theta[last]) >= travel


def _temperature_term(fit: JointFit, t0: float) -> ReferenceTemperatureFriction | None:
    if 'Ft1' not in fit.parameters:
        return None
    return ReferenceTemperatureFriction(fit.parameters['Ft1'], fit.parameters['Ft2'], t0=t0)


def _temperature_torque(term, omega: np.ndarray, temperature: np.ndarray | None) -> np.ndarray:
    if term is None or temperature is None:
        return np.zeros_like(omega)
    known = np.isfinite(temperature)
    out = np.zeros_like(omega)
    out[known] = term.evaluate(omega[known], temperature[known])
    return out


def _static_map(fit: JointFit) -> StribeckMap | None:
    p = fit.parameters
    if 'Fc0' not in p or fit.sources.get('Fc0') != 'static':
        return None
    return StribeckMap(Fc=p['Fc0'], Fs=p.get('Fs', p['Fc0']), Fv1=p.get('Fv1', 0.0), Fv2=p.get('Fv2', 0.0),
                       Fv3=p.get('Fv3', 0.0), Vs=p.get('Vs', ABSENT['Vs']), mu=p.get('mu', ABSENT['mu']))


def _velocity_friction(fit: JointFit, t0: float, omega, temperature, excess: bool = True) -> np.ndarray | None:
    """F_V(ω, T) of the fits so far (without the Stribeck excess when ``excess`` is False), or None without a
    static map."""
    static = _static_map(fit)
    if static is None:
        return None
    return (static.excess(omega) if excess else 0.0) + static.viscous(omega) + _temperature_torque(
        _temperature_term(fit, t0), omega, temperature)


def _excess_size(fit: JointFit, omega: np.ndarray) -> np.ndarray | None:
    """(Fs − Fc0)·exp(−(|ω|/Vs)^mu) [N·m] of the static map, None without a map or without an excess."""
    static = _static_map(fit)
    if static is None or 'Fs' not in fit.parameters or static.Fs == static.Fc:
        return None
    return (static.Fs - static.Fc) * static.stribeck_decay(omega)


# --------------------------------------------------------------------------------------- the fits
class _JointIdentification:
    """The fits of one joint (module docstring)."""

    def __init__(self, joint: str, runs: Sequence[JointSignals], settings: FrictionSettings) -> None:
        self.settings, self.runs = settings, list(runs)
        self.fit = JointFit(joint)
        self.plateau_runs = [s for s in runs if s.experiment in PLATEAU_KINDS]
        self.sweeps = [s for s in runs if s.experiment == 'gravity_sweep']
        reciprocating = [s for s in runs if s.experiment == 'reciprocating']
        self.reciprocating = max(reciprocating, key=lambda s: s.t.size) if reciprocating else None
        if len(reciprocating) > 1:
            self.fit.notes.append(f'E-GMS from the longest reciprocating run {self.reciprocating.recording}; '
                                  f'{len(reciprocating) - 1} other(s) not used')
        self.settle = SETTLE_BACKLASHES * settings.egms_initial[0]
        self.plateaus = _Plateaus.of(self.plateau_runs, self.settle) if self.plateau_runs else None

    def run(self) -> JointFit:
        for _ in range(self.settings.iterations):
            before = self._values()
            self._static()
            self._load()
            if not (self.sweeps and self.plateaus is not None):
                break  # nothing couples the fits: one round is the answer
            if self._values().size == before.size and np.allclose(self._values(), before, rtol=1e-5, atol=1e-12):
                break
        else:
            self.fit.notes.append(f'static and load fits still moving after '
                                  f'{self.settings.iterations} rounds')
        self._egms()
        if 'Fc0' not in self.fit.parameters:
            raise InputError(f'{self.fit.joint}: the recordings identify no Coulomb level (need plateaus, a '
                             f'gravity sweep or a reciprocating run of this joint)')
        self._model_fit()
        return self.fit

    def _values(self) -> np.ndarray:
        p = self.fit.parameters
        return np.array([p[name] for name in PARAMETERS if name in p])

    def _try(self, name: str, fit: Callable[[], FitResult], experiments: list[str]) -> bool:
        try:
            result = fit()
        except InputError as error:
            note = f'{name} fit skipped: {error}'
            if note not in self.fit.notes:
                self.fit.notes.append(note)
            return False
        self.fit.fits[name] = Fit(result, experiments)
        return True

    def _static(self) -> None:
        rows, fit, settings = self.plateaus, self.fit, self.settings
        if rows is None or rows.omega.size == 0:
            return
        warm = any(s.experiment == 'warm_up' for s in self.plateau_runs)
        keep = np.isfinite(rows.temperature) if warm else np.ones(rows.omega.size, dtype=bool)
        y = rows.friction - sgn(rows.omega) * fit.parameters.get('Fc1', 0.0) * rows.load_squared
        omega, y = rows.omega[keep], y[keep]
        temperature = rows.temperature[keep] if warm else None
        used = [e for e, s in zip(rows.recordings, self.plateau_runs, strict=True) if not warm or
                s.temperature is not None]
        if not self._try('static', lambda: fit_plateau_map(omega, y, temperature, settings.t0_c), used):
            return
        result = fit.fits['static'].result
        fit.forget('static')
        fit.forget('temperature')
        fit.take('static', {'Fc0': 'Fc', **{name: name for name in STATIC_NAMES if name in result.parameters}})
        if 'Fs' not in result.parameters:
            fit.fits['static'].notes.append(result.extra['stribeck'])
        mean_temperature = np.nanmean(rows.temperature) if np.any(np.isfinite(rows.temperature)) else np.nan
        if temperature is None and abs(mean_temperature - settings.t0_c) > 1.0:
            fit.fits['static'].notes.append(
                f'plateaus at {mean_temperature:.1f} °C and no warm_up run: no temperature term, the map holds at '
                f'that temperature (not at T0 = {settings.t0_c:g} °C)')
        if temperature is not None:
            # The temperature term's own fit %; its values are those of the joint fit (the least squares of
            # one block of linear parameters, the others held, has its optimum at the joint optimum).
            shaped = y - _static_map(fit).evaluate(omega) - result.parameters.get('offset', 0.0)
            if self._try('temperature', lambda: fit_temperature(omega, temperature, shaped, 'reference',
                                                                settings.t0_c), used):
                fit.fits['temperature'].result = _with_std(fit.fits['temperature'].result, result, ('Ft1', 'Ft2'))
                fit.take('temperature', {'Ft1': 'Ft1', 'Ft2': 'Ft2'})
            y = y - _temperature_torque(_temperature_term(fit, settings.t0_c), omega, temperature)
        static = _static_map(fit)
        linear = y - static.excess(omega) - omega * np.abs(omega) * static.Fv2 - omega**3 * static.Fv3
        self._try('direction', lambda: fit_coulomb_viscous_per_direction(omega, linear), used)

    def _load(self) -> None:
        if not self.sweeps:
            return
        fit, t0 = self.fit, self.settings.t0_c
        pieces = []
        for s in self.sweeps:
            speed = np.abs(s.omega)
            steady = (speed >= 0.5 * np.percentile(speed, 90)) & settled(s.theta, s.omega, self.settle)
            temperature = None if s.temperature is None else s.temperature[steady]
            rest = _velocity_friction(fit, t0, s.omega[steady], temperature)
            pieces.append((s.omega[steady], s.friction[steady] + s.load[steady], s.load[steady], rest))
        omega, drive, load = (np.concatenate([p[i] for p in pieces]) for i in range(3))
        rest = None if pieces[0][3] is None else np.concatenate([p[3] for p in pieces])
        if self._try('load', lambda: fit_load_coulomb(omega, drive, load, rest),
                     [s.recording for s in self.sweeps]):
            if rest is None:
                fit.fits['load'].notes = ['no static map of this joint: Fc0 includes the velocity friction at the '
                                          'sweep speed']
            fit.take('load', {'Fc1': 'Fc1'} if 'static' in fit.fits else {'Fc0': 'Fc0', 'Fc1': 'Fc1'})

    def _egms(self) -> None:
        s, fit, settings = self.reciprocating, self.fit, self.settings
        if s is None:
            return
        # Where the map has a Stribeck excess, it is fitted with the E-GMS (its sign band; fit_egms), not removed.
        size = _excess_size(fit, s.omega)
        rest = _velocity_friction(fit, settings.t0_c, s.omega, s.temperature, excess=size is None)
        y = s.friction - (0.0 if rest is None else rest)
        level = None
        if 'Fc0' in fit.parameters:
            level = fit.parameters['Fc0'] + fit.parameters.get('Fc1', 0.0) * s.load**2
        travel = np.abs(s.theta - s.theta[0])
        warmup = int(np.argmax(travel > 10 * settings.egms_initial[0])) if np.any(
            travel > 10 * settings.egms_initial[0]) else 0
        elements = int(settings.egms_elements)

        def egms_fit() -> FitResult:
            return fit_egms(s.theta, y, level, elements, settings.egms_initial, warmup, size, s.omega)

        if not self._try('egms', egms_fit, [s.recording]):
            return
        loaded = 'load' not in fit.fits and np.ptp(np.abs(s.load)) >= LOADED_SPAN_NM
        if loaded:
            result = fit.fits['egms'].result
            hysteresis = _hysteresis(s.theta, result, elements)[warmup:]
            shape = s.load[warmup:] ** 2 * hysteresis
            coulomb = (y - _excess_torque(size, s.omega, result))[warmup:]
            if self._try('load', lambda: linear_fit([hysteresis, shape], coulomb, ('Fc0', 'Fc1')), [s.recording]):
                fit.fits['load'].notes = ['from the reciprocating run under load with its fitted E-GMS']
                fit.take('load', {'Fc1': 'Fc1'} if 'static' in fit.fits else {'Fc0': 'Fc0', 'Fc1': 'Fc1'})
                level = fit.parameters['Fc0'] + fit.parameters['Fc1'] * s.load**2
                self._try('egms', egms_fit, [s.recording])
        egms = fit.fits['egms']
        egms.result = _with_egms_std(egms.result, s.theta, y, level, elements, warmup, size, s.omega)
        if rest is None:
            egms.notes.append('no static map of this joint: its Stribeck and viscous friction stay in the data')
        if level is None:
            egms.notes.append('no Coulomb level from other fits: the E-GMS scale Fc was fitted')
            fit.take('egms', {'Fc0': 'Fc'})
        fit.take('egms', {name: name for name in ('backlash', 'r_delta', 'r_k', 'excess_band')
                          if name in egms.result.parameters})

    def _model_fit(self) -> None:
        fit, settings = self.fit, self.settings
        model = joint_friction_model({fit.joint: fit.parameters}, [fit.joint], settings.t0_c,
                                     settings.egms_elements)[0]
        for s in self.runs:
            temperature = None if model.temperature is None else (
                np.full(s.t.size, settings.t0_c) if s.temperature is None else s.temperature)
            model.reset()
            predicted = model.run(s.theta[:, None], s.omega[:, None], s.load[:, None],
                                  None if temperature is None else temperature[:, None])[:, 0]
            fit.model_fit_percent[s.recording] = float(nrmse_fit(s.friction, predicted))


def _with_std(result: FitResult, source: FitResult, names: Sequence[str]) -> FitResult:
    """``result`` with σ of ``names`` taken from ``source`` (the joint fit's marginal σ)."""
    return FitResult(result.parameters, {**result.std, **{n: source.std[n] for n in names}}, result.nrmse_fit,
                     result.rms_residual, result.samples, result.extra)


def _hysteresis(theta: np.ndarray, result: FitResult, elements: int) -> np.ndarray:
    p = result.parameters
    return EGMS(1, elements, p['r_delta'], p['r_k'], p['backlash']).run(theta[:, None])[:, 0]


def _excess_torque(size: np.ndarray | None, omega: np.ndarray, result: FitResult) -> np.ndarray | float:
    """The Stribeck excess size·tanh(ω/ε) [N·m] with the band ε the E-GMS fit found (0 without an excess)."""
    return 0.0 if size is None else size * np.tanh(omega / result.parameters['excess_band'])


def _with_egms_std(result: FitResult, theta, y, level, elements: int, warmup: int, size=None,
                   omega=None) -> FitResult:
    """The E-GMS fit with σ of (backlash, r_delta, r_k[, excess_band][, Fc]) from the residual's numeric Jacobian."""
    names = ['backlash', 'r_delta', 'r_k'] + ([] if size is None else ['excess_band']) + (
        ['Fc'] if level is None else [])
    target = y[warmup:]

    def residual(p: np.ndarray) -> np.ndarray:
        h = EGMS(1, elements, p[1], p[2], max(p[0], 1e-12)).run(theta[:, None])[warmup:, 0]
        scale = p[-1] if level is None else level[warmup:]
        known = 0.0 if size is None else (size * np.tanh(omega / max(p[3], 1e-12)))[warmup:]
        return target - scale * h - known

    values = np.array([result.parameters[name] for name in names])
    jacobian = _numeric_jacobian(residual, values)
    r = residual(values)
    variance = r @ r / max(target.size - values.size, 1)
    std = np.sqrt(np.abs(np.diag(variance * np.linalg.pinv(jacobian.T @ jacobian))))
    return FitResult(result.parameters, {**result.std, **dict(zip(names, map(float, std), strict=True))},
                     result.nrmse_fit, result.rms_residual, result.samples, result.extra)


# ------------------------------------------------------------------------------------ the pipeline
def fit_joint(joint: str, runs: Sequence[JointSignals], settings: FrictionSettings | None = None) -> JointFit:
    """The fits of one joint from its recordings' signals (module docstring); InputError when they identify
    no Coulomb level."""
    return _JointIdentification(joint, runs, settings or FrictionSettings()).run()


@dataclass
class JointFrictionIdentification:
    """What :func:`identify_joint_friction` found: per joint fits, the recordings and how they were read."""

    robot: str
    joints: dict[str, JointFit]
    signals: list[JointSignals]
    settings: FrictionSettings
    torque_sources: list[str]
    warnings: list[str] = field(default_factory=list)

    def section(self) -> dict:
        """The result file's ``joint_friction`` section (plain data; schema in :mod:`dynid.identify.result.result`)."""
        return plain_data({
            'model': {'equation': EQUATION, 'load_law': 'squared', 'temperature_form': 'reference',
                      't0_c': self.settings.t0_c, 'egms_elements': int(self.settings.egms_elements),
                      'backlash': 'constant'},
            'torque_source': ', '.join(self.torque_sources),
            'recordings': [{'name': s.recording, 'experiment': s.experiment, 'joint': s.joint, 'found_by': s.found_by,
                            'samples': int(s.t.size), 'duration_s': float(s.t[-1] - s.t[0]),
                            'temperature_c': None if s.temperature is None else
                            [float(s.temperature.min()), float(s.temperature.max())]} for s in self.signals],
            'joints': {name: fit.to_dict() for name, fit in self.joints.items()},
            'warnings': list(self.warnings),
            'settings': asdict(self.settings),
            'provenance': {'software': {'dynid': __version__},
                           'created': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')},
        })


def identify_joint_friction(recordings: Sequence[FrictionRecording], result: IdentificationResult,
                            robot: RobotModel, settings: FrictionSettings | None = None,
                            progress: Callable[[str], None] | None = None,
                            drives: JointDrives | None = None) -> JointFrictionIdentification:
    """The joint friction of every joint the recordings move (module docstring); ``drives`` (e.g. of a drives file)
    replace the result's and the robot's (:func:`dynid.identify.friction_fit.recordings.friction_drives`).

    Raises InputError naming the recording for unusable input (no single moving joint, unknown experiment,
    no motor torque). A joint whose recordings identify no Coulomb level is left out with a warning (an
    InputError when that leaves no joint).
    """
    settings = settings or FrictionSettings()
    if not recordings:
        raise InputError('no recordings given')
    say = progress or (lambda text: None)
    torque = FrictionTorque(result, robot, settings.torque, settings.cutoff_hz, settings.min_temperature_span_c,
                            drives)
    signals = []
    for i, recording in enumerate(recordings):
        if not recording.name:
            recording.name = str(recording.dataset.source.get('bag') or f'recording {i + 1}')
        signals.append(torque(recording))
        say(f'{recording.name}: {signals[-1].experiment} of {signals[-1].joint} ({recording.found_by})')
    joints, warnings = {}, []
    for joint in robot.joint_names:
        runs = [s for s in signals if s.joint == joint]
        if runs:
            say(f'fitting {joint} ({len(runs)} recording(s))')
            try:
                joints[joint] = fit_joint(joint, runs, settings)
            except InputError as error:
                warnings.append(str(error))
    if not joints:
        raise InputError('; '.join(warnings))
    return JointFrictionIdentification(robot.name, joints, signals, settings, sorted(torque.sources), warnings)
