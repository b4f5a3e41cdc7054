"""FeedforwardCommander (feedforward_node's core) without DDS: what each mode commands, and when nothing.

A fake monotonic clock drives the staleness watch; the expected efforts are the robot model's inverse
dynamics (gravity at rest), so each check could fail on a wrong joint order, a missed stale sample or
a reference started from the wrong place.
"""

import numpy as np
import pytest

from dynid.control.commander import FeedforwardCommander, node_statuses
from dynid.control.configuration import FeedforwardSettings
from dynid.errors import InputError
from dynid.excite.trajectory import PointTrajectory
from dynid.io.stream import StateBatch

POSE = np.array([0.2, -1.2, 1.0, -1.5, -1.5, 0.3])
TERMS = ('rigid_body', 'rotor_inertia')


class Clock:
    """A monotonic clock [s] the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _commander(ur5e, mode: str, clock: Clock, **kwargs) -> FeedforwardCommander:
    settings = FeedforwardSettings('ur5e', terms=TERMS, rate_hz=100.0, joints=tuple(ur5e.joint_names)[::-1],
                                   mode=mode, acceleration=kwargs.pop('acceleration', 'zero'), timeout_s=0.2,
                                   reference_correction=kwargs.pop('reference_correction', False))
    return FeedforwardCommander.from_settings(settings, clock=clock, **kwargs)


def _batch(q, tau=None, temperature=None, stamps_ns=(0,)) -> StateBatch:
    rows = len(stamps_ns)
    q = np.tile(q, (rows, 1))
    tau = np.zeros_like(q) if tau is None else np.tile(tau, (rows, 1))
    temperature = None if temperature is None else np.tile(temperature, (rows, 1))
    return StateBatch(np.asarray(stamps_ns, dtype=np.int64), q, np.full_like(q, np.nan), tau,
                      temperature=temperature)


def _gravity(ur5e, q) -> np.ndarray:
    return ur5e.inverse_dynamics(np.asarray(q)[None], np.zeros((1, 6)), np.zeros((1, 6)))[0]


def test_choices_are_checked_before_the_feedforward_is_built(ur5e):
    """A bad mode is named even when the settings could not be built (friction_static without a result)."""
    for mode, acceleration, reason in (('torque', 'zero', 'mode must be one of'),
                                       ('measured', 'fast', 'acceleration must be one of')):
        with pytest.raises(InputError, match=reason):
            FeedforwardCommander.from_settings(FeedforwardSettings('ur5e', terms=('friction_static',), mode=mode,
                                                                   acceleration=acceleration))


def test_streaming_commands_the_reference_in_the_controllers_order_and_zeros_when_stale(ur5e):
    clock = Clock()
    counters = {'stale_events': 4}  # the node's, kept across configurations
    commander = _commander(ur5e, 'streaming', clock, counters=counters)
    commander.activate()
    assert commander.fresh() == (False, '')  # never heard: stale, but not an event (it was never fresh)
    commander.measure(_batch(POSE))
    fresh, news = commander.fresh()
    assert fresh and news == '' and commander.tick(0.0, fresh) is None  # no reference yet: zeros
    commander.follow(PointTrajectory(tuple(ur5e.joint_names), [0.0], POSE[None] + 0.3), None, 0.0)
    effort = commander.tick(0.5, True)
    np.testing.assert_allclose(effort, _gravity(ur5e, POSE + 0.3)[::-1], atol=1e-9)
    assert counters['published'] == 1

    clock.now += 0.25  # joint_states silent longer than the timeout
    fresh, news = commander.fresh()
    assert not fresh and 'silent for 0.250 s: zero effort' in news and counters['stale_events'] == 5
    assert commander.tick(0.6, fresh) is None and commander.fresh() == (False, '')  # one event per silence
    commander.measure(_batch(POSE))
    assert commander.fresh() == (True, '') and commander.tick(0.7, True) is not None


def test_the_first_reference_starts_from_the_measured_position_and_a_cancel_holds(ur5e):
    """Joint_trajectory_controller semantics: a reference starting later is reached from where the robot
    is; a cancel (None) holds the reference where it is now."""
    commander = _commander(ur5e, 'streaming', Clock())
    commander.measure(_batch(POSE))
    later = PointTrajectory(tuple(ur5e.joint_names), [0.0], POSE[None] + 0.3)
    commander.follow(later, 5.0, 0.0)  # starts at 5 s
    np.testing.assert_allclose(commander.tick(1.0, True), _gravity(ur5e, POSE)[::-1], atol=1e-9)
    commander.follow(None, None, 6.0)
    np.testing.assert_allclose(commander.tick(9.0, True), _gravity(ur5e, POSE + 0.3)[::-1], atol=1e-9)
    with pytest.raises(InputError, match='do not match the robot'):
        commander.follow(PointTrajectory(('a', 'b'), [0.0], [[0.0, 0.0]]), None, 9.0)


def test_measured_mode_compensates_the_measured_state_with_fresh_inputs_only(ur5e):
    clock = Clock()
    commander = _commander(ur5e, 'measured', clock)
    commander.activate()
    assert commander.tick(0.0, commander.fresh()[0]) is None  # nothing measured yet
    commander.measure(_batch(POSE + 0.2, tau=np.full(6, 3.0), temperature=np.full(6, 40.0)))
    fresh, news = commander.fresh()
    np.testing.assert_allclose(commander.tick(0.0, fresh), _gravity(ur5e, POSE + 0.2)[::-1], atol=1e-9)
    context = commander.context(True, fresh)
    assert np.all(context.joint_torque == 3.0) and np.all(context.temperature == 40.0)
    assert commander.context(False, fresh).joint_torque is None  # the torque is a measured-mode input
    assert commander.context(True, False).temperature is None  # stale: the terms' defaults
    commander.measure(_batch(POSE, temperature=np.full(6, np.nan)))
    assert commander.context(True, True).temperature is None  # not finite: left out
    values = commander.values(True)
    assert float(values['rms_rigid_body_Nm']) > 1.0 and values['terms'] == 'rigid_body,rotor_inertia'


def test_trajectory_mode_fills_efforts_and_passes_a_cancel(ur5e):
    counters = {}
    commander = _commander(ur5e, 'trajectory', Clock(), counters=counters)
    assert not commander.streamed
    t = np.linspace(0.0, 2.0, 5)
    q = POSE + 0.4 * np.sin(t)[:, None]
    trajectory = PointTrajectory(tuple(ur5e.joint_names), t, q, 0.4 * np.cos(t)[:, None] * np.ones(6))
    filled = commander.fill(trajectory, False)
    assert filled.added > 0 and counters['points_added'] == filled.added and counters['published'] == 1
    start = trajectory.evaluate(t[:1])  # the cubic interpolation's own motion at the first point
    np.testing.assert_allclose(filled.effort[0], commander.feedforward.evaluate(*start)[0], atol=1e-9)
    assert commander.fill(None, False) is None and counters['published'] == 2
    assert 'rms_rigid_body_Nm' in commander.values(False)


def test_alpha_comes_from_the_estimators_table(ur5e):
    commander = _commander(ur5e, 'streaming', Clock())
    names = list(ur5e.joint_names)[::-1]
    table = np.column_stack([np.linspace(0.9, 1.4, 6), np.linspace(0.0, 0.5, 6), np.ones(6)])
    commander.set_alpha(['joint:' + ','.join(names), 'quantity:alpha1,alpha2,active'], [6, 3], table.ravel())
    np.testing.assert_allclose(commander.context(False, False).alpha, table[::-1, :2])
    with pytest.raises(InputError, match='2 dimensions'):
        commander.set_alpha(['joint:a'], [1], [1.0])


# ------------------------------------------------------------------ feedforward_node's parameters and diagnostics
def _parameters(**changes) -> dict:
    """feedforward_node's parameters as declared (array parameters unset: None), with ``changes``."""
    return {'robot': 'ur5e', 'robot_description': '', 'result_file': '', 'mode': 'trajectory', 'terms': list(TERMS),
            'term_options': '', 'compensate_gravity': True, 'compensate_friction': True, 'effort_is_current': False,
            'drive_gains': None, 'rate_limit': 0.0, 'joints': None, 'rate': 200.0, 'effort_tolerance': 0.5,
            'reference_correction': False, 'timeout': 0.1, 'acceleration': 'zero', 'payload_file': '', **changes}


