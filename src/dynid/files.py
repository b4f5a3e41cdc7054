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


def write_folder_whole(folder: str | os.PathLike, files: dict[str, str | bytes]) -> Path:
    """Write ``files`` ({relative path: text or bytes}) as the folder ``folder``, whole or not at all: into a
    temporary sibling first, which then takes the folder's place (an existing folder of that name is replaced
    only once the new one is complete). InputError naming the folder when it cannot be written."""
    import shutil
    import tempfile

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise InputError(f'{folder} is a file, not a folder')
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f'.{folder.name}.partial-', dir=folder.parent))
    except OSError as error:
        raise InputError(f'cannot write {folder}: {error.strerror or error}') from None
    try:
        for relative, content in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding='utf-8')
        old = None
        if folder.exists():
            old = folder.with_name(f'.{folder.name}.old-{staging.name.rsplit("-", 1)[-1]}')
            folder.rename(old)
        staging.rename(folder)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise InputError(f'cannot write {folder}: {error.strerror or error}') from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder
