"""The controller's reference read into a recording (Dataset.reference) from each kind of log: the bag's trajectory
topic (as the simulators write it and dynid import writes it), the trajectory controller's state, UR's RTDE
targets, libfranka's desired state, a column map; what carries it on (slicing, bridging, resampling)."""

import dataclasses

import numpy as np
import pytest

from builders import random_motion
from cli_run import run_dynid
from dynid.io.bag import read_bag, write_bag
from dynid.io.cdr import stamp_message
from dynid.io.csv_log import PRESETS, parse_column_spec
from dynid.io.dataset import Dataset, Reference
from dynid.io.importing import ImportSettings, import_logs
from dynid.io.log_checks import LogLimits
from dynid.io.rtde import write_rtde
from dynid.sim.mujoco_twin import make_twin
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import record_to_dataset

RATE_HZ = 250.0


def simulated(robot, engine: str, seconds: float = 3.0):
    """A short run of a simulator on a random motion: (its record, its dataset)."""
    trajectory = dataclasses.replace(random_motion(robot, 5), duration_s=seconds)
    params = PlantParameters.of_twin(robot, None, 0.0, 5, 25.0)
    twin = make_twin(params, engine, None, rate_hz=RATE_HZ, seed=5,
                     initial_q=trajectory.evaluate(np.array([0.0]))[0][0])
    twin.follow(trajectory, start_time=0.0)
    record = twin.run(seconds)
    return record, record_to_dataset(record, None, {'simulation': engine})


@pytest.mark.parametrize('engine', ['twin', 'mujoco'])
def test_a_simulators_bag_gives_back_the_reference_its_controller_followed(ur5e, tmp_path, engine):
    record, dataset = simulated(ur5e, engine)
    assert dataset.reference is not None and np.array_equal(dataset.reference.q, record.reference['q'])
    read = read_bag(write_bag(tmp_path / 'bag', dataset), ur5e.joint_names)
    assert read.reference is not None and read.reference.current is None
    for name in ('q', 'dq', 'ddq', 'effort'):  # one trajectory point a sample: the points themselves, to round-off
        assert np.allclose(getattr(read.reference, name), record.reference[name], rtol=0, atol=1e-9), name
    assert np.abs(record.reference['dq']).max() > 0.1 and 'joint_trajectory' in read.reference.source
    assert 'q̈_r' in read.reference.describe()


def test_a_recording_without_a_reference_says_so_and_loses_nothing(ur5e, tmp_path):
    _, dataset = simulated(ur5e, 'twin', 2.0)
    with_it = read_bag(write_bag(tmp_path / 'with', dataset), ur5e.joint_names)
    without = read_bag(write_bag(tmp_path / 'without', dataclasses.replace(dataset, reference=None)),
                       ur5e.joint_names)
    assert without.reference is None and with_it.reference is not None
    for name, values in with_it.signals().items():
        assert np.array_equal(values, getattr(without, name)), name
    assert np.array_equal(with_it.t, without.t)


def test_slicing_and_reordering_keep_the_reference_at_its_samples(ur5e):
    _, dataset = simulated(ur5e, 'twin', 1.0)
    part = dataset.sliced(40, 90)
    assert np.array_equal(part.reference.q, dataset.reference.q[40:90])
    backwards = dataset.reordered(tuple(reversed(dataset.joint_names)))
    assert np.array_equal(backwards.reference.dq[:, 0], dataset.reference.dq[:, -1])


def test_bridging_a_gap_fills_the_reference_as_the_joint_signals(ur5e):
    from dynid.identify.equations.bridging import bridge_gaps

    _, dataset = simulated(ur5e, 'twin', 1.0)
    # the reference equal to the measured signals: bridged alike, it stays equal to them
    same = dataclasses.replace(dataset, reference=Reference(dataset.q, dataset.dq, dataset.dq, dataset.tau))
    keep = np.ones(dataset.n_samples, dtype=bool)
    keep[100:102] = False
    gapped = Dataset(dataset.joint_names, dataset.t[keep], dataset.q[keep], dataset.dq[keep], tau=dataset.tau[keep],
                     reference=same.reference.taken(keep))
    bridged = bridge_gaps(gapped, 0.05).dataset
    assert bridged.n_samples == dataset.n_samples
    assert np.array_equal(bridged.reference.q, bridged.q) and np.array_equal(bridged.reference.dq, bridged.dq)
    assert np.array_equal(bridged.reference.effort, bridged.tau)


