"""Reading a bag never needs dynid's rosbags type store unless the bag lacks its message definitions."""

import json
import sqlite3
import subprocess
import sys

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer

from dynid.io.bag import JOINT_STATE, read_bag, write_bag
from dynid.io.cdr import decode_joint_states, joint_state_cdr, names_of, typestore
from dynid.io.dataset import Dataset

JOINTS = ('shoulder', 'elbow', 'wrist_é')  # a name of more than one UTF-8 byte


def _dataset(samples=50):
    random = np.random.default_rng(3)
    return Dataset(JOINTS, np.arange(samples) / 1000.0,
                   **{name: random.normal(size=(samples, 3)) for name in ('q', 'dq', 'tau')})


def test_reading_an_mcap_bag_builds_no_type_store(tmp_path):
    dataset = _dataset()
    write_bag(tmp_path / 'bag', dataset)
    script = ('import json, sys; from dynid.io.bag import read_bag; from dynid.io.cdr import typestore; '
              f'd = read_bag({str(tmp_path / "bag")!r}); '
              'print(json.dumps([typestore.cache_info().currsize, "rosbags.typesys.stores.ros2_kilted" in sys.modules, '
              'list(d.joint_names), d.q.tolist(), d.tau.tolist()]))')
    out = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, check=True, timeout=120)
    built, imported, names, q, tau = json.loads(out.stdout.splitlines()[-1])
    assert (built, imported) == (0, False)
    assert names == list(JOINTS)
    assert np.array_equal(q, dataset.q) and np.array_equal(tau, dataset.tau)


def test_sqlite3_bag_without_definitions_is_read_with_the_kilted_store(tmp_path):
    dataset = _dataset()
    path = tmp_path / 'old'
    with Writer(path, version=9, storage_plugin=StoragePlugin.SQLITE3) as writer:
        connection = writer.add_connection('/joint_states', JOINT_STATE, typestore=typestore())
        for k, stamp in enumerate(np.round(dataset.t * 1e9).astype(int)):
            writer.write(connection, int(stamp), joint_state_cdr(int(stamp), JOINTS, dataset.q[k], dataset.dq[k],
                                                                 dataset.tau[k]))
    with sqlite3.connect(next(path.glob('*.db3'))) as database:  # as rosbag2 before Jazzy wrote them
        database.execute('DELETE FROM message_definitions')
    read = read_bag(path)
    assert read.joint_names == JOINTS
    for name in ('t', 'q', 'dq', 'tau'):
        assert np.array_equal(getattr(read, name), getattr(dataset, name)), name


def test_names_and_mixed_batches_decode_as_rosbags_deserializes():
    names = ['a', 'bb', 'ccc', 'dddd', 'é']  # every string length modulo 4, and a 2-byte character
    raws = [joint_state_cdr(7_000_000_123, names, np.arange(5.0), [], np.arange(5.0) * 2),
            joint_state_cdr(8_000_000_000, names[::-1], np.arange(5.0) + 1, np.ones(5), [])]
    for raw in raws:
        message = typestore().deserialize_cdr(raw, JOINT_STATE)
        assert names_of(raw) == list(message.name)
    stamps, values, skipped = decode_joint_states(raws, ['é', 'a'])  # two layouts: one message at a time
    assert skipped == 0 and stamps.tolist() == [7_000_000_123, 8_000_000_000]
    assert np.array_equal(values['position'], [[4.0, 0.0], [1.0, 5.0]])
    assert np.isnan(values['velocity'][0]).all() and np.array_equal(values['velocity'][1], [1.0, 1.0])
    assert np.array_equal(values['effort'][0], [8.0, 0.0]) and np.isnan(values['effort'][1]).all()
    broken = bytearray(raws[0])
    broken[broken.index(b'\xc3\xa9')] = 0xFF  # the name is no longer UTF-8: rosbags refuses it, so do we
    assert decode_joint_states([bytes(broken), raws[1]], ['a'])[2] == 1
