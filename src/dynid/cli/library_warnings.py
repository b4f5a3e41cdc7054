"""What a ``dynid`` command does with Python warnings: dynid's own (a ``UserWarning`` raised in dynid's code, e.g. the
feedforward's) are printed as its other warnings are (``warning: TEXT`` on stderr); numerical and library warnings
(numpy's ``RuntimeWarning: overflow encountered in reduce``, scipy's, cvxpy's) are dropped: they concern intermediate
figures that dynid checks and reports in its own words (a non-finite σ, a solver that misses its optimum, a refusal),
and a line of a library's source code is no sentence a user can act on. Python's own ``-W`` options (or
``PYTHONWARNINGS``) turn this off, for debugging.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


def own(category: type[Warning], filename: str) -> bool:
    """Whether a warning is dynid's own sentence: a UserWarning (not a numerical one) raised in dynid's code."""
    try:
        inside = Path(filename).resolve().is_relative_to(_PACKAGE)
    except (OSError, ValueError):
        inside = False
    return inside and issubclass(category, UserWarning) and not issubclass(category, RuntimeWarning)


@contextlib.contextmanager
def said_or_dropped():
    """Within: dynid's own warnings printed as ``warning: TEXT`` on stderr, the others dropped (module docstring)."""
    if sys.warnoptions:  # the user asked Python for its warnings
        yield
        return

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if own(category, filename):
            print(f'warning: {message}', file=sys.stderr, flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter('default')
        warnings.showwarning = show
        yield
