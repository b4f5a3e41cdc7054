"""IdentificationResult: what an identification found, as the result YAML of docs/contract.md.

The file has a top-level ``dynid_result: 1`` version key, the robot and joint names, the method and
the model (friction model, torque source, options), the base parameters (names, expressions in
standard parameters, values, standard deviations, relative %), friction parameters per joint, drive
gains, metrics on training and validation data, warnings and provenance (inputs, filter settings,
the drive data used, the robot as :mod:`dynid.identify.result.robot_source` records it, software version).
The condition number of the regressor appears twice: ``condition_number_scaled`` (columns scaled to
unit norm) and ``condition_number`` (raw). Every number in the file is a number or null: what is
undefined (a fit nothing could score, σ % of a zero value) is null, never the string 'nan'. The
feedforward and estimator nodes load it with :meth:`IdentificationResult.load`.

Schema versions. **1**: everything above. **2** (``dynid identify-friction``) adds the optional
``joint_friction`` section: the joint friction model of Madsen 2020 ch.6 identified from the dedicated
experiments (:mod:`dynid.identify.friction_fit.identify`)::

    joint_friction:
      model: {equation: ..., load_law: squared, temperature_form: reference, t0_c: 20.0,
              egms_elements: 4, backlash: constant}
      torque_source: current                       # motor torque from currents (or: effort)
      recordings:                                  # one per recording: what it was taken for
        - {name: BAG, experiment: plateaus, joint: NAME, found_by: motion, samples: N, duration_s: S,
           temperature_c: [MIN, MAX]}
      joints:
        NAME:                                      # only the joints the recordings moved
          parameters: {Fc0: .., Fs: .., Vs: .., mu: .., excess_band: .., Fv1: .., Fv2: .., Fv3: .., Fc1: ..,
                       Ft1: .., Ft2: .., backlash: .., r_delta: .., r_k: ..}    # those identified, units of the model
          std: {...}                               # σ of each (null where undefined)
          relative_std_percent: {...}
          sources: {Fc0: static, Fc1: load, ...}   # the fit each value comes from
          fits:                                    # static, direction, load, temperature, egms
            static: {experiments: [BAG, ...], parameters: {..}, std: {..}, nrmse_fit_percent: ..,
                     rms_residual_nm: .., samples: .., notes: [..]}
          model_fit_percent: {BAG: ..}             # NRMSE fit of the complete model per recording
          notes: [...]
      settings: {...}
      provenance: {software: {dynid: ..}, created: ..}

Identification in standard parameters (:mod:`dynid.identify.solve.physical`, the default where the model allows it)
adds the optional ``prior`` section, and the ``physical`` section when the estimate is physically consistent;
the base parameters of the file are then the ones its standard parameters imply (K·π), so a reader that
ignores the sections still predicts the same torques, and the sections do not change the version::

    prior:
      used: true                                    # false with a reason: --no-prior, a model it cannot take
      source: FILE                                  # the robot file, or the result file given as the prior
      provenance: {kind: result, path: .., sha256: .., robot: .., created: .., method: ..}   # only for a result
      relative_std: 0.5                             # s
      rule: ...                                     # how s was chosen, in words
      cross_validation: {folds: 4, blocks: 8, grid: [...], held_out_score: [...], ...}   # null when s was given
      links_left_out: [{joint: NAME, link: NAME, problem: ...}]   # impossible inertias of the robot file
      robot_file_model: {PARAMETER: ..}             # the robot file's links, rotor inertia and friction fitted
      robot_file_reference: {friction: coulomb+viscous+offset, values: {PARAMETER: ..}}   # validate's reference:
                                                    # the file's links, Coulomb + viscous friction and an offset
      prior_cost_percent: ..                        # training chi2 of the MAP estimate over the linear fit's [%]
      data_condition_number_scaled: ..              # cond(W·D) of the data alone, equal row weights, on the rigid
                                                    # body and Coulomb + viscous + offset columns (the result's:
                                                    # data and prior)
      posterior_std: [...]                          # σ of the MAP estimate (the result's std where kept)
      consistency: {mode: auto, decision: free, physically_consistent: true, cost_percent: .., limit_percent: 1.0,
                    links_not_physical: [...]}      # decision: free, enforced, declined, solver failed, not asked for
    physical:
      solver: clarabel                              # or scs, log_cholesky; 'none needed' when the MAP was consistent
      solver_status: optimal
      solve_s: ..
      constraint: ...                               # the constraint, in words
      consistency: {weighted_chi2_unconstrained: .., weighted_chi2_physical: .., cost_percent: ..}
      links:                                        # one per joint, in joint order
        - {joint: NAME, link: NAME, parameters: [m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz],
           prior: [...]}                            # kg, kg·m, kg·m² about the joint frame origin
      rotor_inertia: {JOINT: ..} or null            # kg·m², link side (when identified)
      unconstrained: {values: [...], std: [...]}    # the linear solution in parameter order
      mass_matrix: {states: 1000, positive_definite_percent: 100.0, min_eigenvalue: ..}

The optional ``diagnosis`` section is what the recordings' effort holds, read from all of them together before
anything was fitted (:class:`dynid.diagnosis.Diagnosis`; validate and estimate read it instead of deciding again)::

    diagnosis:
      recordings: [NAME, ...]
      signal: torque                                # what was compared: torque, current (K_τ·i) or null
      said: null                                    # what the user or the recording said the effort holds
      meaning: joint torque                         # joint torque, motor torque, motor current, torque without
                                                    # gravity, joint torque or motor current, other, not decided
      joints: {NAME: {meaning: .., sign: 1, scale: .., scale_std: .., offset: .., evidence: ..}}   # sign 0: not decided
      findings: [{kind: sign, joints: [...], text: .., advice: ..}]
      warnings: [...]
      details: {...}                                # the figures behind the findings

Where the model choice kept a Stribeck excess on some joint (:class:`dynid.identify.result.stribeck.StribeckExcess`),
its coefficients are the friction entries ``Fs_j`` (the excess F_S − F_C [N·m], 0 on the joints without the term) and
the optional ``stribeck`` section holds the rest of the law; a file without it has no such term::

    stribeck:
      velocities: {NAME: 0.12, OTHER: null}         # Vs [rad/s] of sgn(ω)·exp(−(|ω|/Vs)^μ); null: no term there
      shapes: {NAME: 2.0, OTHER: null}              # μ

With coupled drives, a joint several motors make may hold friction on its own velocity (a stage that turns with the
joint: :mod:`dynid.identify.equations.joint_side`): the friction entries ``Fcq_j`` [N·m] and ``Fvq_j`` [N·m·s/rad] of
the joints ``model.joint_side_joints`` names, f_j = Fcq_j·sgn(q̇_j) + Fvq_j·q̇_j on joint j (their symbols are among
``model.friction_symbols``; a file without them has none).

The standard deviations are the posterior σ of the Gaussian prior problem, and null where the constraints moved
the estimate (a constrained estimate has no LS covariance; ``prior.posterior_std`` keeps the MAP's).

**3**: the comprehensive law's viscous power term written from v_s (``model.power_form: shifted``,
:mod:`dynid.friction.power_law`): its fc is the friction at v_s, not at ω → 0, so a reader of versions 1 and 2, which
reads Li's sgn(ω)·|ω|^α, must refuse the file rather than predict other torques from it.

A result is written with the lowest version that holds it (:meth:`IdentificationResult.version`: 1 without the
``joint_friction`` section and without the shifted power term), so that readers of version 1 keep reading it; every
version loads (:data:`READABLE_VERSIONS`), and :meth:`IdentificationResult.joint_friction` gives the section's
parameters per joint (None for a file without it).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dynid import __version__
from dynid.errors import InputError
from dynid.files import dump_yaml, read_yaml, write_text
from dynid.friction.law import FrictionLaw
from dynid.friction.laws import friction_law, law_names
from dynid.friction.power_law import power_velocity
from dynid.identify.result import result_schema
from dynid.identify.result.result_schema import JOINT_NAMES, RESULT
from dynid.identify.result.stribeck import StribeckExcess
from dynid.model.drives import JointDrives
from dynid.schema import check

#: The version of a result with the ``joint_friction`` section (module docstring).
RESULT_VERSION = 2
#: The version of a result whose comprehensive law's power term is written from v_s (module docstring).
SHIFTED_POWER_VERSION = 3
#: Schema versions this module reads (module docstring).
READABLE_VERSIONS = (1, 2, 3)


def plain_data(value):
    """``value`` as plain YAML data: str keys, lists, Python numbers, null for a non-finite float."""
    if isinstance(value, dict):
        return {str(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain_data(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None  # numbers in a result are numbers or null (an undefined σ %, a cond never computed)
    return value


def _float(value) -> float:
    """A number of a result file; null (and the 'nan' strings of older files) read as NaN."""
    return float('nan') if value is None else float(value)


@dataclass
class IdentificationResult:
    """An identified model (module docstring). Parameter arrays are in ``parameter_names`` order."""

    robot: str
    joint_names: tuple[str, ...]
    method: str
    model: dict
    parameter_names: list[str]
    values: np.ndarray
    std: np.ndarray
    base_expressions: dict[str, str]
    drive_gains: np.ndarray | None = None
    drive_gains_std: np.ndarray | None = None
    drive_gains_identified: bool = False
    exponents: np.ndarray | None = None
    stribeck: StribeckExcess | None = None  # the Stribeck excess's velocities and shape (module docstring)
    condition_number: float = float('nan')
    condition_number_scaled: float = float('nan')
    metrics: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    provenance: dict = field(default_factory=dict)
    joint_friction_section: dict | None = None  # the ``joint_friction`` section (schema 2), plain data
    physical_section: dict | None = None  # the ``physical`` section (module docstring), plain data
    drive_gain_diagnostics: dict | None = None  # TLS/MLS: kernel gap, payload content, nominal comparison
    prior_section: dict | None = None  # the ``prior`` section (module docstring), plain data
    diagnosis_section: dict | None = None  # the ``diagnosis`` section: dynid.diagnosis.Diagnosis.to_dict()

    @property
    def relative_std(self) -> np.ndarray:
        from dynid.identify.result.quality import relative_std_percent

        return relative_std_percent(self.values, self.std)

    def other_estimate(self) -> tuple[bool, dict[str, float]] | None:
        """The estimate of the other physical-consistency decision, where consistency moved this one (kept or
        declined it) or the default left it unchecked for the output torque (the consistent estimate, τ_out
        iterated: ``prior.consistency.other_estimate``): (whether it is the physically consistent one, {parameter:
        value}); None where the result keeps none."""
        other = ((self.prior_section or {}).get('consistency') or {}).get('other_estimate')
        if not other:
            return None
        return bool(other['physically_consistent']), {name: float(v) for name, v in other['values'].items()}

    @property
    def prior_used(self) -> bool:
        """Whether the robot file's inertias were a prior of this identification."""
        return bool((self.prior_section or {}).get('used'))

    def condition_text(self) -> str:
        """The condition numbers for people, labelled: 'cond(W) = 393 with unit-norm columns (raw: 3.729e+04)';
        with a prior, those of the problem solved (data and prior rows) and the data's alone. A figure above
        :data:`dynid.identify.result.quality.COND_SCALED_MAX` says so where it is printed (the weakly exciting log's
        threshold for the data alone, the refusal's for the problem solved), whether or not the run's gate spoke."""
        from dynid.identify.result.quality import COND_SCALED_MAX

        def number(value):
            return 'n/a' if value is None or not np.isfinite(value) else f'{value:.4g}'

        def above(value, what):
            crossed = value is not None and np.isfinite(value) and value > COND_SCALED_MAX
            return f' (above {COND_SCALED_MAX:g}: {what})' if crossed else ''

        if self.prior_used:
            data = self.prior_section.get('data_condition_number_scaled')
            return (f'cond = {number(self.condition_number_scaled)} with unit-norm columns for the data with the '
                    f'prior (raw: {number(self.condition_number)})'
                    f'{above(self.condition_number_scaled, "more than the prior completes")}; the data alone: '
                    f'cond(W) = {number(data)}{above(data, "a weakly exciting log")}')
        return (f'cond(W) = {number(self.condition_number_scaled)} with unit-norm columns '
                f'(raw: {number(self.condition_number)})'
                f'{above(self.condition_number_scaled, "a weakly exciting log")}')

    def value(self, name: str) -> float:
        try:
            return float(self.values[self.parameter_names.index(name)])
        except ValueError:
            raise InputError(f'the result has no parameter {name!r}') from None

    def friction(self) -> dict[str, dict[str, float]]:
        """Friction parameters per joint: {joint: {symbol: value}}."""
        out: dict[str, dict[str, float]] = {name: {} for name in self.joint_names}
        for name, value in zip(self.parameter_names, self.values, strict=True):
            symbol, _, index = name.rpartition('_')
            if symbol in self.model.get('friction_symbols', []) and index.isdigit():
                out[self.joint_names[int(index) - 1]][symbol] = float(value)
        return out

    @property
    def joint_side_joints(self) -> tuple[int, ...]:
        """The joints (indices) whose own friction the result holds, with coupled drives (the parameters ``Fcq_j``,
        ``Fvq_j``: :mod:`dynid.identify.equations.joint_side`); () for a result without."""
        names = self.model.get('joint_side_joints') or ()
        return tuple(self.joint_names.index(name) for name in names)

    def recorded_coupling(self) -> np.ndarray | None:
        """The coupling C (θ = C·q) of the drives the result was identified with (``provenance.drives``), or None: its
        friction and rotor inertias are then the motors' (:mod:`dynid.model.drives`)."""
        recorded = (self.provenance.get('drives') or {}).get('joints')
        return None if not recorded else JointDrives.from_dict(recorded, self.joint_names).coupling

    @property
    def law(self) -> FrictionLaw:
        """The result's friction law (:mod:`dynid.friction.laws`; InputError naming it where it is not installed)."""
        return friction_law(self.model.get('friction', 'none'))

    def _power_viscous(self) -> bool:
        """The result's law has a viscous power term (False for a law not installed: the file then loads and saves)."""
        name = self.model.get('friction', 'none')
        return name in law_names() and friction_law(name).power_viscous

    @property
    def power_velocity(self) -> float | None:
        """v_s [rad/s] of the law's viscous power term (the comprehensive law's: :mod:`dynid.friction.power_law`): the
        model's ``power_velocity`` where its ``power_form`` is ``shifted``; None for a law without the term, and for
        Li's sgn(ω)·|ω|^α as written (a result written before the form had a name)."""
        if self.model.get('power_form') != 'shifted' or not self._power_viscous():
            return None
        return power_velocity('shifted', self.model.get('power_velocity') or 0.0)

    def power_exponents(self, joint_names=None) -> np.ndarray:
        """α per joint of the law's viscous power term (the comprehensive law's: Li et al. 2024 eq. (3)), in
        ``joint_names``' order (default the result's): the identified ``exponents``, else the model's fixed
        ``exponent``; 1 (a viscous term) for a law without the term. With :attr:`power_velocity`, what
        :func:`dynid.friction.power_law.power_term` needs to evaluate the term."""
        n = len(self.joint_names)
        if not self._power_viscous():
            exponents = np.ones(n)
        elif self.exponents is not None:
            exponents = np.asarray(self.exponents, dtype=float)
        else:
            exponents = np.full(n, float(self.model.get('exponent', 1.0)))
        if joint_names is None:
            return exponents.copy()
        order = {name: j for j, name in enumerate(self.joint_names)}
        return np.array([exponents[order[name]] for name in joint_names])

    @property
    def version(self) -> int:
        """The lowest schema version that holds this result (module docstring)."""
        if self.power_velocity is not None:
            return SHIFTED_POWER_VERSION
        return RESULT_VERSION if self.joint_friction_section is not None else 1

    def coulomb_viscous(self) -> dict[str, dict[str, float]]:
        """{joint: {'Fc' [N·m], 'Fv' [N·m·s/rad]}}: each joint's Coulomb level at ω → 0 and viscous coefficient where
        its law's roles give them (:meth:`dynid.friction.law.FrictionLaw.joint_levels`; e.g. fc − fv·v_s and fv of
        the comprehensive law at α = 1, fc alone at another α); {} for a joint without. InputError naming the law where
        it is not installed."""
        law, exponents, shift = self.law, self.power_exponents(), self.power_velocity
        return {joint: law.joint_levels(values, exponents[k], shift)
                for k, (joint, values) in enumerate(self.friction().items())}

    def joint_friction(self) -> dict[str, dict[str, float]] | None:
        """The identified joint friction model (schema 2) per joint, {joint: {parameter: value}} (NaN for null),
        for the joints it covers; None when the result has no ``joint_friction`` section.
        :func:`dynid.identify.friction_fit.identified.joint_friction_of` builds the friction model from it."""
        if self.joint_friction_section is None:
            return None
        return {joint: {name: _float(value) for name, value in entry['parameters'].items()}
                for joint, entry in self.joint_friction_section['joints'].items()}

    def robot_file_values(self) -> np.ndarray | None:
        """The parameters of the robot file's own model in ``parameter_names`` order (links as the robot file has
        them, rotor inertias and friction fitted to the same recordings: :mod:`dynid.identify.solve.prior`), or None
        when the result holds none."""
        model = (self.prior_section or {}).get('robot_file_model')
        return None if model is None else np.array([float(model[name]) for name in self.parameter_names])

    def robot_file_reference(self) -> dict[str, float] | None:
        """The robot file's own model as validate's fixed reference ({parameter: value}: its links' base parameters,
        the rotor inertias fitted, Coulomb + viscous friction and an offset ``Fc_j``, ``Fv_j``, ``tau0_j`` fitted to the
        same recordings whatever law the result chose: :mod:`dynid.identify.solve.reference`), or None (a result without
        it: validate then predicts :meth:`robot_file_values`)."""
        entry = (self.prior_section or {}).get('robot_file_reference')
        return None if not entry else {name: float(value) for name, value in entry['values'].items()}

    def standard_parameters(self) -> np.ndarray | None:
        """The 10·n physically consistent standard parameters (joint order, each link about its joint frame),
        or None when the result has no ``physical`` section."""
        if self.physical_section is None:
            return None
        return np.concatenate([np.asarray(link['parameters'], dtype=float) for link in self.physical_section['links']])

    def to_dict(self) -> dict:
        rigid = [n for n in self.parameter_names if n in self.base_expressions]
        index = {n: i for i, n in enumerate(self.parameter_names)}
        relative = self.relative_std
        return plain_data({
            'dynid_result': self.version,
            'robot': self.robot,
            'joint_names': list(self.joint_names),
            'method': self.method,
            'model': self.model,
            'condition_number': self.condition_number,
            'condition_number_scaled': self.condition_number_scaled,
            'base_parameters': [
                {'name': n, 'expression': self.base_expressions[n], 'value': self.values[index[n]],
                 'std': self.std[index[n]], 'relative_std_percent': relative[index[n]]} for n in rigid],
            'friction': [
                {'name': n, 'value': self.values[index[n]], 'std': self.std[index[n]],
                 'relative_std_percent': relative[index[n]]} for n in self.parameter_names if n not in rigid],
            'drive_gains': None if self.drive_gains is None else {
                'identified': self.drive_gains_identified,
                'values': dict(zip(self.joint_names, self.drive_gains, strict=True)),
                'std': None if self.drive_gains_std is None else dict(zip(self.joint_names, self.drive_gains_std,
                                                                           strict=True)),
                **({} if self.drive_gain_diagnostics is None else {'diagnostics': self.drive_gain_diagnostics})},
            'exponents': None if self.exponents is None else dict(zip(self.joint_names, self.exponents, strict=True)),
            **({} if self.stribeck is None else {'stribeck': {
                'velocities': dict(zip(self.joint_names, self.stribeck.velocities, strict=True)),
                'shapes': dict(zip(self.joint_names, self.stribeck.shapes, strict=True))}}),
            **({} if self.joint_friction_section is None else {'joint_friction': self.joint_friction_section}),
            **({} if self.physical_section is None else {'physical': self.physical_section}),
            **({} if self.prior_section is None else {'prior': self.prior_section}),
            **({} if self.diagnosis_section is None else {'diagnosis': self.diagnosis_section}),
            'metrics': self.metrics,
            'warnings': self.warnings,
            'provenance': {**self.provenance, 'software': {**(self.provenance.get('software') or {}),
                                                           'dynid': __version__},
                           'created': self.provenance.get('created') or datetime.datetime.now(
                               datetime.timezone.utc).isoformat(timespec='seconds')},
        })

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        return write_text(path, dump_yaml(self.to_dict()))

    @classmethod
    def from_dict(cls, data: dict, source: str = 'result') -> IdentificationResult:
        """The result of a parsed result file, checked whole against :data:`dynid.identify.result.result_schema.RESULT`
        first: InputError naming ``source`` and the field that does not fit."""
        if not isinstance(data, dict) or data.get('dynid_result') not in READABLE_VERSIONS:
            raise InputError(f'{source} is not a dynid result file (needs "dynid_result" of '
                             f'{" or ".join(map(str, READABLE_VERSIONS))})')
        joints = _checked(data, source)
        rows = data['base_parameters'] + data['friction']
        names = [r['name'] for r in rows]
        gains = data.get('drive_gains')
        exponents = data.get('exponents')
        stribeck = data.get('stribeck')
        return cls(
            robot=data['robot'], joint_names=joints, method=data['method'], model=data['model'],
            parameter_names=names, values=np.array([_float(r['value']) for r in rows]),
            std=np.array([_float(r['std']) for r in rows]),
            base_expressions={r['name']: r['expression'] for r in data['base_parameters']},
            drive_gains=None if gains is None else np.array([float(gains['values'][j]) for j in joints]),
            drive_gains_std=None if gains is None or gains.get('std') is None else np.array(
                [_float(gains['std'].get(j)) for j in joints]),
            drive_gains_identified=bool(gains and gains.get('identified')),
            exponents=None if exponents is None else np.array([float(exponents[j]) for j in joints]),
            stribeck=None if stribeck is None else StribeckExcess(
                np.array([_float(stribeck['velocities'].get(j)) for j in joints]),
                np.array([_float(stribeck['shapes'].get(j)) for j in joints])),
            condition_number=_float(data.get('condition_number')),
            condition_number_scaled=_float(data.get('condition_number_scaled')), metrics=data.get('metrics') or {},
            warnings=list(data.get('warnings') or []), provenance=data.get('provenance') or {},
            joint_friction_section=data.get('joint_friction'), physical_section=data.get('physical'),
            drive_gain_diagnostics=None if gains is None else gains.get('diagnostics'),
            prior_section=data.get('prior'), diagnosis_section=data.get('diagnosis'))

    @classmethod
    def load(cls, path: str | Path) -> IdentificationResult:
        return cls.from_dict(read_yaml(path, 'result file'), str(path))


