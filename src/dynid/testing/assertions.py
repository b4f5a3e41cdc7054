"""How a plug-in check fails: an AssertionError naming the check, the plug-in and what it found, as scikit-learn's
``check_estimator`` does; an exception the plug-in raises on the way is turned into one naming the step it broke."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class PluginCheck:
    """One check of one plug-in: ``check`` (e.g. 'check_friction_law'), ``what`` (e.g. 'friction law'), ``name``
    (the plug-in's name)."""

    def __init__(self, check: str, what: str, name) -> None:
        self.check, self.what, self.name = check, what, name

    def failed(self, message: str) -> AssertionError:
        return AssertionError(f'{self.check}: {self.what} {self.name!r}: {message}')

    def that(self, condition, message: str) -> None:
        """Fail with ``message`` unless ``condition``."""
        if not condition:
            raise self.failed(message)

    @contextmanager
    def step(self, step: str) -> Iterator[None]:
        """An exception raised within (but an AssertionError of this check) fails the check, naming ``step``."""
        try:
            yield
        except AssertionError as error:
            if str(error).startswith(f'{self.check}:'):
                raise
            raise self.failed(f'{step}: {error}') from error
        except Exception as error:  # a plug-in's fault of any kind is the check's finding
            raise self.failed(f'{step} raised {type(error).__name__}: {error}') from error
