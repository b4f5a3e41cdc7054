"""Physical consistency constrains the links, not the friction: ``--physical`` keeps the friction law (load terms on
τ_out iterated, a viscous exponent fixed), bounded where the law requires, and takes a rotor inertia held at a value."""

import dataclasses

import numpy as np
import pytest

from builders import random_motion, twin_run
from dynid.errors import InputError
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.solve.physical import PhysicalSettings
from dynid.identify.solve.prior import PhysicalLayout, non_negative_friction
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import predict
from dynid.model import load_robot
from dynid.sim.parameters import PlantParameters

ALWAYS = PhysicalSettings(consistency='always')


@pytest.fixture(scope='module')
def loaded_twin():
    """10 s of a random Fourier motion at 500 Hz of the twin with its full (load-dependent) friction, currents and
    motor encoders."""
    robot = load_robot('ur5e')
    params = PlantParameters.defaults(robot)
    return robot, twin_run(params, random_motion(robot, 3), 10.0, 3, rate_hz=500.0)


def _friction(result, symbol):
    return np.array([result.value(f'{symbol}_{j + 1}') for j in range(len(result.joint_names))])


def test_consistency_keeps_a_load_dependent_law_with_its_output_torque_settled(loaded_twin):
    robot, train = loaded_twin
    progress = []
    result = identify(robot, [RecordingInput(train)], ModelSpec(friction='load_squared'), drives=robot.drives,
                      options=IdentifyOptions('wls', physical=ALWAYS), progress=progress.append)
    assert result.model['friction'] == 'load_squared' and result.physical_section is not None
    assert result.prior_section['consistency']['physically_consistent']
    assert result.physical_section['mass_matrix']['positive_definite_percent'] == 100.0
    for symbol in ('Fc', 'Fv', 'Fl'):  # the law's bounds: friction that dissipates and grows with the load
        assert np.all(_friction(result, symbol) >= 0.0), symbol
    loops = [line for line in progress if line.startswith('consistent load loop')]
    assert loops and float(loops[-1].rsplit(' ', 1)[1]) < 1e-4  # τ_out settled on the consistent links
    # the load columns are those of the result's own τ_out: predicting its training recording gives its train fit
    again = predict(result, robot, train).metrics(robot.joint_names)
    assert again['relative_residual'] == pytest.approx(result.metrics['train']['relative_residual'], rel=1e-3)


def test_a_power_law_bounds_the_friction_at_the_slowest_speed_kept():
    """fc_j + ω_s^α_j·fv_j ≥ 0 for Li's law: the unknown bounded in place of fc_j (values = to_base @ unknowns)."""
    names = ['a', 'fc_1', 'fc_2', 'fv_1', 'fv_2', 'fo_1', 'fo_2']
    floor = np.array([0.02 ** 0.2, 0.02 ** 1.0])
    layout = PhysicalLayout.of(np.ones((1, 1)), 0, False, names, 1, coulomb_floor=floor,
                               non_negative=non_negative_friction('comprehensive'))
    z = np.array([0.7, 0.0, 0.5, 40.0, 3.0, 1.0, -1.0])  # fc_1's unknown at its bound 0
    values = layout.to_base @ z
    fc, fv = values[1:3], values[3:5]
    assert fc[0] == pytest.approx(-floor[0] * 40.0) and fc[0] + floor[0] * fv[0] == pytest.approx(0.0)
    assert fc[1] + floor[1] * fv[1] == pytest.approx(0.5)
    assert sorted(layout.non_negative.tolist()) == [1, 2, 3, 4]  # fc_j's unknowns and fv_j; the offsets free
    plain = PhysicalLayout.of(np.ones((1, 1)), 0, False, names, 1)
    assert np.array_equal(plain.to_base, np.eye(len(names)))


def test_consistency_takes_a_rotor_inertia_held_but_not_a_link(loaded_twin):
    """A left-out joint's rotor inertia (only its equations hold it) is held at the drive data's value: a bounded
    scalar, not a link, so a consistent identification keeps it; a link parameter held is still refused."""
    robot, train = loaded_twin
    no_encoders = dataclasses.replace(train, theta=None)
    result = identify(robot, [RecordingInput(no_encoders)], ModelSpec(exclude_joints=('wrist_3_joint',)),
                      drives=robot.drives, options=IdentifyOptions('wls', physical=ALWAYS))
    entry = result.model['held']['Ia_6']
    assert entry['value'] == pytest.approx(robot.drives.rotor_inertia[5])
    assert result.value('Ia_6') == entry['value'] and result.physical_section is not None
    assert result.prior_section['consistency']['physically_consistent']
    with pytest.raises(InputError, match='link parameters held at a value'):
        identify(robot, [RecordingInput(no_encoders)], ModelSpec(exclude_joints=('shoulder_pan_joint',)),
                 drives=robot.drives, options=IdentifyOptions('wls', physical=ALWAYS))
