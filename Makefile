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

.PHONY: demo test lint docs bench clean

$(STAMP): requirements.txt setup.py setup.cfg package.xml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else \
	  "dynid needs Python 3.11 (the ROS 2 Kilted wheels are cp311); set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade 'pip>=23.2'
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

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
	@set -e; for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script; done

clean:
	rm -rf $(VENV) build install log src/*.egg-info docs/_build docs/_autosummary
