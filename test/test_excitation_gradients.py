"""Analytic gradients of the excitation criteria (issue 15) against finite differences; the optimizer's
options (analytic or finite-difference gradient, forked workers) give what they promise."""

import numpy as np
import pytest

from dynid.errors import InputError
from dynid.excite.fourier import FourierDesign, default_limits, random_design
from dynid.excite.gradients import CriterionGradient
from dynid.excite.optimize import excitation_criterion, optimize_excitation
from dynid.model import load_robot
from dynid.sim.twin import home_configuration

# Central differences with step 1e-6 on O(1) variables are good to ~1e-8 relative; the analytic
# gradient must agree to 1e-6 of the gradient's largest component.
RELATIVE = 1e-6


def _central_difference(function, x, step=1e-6):
    gradient = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = step
        gradient[i] = (function(x + e) - function(x - e)) / (2 * step)
    return gradient


def _design_and_point(robot, joint_names, seed=3):
    home = home_configuration(robot)
    design = FourierDesign(joint_names, 3, 6.0)
    home_in_design = home[[robot.joint_names.index(name) for name in joint_names]]
    limits = default_limits(robot, home)
    order = [robot.joint_names.index(name) for name in joint_names]
    limits_in_design = type(limits)(limits.position_low[order], limits.position_high[order],
                                    limits.velocity[order], limits.acceleration[order])
    x = random_design(design, home_in_design, limits_in_design, np.random.default_rng(seed),
                      np.linspace(0.0, 6.0, 400, endpoint=False))
    return design, x


@pytest.mark.parametrize('criterion', ['cond', 'weighted', 'd_optimal'])
def test_gradient_matches_finite_differences(robot, criterion):
    design, x = _design_and_point(robot, robot.joint_names)
    times = np.linspace(0.0, design.period_s, 30, endpoint=False)
    model = CriterionGradient(robot, design, times, criterion, weights=(1.0, 0.5))
    gradient = model.gradient(x)
    reference = _central_difference(model.value, x)
    assert np.abs(gradient - reference).max() <= RELATIVE * np.abs(reference).max()
    # The value is the landed criterion (log of it for the condition numbers).
    value = excitation_criterion(robot, design.trajectory(x), times, criterion, (1.0, 0.5))
    assert model.value(x) == pytest.approx(value if criterion == 'd_optimal' else np.log(value), rel=1e-12)


def test_gradient_follows_the_design_joint_order():
    robot = load_robot('ur5e')
    names = tuple(reversed(robot.joint_names))
    design, x = _design_and_point(robot, names)
    model = CriterionGradient(robot, design, np.linspace(0.0, design.period_s, 30, endpoint=False))
    reference = _central_difference(model.value, x)
    assert np.abs(model.gradient(x) - reference).max() <= RELATIVE * np.abs(reference).max()


def test_optimizer_options(ur5e):
    home = home_configuration(ur5e)
    limits = default_limits(ur5e, home)
    design = FourierDesign(ur5e.joint_names, 3, 6.0)
    settings = dict(starts=2, seed=4, max_iterations=8)
    one = optimize_excitation(ur5e, design, home, limits, **settings)
    forked = optimize_excitation(ur5e, design, home, limits, workers=2, **settings)
    np.testing.assert_array_equal(one.trajectory.sine, forked.trajectory.sine)  # same starts, same winner
    assert one.feasible and one.iterations == forked.iterations
    landed = optimize_excitation(ur5e, design, home, limits, gradient='finite_difference', **settings)
    assert landed.feasible
    with pytest.raises(InputError, match='gradient'):
        optimize_excitation(ur5e, design, home, limits, gradient='exact', **settings)
    with pytest.raises(InputError, match='workers'):
        optimize_excitation(ur5e, design, home, limits, workers=0, **settings)
