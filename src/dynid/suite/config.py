"""config/suite.yaml composed of the per-job parameter files, so that no value is written twice.

ROS 2 parameter files have no include: the suite's file (suite.launch.py's default ``params_file``, one section
per node) is the sections of :data:`PARTS` one after the other under its own header, regenerated with

    python -m dynid.suite.config [--check]

after a part changes (``--check`` exits 1 where the shipped file differs; the test suite runs it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

#: the per-job files whose node sections make up the suite's, in order
PARTS = ('identification.yaml', 'estimation.yaml', 'feedforward.yaml')
HEADER = """\
# Parameters of the whole dynid suite (suite.launch.py; dynid bringup --params-file): one section per node.
# Generated from {parts} by `python -m dynid.suite.config`:
# change those, then run it.
# The backend files (ur.yaml, franka.yaml, gazebo.yaml) set only the backend's flags over the nodes' defaults.
"""
CONFIG = Path(__file__).resolve().parents[3] / 'config'


def _sections(text: str) -> str:
    """The file without its leading comment lines (its own header)."""
    lines = text.splitlines(keepends=True)
    start = next((k for k, line in enumerate(lines) if not line.startswith('#')), len(lines))
    return ''.join(lines[start:])


def compose(folder: Path = CONFIG) -> str:
    """The text of suite.yaml from the :data:`PARTS` in ``folder``."""
    return HEADER.format(parts=', '.join(PARTS)) + ''.join(_sections((folder / part).read_text()) for part in PARTS)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config', type=Path, default=CONFIG, help='the config folder (default: the checkout\'s)')
    parser.add_argument('--check', action='store_true', help='exit 1 where suite.yaml differs, write nothing')
    args = parser.parse_args(argv)
    fresh, path = compose(args.config), args.config / 'suite.yaml'
    if args.check:
        same = path.is_file() and path.read_text() == fresh
        if not same:
            print(f'{path} is not the composition of {", ".join(PARTS)}: run python -m dynid.suite.config',
                  file=sys.stderr)
        return 0 if same else 1
    path.write_text(fresh)
    return 0


if __name__ == '__main__':
    sys.exit(main())
