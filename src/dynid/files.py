"""Reading dynid's YAML files (robot, trajectory, result) with one-line errors for bad input."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from dynid.errors import InputError


def read_yaml(path: str | os.PathLike, kind: str):
    """The parsed content of the YAML file ``path``; InputError naming the ``kind`` of file otherwise."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text())
    except OSError as error:
        raise InputError(f'cannot read {kind} {path}: {error.strerror}') from None
    except yaml.YAMLError as error:
        raise InputError(f'{kind} {path} is not valid YAML: {str(error).splitlines()[0]}') from None
