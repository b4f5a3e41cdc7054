"""UR direct torque: friction scale factors, UR's service requests, and the twin taking direct torque as UR does."""

from types import SimpleNamespace

import numpy as np
import pytest

from dynid.control.ur_direct_torque import (
    clamped_scales,
    friction_model_request,
    gravity_in_base,
    gravity_request,
    set_payload_request,
    ur_friction_plan,
)
from dynid.errors import InputError
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.model import Payload
from dynid.sim.controller import INTEGRAL
from dynid.sim.parameters import PlantParameters
from dynid.sim.twin import DigitalTwin, home_configuration
from dynid.sim.ur_modes import URDirectTorque, check_friction_scales, run_direct_torque

TOOL = Payload(2.0, [0.0, 0.0, 0.05])


def test_scale_factors_are_identified_over_ur_clamped_to_0_1():
    scales = clamped_scales([0.5, 2.0, -1.0, 1.0, np.nan, 3.0], [1.0, 1.0, 1.0, 0.0, 1.0, 4.0])
    np.testing.assert_allclose(scales, [0.5, 1.0, 0.0, 0.0, 0.0, 0.75])
    assert np.all((scales >= 0) & (scales <= 1))


def test_the_plan_keeps_ur_model_where_the_clamp_loses_little_else_sets_it_to_zero():
    ur = np.full(6, 2.0)
    plan = ur_friction_plan(np.full(6, 1.0), np.full(6, 1.9), ur, ur)
    assert plan.mode == 'ur' and not plan.feedforward_friction
    np.testing.assert_allclose(plan.viscous_scale, 0.5)
    np.testing.assert_allclose(plan.coulomb_scale, 0.95)
    above = ur_friction_plan(np.full(6, 1.0), np.r_[np.full(5, 1.9), 3.0], ur, ur)  # joint 6 needs a scale of 1.5
    assert above.mode == 'dynid' and above.feedforward_friction and not above.viscous_scale.any()
    assert ur_friction_plan(np.ones(6), np.ones(6)).mode == 'dynid'  # UR's coefficients unknown
    forced = ur_friction_plan(np.full(6, 1.0), np.r_[np.full(5, 1.9), 3.0], ur, ur, mode='ur')
    assert forced.coulomb_scale[5] == 1.0
    assert 'coulomb_scale: [0.95' in forced.command()


def test_friction_request_carries_the_scales():
    class Request:
        def __init__(self):
            self.parameters = SimpleNamespace(viscous_scale=[], coulomb_scale=[])

    plan = ur_friction_plan(np.full(6, 1.0), np.full(6, 1.9), np.full(6, 2.0), np.full(6, 2.0))
    request = friction_model_request(Request, plan)
    assert request.parameters.viscous_scale == [0.5] * 6
    assert request.parameters.coulomb_scale == pytest.approx([0.95] * 6)


def test_set_payload_request_fits_both_ur_msgs_shapes_with_inertia_and_transition_time():
    values = {'mass': 2.0, 'center_of_gravity': {'x': 0.0, 'y': 0.01, 'z': 0.05}, 'ixx': 0.004, 'iyy': 0.005,
              'izz': 0.002, 'ixy': 0.0, 'ixz': 0.0001, 'iyz': 0.0}

    class Main:
        def __init__(self):
            self.payload = SimpleNamespace(m=0.0, com=SimpleNamespace(x=0.0, y=0.0, z=0.0), ixx=0.0, iyy=0.0,
                                           izz=0.0, ixy=0.0, ixz=0.0, iyz=0.0)
            self.transition_time = SimpleNamespace(sec=0, nanosec=0)

    class Old:  # ur_msgs before PR #1808: mass and centre of gravity only
        def __init__(self):
            self.mass = 0.0
            self.center_of_gravity = SimpleNamespace(x=0.0, y=0.0, z=0.0)

    main = set_payload_request(Main, values, transition_time_s=0.25)
    assert (main.payload.m, main.payload.com.y, main.payload.iyy, main.payload.ixz) == (2.0, 0.01, 0.005, 0.0001)
    assert (main.transition_time.sec, main.transition_time.nanosec) == (0, 250_000_000)
    old = set_payload_request(Old, values, transition_time_s=1.0)
    assert old.mass == 2.0 and old.center_of_gravity.z == 0.05 and not hasattr(old, 'ixx')
    with pytest.raises(InputError, match='transition_time'):
        set_payload_request(Main, values, transition_time_s=-1.0)


def test_gravity_request_from_a_tilted_description(ur5e):
    tilted = ur5e.with_gravity([0.0, -9.81 * np.sin(0.3), -9.81 * np.cos(0.3)])
    request_type = lambda: SimpleNamespace(gravity=SimpleNamespace(header=SimpleNamespace(frame_id=''),  # noqa: E731
                                                                   vector=SimpleNamespace(x=0.0, y=0.0, z=0.0)))
    request = gravity_request(request_type, gravity_in_base(tilted))
    assert request.gravity.header.frame_id == 'base'
    assert (request.gravity.vector.y, request.gravity.vector.z) == pytest.approx((-9.81 * np.sin(0.3),
                                                                                 -9.81 * np.cos(0.3)))
    with pytest.raises(InputError, match='gravity'):
        gravity_request(request_type, [0.0, 0.0, 0.0])


def test_friction_scales_outside_0_1_are_refused(ur5e):
    with pytest.raises(InputError, match='viscous_scale must be 6 numbers in \\[0, 1\\]'):
        check_friction_scales([1.2] * 6, 0.0, 6)
    with pytest.raises(InputError, match='coulomb_scale'):
        check_friction_scales(0.5, [np.nan] * 6, 6)


