"""Reading dynid's YAML files (robot, trajectory, result) with one-line errors for bad input; digests of input files."""

from __future__ import annotations

import hashlib
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


def file_sha256(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes (read in pieces of 1 MiB: recordings may be large)."""
    digest = hashlib.sha256()
    with Path(path).open('rb') as stream:
        for piece in iter(lambda: stream.read(1 << 20), b''):
            digest.update(piece)
    return digest.hexdigest()


def input_files(path: str | os.PathLike) -> list[dict]:
    """Every file of an input (a file, or a folder such as a rosbag2 directory, walked in sorted order) as
    ``{path, bytes, sha256}``; InputError when it cannot be read."""
    root = Path(path)
    try:
        files = [root] if root.is_file() else sorted(p for p in root.rglob('*') if p.is_file())
        if not root.exists():
            raise FileNotFoundError(2, 'no such file or directory')
        return [{'path': str(p), 'bytes': p.stat().st_size, 'sha256': file_sha256(p)} for p in files]
    except OSError as error:
        raise InputError(f'cannot read {root}: {error.strerror or error}') from None
