"""The twin as a driver without ROS (dynid.sim.driver, sim_node's core): the samples due on the clock with their
stamps and each topic's fields, trajectories and forward commands taken and counted, refusals counted, a reset."""

import numpy as np
import pytest

from dynid.sim.driver import COMMANDS, DriverTwin
from dynid.sim.parameters import PlantParameters
from dynid.sim.twin import DigitalTwin
from dynid.sim.ur_modes import URDriverSide

RATE = 250.0
MS = 1_000_000  # ns


@pytest.fixture
def driver(ur5e):
    params = PlantParameters.of_twin(ur5e, None, noise=False)
    return DriverTwin(DigitalTwin(params, rate_hz=RATE, seed=0), URDriverSide(params, 'current', None, False),
                      RATE, now_ns=1000 * MS)


def test_a_burst_holds_the_samples_due_with_their_stamps_and_each_topics_fields(driver):
    assert driver.burst(1000 * MS) is None  # none due at the start
    stamps, topics = driver.burst(1020 * MS)  # 20 ms at 250 Hz: 5 samples, stamped 4 ms apart after the start
    np.testing.assert_array_equal(stamps, 1000 * MS + 4 * MS * np.arange(1, 6))
    assert set(topics) == {'joint_states', 'motor_states', 'joint_currents', 'joint_temperatures'}
    assert set(topics['joint_states']) == {'position', 'velocity', 'effort'}
    # joint_states' effort as the driver publishes it: here the motor current, as joint_currents' effort
    np.testing.assert_array_equal(topics['joint_states']['effort'], topics['joint_currents']['effort'])
    assert topics['joint_states']['position'].shape == (5, 6) and driver.counters['samples'] == 5
    stamps, _ = driver.burst(10_000 * MS)  # far behind: at most CATCH_UP_S of samples, counted as late
    assert stamps.size == 25 and driver.counters['late_callbacks'] == 1


def test_commands_and_trajectories_are_taken_and_counted_and_refusals_named(driver):
    before = driver.twin.plant.state.q.copy()
    driver.command('position_commands', before + 0.01)
    driver.command('effort_commands', np.full(6, 0.5))
    assert driver.counters['position_commands'] == driver.counters['effort_commands'] == 1
    np.testing.assert_array_equal(driver.ur.command, np.full(6, 0.5))  # held as the robot applies it
    assert driver.rejected('velocity_commands') == 'velocity command'
    assert driver.rejected('trajectories') == 'trajectory'
    assert driver.counters['rejected_velocity_commands'] == driver.counters['rejected_trajectories'] == 1
    assert {kind for kind, _ in COMMANDS.values()} <= set(driver.counters)
    driver.follow(None, None, 0)  # an empty trajectory: the reference holds, nothing counted
    assert driver.counters['trajectories'] == 0
    driver.burst(1100 * MS)
    driver.reset(2000 * MS)  # back to the start, the clock from now
    assert driver.twin.samples == 0 and driver.burst(2000 * MS) is None
    np.testing.assert_allclose(driver.twin.plant.state.q, before)
