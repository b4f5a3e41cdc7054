"""The result file's fields, described once (:mod:`dynid.schema`) and checked before any value of a result is used.

The top level and the sections this module's reader builds objects from (the parameter rows, drive gains, exponents,
the Stribeck law, the physical links, the prior's robot-file model) take only the keys listed here: another key is
refused by name. The filter settings are :class:`~dynid.signal.preprocess.FilterSettings`' own fields, the drives
:data:`dynid.model.drives.DRIVE_FIELDS`, the diagnosis its dataclasses' fields. The prior's models of the parameters
(the robot file's model and reference, the other consistency decision's estimate) hold every parameter they are read
for (:func:`check_prior_models`). Sections in which the identification
describes itself for people (the model's choice, weights and held columns, cross-validation tables, gap summaries)
are typed where a reader takes a value from them and otherwise kept as written.
"""

from __future__ import annotations

from dynid.diagnosis.diagnosis import Finding, JointDiagnosis
from dynid.errors import InputError
from dynid.friction.power_law import POWER_FORMS
from dynid.identify.choices import FRICTION_MODELS
from dynid.model.drives import DRIVE_FIELDS
from dynid.schema import (
    ANY,
    Fields,
    Flag,
    Items,
    Number,
    OneOf,
    Table,
    Text,
    settings_fields,
    shown,
    vector,
)
from dynid.signal.preprocess import FilterSettings

#: a number of a result: null (or NaN, or the 'nan' text of older files) where it is undefined
UNKNOWN = OneOf((Number(null=True, nan=True), Text(('nan', '.nan'))), 'a number, or null where undefined')
COUNT = Number(low=0, integer=True)
NAMES = Items(Text())
LINES = Items(Text())

_ROW = {'name': Text(empty=False), 'value': UNKNOWN, 'std': UNKNOWN}
BASE_PARAMETER = Fields(required={**_ROW, 'expression': Text()}, optional={'relative_std_percent': UNKNOWN},
                        name='a {name, expression, value, std} entry')
FRICTION_PARAMETER = Fields(required=_ROW, optional={'relative_std_percent': UNKNOWN},
                            name='a {name, value, std} entry')

#: what the readers of a result take from its ``model`` section (validation needs :data:`MODEL_KEYS`); other keys
#: describe the identification for people
MODEL_KEYS = {'friction': Text(FRICTION_MODELS), 'temperature': Flag(), 'torque_source': Text(empty=False),
              'rotor_compensation': Flag(), 'rotor_inertia_identified': Flag()}
MODEL = Fields(
    optional={**MODEL_KEYS, 'hamon_velocity': Number('rad/s', above=0), 'exponent': Number(above=0),
              'power_form': Text(POWER_FORMS), 'power_velocity': Number('rad/s', above=0, null=True),
              'rotor_inertia': Flag(),
              'friction_symbols': NAMES, 'payload_blocks': COUNT, 'exclude_joints': NAMES,
              'joint_side_friction': Flag(), 'joint_side_joints': Items(Text(), null=True),
              'friction_velocity': Text(('rotor', 'link')),
              'stribeck_velocity': Number('rad/s', above=0, null=True), 'stribeck_shape': Number(above=0, null=True),
              'column_rms': Items(UNKNOWN), 'torque_rms': UNKNOWN,
              'choice': Fields(optional={'lines': LINES}, others=ANY, null=True),
              'gravity_scale': Table(UNKNOWN, keys='joints', null=True),
              'offset_gravity': Table(Fields(optional={'gravity_spread_percent': UNKNOWN, 'gravity_ratio': UNKNOWN,
                                                       'decided_by': Text()}), keys='joints')},
    others=ANY)

JOINT_METRICS = Fields(optional={'rmse': UNKNOWN, 'nrmse_fit_percent': UNKNOWN, 'rows': COUNT, 'left_out': Flag()},
                       others=ANY)
