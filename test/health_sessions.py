"""Sessions of a test arm and a check of the health record that the SQLite and the PostgreSQL tests share."""

import numpy as np

from dynid.health.record import Event, HealthRecord, JointSession, Session

JOINTS = ('a', 'b', 'c')


def session(k: int, robot: str = 'cell-1', joints=JOINTS) -> Session:
    return Session(robot, 'test-arm', joints, 1.7e9 + 86400.0 * k,
                   tuple(JointSession(j, temperature_c=20.0 + k, stiffness=4e4 - k, stiffness_std=10.0,
                                      friction_scale=1.0 + 0.01 * k, samples=30000) for j in joints),
                   duration_s=30.0, source='test', input=f'session {k}')


def assert_some_robots_read_as_in_the_whole_fleet(target) -> None:
    """Three robots' sessions and events written interleaved into ``target`` (a file or URL): the histories of some
    of them, read alone (their rows only), equal theirs read with the whole fleet's."""
    with HealthRecord(target) as record:
        for k in range(4):
            for robot in ('cell-1', 'cell-2', 'cell-3'):
                record.append(session(k + (robot == 'cell-2'), robot=robot))
        record.add_event('cell-2', Event('gearbox_swap', 1.7e9 + 86400.0 * 2.5, 'c', 'new gear'))
        record.add_event('cell-3', Event('collision', 1.7e9 + 86400.0 * 1.5, 'a', 'bumped'))
    with HealthRecord(target, readonly=True) as record:
        every = {h.robot: h for h in record.histories()}
        some = record.histories(['cell-3', 'cell-2'])
        assert record.histories([]) == []
    assert [h.robot for h in some] == ['cell-3', 'cell-2']
    for alone in some:
        whole = every[alone.robot]
        assert len(alone) == 4 and alone.events == whole.events and alone.events
        assert alone.joint_names == whole.joint_names and alone.conditions.keys() == whole.conditions.keys()
        for name in ('session_id', 'started_utc', 'duration_s', 'operating_hours'):
            np.testing.assert_array_equal(getattr(alone, name), getattr(whole, name), err_msg=name)
        for column, values in whole.values.items():
            np.testing.assert_array_equal(alone.values[column], values, err_msg=column)
    np.testing.assert_array_equal(some[1].values['stiffness'][:, 0], [4e4 - 1, 4e4 - 2, 4e4 - 3, 4e4 - 4])
