"""The momentum observer's model terms against pinocchio's, and its estimate against the twin's true contacts."""

import numpy as np
import pinocchio as pin
import pytest

from builders import own_model_result
from dynid.contact.dynamics import ObserverModel
from dynid.contact.observer import MomentumObserver
from dynid.errors import InputError
from dynid.sim.contacts import ContactLoad
from dynid.sim.parameters import PlantParameters
from dynid.sim.twin import DigitalTwin


@pytest.mark.parametrize('name', ['ur5e', 'panda'])
def test_momentum_and_its_drive_are_those_of_pinocchio(name, request):
    """p = M(q)·q̇ + B·q̇ and Cᵀ(q, q̇)·q̇ − g(q) from RNEAs alone agree with CRBA, the Coriolis matrix and the
    gravity of pinocchio to 1e-6 of the term's scale (the central difference along the motion, h = 1e-4 s)."""
    robot = request.getfixturevalue(name)
    model = ObserverModel(own_model_result(robot, torque_source='joint_torque'), robot)
    q, dq, _ = robot.random_states(20, seed=5)
    p, bias = model.momentum_terms(q, dq)
    pm, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    for k in range(len(q)):
        config = robot.configuration_vector(q[k])
        mass = pin.crba(pm, data, config)
        mass = np.triu(mass) + np.triu(mass, 1).T
        coriolis = pin.computeCoriolisMatrix(pm, data, config, dq[k])
        expected = coriolis.T @ dq[k] - pin.computeGeneralizedGravity(pm, data, config)
        np.testing.assert_allclose(p[k], mass @ dq[k], atol=1e-6 * (1 + np.abs(mass @ dq[k]).max()))
        np.testing.assert_allclose(bias[k], expected, atol=1e-6 * (1 + np.abs(expected).max()))


def _pushed_twin(ur5e, loads, seconds):
    params = PlantParameters.of_twin(ur5e, None, 0.0, 1, 25.0)
    twin = DigitalTwin(params, rate_hz=1000.0, seed=1)
    for load in loads:
        twin.apply_contact(load)
    return twin.run(seconds)


def test_on_the_twin_the_estimate_is_the_true_external_torque_low_passed(ur5e):
    """With the true signals and the plant's own friction, r follows ṙ = K·(τ_ext − r): 1 % of the step after
    5/K, and the batch split does not change a number."""
    loads = [ContactLoad('elbow_joint_link', (0.2, 0.0, 0.05), (0.0, 0.0, -30.0), 0.3, 0.25),
             ContactLoad('flange', (0.0, 0.0, 0.05), (8.0, -5.0, 0.0), 0.8, 0.3, 'half_sine')]
    record = _pushed_twin(ur5e, loads, 1.4)
    truth, gain = record.truth, 100.0
    model = ObserverModel(own_model_result(ur5e), ur5e)
    whole = MomentumObserver(model, gain).run(record.time, truth['q'], truth['dq'], current=truth['current'],
                                              dtheta=truth['dtheta'], friction=truth['friction']).external
    # τ_ext through the first-order low-pass; the plant feels a sample's τ_ext over the step after it
    expected, decay = np.zeros_like(whole), np.exp(-gain * np.diff(record.time))
    for k in range(1, len(whole)):
        expected[k] = decay[k - 1] * expected[k - 1] + (1 - decay[k - 1]) * truth['external_torque'][k - 1]
    step = np.abs(truth['external_torque'][400]).max()
    assert step > 5.0
    np.testing.assert_allclose(whole, expected, atol=0.01 * step)
    observer = MomentumObserver(model, gain)
    parts = [observer.run(record.time[a:b], truth['q'][a:b], truth['dq'][a:b], current=truth['current'][a:b],
                          dtheta=truth['dtheta'][a:b], friction=truth['friction'][a:b]).external
             for a, b in ((0, 1), (1, 417), (417, len(whole)))]
    np.testing.assert_allclose(np.vstack(parts), whole, rtol=0, atol=1e-12)


