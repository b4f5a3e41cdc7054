"""Offline simulation to a recording: run the twin on a trajectory, write a rosbag2 and truth.yaml.

This is what ``dynid simulate`` does; ``engine`` chooses the plant: dynid's twin (default) or MuJoCo
(:mod:`dynid.sim.mujoco_twin`, whose truth.yaml adds a ``mujoco`` section: armature, damping, friction
loss). With ``real_log`` settings the bag and a CSV beside it hold what a lab's logger keeps of the run
instead (:mod:`dynid.sim.real_log`). Otherwise the bag holds
the four state topics and the reference (:mod:`dynid.io.bag`). ``truth.yaml`` beside it holds
every parameter of the simulated plant, the robot's standard and base inertial parameters and the
simulation settings, so that benchmarks can compare identified values with the truth.

Changes of the true joints during the run (:mod:`dynid.sim.changes`) come from the settings
(``dynid simulate --change``) and from a trajectory file's ``joint_changes`` list, e.g.::

    joint_changes:
      - {time_s: 10.0, joints: [shoulder_pan_joint], stiffness_scale: 0.5}
      - {time_s: 20.0, coulomb_scale: 1.5, viscous_excess: 0.02}     # all joints

Contacts (a wrench at a point of a link for a time: :mod:`dynid.sim.contacts`) come from the settings (``dynid
simulate --contacts FILE``) and from a trajectory file's ``contacts`` list; on MuJoCo also obstacles, boxes the tool
runs into (``--obstacle``). truth.yaml lists them under ``simulation.contacts`` and ``simulation.obstacles`` and
``contact_truth.csv`` beside the bag holds, per sample, the time [s], each joint's true external torque τ_ext [N·m]
(the obstacles' contact forces included) and the flange loads' wrench in the flange frame (fx, fy, fz [N], mx, my,
mz [N·m]).

truth.yaml lists the joint changes under ``simulation.joint_changes`` in the order applied: the change as given,
``applied_s`` and ``sample`` (the first output sample at or after ``time_s``; from that sample on the
recording shows the new parameters) and, per changed joint, the parameters a change can move
(alpha1, alpha3, coulomb, static, load_coefficient, viscous1) ``before`` and ``after``; all other
parameters stay those of ``plant.joints``. Changes after the end are listed with ``applied_s: null``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import yaml

from dynid import __version__
from dynid.errors import InputError, checked_choice
from dynid.excite.trajectory import (
    FourierTrajectory,
    Trajectory,
    load_trajectory_metadata,
    reorder_trajectory_output,
    trajectory_from_dict,
)
from dynid.files import read_yaml, written
from dynid.io import STORAGES
from dynid.io.bag import write_bag
from dynid.io.dataset import Dataset, Reference
from dynid.model.inertial import Payload
from dynid.model.robot import RobotModel
from dynid.progress import Progress
from dynid.sim.changes import joint_changes_from_list
from dynid.sim.contacts import loads_from_list
from dynid.sim.mujoco_twin import make_twin
from dynid.sim.parameters import PlantParameters
from dynid.sim.real_log import CSV_FILE, make_real_log
from dynid.sim.settings import SimulationSettings
from dynid.sim.twin import DigitalTwin, SimulationRecord, gentle_motion, trajectory_start

TRUTH_FILE = 'truth.yaml'
CONTACT_TRUTH_FILE = 'contact_truth.csv'
TRUTH_VERSION = 1


def _check_limits(robot: RobotModel, trajectory: Trajectory, duration_s: float) -> None:
    times = np.linspace(0.0, min(duration_s, trajectory.duration_s), 2001)
    q = reorder_trajectory_output(trajectory.evaluate(times)[0], trajectory.joint_names, robot.joint_names)
    low, high = q.min(axis=0) < robot.lower_limits - 1e-9, q.max(axis=0) > robot.upper_limits + 1e-9
    if np.any(low | high):
        names = [n for n, bad in zip(robot.joint_names, low | high, strict=True) if bad]
        raise InputError(f'the trajectory leaves the position limits of {names}')


def truth_document(params: PlantParameters, settings: SimulationSettings, twin: DigitalTwin,
                   trajectory_source: str) -> dict:
    """The content of truth.yaml."""
    robot = params.robot
    base = robot.base
    return {
        'dynid_truth': TRUTH_VERSION,
        'software': {'dynid': __version__},
        'plant': params.to_dict(),
        'inertial': {
            'convention': 'pinocchio order [m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] per link, '
                          'about the joint frame origin',
            'standard_names': list(robot.standard_parameter_names),
            'standard_values': robot.standard_parameters.tolist(),
            'base_names': list(base.names),
            'base_expressions': list(base.expressions),
            'base_values': base.from_standard(robot.standard_parameters).tolist(),
            'payload_parameters': None if params.payload is None else params.payload.parameters().tolist(),
        },
        'simulation': {
            'rate_hz': settings.rate_hz, 'duration_s': settings.duration_s, 'seed': settings.seed,
            'internal_step_s': twin.step_s, 'substeps': twin.substeps, 'trajectory': trajectory_source,
            'stamps': 'simulation time: header.stamp = t [s] of each sample',
            'engine': settings.engine,
        },
        **({'mujoco': twin.describe()} if hasattr(twin, 'describe') else {}),
    }


def record_to_dataset(record: SimulationRecord, payload: Payload | None, source: dict) -> Dataset:
    """The measured part of a simulation as a :class:`Dataset`, with the reference its controller followed at the
    samples (q_r, q̇_r, q̈_r and the trajectory's effort)."""
    m, r = record.measured, record.reference
    reference = Reference(r['q'], r['dq'], r['ddq'], r['effort'], source="the simulator's controller")
    return Dataset(record.joint_names, record.time, m['q'], m['dq'], tau=m['joint_torque'], current=m['current'],
                   theta=m['theta'], dtheta=m['dtheta'], temperature=m['temperature'], payload=payload,
                   reference=reference, source=source)


def simulate_recording(robot: RobotModel, output: str | Path, trajectory_path: str | None = None,
                       settings: SimulationSettings | None = None, quiet: bool = False) -> Path:
    """Simulate and write ``output`` (a new rosbag2 directory) with ``output/truth.yaml``.

    Returns the bag directory. Raises InputError for bad settings or a trajectory that does not fit
    the robot (joint names, position limits), before anything is written.
    """
    settings = settings or SimulationSettings()
    output = Path(output)
    if output.exists():
        raise InputError(f'{output} exists; refusing to overwrite (choose a new output directory)')
    if not 0.0 <= settings.payload_kg <= 100.0:
        raise InputError(f'payload must be within 0–100 kg, got {settings.payload_kg}')
    from dynid.io import EFFORT_MEANINGS
    checked_choice('joint_states_effort', settings.joint_states_effort, EFFORT_MEANINGS)
    if not -20.0 <= settings.temperature_c <= 80.0:
        raise InputError(f'temperature must be within −20–80 °C, got {settings.temperature_c}')
    checked_choice('storage', settings.storage, STORAGES)
    if settings.real_log is not None:
        settings.real_log.check(settings.rate_hz)
    schedule: list[dict] = []
    changes = list(settings.joint_changes)
    loads = list(settings.contacts)
    if trajectory_path is None:
        trajectory, source = gentle_motion(robot), 'built-in gentle Fourier motion'
    else:
        # One parse of the file (a long point trajectory takes seconds to read), a second one only
        # for a payload schedule, which load_trajectory_metadata validates.
        document = read_yaml(trajectory_path, 'trajectory file')
        trajectory, source = trajectory_from_dict(document, str(trajectory_path)), str(trajectory_path)
        if 'payload_schedule' in document:
            schedule = load_trajectory_metadata(trajectory_path).get('payload_schedule', [])
        changes = joint_changes_from_list(document.get('joint_changes'), f'{trajectory_path}: joint_changes') + changes
        loads = loads_from_list(document.get('contacts'), f'{trajectory_path}: contacts') + loads
    changes.sort(key=lambda change: change.time_s)  # stable: the file's first at equal times
    duration = trajectory.duration_s if settings.duration_s is None else float(settings.duration_s)
    if not np.isfinite(duration) or not 0.0 < duration <= 3600.0:
        raise InputError(f'duration must be within (0, 3600] s, got {settings.duration_s}')
    if isinstance(trajectory, FourierTrajectory) and duration > trajectory.duration_s:
        trajectory = dataclasses.replace(trajectory, duration_s=duration)  # periodic: keep repeating it
    settings.duration_s = duration
    _check_limits(robot, trajectory, duration)

    payload = Payload(settings.payload_kg, settings.payload_com) if settings.payload_kg > 0 else None
    params = PlantParameters.of_twin(robot, payload, settings.drive_gain_error, settings.seed, settings.temperature_c)
    twin = make_twin(params, settings.engine, settings.mjcf, rate_hz=settings.rate_hz, seed=settings.seed,
                     initial_q=trajectory_start(trajectory, robot.joint_names), joint_changes=changes)
    for load in loads:
        twin.apply_contact(load)  # a link the robot does not have is refused here, before anything is written
    if settings.obstacles and settings.engine != 'mujoco':
        raise InputError('obstacles are MuJoCo\'s: add {engine} mujoco', fields=('engine',))
    for box in settings.obstacles:
        twin.add_obstacle(box[:3], box[3:])
    twin.follow(trajectory, start_time=0.0)

    progress = None if quiet else Progress(f'simulating {duration:.1f} s of {robot.name} at {settings.rate_hz:g} Hz')
    record = _run_with_schedule(twin, duration, schedule, progress) if schedule else twin.run(duration, progress)
    if progress is not None:
        progress.close()
    dataset = record_to_dataset(record, payload, {'simulation': source})
    truth = truth_document(params, settings, twin, source)
    if settings.real_log is None and settings.joint_states_effort != 'torque':  # as a UR driver publishes
        from dynid.sim.ur_modes import as_driver_recording
        mass = settings.payload_kg if settings.robot_payload_kg is None else settings.robot_payload_kg
        payload_set = Payload(mass, settings.payload_com) if mass > 0 else None
        truth['simulation']['joint_states_effort'] = settings.joint_states_effort
        truth['simulation']['robot_payload_kg'] = mass
        dataset = as_driver_recording(dataset, robot, settings.joint_states_effort, payload_set)
    with written(output) as staging:  # the bag, log.csv and truth.yaml whole, or nothing
        _write_run(staging, settings, record, dataset, params, truth, schedule, changes, twin)
    return output


def _write_run(output: Path, settings, record, dataset, params, truth: dict, schedule, changes, twin) -> None:
    """The recording folder of :func:`simulate_recording` (a staging path): bag (``dataset``: as the contract or a
    UR driver's mode publishes it), log.csv, truth.yaml."""
    if settings.real_log is None:
        write_bag(output, dataset, storage=settings.storage)  # with its reference
    else:
        log = make_real_log(record, params.drives.drive_gain, settings.real_log, settings.seed)
        write_bag(output, log.dataset, start_ns=log.start_ns, storage=settings.storage)
        (output / CSV_FILE).write_text(log.csv_text)
        truth['simulation']['real_log'] = {**dataclasses.asdict(settings.real_log), 'csv': CSV_FILE,
                                           'samples': int(log.rows.size), 'glitch_rows': log.glitches,
                                           'repeated_rows': log.repeated.tolist(),
                                           'stamps': 'controller time: t [s] of each twin sample + time_offset_s'
                                           if settings.real_log.stamps == 'controller' else
                                           'logger time: t [s] of each row\'s tick + U(0, jitter) periods + '
                                           'time_offset_s'}
        truth['simulation']['rate_hz'] = settings.real_log.rate_hz
        truth['simulation']['twin_rate_hz'] = settings.rate_hz
    if schedule:
        truth['simulation']['payload_schedule'] = schedule
        truth['inertial']['payload_schedule_parameters'] = [
            Payload(e['mass_kg'], e['com']).parameters().tolist() for e in schedule]
    if changes:
        truth['simulation']['joint_changes'] = [a.to_dict() for a in twin.applied_joint_changes] + [
            {**c.to_dict(), 'applied_s': None} for c in twin.pending_joint_changes]
    if twin.contacts.loads or settings.obstacles:
        truth['simulation']['contacts'] = [load.to_dict() for load in twin.contacts.loads]
        truth['simulation']['obstacles'] = [{'center_m': [float(v) for v in box[:3]],
                                             'half_size_m': [float(v) for v in box[3:]]} for box in settings.obstacles]
        truth['simulation']['contact_truth'] = CONTACT_TRUTH_FILE
        wrench = twin.contacts.flange_wrench(record.time, record.truth['q'])
        table = np.column_stack([record.time, record.truth['external_torque'], wrench])
        names = ['t'] + [f'tau_ext_{name}' for name in record.joint_names] + ['fx', 'fy', 'fz', 'mx', 'my', 'mz']
        np.savetxt(output / CONTACT_TRUTH_FILE, table, delimiter=',', header=','.join(names), comments='',
                   fmt='%.9g')
    (output / TRUTH_FILE).write_text(yaml.safe_dump(truth, sort_keys=False))


def _run_with_schedule(twin: DigitalTwin, duration: float, schedule: list[dict], progress) -> SimulationRecord:
    """Run in segments, changing the payload at each scheduled start time."""
    boundaries = [e['start_s'] for e in schedule if e['start_s'] < duration] + [duration]
    records = []
    for entry, (begin, end) in zip(schedule, zip(boundaries, boundaries[1:], strict=False), strict=False):
        twin.set_payload(Payload(entry['mass_kg'], entry['com']) if entry['mass_kg'] > 0 else None)
        if end - begin > 0.5 / twin.rate_hz:
            records.append(twin.run(end - begin))
        if progress is not None:
            progress(end / duration)
    return SimulationRecord.concatenate(records)
