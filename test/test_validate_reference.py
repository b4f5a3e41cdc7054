"""validate's robot-file reference is fixed: the robot file's links with Coulomb + viscous friction and an offset
fitted on the identification's rows, whatever law the result chose."""

import numpy as np
import pytest

from builders import random_motion, twin_run
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.reference import fit_reference, plain_friction_rows
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import predict, validate
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters


@pytest.fixture(scope='module')
def runs():
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    return robot, twin_run(params, random_motion(robot, 3), 10.0, 3, rate_hz=500.0), \
        twin_run(params, random_motion(robot, 7), 6.0, 7, rate_hz=500.0)


def test_the_reference_does_not_move_with_the_law_chosen(runs, tmp_path):
    robot, train, held = runs
    results = {law: identify(robot, [RecordingInput(train)], ModelSpec(friction=law, exponent=0.5),
                             drives=robot.drives, options=IdentifyOptions('wls'))
               for law in ('viscous_coulomb', 'comprehensive')}
    metrics = {law: validate(result, robot, held, drives=robot.drives) for law, result in results.items()}
    mine = [m['robot_file']['rmse'] for m in metrics.values()]
    assert mine[0] == pytest.approx(mine[1], rel=1e-9)  # the same rows, the same reference
    laws = [r.prior_section['robot_file_reference']['friction'] for r in results.values()]
    assert laws == ['coulomb+viscous+offset'] * 2
    # it is what its docstring says: the file's links, the friction fitted per joint on the training rows
    saved = tmp_path / 'r.yaml'
    results['comprehensive'].save(saved)
    again = IdentificationResult.load(saved)
    assert again.robot_file_reference() == pytest.approx(results['comprehensive'].robot_file_reference())
    prediction = predict(again, robot, held, drives=robot.drives)
    assert np.sqrt(np.mean((prediction.measured - prediction.robot_file) ** 2)) == pytest.approx(
        metrics['comprehensive']['robot_file']['rmse'], rel=1e-9)


def test_the_reference_fits_only_the_friction_beside_the_file_links(runs):
    """On rows made of the file's links and a known Coulomb + viscous friction and offset, the fit recovers them."""
    robot, train, _ = runs
    result = identify(robot, [RecordingInput(train)], ModelSpec(), drives=robot.drives,
                      options=IdentifyOptions('wls'))
    prediction = predict(result, robot, train, drives=robot.drives)
    problem, w = prediction.problem, prediction.design
    n = robot.n
    rigid = w[:, :len(problem.rigid_names)]
    standard = np.zeros(problem.base.regrouping.shape[1])
    standard[:10 * n] = robot.standard_parameters
    truth = np.concatenate([np.linspace(1.0, 3.0, n), np.linspace(0.5, 2.0, n), np.linspace(-0.4, 0.4, n)])
    if problem.identify_rotor_inertia:
        standard[-n:] = robot.drives.rotor_inertia
    y = rigid @ (problem.base.regrouping @ standard) + plain_friction_rows(problem) @ truth
    fitted = fit_reference(problem, w, y)
    got = np.array([fitted[f'{s}_{j + 1}'] for s in ('Fc', 'Fv', 'tau0') for j in range(n)])
    assert got == pytest.approx(truth, abs=1e-6)