def test_ur_direct_torque_adds_gravity_with_the_payload_set_and_scaled_friction(ur5e):
    params = PlantParameters.of_twin(ur5e, TOOL, internal_feedforward='none')
    q = home_configuration(ur5e)
    dq = np.full(6, 0.5)
    full = URDirectTorque.of_twin(params, 1.0, 1.0, payload_set=TOOL)
    none = URDirectTorque.of_twin(params, 0.0, 0.0, payload_set=TOOL)
    gravity = ur5e.inverse_dynamics(q, np.zeros(6), np.zeros(6), TOOL)
    np.testing.assert_allclose(none(np.zeros(6), q, dq), gravity[0] if gravity.ndim == 2 else gravity)
    friction = full(np.zeros(6), q, dq) - none(np.zeros(6), q, dq)
    np.testing.assert_allclose(friction, params.joints.viscous1 * 0.5 + params.joints.coulomb * np.tanh(50.0))


def test_the_twin_takes_direct_torque_as_ur_and_a_gravity_free_feedforward_tracks_better(ur5e):
    # The twin's controller without its own model torque is the loop around the torque; UR adds gravity with the
    # payload set. A feedforward of the true rigid-body torque without gravity, plus the friction UR's model does
    # not give (scales 0), must track the excitation better on every joint than no feedforward.
    trajectory = load_trajectory(builtin_excitation_path('ur5e'))
    params = PlantParameters.of_twin(ur5e, TOOL, internal_feedforward='none', noise=False)
    samples = 500
    t = np.arange(1, samples + 1) / 250.0
    q_r, dq_r, ddq_r = trajectory.evaluate(t)
    zeros = np.zeros_like(q_r)
    rigid = ur5e.inverse_dynamics(q_r, dq_r, ddq_r, TOOL) - ur5e.inverse_dynamics(q_r, zeros, zeros, TOOL)
    friction = params.joints.viscous1 * dq_r + params.joints.coulomb * np.tanh(dq_r / 0.01)
    rotor = params.nominal_drives.rotor_inertia * ddq_r
    errors = {}
    for label, commands in (('none', None), ('feedforward', rigid + friction + rotor)):
        twin = DigitalTwin(params, rate_hz=250.0, seed=0, initial_q=q_r[0])
        twin.follow(trajectory, start_time=0.0)
        start_integral = twin.controller.gains[INTEGRAL].copy()
        ur = URDirectTorque.of_twin(params, 0.0, 0.0, payload_set=TOOL)
        run = run_direct_torque(twin, ur, commands, samples)
        assert not np.allclose(start_integral, twin.controller.gains[INTEGRAL])  # the preload UR gives is taken off
        error = run['q'] - trajectory.evaluate(run['t'])[0]
        errors[label] = np.sqrt(np.mean(error[run['t'] >= 0.5] ** 2, axis=0))
    assert np.all(errors['feedforward'] < errors['none']), errors


def test_sim_node_side_applies_commands_as_ur_and_refuses_bad_scales(ur5e):
    from dynid.sim.ur_modes import URDriverSide, hand_gravity_to_ur

    params = PlantParameters.of_twin(ur5e, TOOL, internal_feedforward='none', noise=False)
    twin = DigitalTwin(params, rate_hz=250.0, seed=0)
    side = URDriverSide(params, 'gravity_compensated_torque', TOOL, direct_torque=True, viscous_scale=[0.5],
                        coulomb_scale=[1.0])
    hand_gravity_to_ur(twin, side.ur)
    command = np.full(6, 0.25)
    state = twin.plant.state
    expected = URDirectTorque.of_twin(params, 0.5, 1.0, TOOL)(command, state.q, state.dq)
    np.testing.assert_allclose(side.effort(twin, command), expected)
    np.testing.assert_allclose(side.effort(twin), expected)  # the command is held
    with pytest.raises(InputError, match='viscous_scale'):
        side.set_scales(viscous_scale=[1.5] * 6)
    side.set_scales(coulomb_scale=[0.0] * 6)
    assert not side.ur.coulomb_scale.any() and np.all(side.ur.viscous_scale == 0.5)
    record = twin.advance(3)
    published = side.measured(record.measured)['driver_effort']
    drive = ur5e.drives.current_to_joint_torque(record.measured['current'])
    np.testing.assert_allclose(published, drive - ur5e.inverse_dynamics(record.measured['q'], np.zeros((3, 6)),
                                                                         np.zeros((3, 6)), TOOL))
    assert URDriverSide(params, 'current', None, direct_torque=False).effort(twin, command) is not None


def test_feedforward_node_side_sets_ur_scales_to_zero_or_says_how(ur5e):
    import rclpy

    from dynid.ros.ur_services import configure_ur

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('dynid_test_ur_services', context=context)
    try:
        lines = configure_ur(node, ur5e, True, '/friction_model_controller/set_friction_model_parameters',
                             '/gravity_update_controller/set_gravity')
        assert "UR's compensation set to 0" in lines[0] or 'coefficients are not known' in lines[0]
        assert 'coulomb_scale: [0, 0, 0, 0, 0, 0]' in lines[0]  # the call to run where ur_msgs is missing
        assert 'gravity straight down' in lines[1]
        tilted = configure_ur(node, ur5e.with_gravity([0.0, -4.9, -8.5]), False, 'fm', 'g')
        assert "UR's friction model left as set" in tilted[0]
        assert 'vector: {x: 0, y: -4.9, z: -8.5}' in tilted[1]
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