def test_parameters_configure_the_commander(ur5e):
    names = list(ur5e.joint_names)[::-1]
    counters = {}
    commander = FeedforwardCommander.from_parameters(_parameters(
        mode='streaming', rate=250.0, timeout=0.3, effort_tolerance=0.2, joints=names, drive_gains=[10.0] * 6,
        compensate_gravity=False).get, counters=counters)
    assert (commander.mode, commander.rate_hz, commander.timeout_s, commander.effort_tolerance) == (
        'streaming', 250.0, 0.3, 0.2)
    assert commander.order == [5, 4, 3, 2, 1, 0] and commander.counters is counters
    assert commander.feedforward.rate_hz == 250.0 and not commander.feedforward.compensate_gravity
    assert list(commander.feedforward.terms) == list(TERMS) and commander.source == 'ur5e, model parameters'
    assert FeedforwardCommander.from_parameters(_parameters().get).order == list(range(6))  # unset: the robot's


def test_robot_description_wins_over_robot_and_unset_arrays_are_empty():
    xml = '<robot name="arm"/>'
    settings = FeedforwardSettings.from_parameters(_parameters(robot='no_such_robot', robot_description=xml).get)
    assert settings.robot_description == xml and settings.drive_gains == () and settings.joints == ()
    with pytest.raises(InputError, match='robot_description'):  # built from the description, not the name
        settings.build()
    assert FeedforwardSettings.from_parameters(_parameters().get).robot == 'ur5e'


