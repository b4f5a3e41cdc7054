"""Shared fixtures: the three robots of the test suite (built-in UR5e, example-robot-data UR5, Panda)."""

import pytest

from dynid.model import load_robot


@pytest.fixture(scope='session')
def ur5e():
    return load_robot('ur5e')


@pytest.fixture(scope='session')
def ur5():
    return load_robot('ur5')


@pytest.fixture(scope='session')
def panda():
    return load_robot('panda')


@pytest.fixture(scope='session', params=['ur5e', 'ur5', 'panda'])
def robot(request):
    return load_robot(request.param)