def test_the_model_says_what_a_result_or_a_recording_lacks(ur5e):
    result = own_model_result(ur5e, torque_source='joint_torque')
    model = ObserverModel(result, ur5e)
    with pytest.raises(InputError, match='holds no joint torque'):
        model.measured_torque(np.zeros((3, 6)), None, 'run.mcap')
    del result.model['torque_source']
    with pytest.raises(InputError, match='has no torque_source'):
        ObserverModel(result, ur5e)


def test_two_stages_cut_the_velocity_noise_and_lag_a_ramp_as_one_stage_of_half_the_gain(ur5e):
    """stages=2: r through a second stage of the same K (the response to the pushes within 1 % of the step); two
    stages of 2K against one of K: the same lag on a ramp, and white noise on the measured velocity passes at most
    0.6 times as strong (about 0.4 at 1 kHz)."""
    loads = [ContactLoad('elbow_joint_link', (0.2, 0.0, 0.05), (0.0, 0.0, -30.0), 0.3, 0.25),
             ContactLoad('flange', (0.0, 0.0, 0.05), (8.0, -5.0, 0.0), 0.8, 0.3, 'ramp')]
    record = _pushed_twin(ur5e, loads, 1.4)
    truth = record.truth
    model = ObserverModel(own_model_result(ur5e), ur5e)

    def estimate(gain, stages, dq):
        return MomentumObserver(model, gain, stages=stages).run(record.time, truth['q'], dq, current=truth['current'],
                                                                dtheta=truth['dtheta'],
                                                                friction=truth['friction']).external

    one, two = estimate(200.0, 1, truth['dq']), estimate(200.0, 2, truth['dq'])
    expected, decay = np.zeros_like(two), np.exp(-200.0 * np.diff(record.time))
    for k in range(1, len(two)):
        expected[k] = decay[k - 1] * expected[k - 1] + (1 - decay[k - 1]) * 0.5 * (one[k - 1] + one[k])
    step = np.abs(truth['external_torque'][400]).max()
    np.testing.assert_allclose(two, expected, atol=0.01 * step)
    # the ramp on the flange (0.8–1.1 s): one stage of 100 1/s and two of 200 1/s trail it alike near its end
    end = np.searchsorted(record.time, 1.099)
    ramp = np.abs(truth['external_torque'][end]).max()
    wide, narrow = estimate(100.0, 1, truth['dq']), two
    assert np.abs(wide[end] - narrow[end]).max() < 0.03 * ramp
    noisy = truth['dq'] + np.random.default_rng(3).normal(0.0, 2e-3, truth['dq'].shape)
    noise_one = (estimate(100.0, 1, noisy) - wide)[100:].std(axis=0)
    noise_two = (estimate(200.0, 2, noisy) - narrow)[100:].std(axis=0)
    assert np.all(noise_two < 0.6 * noise_one), (noise_two / noise_one).round(2)


def test_the_observer_takes_one_or_two_stages(ur5e):
    with pytest.raises(InputError, match='stages must be 1 or 2'):
        MomentumObserver(ObserverModel(own_model_result(ur5e), ur5e), 100.0, stages=3)


def test_two_stages_by_default_where_the_rate_allows_them():
    """From 800 Hz two stages of 200 1/s (bandwidth 100 1/s), below one stage of at most a quarter of the rate; a
    stage count read as a float (a config's 1.0) is still a count."""
    from dynid.contact.settings import ContactSettings

    default = ContactSettings()
    assert (default.stages(1000.0), default.gain(1000.0), default.bandwidth(1000.0)) == (2, 200.0, 100.0)
    assert (default.stages(94.0), default.gain(94.0), default.bandwidth(94.0)) == (1, 23.5, 23.5)
    one = ContactSettings(observer_stages=1.0).validated()
    assert one.stages(1000.0) == 1 and isinstance(one.stages(1000.0), int) and one.gain(1000.0) == 100.0
    with pytest.raises(InputError, match='observer_stages'):
        ContactSettings(observer_stages=3).validated()
