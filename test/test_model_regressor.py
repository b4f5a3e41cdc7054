"""Regressors and inverse dynamics against pinocchio's RNEA (issue 2: 'Regressor × standard = RNEA')."""

import numpy as np
import pinocchio as pin
import pytest

from dynid.errors import InputError
from dynid.model import Payload, RobotModel

RELATIVE = 1e-9  # tolerance of the issue: regressor·parameters vs RNEA, relative to the torque scale


def _assert_close(actual, expected):
    scale = max(1.0, float(np.abs(expected).max()))
    assert np.abs(actual - expected).max() <= RELATIVE * scale


def test_regressor_times_standard_parameters_equals_rnea(robot):
    q, dq, ddq = robot.random_states(50, seed=7)
    y = robot.regressor(q, dq, ddq)
    assert y.shape == (50 * robot.n, 10 * robot.n)
    tau_regressor = (y @ robot.standard_parameters).reshape(50, robot.n)
    model = robot.pinocchio_model
    data = model.createData()
    tau_pin = np.array([pin.rnea(model, data, robot.configuration(q[k])[0], dq[k], ddq[k])
                        for k in range(50)])
    _assert_close(tau_regressor, tau_pin)
    _assert_close(robot.inverse_dynamics(q, dq, ddq), tau_pin)


def test_single_sample_and_batch_agree(ur5e):
    q, dq, ddq = ur5e.random_states(3, seed=1)
    batch = ur5e.inverse_dynamics(q, dq, ddq)
    single = ur5e.inverse_dynamics(q[1], dq[1], ddq[1])
    assert single.shape == (1, 6)
    np.testing.assert_allclose(single[0], batch[1], rtol=0, atol=1e-12)
    # Rows of the stacked regressor are grouped sample by sample.
    np.testing.assert_allclose(ur5e.regressor(q, dq, ddq)[6:12], ur5e.regressor(q[1], dq[1], ddq[1]))


def test_gravity_torque_at_rest_matches_lifted_mass(ur5e):
    # With the arm stretched horizontally (q2 = 0) the shoulder-lift torque is the moment of all
    # masses beyond joint 2 about its axis; its sign and size follow the DH table.
    q = np.zeros(6)
    tau = ur5e.inverse_dynamics(q, np.zeros(6), np.zeros(6))[0]
    assert abs(tau[0]) < 1e-12  # vertical base axis: gravity gives no torque on joint 1
    assert 50.0 < abs(tau[1]) < 80.0  # ~13.7 kg at ~0.45 m lever


def test_payload_regressor_equals_rnea_difference(robot):
    payload = Payload(2.5, com=[0.01, -0.02, 0.08], inertia=np.diag([0.004, 0.005, 0.003]))
    q, dq, ddq = robot.random_states(30, seed=3)
    with_payload = robot.inverse_dynamics(q, dq, ddq, payload=payload)
    without = robot.inverse_dynamics(q, dq, ddq)
    y_payload = robot.payload_regressor(q, dq, ddq)
    assert y_payload.shape == (30 * robot.n, 10)
    _assert_close((y_payload @ payload.parameters()).reshape(30, robot.n), with_payload - without)


def test_payload_regressor_is_in_the_flange_frame(ur5e):
    # A point mass on the flange axis 0.1 m out equals a point mass at the origin of a frame
    # 0.1 m further along z: check against pinocchio placing the mass itself.
    payload = Payload(1.0, com=[0.0, 0.0, 0.1])
    q, dq, ddq = ur5e.random_states(5, seed=4)
    model = pin.Model(ur5e.pinocchio_model)
    placement = ur5e.flange_placement * pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.1]))
    model.inertias[6] = model.inertias[6] + placement.act(pin.Inertia(1.0, np.zeros(3), np.zeros((3, 3))))
    data = model.createData()
    expected = np.array([pin.rnea(model, data, q[k], dq[k], ddq[k]) for k in range(5)])
    _assert_close(ur5e.inverse_dynamics(q, dq, ddq, payload=payload), expected)


def test_continuous_joints_use_cos_sin_configuration():
    urdf = """<robot name="pendulum">
      <link name="base"/>
      <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2.0"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
      <joint name="spin" type="continuous"><parent link="base"/><child link="arm"/>
        <axis xyz="0 1 0"/></joint>
    </robot>"""
    robot = RobotModel.from_urdf(urdf)
    assert robot.joint_types == ('continuous',)
    assert np.isinf(robot.lower_limits[0]) and np.isinf(robot.upper_limits[0])
    q = np.array([[0.0], [np.pi / 2]])
    tau = robot.inverse_dynamics(q, np.zeros((2, 1)), np.zeros((2, 1)))
    # Holding 2 kg at 0.5 m against gravity about +y: τ = −m·g·l·cos(q) (the mass lies along +x,
    # gravity along −z, so gravity turns it about +y).
    np.testing.assert_allclose(tau[:, 0], [-2.0 * 9.81 * 0.5, 0.0], atol=1e-9)
    _assert_close(robot.regressor(q, np.ones((2, 1)), np.ones((2, 1))) @ robot.standard_parameters,
                  robot.inverse_dynamics(q, np.ones((2, 1)), np.ones((2, 1))).reshape(-1))


def test_with_parameters_round_trips(ur5e):
    rng = np.random.default_rng(5)
    standard = ur5e.standard_parameters * rng.uniform(0.8, 1.2, 60)
    changed = ur5e.with_parameters(standard)
    np.testing.assert_allclose(changed.standard_parameters, standard, rtol=1e-12, atol=1e-14)
    q, dq, ddq = ur5e.random_states(4)
    _assert_close(changed.inverse_dynamics(q, dq, ddq).reshape(-1),
                  ur5e.regressor(q, dq, ddq) @ standard)


@pytest.mark.parametrize('bad, message', [
    ((np.zeros((3, 5)), np.zeros((3, 6)), np.zeros((3, 6))), 'q must have shape'),
    ((np.zeros((3, 6)), np.zeros((2, 6)), np.zeros((3, 6))), 'different numbers of samples'),
    ((np.zeros(6), np.full(6, np.nan), np.zeros(6)), 'dq holds NaN'),
])
def test_bad_states_are_refused_with_a_reason(ur5e, bad, message):
    with pytest.raises(InputError, match=message):
        ur5e.regressor(*bad)
    with pytest.raises(InputError, match=message):
        ur5e.inverse_dynamics(*bad)