def _controller_state_bag(path, dataset: Dataset, state_every: int, humble: bool, state_from: int = 0,
                          held: np.ndarray | None = None):
    """A bag of joint_states and a trajectory controller's state (its definition embedded, as MCAP does) every
    ``state_every`` samples from sample ``state_from`` on, its reference (``desired`` for Humble's definition) being
    ``dataset.reference``; and where ``held`` is given, a trajectory to hold there, sent at the first sample."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    point = 'trajectory_msgs/JointTrajectoryPoint'
    fields = ('desired', 'actual', 'error') if humble else ('reference', 'feedback', 'error', 'output')
    text = 'std_msgs/Header header\nstring[] joint_names\n' + ''.join(f'{point} {f}\n' for f in fields)
    name = 'control_msgs/msg/JointTrajectoryControllerState'
    store = get_typestore(Stores.ROS2_KILTED)  # a store of its own: the reader's shared one stays as it is
    store.register(get_types_from_msg(text, name))
    types = store.types
    names = list(dataset.joint_names)
    empty = types['trajectory_msgs/msg/JointTrajectoryPoint']
    duration = types['builtin_interfaces/msg/Duration'](sec=0, nanosec=0)
    with Writer(path, version=9) as writer:
        joints = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState', typestore=store)
        state = writer.add_connection('/joint_trajectory_controller/controller_state', name, typestore=store)
        if held is not None:
            topic = writer.add_connection('/joint_trajectory_controller/joint_trajectory',
                                          'trajectory_msgs/msg/JointTrajectory', typestore=store)
            message = _trajectory_message(store, names, 1_000_000_000, [0.0], [held])
            writer.write(topic, 1_000_000_000, store.serialize_cdr(message, 'trajectory_msgs/msg/JointTrajectory'))
        r = dataset.reference
        for k, t in enumerate(dataset.t):
            stamp = int(round(t * 1e9)) + 1_000_000_000
            header = types['std_msgs/msg/Header'](stamp=stamp_message(stamp), frame_id='')
            message = types['sensor_msgs/msg/JointState'](header=header, name=names, position=dataset.q[k],
                                                          velocity=dataset.dq[k], effort=dataset.tau[k])
            writer.write(joints, stamp, store.serialize_cdr(message, 'sensor_msgs/msg/JointState'))
            if k >= state_from and k % state_every == 0:
                given = empty(positions=r.q[k], velocities=r.dq[k], accelerations=r.ddq[k], effort=np.zeros(0),
                              time_from_start=duration)
                blank = empty(positions=np.zeros(0), velocities=np.zeros(0), accelerations=np.zeros(0),
                              effort=np.zeros(0), time_from_start=duration)
                points = {f: blank for f in fields}
                points[fields[0]] = given
                if not humble:
                    points['output'] = empty(positions=np.zeros(0), velocities=np.zeros(0),
                                             accelerations=np.zeros(0), effort=r.effort[k], time_from_start=duration)
                state_message = types[name](header=header, joint_names=names, **points)
                writer.write(state, stamp, store.serialize_cdr(state_message, name))
    return path


def _trajectory_message(store, names, stamp_ns: int, times, positions, velocities=None):
    types = store.types
    point, duration = types['trajectory_msgs/msg/JointTrajectoryPoint'], types['builtin_interfaces/msg/Duration']
    empty = np.zeros(0)
    points = [point(positions=p, velocities=empty if velocities is None else velocities[k], accelerations=empty,
                    effort=empty, time_from_start=duration(sec=int(t), nanosec=int(round((t - int(t)) * 1e9))))
              for k, (t, p) in enumerate(zip(times, positions, strict=True))]
    header = types['std_msgs/msg/Header'](stamp=stamp_message(stamp_ns), frame_id='')
    return types['trajectory_msgs/msg/JointTrajectory'](header=header, joint_names=list(names), points=points)


def test_sparse_trajectories_are_followed_as_the_controller_received_them(ur5e, tmp_path):
    """Trajectories sent now and then (a few points, one stamped in the future, an empty one: stop): the reference
    at each sample is the controller's from what it had received by then; before the first, the arm held where it
    is."""
    from rosbags.rosbag2 import Writer

    from dynid.excite.reference import ReferenceGenerator
    from dynid.excite.trajectory import PointTrajectory
    from dynid.io.cdr import typestore

    _, dataset = simulated(ur5e, 'twin', 2.0)
    names, store, start = list(ur5e.joint_names), typestore(), 1_000_000_000
    q0 = dataset.q[100]
    sent = [  # (recorded [s], stamp [s], point times, positions): the second waits for its stamp; then stop
        (0.4, 0.4, [0.3, 0.8], [q0 + 0.1, q0 + 0.3]),
        (0.9, 1.1, [0.2, 0.5], [q0 - 0.1, q0]),
        (1.7, 1.7, [], [])]
    with Writer(tmp_path / 'bag', version=9) as writer:
        joints = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState', typestore=store)
        topic = writer.add_connection('/joint_trajectory_controller/joint_trajectory',
                                      'trajectory_msgs/msg/JointTrajectory', typestore=store)
        pending = list(sent)
        for k, t in enumerate(dataset.t):
            stamp = start + int(round(t * 1e9))
            while pending and pending[0][0] <= t + 1e-12:
                recorded, stamped, times, positions = pending.pop(0)
                message = _trajectory_message(store, names, start + int(round(stamped * 1e9)), times, positions)
                writer.write(topic, start + int(round(recorded * 1e9)) - 1000,
                             store.serialize_cdr(message, 'trajectory_msgs/msg/JointTrajectory'))
            header = store.types['std_msgs/msg/Header'](stamp=stamp_message(stamp), frame_id='')
            state = store.types['sensor_msgs/msg/JointState'](header=header, name=names, position=dataset.q[k],
                                                               velocity=dataset.dq[k], effort=dataset.tau[k])
            writer.write(joints, stamp, store.serialize_cdr(state, 'sensor_msgs/msg/JointState'))
    read = read_bag(tmp_path / 'bag', ur5e.joint_names).reference
    t = dataset.t
    generator = ReferenceGenerator(ur5e.joint_names)  # the controller, fed as the messages came
    expected_q, expected_dq = dataset.q.copy(), np.zeros_like(dataset.dq)  # before the first: held where it is
    bounds = [int(np.searchsorted(t, recorded - 1e-6)) for recorded, *_ in sent] + [t.size]
    for i, (recorded, stamped, times, positions) in enumerate(sent):
        if i == 0 or not times:  # the first from where the arm is; an empty one stops there
            generator.hold(dataset.q[bounds[i]], recorded - 1e-6)
        if times:
            generator.follow(PointTrajectory(tuple(names), times, positions), stamped, recorded - 1e-6)
        rows = slice(bounds[i], bounds[i + 1])
        expected_q[rows], expected_dq[rows] = generator.sample_many(t[rows])[:2]
    assert np.allclose(read.q, expected_q, atol=1e-12) and np.allclose(read.dq, expected_dq, atol=1e-12)
    waiting = (t >= 0.9) & (t < 1.1)  # the second trajectory waits for its stamp: the first goes on meanwhile
    assert np.abs(read.dq[waiting]).max() > 0.0 and np.allclose(read.q[(t > 1.6) & (t < 1.7)], q0, atol=1e-12)
    assert not read.dq[:bounds[0]].any() and not read.dq[bounds[2]:].any()


@pytest.mark.parametrize('humble', [False, True])
def test_the_trajectory_controllers_state_is_read_where_the_bag_defines_it(ur5e, tmp_path, humble):
    _, dataset = simulated(ur5e, 'twin', 1.0)
    t = dataset.t
    linear = np.outer(t, np.arange(1, 7) * 0.1) + 0.2  # linear in time: exact between the controller's messages
    slope = np.tile(np.arange(1, 7) * 0.1, (t.size, 1))
    line = dataclasses.replace(dataset, reference=Reference(linear, slope, np.zeros_like(linear), 3 * linear))
    read = read_bag(_controller_state_bag(tmp_path / 'bag', line, 2, humble), ur5e.joint_names)
    assert read.reference is not None and 'controller_state' in read.reference.source
    span = slice(0, t.size - 1)  # the last sample lies after the last state message: that one held
    assert np.allclose(read.reference.q[span], linear[span], atol=1e-12)
    assert np.allclose(read.reference.dq, slope, atol=1e-12)
    if humble:
        assert read.reference.effort is None  # no output field, no effort in the reference: no commanded torque
    else:
        assert np.allclose(read.reference.effort[span], 3 * linear[span], atol=1e-12)
    assert np.array_equal(read.q, dataset.q)
    # beside the trajectories sent: the state wins where it is, the trajectories before it
    both = read_bag(_controller_state_bag(tmp_path / 'both', line, 2, humble, 50, linear[0] - 1.0),
                    ur5e.joint_names).reference
    assert np.allclose(both.q[:50], linear[0] - 1.0, atol=1e-12) and not both.dq[:50].any()
    assert np.allclose(both.q[50:-1], linear[50:-1], atol=1e-12) and 'joint_trajectory' in both.source


def test_the_rtde_targets_are_the_reference(ur5e, tmp_path):
    _, dataset = simulated(ur5e, 'twin', 1.0)
    r = dataset.reference
    given = dataclasses.replace(r, current=r.effort / 10.0)
    bag = write_rtde(tmp_path / 'rtde', dataclasses.replace(dataset, reference=given))
    read = read_bag(bag, ur5e.joint_names)
    assert read.reference is not None and 'RTDE target_' in read.reference.source
    for name in ('q', 'dq', 'ddq', 'effort', 'current'):
        assert np.allclose(getattr(read.reference, name), getattr(given, name), atol=1e-12), name
    plain = read_bag(write_rtde(tmp_path / 'plain', dataclasses.replace(dataset, reference=None)), ur5e.joint_names)
    assert plain.reference is None and np.array_equal(plain.q, read.q)


def _table(path, columns: dict[str, np.ndarray], delimiter=','):
    header = delimiter.join(columns)
    np.savetxt(path, np.column_stack(list(columns.values())), delimiter=delimiter, header=header, comments='',
               fmt='%.12g')
    return path


def _jittered(dataset: Dataset, seed: int = 1) -> np.ndarray:
    """Stamps of a logger reading the samples a little late (under a third of a period)."""
    return dataset.t + np.random.default_rng(seed).uniform(0.0, 0.3 / RATE_HZ, dataset.n_samples)


@pytest.mark.parametrize('preset', ['franka', 'ur_rtde'])
def test_a_presets_controller_targets_are_the_reference(panda, ur5e, tmp_path, preset):
    """libfranka's desired state (q_d, dq_d, ddq_d, tau_J_d) and UR RTDE's targets (target_q, _qd, _qdd, _moment,
    _current), as their loggers name the columns."""
    robot = panda if preset == 'franka' else ur5e
    _, dataset = simulated(robot, 'twin', 2.0)
    r = dataset.reference
    given = {'q': r.q, 'dq': r.dq, 'ddq': r.ddq, 'effort': r.effort, 'current': r.effort / 7.0}
    if preset == 'franka':
        columns, fields = {'time': np.round(dataset.t * 1e3, 6)}, (
            ('state.q', dataset.q), ('state.q_d', r.q), ('state.dq', dataset.dq), ('state.dq_d', r.dq),
            ('state.ddq_d', r.ddq), ('state.tau_J', dataset.tau), ('state.tau_J_d', r.effort))
        given['current'] = None
    else:
        columns, fields = {'timestamp': dataset.t + 100.0}, (
            ('actual_q', dataset.q), ('actual_qd', dataset.dq), ('actual_current', dataset.current),
            ('target_q', r.q), ('target_qd', r.dq), ('target_qdd', r.ddq), ('target_moment', r.effort),
            ('target_current', given['current']))
    for field, values in fields:
        columns.update({(f'{field}[{j}]' if preset == 'franka' else f'{field}_{j}'): values[:, j]
                        for j in range(robot.n)})
    log = _table(tmp_path / 'log.csv', columns, ',' if preset == 'franka' else ' ')
    imported, report, _ = import_logs([log], PRESETS[preset], robot.joint_names, LogLimits.of_robot(robot),
                                      ImportSettings(rate_hz=RATE_HZ))
    assert imported.reference is not None and report.reference.startswith('q_r, q̇_r, q̈_r, commanded torque')
    for name, values in given.items():
        got = getattr(imported.reference, name)
        assert got is None if values is None else np.allclose(got, values, atol=1e-9), name
    assert not report.ignored_columns


def test_a_column_maps_reference_is_resampled_with_the_joint_signals_and_written_to_the_bag(ur5e, tmp_path):
    _, dataset = simulated(ur5e, 'twin', 2.0)
    columns = {'stamp': _jittered(dataset)}
    # the reference columns hold the measured signals: resampled alike, they must come out equal to them
    for field, values in (('pos', dataset.q), ('vel', dataset.dq), ('tau', dataset.tau), ('ref', dataset.q),
                          ('refvel', dataset.dq), ('cmd', dataset.tau)):
        columns.update({f'{field}{j}': values[:, j] for j in range(6)})
    log = _table(tmp_path / 'log.csv', columns)
    spec = 'time=stamp,q=pos{i},dq=vel{i},tau=tau{i},q_r=ref{i},dq_r=refvel{i},tau_r=cmd{i}'
    imported, report, _ = import_logs([log], parse_column_spec(spec), ur5e.joint_names, LogLimits.of_robot(ur5e),
                                      ImportSettings(timing='stamps'))
    r = imported.reference
    assert np.array_equal(r.q, imported.q) and np.array_equal(r.dq, imported.dq)
    assert np.array_equal(r.effort, imported.tau) and r.ddq is None
    assert 'columns ref0, refvel0, cmd0' in report.reference
    plain, _, _ = import_logs([log], parse_column_spec('time=stamp,q=pos{i},dq=vel{i},tau=tau{i}'), ur5e.joint_names,
                              LogLimits.of_robot(ur5e), ImportSettings(timing='stamps'))
    assert plain.reference is None and np.array_equal(plain.q, imported.q) and np.array_equal(plain.tau, imported.tau)
    bag = tmp_path / 'bag'
    done = run_dynid('import', log, '--columns', spec, '--robot', 'ur5e', '--timing', 'stamps', '-o', bag)
    assert done.returncode == 0, done.stderr
    assert 'reference: q_r, q̇_r, commanded torque from columns ref0' in done.stdout
    read = read_bag(bag, ur5e.joint_names)
    for name in ('q', 'dq', 'effort'):
        assert np.allclose(getattr(read.reference, name), getattr(r, name), rtol=0, atol=1e-9), name


def test_a_reference_without_its_velocity_is_left_out_and_costs_no_row(ur5e, tmp_path):
    _, dataset = simulated(ur5e, 'twin', 1.0)
    columns = {'stamp': dataset.t}
    for field, values in (('pos', dataset.q), ('vel', dataset.dq), ('ref', dataset.q)):
        columns.update({f'{field}{j}': values[:, j] for j in range(6)})
    columns['ref3'][10] = np.nan
    log = _table(tmp_path / 'log.csv', columns)
    imported, report, _ = import_logs([log], parse_column_spec('time=stamp,q=pos{i},dq=vel{i},q_r=ref{i}'),
                                      ur5e.joint_names, LogLimits.of_robot(ur5e), ImportSettings())
    assert imported.reference is None and imported.n_samples == dataset.n_samples
    assert report.ignored_columns[:1] == ['ref0'] and 'reference: none in the log' in '\n'.join(report.lines())


@pytest.mark.parametrize('given', [(1, 1, 1, 1), (1, 1, 1, 0), (1, 1, 0, 0), (1, 0, 0, 1), (1, 0, 0, 0)])
@pytest.mark.parametrize('frame_id', ['', 'base', 'tool0'])
def test_a_trajectory_decoded_at_once_equals_rosbags_decoding(given, frame_id):
    """Every alignment of the points (the arrays present, the frame id's length before them): the fixed-stride
    decoding gives rosbags' values, point by point."""
    from dynid.io.cdr import stamp_message, typestore
    from dynid.io.trajectory_cdr import POINT_FIELDS, decode_joint_trajectory

    store, rng = typestore(), np.random.default_rng(len(frame_id))
    types, name = store.types, 'trajectory_msgs/msg/JointTrajectory'
    duration = types['builtin_interfaces/msg/Duration']
    points = [types['trajectory_msgs/msg/JointTrajectoryPoint'](
        **{field: rng.normal(size=3) if on else np.zeros(0) for field, on in zip(POINT_FIELDS, given, strict=True)},
        time_from_start=duration(sec=k // 7, nanosec=1000 * k)) for k in range(37)]
    header = types['std_msgs/msg/Header'](stamp=stamp_message(1_700_000_000_123_456_789), frame_id=frame_id)
    raw = store.serialize_cdr(types[name](header=header, joint_names=['a', 'bb', 'ccc'], points=points), name)
    stamp, names, times, values = decode_joint_trajectory(raw)
    expected = store.deserialize_cdr(raw, name)
    assert stamp == 1_700_000_000_123_456_789 and names == ['a', 'bb', 'ccc']
    assert np.array_equal(times, [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in expected.points])
    for field in POINT_FIELDS:
        assert np.array_equal(values[field], np.array([getattr(p, field) for p in expected.points])), field
