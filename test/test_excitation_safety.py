"""Safe excitation for any robot (issue 13): home, floor clearance of every link, self-collision, refusals."""


import numpy as np
import pytest

from cli_run import run_dynid
from dynid.errors import InputError
from dynid.excite.clearance import Clearance
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.home import default_home, parse_home
from dynid.excite.optimize import _objective, _StartRunner, excitation_violations, fit_to_clearance
from dynid.excite.trajectory import FourierTrajectory
from dynid.model import load_robot
from dynid.model.robots import example_robot_path

UR_JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
             'wrist_3_joint')


@pytest.fixture(scope='module')
def anonymous_ur():
    """example-robot-data's UR5 with its joints renamed j1..j6: a UR that no name rule recognizes."""
    text = example_robot_path('ur_description/urdf/ur5_robot.urdf').read_text()
    for i, name in enumerate(UR_JOINTS, start=1):
        text = text.replace(f'"{name}"', f'"j{i}"')
    return load_robot(text)


def test_default_home_is_the_ur_home_by_joint_names_else_the_middle_of_finite_ranges(ur5, anonymous_ur, panda):
    home, why = default_home(ur5)
    np.testing.assert_allclose(home, [0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
    assert 'UR home' in why
    assert 'ready' in default_home(panda)[1]
    home, why = default_home(anonymous_ur)
    # ±2π ranges (±π for the elbow): the middle is q = 0, the arm stretched out horizontally.
    np.testing.assert_allclose(home, 0.0, atol=1e-12)
    assert 'middle of the joint ranges' in why


def test_parse_home_checks_count_and_limits(ur5e):
    np.testing.assert_allclose(parse_home('0,-1.5,1.5,-1.5,-1.5,0', ur5e), [0, -1.5, 1.5, -1.5, -1.5, 0])
    with pytest.raises(InputError, match='needs 6 finite values'):
        parse_home('0,1', ur5e)
    with pytest.raises(InputError, match=r'elbow_joint = 4 outside \[-3.142, 3.142\]'):
        parse_home('0,0,4,0,0,0', ur5e)


def test_every_link_not_only_the_flange_is_held_above_the_floor(ur5e):
    # Stretched out (q = 0) and turned 1 rad down at the shoulder, the UR5e's forearm tip is about
    # 0.1625 − 0.8172·sin(1) = −0.53 m: the old flange-only check saw the flange, not the links.
    clearance = Clearance.of(ur5e)
    assert 'link frames' in clearance.describe()
    clearance.prepare(np.zeros(6))
    q = np.zeros((1, 6))
    q[0, 1] = 1.0
    heights = clearance.heights(q)[0]
    names = [b.name for b in clearance.bodies]
    assert heights[names.index('elbow_joint_link')] == pytest.approx(0.1625 - 0.8172 * np.sin(1.0), abs=1e-3)
    # One-period trajectory that dips the shoulder by 1 rad at t = 2.5 s (sin of a 10 s period).
    sine = np.zeros((6, 1))
    sine[1, 0] = 1.0
    trajectory = FourierTrajectory(ur5e.joint_names, 0.1, np.zeros(6), sine, np.zeros((6, 1)))
    limits = default_limits(ur5e, np.zeros(6), position_range=2.0, velocity_fraction=1.0, floor=0.0)
    violations, peaks = excitation_violations(ur5e, trajectory, limits, clearance=clearance)
    assert len(violations) == 1 and 'below the floor at 0.000 m' in violations[0]
    assert 't = 2.50' in violations[0] and peaks['lowest_point_m'] < -0.5


def test_collision_geometry_is_used_where_the_urdf_has_it(anonymous_ur):
    clearance = Clearance.of(anonymous_ur)
    assert 'collision geometry' in clearance.describe()
    clearance.prepare(np.zeros(6))
    q = np.zeros((1, 6))
    q[0, 1] = 1.0
    frames = Clearance(anonymous_ur)
    frames.prepare(np.zeros(6))
    # Meshes have thickness: their lowest point lies below the lowest link frame origin.
    assert clearance.heights(q).min() < frames.heights(q).min() - 0.02
    folded = np.array([[0.0, -1.5708, 3.0, 0.0, 0.0, 0.0]])  # elbow folded back onto the upper arm
    assert clearance.first_collision(folded) is not None
    assert clearance.first_collision(np.zeros((1, 6))) is None
    assert frames.first_collision(folded) is None  # no geometry, no self-collision check


def test_a_design_is_shrunk_above_the_floor_or_refused_when_the_home_leaves_no_room(anonymous_ur):
    robot = anonymous_ur
    ur_home = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
    limits = default_limits(robot, ur_home, position_range=1.5, floor=0.0)
    clearance = Clearance.of(robot)
    clearance.prepare(ur_home)
    design = FourierDesign(robot.joint_names, 3, 8.0)
    grid = np.linspace(0.0, 8.0, 400, endpoint=False)
    x = random_design(design, ur_home, limits, np.random.default_rng(0), grid)
    before, _ = excitation_violations(robot, design.trajectory(x), limits, clearance=clearance)
    assert len(before) == 1 and before[0].startswith('wrist_3_link_0 reaches z = -0.19'), before
    fitted = fit_to_clearance(robot, design, x, limits, clearance)
    after, peaks = excitation_violations(robot, design.trajectory(fitted), limits, clearance=clearance)
    assert after == [] and not peaks['self_collision'] and 0.0 <= peaks['lowest_point_m'] < 0.01  # just clear
    # Stretched out (the default home of an arm no rule recognizes), the wrist meshes already hang below
    # z = 0 and nearly every shoulder motion lowers them: refused, naming the link, instead of shrunk to nothing.
    stretched = default_home(robot)[0]
    assert {name for name, _ in _prepared_clearance(robot, stretched).below_floor_at_home(0.0)} >= {'wrist_3_link_0'}
    limits = default_limits(robot, stretched, floor=0.0)
    x = random_design(design, stretched, limits, np.random.default_rng(1), grid)
    refusal = r'breaks the clearance check \(\w+ reaches z = .* at t = .*choose another home'
    with pytest.raises(InputError, match=refusal):
        fit_to_clearance(robot, design, x, limits, _prepared_clearance(robot, stretched))


def test_a_start_shrunk_into_the_clearance_says_what_it_reached_and_what_it_broke(anonymous_ur):
    """The start's progress line names a motion shrunk after SLSQP (its criterion had looked better than the one
    kept), and says nothing where the motion was kept whole."""
    robot = anonymous_ur
    ur_home = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
    limits = default_limits(robot, ur_home, position_range=1.5, floor=0.0)
    clearance = _prepared_clearance(robot, ur_home)
    design = FourierDesign(robot.joint_names, 3, 8.0)
    grid = np.linspace(0.0, 8.0, 400, endpoint=False)
    x = random_design(design, ur_home, limits, np.random.default_rng(0), grid)
    fitted = fit_to_clearance(robot, design, x, limits, clearance)
    objective, _ = _objective(robot, design, grid, 'cond', (1.0, 1.0), 'analytic')
    runner = _StartRunner(robot, design, limits, clearance, objective, None, [], grid, 'cond', 1, 1, 1, 1e-6, None)
    said = runner.shrunk(x, fitted)
    factor = np.linalg.norm(fitted.reshape(6, -1)[:, 1:]) / np.linalg.norm(x.reshape(6, -1)[:, 1:])
    assert said.startswith(f"SLSQP's motion reached {np.exp(objective(x)):.4g}, then shrunk to {100 * factor:.3g} % "
                           'to clear what it broke: wrist_3_link_0 reaches z = -0.19'), said
    assert factor < 1.0 and objective(fitted) > objective(x)  # shrunk, and the criterion got worse for it
    assert runner.shrunk(fitted, fitted) == ''
    # The dip SLSQP's next run holds the floor at: its deepest point and the samples around it, none once cleared
    below = runner.below_floor(x)
    lowest = clearance.floor_margin(design.trajectory(x).evaluate(grid)[0], 0.0).min(axis=1)
    assert lowest.min() < 0 and grid[np.argmin(lowest)] in below, below
    dips = np.flatnonzero(lowest < 0)
    held = np.flatnonzero(np.isin(grid, below))
    gap = np.abs(held[:, None] - dips[None, :])
    assert np.all(np.minimum(gap, grid.size - gap).min(axis=1) <= 16)  # each point held lies in or beside a dip
    assert runner.below_floor(fitted).size == 0


def _prepared_clearance(robot, home):
    clearance = Clearance.of(robot)
    clearance.prepare(home)
    return clearance


def _excite(*args):
    return run_dynid('excite', *args)


def test_cli_home_and_refusals_name_joint_limit_and_time(tmp_path):
    out = tmp_path / 'shifted.yaml'
    result = _excite('--home', '0.5,-1.5708,1.5708,-1.5708,-1.5708,0', '--harmonics', '3', '-o', str(out))
    assert result.returncode == 0, result.stderr
    assert 'home [rad]: [0.5, -1.5708' in result.stdout and '(--home)' in result.stdout
    assert 'floor at z = 0 m; link frames' in result.stdout
    bad = _excite('--home', '0,0', '-o', str(tmp_path / 'bad.yaml'))
    assert bad.returncode == 2 and 'needs 6 finite values' in bad.stderr and len(bad.stderr.splitlines()) == 1
    heavy = _excite('--torque-fraction', '0.1', '--harmonics', '3', '-o', str(tmp_path / 'heavy.yaml'))
    assert heavy.returncode == 2
    assert 'breaks its limits: model torque of shoulder_lift_joint reaches' in heavy.stderr
    assert ' at t = ' in heavy.stderr and '(limit 15 N·m)' in heavy.stderr
    assert not (tmp_path / 'bad.yaml').exists() and not (tmp_path / 'heavy.yaml').exists()
