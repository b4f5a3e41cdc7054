"""The robot the benchmarks' tests score on (the test suite's fixtures are ``test/``'s own)."""

import pytest

from dynid.model import load_robot


@pytest.fixture(scope='session')
def ur5e():
    return load_robot('ur5e')
