"""Shared fixtures: the three robots of the test suite (built-in UR5e, example-robot-data UR5, Panda), an
arm without drive data, a data directory and a ROS log directory of the test session's own (the health
record's default place, rclpy's log files), a ROS domain id no other test run on this machine uses
(``ros_domain``, dds_helpers.claim_domain), and the health record's backends (``server``: a real PostgreSQL server
per module; ``target``: a record on SQLite and on it). ``--core``: the core's tests alone (``CORE_ONLY``)."""

import os
import re

import pytest

from dynid.model import RobotModel, load_robot
from dynid.model.robots import example_robot_path
from record_backends import REASON, needs_postgres
from testing import pg_server

#: the fixtures of the tests that run nodes over DDS (their own processes or this one's executor, in real time)
DDS_FIXTURES = frozenset({'ros_domain', 'module_ros_domain', 'ros_context'})

#: ``--core``: the tests of the core, everything but the nodes (the suite .ci/run also runs on Ubuntu 24.04's library
#: versions, where no ROS is installed): every test module but those that import a ROS package, dynid's ROS side
#: (``dynid.ros``, ``dynid.nodes``, ``dynid.suite``) or the helpers of the tests over DDS, or take a DDS fixture
CORE_ONLY = re.compile(
    r'^\s*(?:import|from)\s+(?:rclpy|ament_index_python|launch\w*|\w+_msgs|std_srvs|rcl_interfaces|'
    r'builtin_interfaces|dynid\.(?:ros|nodes|suite)|dds_helpers|(?:testing\.)?launch_\w+|sim_probe|stamp_publisher|'
    r'vendor_stand_ins)\b|\b(?:' + '|'.join(DDS_FIXTURES) + r')\b', re.M)


def pytest_addoption(parser):
    parser.addoption('--core', action='store_true',
                     help='only the core\'s tests: the modules that import no ROS package (conftest.CORE_ONLY)')


def pytest_ignore_collect(collection_path, config):
    """With ``--core``, the test modules of the ROS side are not collected (:data:`CORE_ONLY`)."""
    if config.getoption('--core') and collection_path.suffix == '.py' and collection_path.name.startswith('test_'):
        return True if CORE_ONLY.search(collection_path.read_text(encoding='utf-8')) else None
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the groups
def pytest_collection_modifyitems(config, items):
    """The groups of ``--dist loadgroup`` (pytest.ini: two workers): the tests over DDS are one group, run one after
    another in one worker, never two at once (their waits are set for a machine that runs one of them, with one
    core kept busy, as CI does); every other module is a group of its own, run whole in either worker (its module
    fixtures built once). A module that names its group (``pytestmark``) keeps it."""
    for item in items:
        if item.get_closest_marker('xdist_group') is not None:
            continue
        dds = not DDS_FIXTURES.isdisjoint(item.fixturenames)
        item.add_marker(pytest.mark.xdist_group('dds' if dds else item.nodeid.split('::', 1)[0]))


@pytest.fixture(scope='session')
def ur5e():
    return load_robot('ur5e')


@pytest.fixture(scope='session')
def ur5():
    return load_robot('ur5')


@pytest.fixture(scope='session')
def bare_arm():
    """example-robot-data's UR5 URDF read as it is: no drive data (load_robot would give it the built-in's)."""
    return RobotModel.from_urdf(str(example_robot_path('ur_description/urdf/ur5_robot.urdf')))


@pytest.fixture(scope='session')
def panda():
    return load_robot('panda')


@pytest.fixture(scope='session')
def excited_ur5e_bag(tmp_path_factory):
    """10 s of the UR5e's shipped excitation on the twin at 250 Hz, as a bag (the registered strategies' tests)."""
    from cli_run import run_dynid
    from dynid.excite.trajectory import builtin_excitation_path

    path = tmp_path_factory.mktemp('excited') / 'excited'
    done = run_dynid('simulate', '--trajectory', builtin_excitation_path('ur5e'), '--duration', '10', '--rate', '250',
                     '-o', path, '--quiet')
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope='session', params=['ur5e', 'ur5', 'panda'])
def robot(request):
    return load_robot(request.param)


@pytest.fixture(scope='session', autouse=True)
def data_home(tmp_path_factory):
    """XDG_DATA_HOME of the tests and the processes they start: ``dynid estimate`` and estimator_node append to
    the health record under it by default, and a test run must not write into the user's."""
    previous = os.environ.get('XDG_DATA_HOME')
    os.environ['XDG_DATA_HOME'] = str(tmp_path_factory.mktemp('data_home'))
    yield os.environ['XDG_DATA_HOME']
    if previous is None:
        os.environ.pop('XDG_DATA_HOME', None)
    else:
        os.environ['XDG_DATA_HOME'] = previous


@pytest.fixture(scope='session', autouse=True)
def ros_log_dir(tmp_path_factory):
    """ROS_LOG_DIR of the tests and the processes they start: every rclpy.init writes a log file, by default
    under ~/.ros/log, and a test run must not write into the user's home."""
    previous = os.environ.get('ROS_LOG_DIR')
    os.environ['ROS_LOG_DIR'] = str(tmp_path_factory.mktemp('ros_log'))
    yield os.environ['ROS_LOG_DIR']
    if previous is None:
        os.environ.pop('ROS_LOG_DIR', None)
    else:
        os.environ['ROS_LOG_DIR'] = previous


def _claimed_domain():
    from dds_helpers import claim_domain, release_domain  # rclpy-free tests need not load ROS messages

    domain = claim_domain()
    yield domain
    release_domain(domain)


@pytest.fixture
def ros_domain():
    """A ROS domain id of this test alone on this machine (dds_helpers.claim_domain), given back after it."""
    yield from _claimed_domain()


@pytest.fixture(scope='module')
def module_ros_domain():
    """A ROS domain id of this test module alone on this machine, for module-scoped set-ups."""
    yield from _claimed_domain()


@pytest.fixture
def ros_context(ros_domain):
    """An rclpy context on this test's own domain (:func:`ros_domain`), localhost only, shut down after it."""
    import rclpy  # here: tests without ROS need not load it

    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    yield context
    rclpy.shutdown(context=context)


# ------------------------------------------------------------------------------ the health record's backends
@pytest.fixture(scope='module')
def server():
    """A real PostgreSQL server for the module's tests (testing/pg_server.py), or the test skipped by the reason
    there is none."""
    if REASON:
        pytest.skip(REASON)
    running = pg_server.Server()
    yield running
    running.close()


@pytest.fixture(params=['sqlite', pytest.param('postgresql', marks=needs_postgres)])
def target(request, tmp_path):
    """A record on each backend: an SQLite file, or a fresh database on the module's server."""
    if request.param == 'sqlite':
        return str(tmp_path / 'health.sqlite3')
    return request.getfixturevalue('server').database(request.node.name.replace('[', '_').replace(']', '')[:60])
