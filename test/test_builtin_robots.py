"""The other built-in arms (issue 13): UR3e, UR10e, UR16e from UR's tables, the Panda with drive data."""

import numpy as np
import pinocchio as pin
import pytest

from dynid.excite.clearance import Clearance
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.home import default_home
from dynid.excite.optimize import describe_excitation, fit_to_clearance
from dynid.model import load_robot

# UR's public table: (d1, a2, a3, d4, d5, d6) [m], link masses [kg], size classes by torque [N·m].
UR_TABLE = {
    'ur3e': ((0.15185, -0.24355, -0.2132, 0.13105, 0.08535, 0.0921), (1.98, 3.4445, 1.437, 0.871, 0.805, 0.261),
             (56, 56, 28, 12, 12, 12)),
    'ur10e': ((0.1807, -0.6127, -0.57155, 0.17415, 0.11985, 0.11655), (7.369, 13.051, 3.989, 2.1, 1.98, 0.615),
              (330, 330, 150, 56, 56, 56)),
    'ur16e': ((0.1807, -0.4784, -0.36, 0.17415, 0.11985, 0.11655), (7.369, 10.45, 4.321, 2.18, 2.033, 0.907),
              (330, 330, 150, 56, 56, 56)),
}


@pytest.fixture(scope='module', params=['ur3e', 'ur10e', 'ur16e', 'panda'])
def builtin(request):
    return load_robot(request.param)


@pytest.mark.parametrize('name', sorted(UR_TABLE))
def test_ur_builtins_follow_the_published_table(name):
    robot = load_robot(name)
    (d1, a2, a3, d4, d5, d6), masses, efforts = UR_TABLE[name]
    model = robot.pinocchio_model
    data = model.createData()
    pin.framesForwardKinematics(model, data, np.zeros(6))
    # Standard DH at q = 0: the flange sits at x = a2 + a3, y = −(d4 + d6), z = d1 − d5.
    np.testing.assert_allclose(data.oMf[model.getFrameId('tool0')].translation, [a2 + a3, -(d4 + d6), d1 - d5],
                               atol=1e-12)
    np.testing.assert_allclose(robot.standard_parameters.reshape(6, 10)[:, 0], masses)
    np.testing.assert_allclose(robot.effort_limits, efforts)
    assert robot.drives is not None and np.all(robot.drives.gear_ratio == 101.0)
    # Bigger joints get bigger nominal drive gains and rotor inertias.
    order = np.argsort(efforts, kind='stable')
    assert np.all(np.diff(robot.drives.drive_gain[order]) >= 0)
    assert np.all(np.diff(robot.drives.rotor_inertia[order]) >= 0)


def test_panda_builtin_has_nominal_drives_for_its_seven_joints(panda):
    assert panda.drives is not None and panda.drives.joint_names == panda.joint_names
    np.testing.assert_allclose(panda.drives.drive_gain, panda.effort_limits / 12.0)
    assert load_robot('panda', joints=[f'panda_joint{i}' for i in range(1, 7)]).drives is None  # other joints


def test_regressor_matches_rnea(builtin):
    q, dq, ddq = builtin.random_states(5, seed=3)
    tau = builtin.inverse_dynamics(q, dq, ddq)
    predicted = builtin.regressor(q, dq, ddq) @ builtin.standard_parameters
    np.testing.assert_allclose(predicted, tau.reshape(-1), rtol=1e-9, atol=1e-9)
    assert np.abs(tau).max() > 1.0  # not a trivially massless arm


def test_excitation_designs_inside_the_limits_and_above_the_floor(builtin):
    home, why = default_home(builtin)
    assert 'UR home' in why or 'ready' in why
    limits = default_limits(builtin, home, floor=0.0)
    clearance = Clearance.of(builtin)
    clearance.prepare(home)
    design = FourierDesign(builtin.joint_names, 3, 8.0)
    x = random_design(design, home, limits, np.random.default_rng(0), np.linspace(0.0, 8.0, 400, endpoint=False))
    x = fit_to_clearance(builtin, design, x, limits, clearance)
    result = describe_excitation(builtin, design.trajectory(x), limits, clearance=clearance)
    assert result.feasible, result.violations
    assert np.isfinite(result.condition_number) and result.peaks['lowest_point_m'] >= -1e-6
