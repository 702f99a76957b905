"""The few exception types users catch.

Every error a user can cause says what happened, what was expected and how to fix it
(docs/semantics.md#errors). Plain mistakes in arguments raise ``ValueError``/``TypeError``; the
types below exist where a caller may want to tell one failure from another.

Example:
    >>> from unison.errors import ReplicaFailedError
    >>> issubclass(ReplicaFailedError, RuntimeError)
    True
"""

from __future__ import annotations

from collections.abc import Iterable


class UnisonError(RuntimeError):
    """Base class of unison's runtime failures (not argument mistakes)."""


class ReplicaFailedError(UnisonError):
    """Another replica (process) of the job failed; carries its rank and traceback.

    Attributes:
        rank: the global rank of the replica that failed.
        remote_traceback: the traceback text the failed replica reported, or ``""``.
    """

    def __init__(self, message: str, rank: int | None = None, remote_traceback: str = "") -> None:
        super().__init__(message)
        self.rank = rank
        self.remote_traceback = remote_traceback


class CollectiveTimeoutError(UnisonError):
    """A collective did not complete within the strategy's timeout."""


class DatasetError(ValueError):
    """A data set could not be found, read or verified."""


class NotCompiledError(RuntimeError):
    """A Keras-style model was used for training before ``compile()``."""


def format_choices(choices: Iterable[str]) -> str:
    """Return a sorted, quoted, comma-separated list for error messages.

    Example:
        >>> format_choices({"b", "a"})
        "'a', 'b'"
    """
    return ", ".join(repr(c) for c in sorted(choices))
