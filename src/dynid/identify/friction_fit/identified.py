"""An identified joint friction model: built from a result file's ``joint_friction`` section, written into one.

``dynid identify-friction`` (:mod:`dynid.identify.friction_fit.identify`) writes the section; the feedforward and
estimator terms read it back through :meth:`dynid.identify.result.result.IdentificationResult.joint_friction` and
build the model with :func:`joint_friction_of`:

    f = (Fc0 + Fc1·τ_j²)·H(θ) + s(ω)·(Fs − Fc0)·exp(−(|ω|/Vs)^mu) + Fv1·ω + Fv2·|ω|·ω + Fv3·ω³
        + sgn(ω)·√|ω|·(Ft1·(T − t0) + Ft2·(T⁻³ − t0⁻³)),       s(ω) = tanh(ω/excess_band) (sgn(ω) if 0)

(:class:`dynid.friction.joint_friction.JointFriction`; Madsen 2020, ch.6 eqs. (3), (5), (11), (14)–(20); the thesis'
excess turns over with sgn(ω), a jump at every reversal, and excess_band is how fast the joint's does,
found with the E-GMS from a reciprocating sweep). Units: Fc0, Fs [N·m]; Vs, excess_band [rad/s]; mu [-];
Fv1 [N·m·s/rad], Fv2 [N·m·s²/rad²], Fv3 [N·m·s³/rad³]; Fc1 [1/(N·m)]; Ft1 [N·m·(s/rad)^½/°C], Ft2
[N·m·(s/rad)^½·°C³]; backlash [rad]; r_delta, r_k [-]. A parameter the data did not identify means "no
such term" (:data:`ABSENT`: Fs = Fc0, zero viscous, load and temperature terms, the excess turning over
with sgn(ω)) or the thesis' E-GMS laws (M = 4, r_Δ = 4, r_k = 2, B = 1 mrad).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import yaml

from dynid.errors import InputError
from dynid.files import read_yaml, write_text
from dynid.friction.egms import EGMS
from dynid.friction.joint_friction import JointFriction
from dynid.friction.static import StribeckMap
from dynid.friction.temperature import ReferenceTemperatureFriction
from dynid.identify.result.result import RESULT_VERSION, IdentificationResult
from dynid.model.robot import RobotModel

#: The parameters of the joint friction model, in the order of the result file (units in the module docstring).
PARAMETERS = ('Fc0', 'Fs', 'Vs', 'mu', 'excess_band', 'Fv1', 'Fv2', 'Fv3', 'Fc1', 'Ft1', 'Ft2', 'backlash',
              'r_delta', 'r_k')
#: What a parameter the data did not identify means (module docstring); Fs defaults to Fc0.
ABSENT = {'Fv1': 0.0, 'Fv2': 0.0, 'Fv3': 0.0, 'Fc1': 0.0, 'Ft1': 0.0, 'Ft2': 0.0, 'Vs': 0.01, 'mu': 1.0,
          'excess_band': 0.0, 'backlash': 1e-3, 'r_delta': 4.0, 'r_k': 2.0}
EQUATION = ('f = (Fc0 + Fc1·τ_j²)·H_EGMS(θ; backlash, r_delta, r_k) + tanh(ω/excess_band)·(Fs − Fc0)·'
            'exp(−(|ω|/Vs)^mu) + Fv1·ω + Fv2·|ω|·ω + Fv3·ω³ + sgn(ω)·√|ω|·(Ft1·(T − t0) + Ft2·(T⁻³ − t0⁻³))')


def joint_friction_model(parameters: dict[str, dict[str, float]], joint_names: Sequence[str], t0_c: float = 20.0,
                         egms_elements: int = 4) -> tuple[JointFriction, np.ndarray]:
    """The :class:`JointFriction` of ``joint_names`` from identified parameters {joint: {name: value}}.

    Returns the model and a boolean mask of the joints with an identified Coulomb level Fc0. Parameters not
    identified take :data:`ABSENT`; joints without parameters get zero friction (the mask tells them apart:
    combine with another friction model there). The temperature term is present when any joint has one
    (zero on the others), with T0 = ``t0_c`` [°C], T clamped to 5–80 °C.
    """
    names = list(joint_names)
    rows = [{k: v for k, v in (parameters.get(name) or {}).items() if v is not None and np.isfinite(v)}
            for name in names]
    identified = np.array(['Fc0' in row for row in rows])

    def column(symbol: str) -> np.ndarray:
        if symbol == 'Fs':
            return np.array([row.get('Fs', row.get('Fc0', 0.0)) for row in rows], dtype=float)
        return np.array([row.get(symbol, ABSENT.get(symbol, 0.0)) for row in rows], dtype=float)

    stribeck = StribeckMap(Fc=column('Fc0'), Fs=column('Fs'), Fv1=column('Fv1'), Fv2=column('Fv2'),
                           Fv3=column('Fv3'), Vs=column('Vs'), mu=column('mu'), smoothing=column('excess_band'))
    temperature = ReferenceTemperatureFriction(column('Ft1'), column('Ft2'), t0=t0_c) \
        if any('Ft1' in row for row in rows) else None
    egms = EGMS(len(names), egms_elements, column('r_delta'), column('r_k'), column('backlash'))
    return JointFriction(stribeck, column('Fc1'), 'squared', temperature, egms), identified


def joint_friction_of(result: IdentificationResult, robot: RobotModel) -> tuple[JointFriction, np.ndarray] | None:
    """The identified joint friction of ``robot``'s joints (with the mask of :func:`joint_friction_model`),
    or None when the result has no ``joint_friction`` section."""
    parameters = result.joint_friction()
    if parameters is None:
        return None
    model = result.joint_friction_section.get('model') or {}
    return joint_friction_model(parameters, robot.joint_names, float(model.get('t0_c', 20.0)),
                                int(model.get('egms_elements', 4)))


def velocity_friction(model: JointFriction, band=None, fallback_c: float = 20.0) -> Callable:
    """F_V(ω, T) [N·m] of ``model`` (:meth:`JointFriction.remainder`) as a callable (ω, T) for arrays of ω's shape.

    ``band`` [rad/s] (a scalar or one per joint) > 0 smooths the Stribeck excess through ω = 0 (tanh(ω/band)
    for its sign, the Stribeck map's ``smoothing``) instead of the model's own (its identified
    excess_band, else sgn(ω)); None or 0 keeps the model's. T [°C] is ``fallback_c`` where None or NaN (the
    feedforward's fallback, an estimator without temperatures), broadcast to ω's shape.
    """
    if band is not None and np.any(np.asarray(band) > 0):
        band = np.where(np.asarray(band, dtype=float) > 0, band, model.stribeck.smoothing)
        model = dataclasses.replace(model, stribeck=dataclasses.replace(
            model.stribeck, smoothing=float(band) if band.ndim == 0 else band))

    def remainder(velocity, temperature=None) -> np.ndarray:
        w = np.asarray(velocity, dtype=float)
        if model.temperature is None:
            return model.remainder(w)
        t = np.broadcast_to(np.asarray(fallback_c if temperature is None else temperature, dtype=float), w.shape)
        return model.remainder(w, np.where(np.isnan(t), fallback_c, t))

    return remainder


def write_joint_friction(params: str | Path, section: dict, output: str | Path | None = None) -> Path:
    """Write ``section`` as the ``joint_friction`` of the result file ``params`` into ``output`` (default
    ``params`` itself) with the version key of schema 2 (3 where it was 3: :mod:`dynid.identify.result.result`). The
    rest of the file is kept as it is, keys the reader does not know included; a section already there is replaced."""
    source = Path(params)
    data = read_yaml(source, 'result file')
    result = IdentificationResult.from_dict(data, str(source))  # checks the file before anything is written
    unknown = [joint for joint in section.get('joints', {}) if joint not in result.joint_names]
    if unknown:
        raise InputError(f'{source} is for joints {list(result.joint_names)}, not {unknown}')
    data['dynid_result'] = max(RESULT_VERSION, data['dynid_result'])  # 3 (the shifted power term) holds 2
    data['joint_friction'] = section
    target = source if output is None else Path(output)
    write_text(target, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return target


def _number(value: float | None, spec: str = '.5g') -> str:
    return 'n/a' if value is None or not np.isfinite(value) else format(value, spec)


def summary_lines(identification) -> list[str]:
    """The recordings, a table of parameters per joint and the fits, for people (``dynid identify-friction``)."""
    lines = [f'joint friction of {identification.robot} from {len(identification.signals)} recording(s) '
             f'(motor torque: {", ".join(identification.torque_sources)})']
    for s in identification.signals:
        span = '' if s.temperature is None else f', {s.temperature.min():.1f}–{s.temperature.max():.1f} °C'
        lines.append(f'  {s.recording}: {s.experiment} of {s.joint} (found by {s.found_by}; '
                     f'{s.t[-1] - s.t[0]:.1f} s{span})')
    for joint, fit in identification.joints.items():
        lines.append(f'{joint}')
        lines.append(f'  {"parameter":<10} {"value":>12} {"σ":>10} {"σ %":>8}  from')
        for name in PARAMETERS:
            if name not in fit.parameters:
                continue
            value, std = fit.parameters[name], fit.std[name]
            relative = 100.0 * std / abs(value) if value and std is not None and np.isfinite(std) else None
            lines.append(f'  {name:<10} {_number(value):>12} {_number(std, ".3g"):>10} '
                         f'{_number(relative, ".3g"):>8}  {fit.sources[name]}')
        for name, entry in fit.fits.items():
            r = entry.result
            lines.append(f'  fit {name:<12} NRMSE fit {_number(r.nrmse_fit, ".2f"):>7} %, RMS residual '
                         f'{_number(r.rms_residual, ".3g")} N·m, {r.samples} points of '
                         f'{", ".join(entry.experiments)}')
            lines.extend(f'    note: {note}' for note in entry.notes)
        for recording, percent in fit.model_fit_percent.items():
            lines.append(f'  complete model on {recording}: NRMSE fit {_number(percent, ".2f")} %')
        lines.extend(f'  note: {note}' for note in fit.notes)
    lines.extend(f'warning: {warning}' for warning in identification.warnings)
    return lines