#: one set of metrics (:func:`dynid.identify.result.metrics.metrics_of`): training, validation, holdout
METRICS = Fields(optional={'relative_residual': UNKNOWN, 'rmse': UNKNOWN, 'rows': COUNT, 'scored_joints': COUNT,
                           'joints': Table(JOINT_METRICS), 'warnings': LINES, 'usage': Text(),
                           'used_fraction': UNKNOWN, 'gaps': Fields(optional={'summary': Text()}, others=ANY)},
                 others=ANY)

DIAGNOSIS = Fields(optional={
    'recordings': NAMES, 'signal': Text(null=True), 'said': Text(null=True), 'said_by': Text(null=True),
    'meaning': Text(null=True), 'warnings': LINES, 'details': Fields(others=ANY),
    'joints': Table(settings_fields(JointDiagnosis, required=('meaning', 'sign', 'scale', 'scale_std', 'offset',
                                                             'evidence'), unknown=True), keys='joints'),
    'findings': Items(settings_fields(Finding, required=('kind', 'joints', 'text')))})

JOINT_FRICTION = Fields(
    required={'joints': Table(Fields(required={'parameters': Table(UNKNOWN)}, others=ANY), keys='joints')},
    optional={'model': Fields(optional={'t0_c': Number('°C', low=-273.15, high=1000.0),
                                        'egms_elements': Number(low=1, high=1000, integer=True)}, others=ANY)},
    others=ANY)

PHYSICAL_LINK = Fields(required={'joint': Text(), 'parameters': vector(10)},
                       optional={'link': Text(null=True), 'prior': vector(10, null=True)},
                       name='a {joint, link, parameters, prior} entry')
PHYSICAL = Fields(required={'links': Items(PHYSICAL_LINK, length='joints')},
                  optional={'rotor_inertia': Table(Number('kg·m²', null=True, nan=True), keys='joints', null=True),
                            'solver': Text(), 'solver_status': Text(null=True), 'solve_s': UNKNOWN,
                            'constraint': Text()},
                  others=ANY)

#: The friction law of the robot file's reference that validate predicts with (prior.robot_file_reference), its
#: parameters per joint j: ``Fc_j``, ``Fv_j``, ``tau0_j`` (:mod:`dynid.identify.solve.reference`).
REFERENCE_LAW = 'coulomb+viscous+offset'
REFERENCE_SYMBOLS = ('Fc', 'Fv', 'tau0')
#: the estimate of the other physical-consistency decision: a value for every parameter of the result
OTHER_ESTIMATE = Fields(required={'physically_consistent': Flag(), 'values': Table(Number())}, null=True)

PRIOR = Fields(required={'used': Flag()},
               optional={'robot_file_model': Table(Number(), null=True), 'source': Text(null=True),
                         'robot_file_reference': Fields(required={'friction': Text(), 'values': Table(Number())},
                                                        null=True),
                         'consistency': Fields(optional={'other_estimate': OTHER_ESTIMATE}, others=ANY, null=True),
                         'relative_std': UNKNOWN, 'posterior_std': Items(UNKNOWN, null=True),
                         'data_condition_number_scaled': UNKNOWN, 'data_condition_number': UNKNOWN},
               others=ANY)

ROBOT_SOURCE = Fields(required={'kind': Text(('built-in', 'file', 'urdf_xml'))},
                      optional={'spec': Text(), 'path': Text(), 'sha256': Text(), 'urdf_xml': Text(),
                                'joints': Items(Text(empty=False))})

INPUT = Fields(optional={'name': Text(null=True),
                         'source': Fields(optional={'torque_sign': Table(Number(low=-1, high=1, integer=True,
                                                                                nonzero=True), keys='joints')},
                                          others=ANY),
                         'samples': COUNT, 'payload_mass_known': Number('kg', low=0, null=True),
                         'payload_known': ANY, 'gaps': Fields(optional={'summary': Text()}, others=ANY, null=True)},
               others=ANY)

PROVENANCE = Fields(optional={'inputs': Items(INPUT), 'filters': settings_fields(FilterSettings).with_fields(null=True),
                              'drives': Fields(optional={'joints': Table(DRIVE_FIELDS, keys='joints', every=True),
                                                         'file': Text()}, null=True, others=ANY),
                              'robot_source': ROBOT_SOURCE, 'robot_spec': Text(), 'software': ANY, 'created': Text()},
                    others=ANY)

