"""Keras's interactive-logging switch: progress on stdout (on) or through the ``logging`` module (off).

``keras.utils.disable_interactive_logging()`` (also ``keras.config``'s) sends what Keras would
print to the ``unison.keras`` logger instead, for jobs whose stdout is not read by a person.
:func:`print_msg` is the one place that honours it.

Example:
    >>> from unison.keras.utils import io_utils
    >>> io_utils.is_interactive_logging_enabled()
    True
    >>> io_utils.print_msg("hello")
    hello
"""

from __future__ import annotations

import logging
import sys

__all__ = [
    "disable_interactive_logging",
    "enable_interactive_logging",
    "is_interactive_logging_enabled",
    "print_msg",
]

_LOGGER = logging.getLogger("unison.keras")


class _State:
    interactive = True


def enable_interactive_logging() -> None:
    """Print Keras's logs (progress bars, messages) to stdout: the default."""
    _State.interactive = True


def disable_interactive_logging() -> None:
    """Send Keras's logs to the ``unison.keras`` logger instead of stdout."""
    _State.interactive = False


def is_interactive_logging_enabled() -> bool:
    """Whether Keras's logs go to stdout (``True``, the default) or to the logger."""
    return _State.interactive


def print_msg(message: str, line_break: bool = True) -> None:
    """Print ``message`` to stdout, or log it at INFO level when interactive logging is off."""
    if _State.interactive:
        sys.stdout.write(message + ("\n" if line_break else ""))
        sys.stdout.flush()
    else:
        _LOGGER.info(message)
