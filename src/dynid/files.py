"""Reading dynid's YAML files (robot, trajectory, result) with one-line errors for bad input; digests of input
files; every output written whole or not at all (:func:`written`, :func:`write_text`)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import yaml

from dynid.errors import InputError

#: libyaml's safe loader and dumper where PyYAML was built with it (5–10× faster, the same documents), else PyYAML's.
FAST_LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
FAST_DUMPER = getattr(yaml, 'CSafeDumper', yaml.SafeDumper)


class YAMLLoader(FAST_LOADER):
    """:data:`FAST_LOADER` that also reads ``2e-05`` and ``1E3`` as numbers, as YAML 1.2 does (YAML 1.1, PyYAML's
    dialect, needs a dot in the mantissa and reads them as text: a robot file's inertia would hold strings)."""


YAMLLoader.add_implicit_resolver('tag:yaml.org,2002:float', re.compile(r'^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$'),
                                 list('-+0123456789'))


def load_yaml(text: str):
    """The content of the YAML ``text`` (:class:`YAMLLoader`: safe, numbers as YAML 1.2 reads them)."""
    return yaml.load(text, Loader=YAMLLoader)


def dump_yaml(data) -> str:
    """``yaml.safe_dump(data, sort_keys=False, allow_unicode=True)``'s text, by :data:`FAST_DUMPER`."""
    return yaml.dump(data, Dumper=FAST_DUMPER, sort_keys=False, allow_unicode=True)


def read_yaml(path: str | os.PathLike, kind: str):
    """The parsed content of the YAML file ``path``; InputError naming the ``kind`` of file otherwise."""
    path = Path(path)
    try:
        return load_yaml(path.read_text())
    except OSError as error:
        raise InputError(f'cannot read {kind} {path}: {error.strerror}') from None
    except yaml.YAMLError as error:
        raise InputError(f'{kind} {path} is not valid YAML: {str(error).splitlines()[0]}') from None
    except (UnicodeDecodeError, ValueError) as error:  # not text, or YAML with a number Python cannot hold
        raise InputError(f'{kind} {path} is not a YAML text file ({error})') from None


def yaml_header(path: str | os.PathLike) -> dict:
    """The top-level entries of the YAML file ``path`` whose values are scalars (the keys a kind of file is told by:
    ``dynid_result``, ``kind``); {} where it cannot be read, is not YAML or is not a mapping. Parsed once for each
    state of the file (its size and modification time), however many readers ask."""
    try:
        state = os.stat(path)
    except (OSError, ValueError):
        return {}
    return dict(_scalar_entries(str(Path(path).resolve()), state.st_size, state.st_mtime_ns))


@functools.lru_cache(maxsize=8)
def _scalar_entries(path: str, size: int, modified_ns: int) -> tuple:
    try:
        data = load_yaml(Path(path).read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError, ValueError):
        return ()
    if not isinstance(data, dict):
        return ()
    return tuple((key, value) for key, value in data.items() if isinstance(value, str | int | float | bool | None))


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


#: Suffix of the hidden staging folders outputs are written in before they are renamed into place.
STAGING_SUFFIX = '.partial'


@contextlib.contextmanager
def written(path: str | os.PathLike) -> Iterator[Path]:
    """An output (a file or a folder) written whole or not at all.

    Yields a path of the same name inside a hidden staging folder beside ``path`` (same file system, so the
    rename cannot copy). The caller writes a file or builds a folder there. When the block ends, a file is
    renamed onto ``path`` (replacing an older file in one step); a folder is renamed onto ``path`` when
    ``path`` does not exist, else its entries are renamed into the existing folder one by one (each whole;
    other files in that folder are kept). When the block raises, everything it wrote is removed and the
    exception goes on: a failure mid-write leaves nothing behind, and a re-run starts afresh. Nothing
    written at the yielded path: nothing changes.
    """
    path = Path(path)
    made = [folder for folder in path.parents if not folder.exists()]  # folders this write creates, deepest first
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f'.{path.name}.', suffix=STAGING_SUFFIX, dir=path.parent))
    target = staging / path.name
    done = False
    try:
        yield target
        if target.is_dir() and not target.is_symlink():
            _move_folder(target, path)
        elif target.exists() or target.is_symlink():
            os.replace(target, path)
        done = True
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in made if not done else ():  # a failed write leaves no empty folders of its own either
            with contextlib.suppress(OSError):
                folder.rmdir()


def _move_folder(source: Path, destination: Path) -> None:
    """``source`` renamed onto ``destination``, or merged into it entry by entry where it exists."""
    if not destination.exists():
        os.replace(source, destination)
        return
    if not destination.is_dir():
        raise InputError(f'{destination} is a file, not a folder')
    for entry in sorted(source.iterdir()):
        if entry.is_dir() and (destination / entry.name).is_dir():
            _move_folder(entry, destination / entry.name)
        else:
            os.replace(entry, destination / entry.name)


def write_text(path: str | os.PathLike, text: str, encoding: str = 'utf-8') -> Path:
    """``text`` written to the file ``path`` whole or not at all (:func:`written`); returns the path."""
    path = Path(path)
    with written(path) as target:
        target.write_text(text, encoding=encoding)
    return path