STRIBECK = Fields(required={key: Table(Number(unit, above=0, null=True), keys='joints')
                            for key, unit in (('velocities', 'rad/s'), ('shapes', None))})

#: a result file (dynid.identify.result.result's module docstring); ``joint_names`` is checked first, the rest with them
RESULT = Fields(
    required={'dynid_result': Number(low=1, high=3, integer=True), 'robot': Text(), 'joint_names': ANY,
              'method': Text(empty=False), 'model': MODEL, 'base_parameters': Items(BASE_PARAMETER),
              'friction': Items(FRICTION_PARAMETER)},
    optional={'condition_number': UNKNOWN, 'condition_number_scaled': UNKNOWN,
              'drive_gains': Fields(required={'values': Table(Number('N·m/A', nonzero=True), keys='joints',
                                                              every=True)},
                                    optional={'identified': Flag(),
                                              'std': Table(Number('N·m/A', low=0, null=True, nan=True), keys='joints',
                                                           null=True),
                                              'diagnostics': Fields(others=ANY, null=True)},
                                    null=True),
              'exponents': Table(Number(low=0), keys='joints', every=True, null=True),
              'stribeck': STRIBECK.with_fields(null=True),
              'joint_friction': JOINT_FRICTION.with_fields(null=True), 'physical': PHYSICAL.with_fields(null=True),
              'prior': PRIOR.with_fields(null=True), 'diagnosis': DIAGNOSIS.with_fields(null=True),
              'metrics': Table(METRICS, null=True), 'warnings': Items(Text(), null=True),
              'provenance': PROVENANCE.with_fields(null=True)})

#: the joint names, checked before the rest (the per-joint fields are checked against them)
JOINT_NAMES = Items(Text(empty=False), least=1, name='a list of joint names')


def check_prior_models(prior: dict, names: list[str], joints, symbols, source: str) -> None:
    """The prior section's models of the result's parameters ``names`` (the robot file's model, the other consistency
    decision's estimate: each of them) and the robot file's reference (every parameter of :data:`REFERENCE_LAW` on
    every joint), after the schema's check: InputError naming the first parameter one lacks, and its joint where it
    is a friction parameter (one of ``symbols``)."""
    model = prior.get('robot_file_model')
    if model is not None:
        _holds(model, names, joints, symbols, f'{source}: prior.robot_file_model', 'a parameter of the result')
        if set(model) != set(names):
            raise InputError(f'{source}: prior.robot_file_model needs a number for every parameter of the result')
    other = (prior.get('consistency') or {}).get('other_estimate')
    if other:
        _holds(other['values'], names, joints, symbols, f'{source}: prior.consistency.other_estimate.values',
               'a parameter of the result')
    reference = prior.get('robot_file_reference')
    if reference:
        law = REFERENCE_SYMBOLS
        _holds(reference['values'], [f'{s}_{j + 1}' for s in law for j in range(len(joints))], joints, law,
               f'{source}: prior.robot_file_reference.values', f'a parameter of its law {REFERENCE_LAW}')


def _holds(values: dict, needed: list[str], joints, symbols, where: str, what: str) -> None:
    """InputError '<where> has no <name> (<symbol> of <joint>, <what>)' for the first of ``needed`` that ``values``
    lacks; the joint is named where the parameter is one of the friction ``symbols`` (``SYMBOL_j``, j from 1)."""

    def said(text: str) -> str:  # a name of the file's, on the error's one line
        return text if text.isprintable() else shown(text)

    for name in needed:
        if name not in values:
            symbol, _, index = name.rpartition('_')
            joint = index.isdigit() and symbol in symbols and 1 <= int(index) <= len(joints)
            of = f'the {said(symbol)} of joint {said(joints[int(index) - 1])}, ' if joint else ''
            raise InputError(f'{where} has no {said(name)} ({of}{what})')
