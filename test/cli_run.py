"""``dynid`` run in the test's own process, as the console script runs it (``sys.exit(dynid.cli.main())``).

A ``dynid`` process of its own spends a second or two importing dynid, numpy, scipy and pinocchio before
it starts; tests about what a command does, writes and refuses (exit codes, one-line errors, outputs left
whole) call :func:`run_dynid` instead. The executable itself (console script, ``python -m dynid.cli``,
signals, the environment) is tested where that is the point: test_node_executables.py,
test_bringup_and_demo.py.
"""

from __future__ import annotations

import io
import os
import subprocess
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path


@contextmanager
def _working_directory(folder: str | Path | None):
    previous = os.getcwd()
    if folder is not None:
        os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


def run_dynid(*args: str, cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """``dynid <args>`` in this process (in ``cwd`` when given): its exit code, stdout and stderr, as
    ``subprocess.run(..., capture_output=True, text=True)`` gives them. argparse's refusals (SystemExit)
    are exit codes too; any other exception is a bug and propagates."""
    from dynid.cli import main  # here: a test module that only builds argv need not import the CLI

    out, err = io.StringIO(), io.StringIO()
    with _working_directory(cwd), redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return subprocess.CompletedProcess(['dynid', *map(str, args)], code, out.getvalue(), err.getvalue())