def result_drives(result: IdentificationResult, robot, drives: JointDrives | None = None) -> JointDrives | None:
    """The drives to apply a result with: ``drives`` (e.g. from a drives file) if given, else those the
    result recorded (``provenance.drives``), else the robot's; the result's drive gains (identified or
    nominal, part of the identified model) replace theirs. None when nothing gives any.

    ``robot`` is the :class:`~dynid.model.RobotModel` the result is applied to (its joint names and drives).
    """
    recorded = (result.provenance.get('drives') or {}).get('joints')
    if drives is None and recorded:
        drives = JointDrives.from_dict(recorded, robot.joint_names)
    drives = drives if drives is not None else robot.drives
    if result.drive_gains is not None:
        base = drives if drives is not None else JointDrives(robot.joint_names, 1.0, result.drive_gains, 0.0)
        drives = base.with_drive_gain(result.drive_gains)
    return drives


#: What validation takes from a result's ``model`` section (each result of dynid identify has them).
MODEL_KEYS = tuple(result_schema.MODEL_KEYS)


def _checked(data: dict, source: str) -> tuple[str, ...]:
    """The joint names of the result file ``data``, after the whole file is checked against its schema (and what a
    schema does not say: distinct names, the physical links in joint order, the prior's model of every parameter,
    the Stribeck velocity and shape both given or both null)."""
    joints = check(data.get('joint_names'), JOINT_NAMES, f'{source}: joint_names')
    if len(set(joints)) != len(joints):
        raise InputError(f'{source}: joint_names must be distinct, got {joints}')
    check(data, RESULT, source, joints=joints)
    names = [r['name'] for r in data['base_parameters'] + data['friction']]
    if len(set(names)) != len(names):
        raise InputError(f'{source}: base_parameters and friction name a parameter twice')
    physical = data.get('physical')
    if physical is not None and [link['joint'] for link in physical['links']] != list(joints):
        raise InputError(f'{source}: physical.links must be one per joint in the order {list(joints)}')
    result_schema.check_prior_models(data.get('prior') or {}, names, joints,
                                     data['model'].get('friction_symbols') or (), source)
    unknown = [name for name in data['model'].get('joint_side_joints') or () if name not in joints]
    if unknown:
        raise InputError(f'{source}: model.joint_side_joints names {unknown}, which are not among joint_names')
    stribeck = data.get('stribeck')
    if stribeck is not None and any((stribeck['velocities'].get(j) is None) != (stribeck['shapes'].get(j) is None)
                                    for j in joints):
        raise InputError(f'{source}: stribeck needs a velocity and a shape on the same joints (null on both '
                         'elsewhere)')
    return tuple(joints)

