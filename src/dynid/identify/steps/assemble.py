"""The result step of an identification: a fit, the choice that led to it and the equations it came from, as one
:class:`~dynid.identify.result.result.IdentificationResult` (its metrics, warnings, model description, provenance,
prior and physical sections)."""

from __future__ import annotations

import dataclasses

import numpy as np

from dynid.identify.choices import WEIGHT_FUNCTION
from dynid.identify.equations.held import one_way_columns
from dynid.identify.equations.problem import IdentificationProblem
from dynid.identify.equations.request import change_text
from dynid.identify.registry import identification_method, method_software
from dynid.identify.result.metrics import equation_metrics
from dynid.identify.result.quality import residual_autocorrelation
from dynid.identify.result.result import IdentificationResult
from dynid.identify.result.result_schema import REFERENCE_LAW
from dynid.identify.selection.choice import FOLDS_WHERE, ModelChoice
from dynid.identify.solve.physical_rules import physical_not_applicable
from dynid.identify.solve.reference import fit_reference
from dynid.identify.steps.check import fit_warnings
from dynid.identify.steps.fit import Fit


def assemble(problem: IdentificationProblem, solved: Fit, choice: ModelChoice | None,
             changes: list[dict], data_condition: float | None = None) -> IdentificationResult:
    """The result of a fit: its metrics, warnings, model description, provenance, prior and physical sections;
    ``changes``: what the identification changed in the caller's choices
    (:func:`dynid.identify.equations.request.change_text`); ``data_condition``: cond(W·D) of the data alone where the
    run computed it already (the weakly exciting log's gate), so that a run states one such figure."""
    robot, spec, outcome, options = problem.robot, problem.spec, solved.outcome, problem.candidate.options
    gains_unknown = solved.gain_solution is not None
    metrics = {'train': equation_metrics(solved.measured, solved.predicted, solved.joints, robot.joint_names,
                                         spec.exclude_joints)}
    autocorrelation = residual_autocorrelation(solved.measured - solved.predicted, solved.joints, robot.n)
    metrics['train']['residual_lag1_autocorrelation'] = dict(zip(robot.joint_names, autocorrelation.tolist(),
                                                                 strict=True))
    # each parameter's column RMS and the measured torque's: what its σ means in torque
    sizes = None if solved.w is None else (np.sqrt(np.einsum('ij,ij->j', solved.w, solved.w) / len(solved.y)),
                                           float(np.sqrt(np.mean(solved.y**2))))
    warnings = [change_text(change) for change in changes] + list(problem.prepared.warnings) + solved.warnings + \
        fit_warnings(problem, solved, autocorrelation, sizes)
    model = {**spec.to_dict(), **problem.describe(), 'friction_symbols': problem.result_friction_symbols,
             'payload_blocks': len(problem.payload_blocks), 'changes': changes, 'held': problem.held}
    if problem.law.power_viscous:  # v_s of the viscous power term (dynid.friction.power_law), None: Li's form
        model['power_velocity'] = problem.power_velocity
    else:  # no power term: its form says nothing
        model.pop('power_form', None)
    if sizes is not None and not gains_unknown:
        model['column_rms'], model['torque_rms'] = sizes[0].tolist(), sizes[1]
    noise = solved.estimate.extra.get('noise')
    if noise is not None:
        model['weights'] = noise.to_dict(robot.joint_names)
    if choice is not None:
        model['choice'] = {**choice.to_dict(), 'lines': choice.lines()}
        warnings += [lead.line(joint, FOLDS_WHERE, lead.theirs, lead.mine, 'cross-validation score', '')
                     for joint, lead in choice.robot_file_ahead.items() if lead.clear]
    provenance = {'inputs': model.pop('recordings'), 'filters': model.pop('filters'),
                  'options': {'weight_function': WEIGHT_FUNCTION.value_in(options.method_options),
                              'weight_constant': options.weight_constant,
                              'load_iterations': options.load_iterations}}
    method = identification_method(options.method)
    declared = {name: value for name, value in method.own_option_values(options.method_options).items()
                if not next(option for option in method.method_options if option.name == name).flag}
    if declared:  # the method's own options as it ran with them (a flagged one is written under its own name)
        provenance['options']['method_options'] = declared
    if 'changes' in solved.estimate.extra:  # an iterated method's course (the closed-loop methods)
        extra = solved.estimate.extra
        provenance['iterations'] = {'count': solved.estimate.iterations, 'converged': extra.get('converged'),
                                    'relative_changes': list(extra['changes']),
                                    'controller': extra.get('controller', '')}
    software = method_software(options.method)  # a method of another package: its version
    if software:
        provenance['software'] = software
    if problem.drives is not None:  # the nominal drives the model was built with (validation needs them)
        provenance['drives'] = {'joints': problem.drives.to_dict()}
    estimate = solved.estimate
    condition = (estimate.condition_number, estimate.scaled_condition_number) \
        if outcome is None or outcome.condition is None else outcome.condition
    if choice is not None and choice.consistency and outcome is not None:
        prior = {**outcome.prior, 'consistency': {**outcome.prior['consistency'], 'chosen_by': (
            'cross-validation (model.choice.tried.consistency): the auto rule would have declined it')}}
        outcome = dataclasses.replace(outcome, prior=prior)
    prior_section = outcome.prior if outcome is not None else \
        {'used': False, 'reason': physical_not_applicable(problem, options)}
    if data_condition is not None and 'data_condition_number_scaled' in prior_section:
        prior_section = {**prior_section, 'data_condition_number_scaled': data_condition}
    if prior_section.get('robot_file_model') is not None and solved.w is not None:  # validate's fixed reference
        prior_section = {**prior_section, 'robot_file_reference': {
            'friction': REFERENCE_LAW, 'values': fit_reference(problem, solved.w, solved.y,
                                                               one_way_columns(problem.prepared))}}
    base = problem.base
    return IdentificationResult(
        robot=robot.name, joint_names=robot.joint_names, method=estimate.method, model=model,
        parameter_names=list(solved.names), values=np.asarray(solved.values), std=np.asarray(solved.std),
        base_expressions=dict(zip(base.names, base.expressions, strict=True)),
        drive_gains=solved.gains, drive_gains_std=solved.gains_std, drive_gains_identified=gains_unknown,
        exponents=solved.exponents if problem.law.power_viscous else None, stribeck=problem.stribeck,
        condition_number=condition[0], condition_number_scaled=condition[1],
        metrics=metrics, warnings=warnings, provenance=provenance,
        drive_gain_diagnostics=solved.gain_solution.diagnostics if gains_unknown else None,
        prior_section=prior_section, physical_section=None if outcome is None else outcome.physical)