def test_bad_parameters_are_input_errors_with_the_reason():
    """Refusals the checks name pass unchanged; an error no check named (a word where a number belongs,
    deep in term_options) is an InputError naming its type, never a crash of the configure transition."""
    for changes, reason in (({'mode': 'torque'}, 'mode must be one of'),
                            ({'terms': ['rigid_body', 'rigid_body']}, 'distinct feedforward terms'),
                            ({'term_options': 'rigid_body: {payload: {mass: heavy}}'},
                             "^ValueError: could not convert string to float: 'heavy'$")):
        with pytest.raises(InputError, match=reason):
            FeedforwardCommander.from_parameters(_parameters(**changes).get)


def test_the_log_line_names_mode_source_terms_and_those_left_out(ur5e):
    commander = FeedforwardCommander.from_parameters(_parameters(compensate_friction=False).get)
    assert commander.describe() == 'trajectory feedforward of ur5e, model parameters: rigid_body, rotor_inertia'
    commander.feedforward.left_out['friction_static'] = 'compensate_friction is false'
    assert commander.describe().endswith('rotor_inertia; friction_static left out (compensate_friction is false)')


def test_node_statuses_report_state_refusal_and_staleness(ur5e):
    counters = {'messages': 3, 'errors': 1, 'stale_events': 2, 'published': 0, 'points_added': 0}
    refused = node_statuses(None, 'unconfigured', 'torque', counters, 'configure refused: mode', None, 0.1)
    assert refused == [('feedforward', 'error', 'configure refused: mode',
                        {'state': 'unconfigured', 'mode': 'torque', **counters})]
    commander = FeedforwardCommander.from_parameters(_parameters().get, counters=counters)

    def going_stale() -> bool:  # the staleness watch counts an event as it looks
        counters['stale_events'] += 1
        return False

    found = node_statuses(commander, 'active', 'trajectory', counters, '', going_stale, 0.25)
    assert [entry[:3] for entry in found] == [('feedforward', 'ok', 'active, trajectory mode'),
                                              ('joint_states', 'stale', 'no joint_states for more than 0.25 s: '
                                                                        'zero effort')]
    values = found[0][3]
    assert values['stale_events'] == 2 and found[1][3] == {'stale_events': 3}  # counters before the look
    assert values['terms'] == 'rigid_body,rotor_inertia' and values['state'] == 'active'
    found = node_statuses(commander, 'active', 'trajectory', counters, '', lambda: True, 0.25)
    assert found[1][:3] == ('joint_states', 'ok', 'fresh')
