"""The progress of a long job on standard error, one way for every command (``dynid simulate``, ``dynid estimate``):
on a terminal one line rewritten in place; into a file or a pipe, where a carriage return does not rewrite but piles
up frames in the log, one whole line at each tenth of the work."""

from __future__ import annotations

import math
import sys
from typing import TextIO


class Progress:
    """``label: NN %`` as a job advances: call it with the fraction done (0–1), then :meth:`close`.

    ``stream``: where it writes (default standard error, looked up at each call, so that a redirection holds);
    ``step``: the fraction between two lines when ``stream`` is not a terminal (default a tenth: at most 11 lines; on
    a terminal the line is rewritten at each whole percent).

    >>> import io
    >>> log = io.StringIO()
    >>> progress = Progress('simulating', log)
    >>> for k in range(101):
    ...     progress(k / 100)
    >>> progress.close()
    >>> log.getvalue().splitlines()[:3]
    ['simulating:   0 %', 'simulating:  10 %', 'simulating:  20 %']
    """

    def __init__(self, label: str, stream: TextIO | None = None, step: float = 0.1) -> None:
        self.label, self._stream, self.step = label, stream, step
        self._shown: float | None = None  # the last fraction written
        self._open = False  # a terminal line written and not ended

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def _terminal(self) -> bool:
        isatty = getattr(self.stream, 'isatty', None)
        return bool(isatty and isatty())

    def __call__(self, fraction: float) -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        terminal = self._terminal()
        step = 0.01 if terminal else self.step  # on a terminal each whole percent, else each step
        reached = math.floor(fraction / step + 1e-9) * step
        if self._shown is not None and reached <= self._shown:
            return
        self._shown = reached
        if terminal:
            self.stream.write(f'\r{self.label}: {100 * reached:3.0f} %')
            self._open = True
        else:
            self.stream.write(f'{self.label}: {100 * reached:3.0f} %\n')
        self.stream.flush()

    def close(self) -> None:
        """End the terminal's line (nothing to do into a file or a pipe: each line is whole)."""
        if self._open:
            self.stream.write('\n')
            self.stream.flush()
            self._open = False
