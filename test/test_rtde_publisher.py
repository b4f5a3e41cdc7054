"""Recordings of UR's RTDE publisher joined by the RTDE timestamp into the contract's streams (dynid.io.rtde).

A twin recording with a 2 kg tool is written as ``ros2 bag record /rtde/...`` keeps the publisher's topics
(Float64MultiArray without a header, ``timestamp`` as builtin_interfaces/Time, the payload set on the robot)
with UR's gravity-compensated ``actual_current_as_torque``; read without flags, it gives the twin's q, q̇,
current and temperatures on the controller's clock and K·i (the gravity added back with the
recorded payload), read as the drive torque it is: through the drive gains, as the current.
"""

import numpy as np
import pytest

from dynid.cli.reading import read_bag as read_for_commands
from dynid.excite.trajectory import builtin_excitation_path
from dynid.io.bag import read_bag
from dynid.io.gravity_restore import payload_record
from dynid.io.rtde import join_into, join_packages, write_rtde
from dynid.model import Payload
from dynid.sim.recording import SimulationSettings, simulate_recording
from dynid.sim.ur_modes import driver_effort

TOOL = Payload(2.0, [0.0, 0.0, 0.05])


@pytest.fixture(scope='module')
def twin(ur5e, tmp_path_factory):
    folder = tmp_path_factory.mktemp('rtde')
    bag = simulate_recording(ur5e, folder / 'twin', builtin_excitation_path('ur5e'),
                             SimulationSettings(duration_s=6.0, rate_hz=250.0, seed=5, payload_kg=2.0), quiet=True)
    return folder, read_bag(bag, ur5e.joint_names)


def test_an_rtde_recording_reads_into_the_contract_without_flags(twin, ur5e):
    folder, dataset = twin
    field = driver_effort(ur5e, 'gravity_compensated_torque', dataset.q, None, dataset.current, TOOL)
    bag = write_rtde(folder / 'rtde', dataset, payload_record(TOOL), tau=field)
    read = read_for_commands(bag, ur5e, None)
    assert read.source['rtde'] and read.source['effort_as_recorded'] == 'gravity_compensated_torque'
    np.testing.assert_allclose(read.t, dataset.t, atol=2e-9)  # the controller's clock, from its first package
    for name in ('q', 'dq', 'temperature'):
        np.testing.assert_array_equal(getattr(read, name), getattr(dataset, name), err_msg=name)
    # actual_current_as_torque with its gravity added back is K·i: read as the motor current (actual_current)
    np.testing.assert_allclose(read.current, dataset.current, atol=1e-9)
    assert read.source['robot_payload']['mass'] == 2.0
    assert read.source['payload_set_check']['warning'] is None


def test_packages_are_joined_by_timestamp_not_by_arrival_count():
    timestamps = [(1000, 10.000), (3000, 10.002), (5000, 10.004)]
    arrays = {'q': [(1100, [1.0] * 6), (3100, [2.0] * 6), (3200, [9.0] * 6), (5100, [3.0] * 6)],
              'dq': [(1200, [0.1] * 6), (5200, [0.3] * 6)]}  # the second package lost its q̇
    times, logs, values = join_packages(timestamps, arrays)
    np.testing.assert_allclose(times, [10.0, 10.004])
    np.testing.assert_array_equal(logs, [1000, 5000])
    np.testing.assert_array_equal(values['q'][:, 0], [1.0, 3.0])
    _, _, values = join_packages(timestamps, {**arrays, 'dq': [(1200, [0.1] * 6), (3300, [0.2] * 6),
                                                               (5200, [0.3] * 6)]})
    np.testing.assert_array_equal(values['q'][:, 0], [1.0, 2.0, 3.0])  # the first q of a package wins


def test_packages_held_onto_joint_states_stamps():
    times = np.array([5.0, 5.1, 5.2])
    logs = np.array([1_000_000_000, 1_100_000_100, 1_200_000_000])  # log = controller time − 4 s (+ jitter)
    values = {'temperature': np.array([[30.0] * 6, [31.0] * 6, [32.0] * 6])}
    stamps = np.array([950_000_000, 1_050_000_000, 1_150_000_000, 1_250_000_000])
    held = join_into(stamps, times, logs, values)['temperature'][:, 0]
    assert np.isnan(held[0])
    np.testing.assert_array_equal(held[1:], [30.0, 31.0, 32.0])
