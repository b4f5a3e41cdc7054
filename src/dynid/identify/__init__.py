"""Batch inverse-dynamic identification (IDIM) as a pipeline of pure steps, in wings that show it (each imports only
the wings below it; test/test_code_shape.py holds them to that order):

- :mod:`~dynid.identify.job`: the job (the workflow ``dynid identify`` and identifier_node share, the node's session,
  a refused identification's ways out); :mod:`~dynid.identify.friction_fit`: the friction experiments' own job;
- :mod:`~dynid.identify.outputs`: the report, URDF and MJCF;
- :mod:`~dynid.identify.validation`: validation and comparison;
- :mod:`~dynid.identify.methods`: one module per method, registered (the registry and contract,
  :mod:`~dynid.identify.registry`, stand at the bottom);
- :mod:`~dynid.identify.steps`: diagnose, choose, fit, check, the result assembled, and ``identify()`` running them;
- :mod:`~dynid.identify.selection`: the model choice's candidates, folds and table;
- :mod:`~dynid.identify.equations`: the request, the recordings read and the equations prepared once, the problem;
- :mod:`~dynid.identify.solve`: the solvers, the priors' sources (the robot file, a previous result, a fleet) and the
  rule book of the prior and physical consistency the steps share;
- :mod:`~dynid.identify.result`: the result and its evaluation, what the rest of the house reads;
- at the bottom: the names and settings a front end reads without loading the pipeline (:mod:`~dynid.identify.choices`,
  :mod:`~dynid.identify.settings`, the methods' registry).

**The face.** What the rest of dynid and a user's script import from identify/ is this package's names
(:data:`__all__`) and the three light modules at the bottom, :mod:`~dynid.identify.settings`,
:mod:`~dynid.identify.choices` and :mod:`~dynid.identify.registry` (the settings, the accepted names, a method's
contract and registration: what a front end or a method's author reads without loading the pipeline). Nothing
outside identify/ imports a module deeper than these (test/test_code_shape.py holds it). Each name is imported from
its module on first use (PEP 562), so that ``from dynid.identify import IdentificationResult`` loads the result, not
the pipeline::

    >>> from dynid.identify import IdentifyOptions, ModelSpec, RecordingInput, identify  # doctest: +SKIP
    >>> result = identify(robot, [RecordingInput(dataset)], ModelSpec(friction='viscous_coulomb'),
    ...                   options=IdentifyOptions(method='wls'))                              # doctest: +SKIP
"""

from importlib import import_module

#: exported name -> the module of dynid.identify that defines it
_NAMES = {
    # the job
    'identify_with_settings': 'job.workflow', 'Identification': 'job.workflow', 'identify_and_save': 'job.workflow',
    'physical_settings': 'job.workflow', 'IdentificationSession': 'job.session',
    'comparison_line': 'job.torque_sources',
    'EXPERIMENTS': 'friction_fit.settings', 'FrictionSettings': 'friction_fit.settings',
    'friction_recordings': 'friction_fit.recordings', 'identify_joint_friction': 'friction_fit.identify',
    'joint_friction_of': 'friction_fit.identified', 'summary_lines': 'friction_fit.identified',
    'velocity_friction': 'friction_fit.identified', 'write_joint_friction': 'friction_fit.identified',
    # the outputs
    'write_report': 'outputs.report', 'write_comparison_report': 'outputs.compare_report',
    'export_urdf': 'outputs.urdf_export', 'export_mjcf': 'outputs.mjcf_export',
    'mjcf_torque_error': 'outputs.mjcf_export', 'friction_not_held': 'outputs.urdf_export',
    # validation and comparison
    'OTHER_ESTIMATE_FIELDS': 'validation.validate', 'Prediction': 'validation.validate',
    'predict': 'validation.validate', 'predict_series': 'validation.validate',
    'recover_payload': 'validation.validate', 'validate': 'validation.validate',
    'SIGNIFICANT_Z': 'validation.compare', 'compare_results': 'validation.compare', 'format_z': 'validation.compare',
    'FitThresholds': 'validation.verdict', 'RecordingVerdict': 'validation.verdict', 'Verdict': 'validation.verdict',
    # the pipeline and its request
    'identify': 'steps.run', 'offset_gravity_line': 'steps.plausibility',
    'IdentifyOptions': 'equations.request', 'ModelSpec': 'equations.request', 'RecordingInput': 'equations.request',
    'IdentificationProblem': 'equations.problem', 'joint_side_torque': 'equations.joint_side',
    # the solvers' and the priors' names a front end reads
    'Estimate': 'solve.solvers', 'diagnostics_lines': 'solve.drive_gains', 'parse_fixed_gains': 'solve.drive_gains',
    'FleetPriorFile': 'solve.fleet_prior_file', 'MIN_ROBOTS': 'solve.fleet_prior_file',
    'PooledParameter': 'solve.fleet_prior_file', 'prior_source': 'solve.prior_source',
    'result_std': 'solve.prior_source', 'rigid_link_name': 'solve.prior_source', 'pulls_toward': 'solve.prior_source',
    # the prior sources as plug-ins (group dynid.prior_sources)
    'PriorSource': 'solve.prior_source', 'PriorSourceKind': 'solve.prior_source',
    'register_prior_source': 'solve.prior_source', 'unregister_prior_source': 'solve.prior_source',
    'prior_source_kinds': 'solve.prior_source', 'spread_rows': 'solve.prior_source',
    'RobotFileLink': 'solve.file_links', 'robot_file_links': 'solve.file_links',
    # the result and its evaluation
    'IdentificationResult': 'result.result', 'plain_data': 'result.result', 'result_drives': 'result.result',
    'equation_metrics': 'result.metrics', 'failed_text': 'result.metrics',
    'result_std_inflation': 'result.quality', 'validation_warnings': 'result.quality',
    'recorded_joints': 'result.robot_source', 'robot_spec_of': 'result.robot_source',
    'RigidBodyTorque': 'result.torque', 'compensated_rotor': 'result.torque', 'offset_bodies': 'result.torque',
    'rotor_inertia': 'result.torque', 'round_trip_error': 'result.torque',
}
__all__ = sorted(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        return getattr(import_module(f'{__name__}.{_NAMES[name]}'), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
