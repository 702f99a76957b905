"""``load_model``'s ``safe_mode`` for the configs it rebuilds: ``False`` lets a layer unpickle what
its config holds (``TorchModuleWrapper``'s module), as Keras's ``safe_mode`` does.

Example:
    >>> with safe_mode_scope(False):
    ...     current_safe_mode()
    False
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

_SAFE_MODE: contextvars.ContextVar[bool | None] = contextvars.ContextVar("unison_safe_mode", default=None)


def current_safe_mode() -> bool | None:
    """The ``safe_mode`` of the load in progress (``None``: no load, Keras's default applies)."""
    return _SAFE_MODE.get()


@contextlib.contextmanager
def safe_mode_scope(safe_mode: bool | None) -> Iterator[None]:
    """Run a load with ``safe_mode`` (``False`` allows unpickling)."""
    token = _SAFE_MODE.set(safe_mode)
    try:
        yield
    finally:
        _SAFE_MODE.reset(token)


__all__ = ["current_safe_mode", "safe_mode_scope"]
