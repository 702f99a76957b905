"""Python stacks of a running replica, taken from another thread, as JSON-ready data.

The watchdog thread of a replica (:mod:`unison.debug.hang`) takes the stack of the training
thread while that thread sleeps, computes or blocks inside a collective: ``sys._current_frames``
reads it without stopping it. Only file, line, function and source text travel, never objects.

Example:
    >>> frames = stack_of(threading.get_ident())
    >>> frames[-1]["function"]
    'stack_of'
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from typing import Any

MAX_FRAMES = 30
_INTERNAL = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep, threading.__file__)


def stack_of(thread_id: int | None = None, limit: int = MAX_FRAMES) -> list[dict[str, Any]]:
    """The stack of thread ``thread_id`` (default: the main thread), outermost first.

    Returns ``[]`` when the thread no longer exists.
    """
    if thread_id is None:
        thread_id = threading.main_thread().ident
    frame = sys._current_frames().get(thread_id or 0)
    if frame is None:
        return []
    summary = list(traceback.extract_stack(frame, limit=None))
    # Below the user's last frame, only unison's own machinery (the collective, this report):
    # keep the first of those frames (which collective it called), drop the rest.
    inner = len(summary)
    while (
        inner > 1
        and summary[inner - 1].filename.startswith(_INTERNAL)
        and summary[inner - 2].filename.startswith(_INTERNAL)
    ):
        inner -= 1
    summary = summary[:inner][-limit:]
    return [{"file": f.filename, "line": f.lineno, "function": f.name, "code": (f.line or "").strip()} for f in summary]


def format_stack(frames: list[dict[str, Any]], indent: str = "    ") -> str:
    """Frames as ``traceback``-style lines (most recent call last)."""
    lines = []
    for f in frames:
        lines.append(f'{indent}File "{f["file"]}", line {f["line"]}, in {f["function"]}')
        if f.get("code"):
            lines.append(f"{indent}  {f['code']}")
    return "\n".join(lines)
