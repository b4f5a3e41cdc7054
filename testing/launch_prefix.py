"""An ament prefix for dynid from this source tree, so launch files find it without ``colcon build``.

``ros2 launch`` and launch_ros find a package through the ament index: ``share/ament_index/
resource_index/packages/<name>`` under a prefix of ``AMENT_PREFIX_PATH``, its files under
``share/<name>`` and its executables under ``lib/<name>``. :func:`dynid_prefix` builds that layout
in a temporary folder: share/dynid links to this tree's ``launch/``, ``config/`` and ``package.xml``,
and ``lib/dynid/<executable>`` are scripts that run the node modules of ``src/`` with this Python.
Where dynid is already installed (a colcon workspace is sourced), the installed one is used.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXECUTABLES = ('sim_node', 'excitation_node', 'identifier_node', 'estimator_node', 'feedforward_node')


def add_prefix(prefix: Path) -> None:
    """Put ``prefix`` in front of AMENT_PREFIX_PATH (this process and the processes it launches)."""
    paths = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    os.environ['AMENT_PREFIX_PATH'] = os.pathsep.join([str(prefix), *paths])


def mark_package(prefix: Path, name: str) -> Path:
    """Register package ``name`` in the ament index under ``prefix``; returns its share folder."""
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True, exist_ok=True)
    (index / name).write_text('')
    share = prefix / 'share' / name
    share.mkdir(parents=True, exist_ok=True)
    return share


def dynid_prefix(prefix: Path) -> Path:
    """The ament layout of this source tree's dynid under ``prefix`` (see the module docstring)."""
    share = mark_package(prefix, 'dynid')
    for name in ('launch', 'config', 'package.xml'):
        if not (share / name).exists():
            (share / name).symlink_to(ROOT / name)
    lib = prefix / 'lib' / 'dynid'
    lib.mkdir(parents=True, exist_ok=True)
    for executable in EXECUTABLES:
        script = lib / executable
        script.write_text(f'#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT / "src")!r})\n'
                          f'from dynid.ros.runner import {executable}\n{executable}()\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return prefix


def ensure_dynid() -> None:
    """Make ``dynid`` findable in the ament index: installed, else a prefix from this tree."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    try:
        get_package_share_directory('dynid')
    except PackageNotFoundError:
        add_prefix(dynid_prefix(Path(tempfile.mkdtemp(prefix='launch_dynid_prefix_'))))
    source = str(ROOT / 'src')  # the launch files import dynid.ros.launching
    if source not in sys.path:
        sys.path.insert(0, source)
