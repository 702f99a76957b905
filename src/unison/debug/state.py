"""This process's job, as :func:`unison.debug.attach` recorded it: the store, rank, world size and timeout.

A module of its own so that the package's modules (the straggler report) read it without importing
the package's face, which imports them.

Example:
    >>> from unison.debug.state import job
    >>> isinstance(job(), dict)
    True
"""

from __future__ import annotations

from typing import Any

# Filled in place by unison.debug.attach (one job per process); read by job().
_JOB: dict[str, Any] = {}


def job() -> dict[str, Any]:
    """What :func:`unison.debug.attach` recorded (``store``, ``rank``, ``world_size``, ``timeout_s``); empty alone."""
    return _JOB
