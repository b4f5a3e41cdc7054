"""Files of other installed packages, found wherever the package is installed.

example-robot-data (the ``ur5`` and ``panda`` built-ins, their meshes) is installed in several ways, each
putting its ``robots/`` folder somewhere else: pip's wheel under ``<site-packages>/cmeel.prefix/share/
example-robot-data/robots`` of whichever site folder pip chose (a virtual environment, the user's site
folder with ``pip install --user``, a folder a ``.pth`` file or ``--system-site-packages`` adds), ROS's or
robotpkg's package under ``<prefix>/share/example-robot-data/robots``. The look-up asks, in order:

1. the package's own look-up, where its Python module is installed (``example_robot_data.getModelPath``:
   example-robot-data-loaders on pip, the module ROS's and robotpkg's packages install);
2. the installed distribution's own file list (``importlib.metadata``: every site folder on ``sys.path``);
3. each ``sys.path`` entry: ``<entry>/cmeel.prefix/share/...`` and, for a prefix's
   ``lib/pythonX.Y/site-packages``, ``<prefix>/share/...``;
4. the ament index: ``<prefix>/share/example-robot-data/robots`` of each prefix of ``AMENT_PREFIX_PATH``.

This module needs nothing but the standard library.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from importlib import metadata
from pathlib import Path

from dynid.errors import InputError

#: the folder of example-robot-data's robots under an install prefix
EXAMPLE_ROBOT_DATA_ROBOTS = Path('share') / 'example-robot-data' / 'robots'
#: where pip's (cmeel) wheels put an install prefix inside a site folder
CMEEL_PREFIX = 'cmeel.prefix'


def example_robot_path(relative: str) -> Path:
    """Path of example-robot-data's file ``robots/<relative>`` (e.g. ``ur_description/urdf/ur5_robot.urdf``),
    wherever the package is installed (module docstring).

    Raises:
        InputError: no installation holds the file; the line says where it looked and how to install it.
    """
    for folder in _robots_folders(relative):
        candidate = folder / relative
        if candidate.is_file():
            return candidate
    prefixes = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    raise InputError(f'example-robot-data is not installed (needed for {relative}; looked through its Python module, '
                     f'the installed distributions, {len(sys.path)} sys.path entries and {len(prefixes)} '
                     f'AMENT_PREFIX_PATH prefixes): pip install example-robot-data, or install ROS\'s '
                     f'example-robot-data and source its setup file')


def _robots_folders(relative: str):
    """Candidate ``robots/`` folders of example-robot-data, in the order of the module docstring."""
    own = _own_lookup(relative)
    if own is not None:
        yield own
    yield from _distribution_folders()
    for entry in sys.path:
        if not entry:
            continue
        site = Path(entry)
        yield site / CMEEL_PREFIX / EXAMPLE_ROBOT_DATA_ROBOTS
        if len(site.parts) > 3 and site.parent.name.startswith('python') and site.parents[1].name in ('lib', 'lib64'):
            yield site.parents[2] / EXAMPLE_ROBOT_DATA_ROBOTS
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        if prefix:
            yield Path(prefix) / EXAMPLE_ROBOT_DATA_ROBOTS


def _own_lookup(relative: str) -> Path | None:
    """The robots folder example-robot-data's own Python module finds, or None where it is not installed or does
    not find the file (it imports pinocchio, which the robots need anyway)."""
    if importlib.util.find_spec('example_robot_data') is None:
        return None
    try:
        from example_robot_data import getModelPath

        return Path(getModelPath(relative))
    except (ImportError, OSError, AttributeError, TypeError):  # an older module, or the file is not there
        return None


def _distribution_folders() -> list[Path]:
    """The robots folders the installed example-robot-data distributions list among their files (one per site
    folder that holds one)."""
    folders = []
    marker = EXAMPLE_ROBOT_DATA_ROBOTS.as_posix() + '/'
    for distribution in metadata.distributions(name='example-robot-data'):
        for file in distribution.files or ():
            text = file.as_posix()
            if marker in text:
                folders.append(Path(distribution.locate_file(text[:text.index(marker) + len(marker) - 1])))
                break
    return folders
