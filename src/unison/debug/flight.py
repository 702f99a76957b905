"""The flight recorder: this replica's last collectives, kept in a fixed ring of slots.

Every collective the :class:`~unison.comm.Communicator` issues takes one slot: its sequence
number, name (``gradients.bucket0``, ``all_reduce``...), shape, dtype, the times it was issued,
began to wait and ended, and the Python line that called it (the first frame outside unison).
The slots are allocated once and overwritten in turn, so recording costs a few attribute writes
and one short frame walk per collective, nothing per step beyond that (``benchmarks/debug_overhead.py``
measures it). A hang report (:mod:`unison.debug.hang`) and :func:`unison.debug.dump` print them.

Example:
    >>> import torch
    >>> rec = FlightRecorder(capacity=4)
    >>> slot = rec.begin(1, "all_reduce", torch.ones(2, 3))
    >>> rec.end(slot)
    >>> [r["op"] + str(r["shape"]) for r in rec.records()]
    ['all_reduce[2, 3]']
"""

from __future__ import annotations

import os
import sys
import threading
import time
from types import CodeType
from typing import Any

import torch

DEFAULT_CAPACITY = 64
_UNISON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


class Slot:
    """One collective in the ring (mutable: reused when the ring wraps)."""

    __slots__ = ("seq", "op", "kind", "shape", "dtype", "issued", "waited", "ended", "code", "line", "thread")

    def __init__(self) -> None:
        self.seq = 0
        self.op = ""
        self.kind = ""  # the operation and its arguments (all_reduce/sum, broadcast/src=0), whatever the name
        self.shape: tuple[int, ...] = ()
        self.dtype: torch.dtype | None = None
        self.issued = 0.0
        self.waited = 0.0
        self.ended = 0.0
        self.code: CodeType | None = None
        self.line = 0  # the caller's instruction offset (turned into a line when printed)
        self.thread = 0

    def as_dict(self, now: float) -> dict[str, Any]:
        """This slot as JSON-ready data (times relative to ``now``, in seconds)."""
        code = self.code
        line = _line_of(code, self.line) if code is not None else 0
        return {
            "seq": self.seq,
            "op": self.op,
            "kind": self.kind,
            "shape": list(self.shape),
            "dtype": str(self.dtype).replace("torch.", "") if self.dtype is not None else "",
            "issued_ago_s": round(now - self.issued, 6),
            "wait_s": round((self.ended or now) - (self.waited or self.issued), 6),
            "done": self.ended > 0.0,
            "site": f"{code.co_filename}:{line} in {code.co_name}" if code is not None else "",
        }


def _line_of(code: CodeType, offset: int) -> int:
    """The source line of instruction ``offset`` in ``code``."""
    for start, end, line in code.co_lines():
        if start <= offset < end and line is not None:
            return line
    return code.co_firstlineno


class FlightRecorder:
    """A ring of the last ``capacity`` collectives of this process.

    Args:
        capacity: how many collectives to keep (``UNISON_FLIGHT_RECORDER`` sets the default;
            0 turns recording off).
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = max(0, int(capacity))
        self._slots = [Slot() for _ in range(max(1, self.capacity))]
        self._next = 0
        self.enabled = self.capacity > 0
        self.last = self._slots[0]  # the slot of the latest collective

    def begin(self, seq: int, op: str, tensor: torch.Tensor | None = None, kind: str = "") -> Slot:
        """Record that collective ``seq`` named ``op`` was issued now (on ``tensor``).

        Off (capacity 0), it returns the last slot untouched: the caller sees its ``seq`` differ.
        """
        if not self.enabled:
            return self.last
        slot = self.last = self._slots[self._next]
        self._next = (self._next + 1) % self.capacity
        slot.seq, slot.op, slot.kind = seq, op, kind
        if tensor is not None:
            slot.shape, slot.dtype = tensor.shape, tensor.dtype
        else:
            slot.shape, slot.dtype = (), None
        slot.issued = time.perf_counter()
        slot.waited = slot.ended = 0.0
        slot.thread = threading.get_ident()
        # The caller: the first frame outside unison and torch (where the user's code asked).
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_code.co_filename.startswith((_UNISON_DIR, _TORCH_DIR)):
            frame = frame.f_back
        # the instruction offset, not f_lineno: decoding the line table costs microseconds
        slot.code, slot.line = frame.f_code, frame.f_lasti
        return slot

    @staticmethod
    def waiting(slot: Slot) -> None:
        """The replica starts blocking on ``slot``'s collective (an asynchronous one was issued earlier)."""
        slot.waited = time.perf_counter()

    @staticmethod
    def end(slot: Slot) -> None:
        """``slot``'s collective completed."""
        slot.ended = time.perf_counter()

    def records(self) -> list[dict[str, Any]]:
        """The recorded collectives, oldest first, as JSON-ready dicts."""
        now = time.perf_counter()
        used = [s for s in self._slots if s.seq > 0]
        return [s.as_dict(now) for s in sorted(used, key=lambda s: s.seq)]

    def current(self) -> Slot | None:
        """The collective this replica is in now (issued, not completed), if any."""
        open_slots = [s for s in self._slots if s.seq > 0 and s.ended == 0.0]
        return max(open_slots, key=lambda s: s.seq) if open_slots else None

    def last_thread(self) -> int | None:
        """The thread that issued the latest collective (the training thread)."""
        used = [s for s in self._slots if s.seq > 0]
        return max(used, key=lambda s: s.seq).thread if used else None


def capacity_from_env() -> int:
    """The ring's size: ``UNISON_FLIGHT_RECORDER`` (an integer >= 0), else :data:`DEFAULT_CAPACITY`.

    Raises:
        ValueError: the variable is not an integer >= 0.
    """
    raw = os.environ.get("UNISON_FLIGHT_RECORDER", "").strip()
    if not raw:
        return DEFAULT_CAPACITY
    if not raw.isdigit():
        raise ValueError(
            f"UNISON_FLIGHT_RECORDER must be an integer >= 0 (how many collectives to keep; 0 turns "
            f"the recorder off). Received: UNISON_FLIGHT_RECORDER={raw!r}"
        )
    return int(raw)


def format_record(r: dict[str, Any]) -> str:
    """One recorded collective as a line: ``#12 gradients.bucket0 float32[101770] 0.4ms at f.py:3 in step``."""
    shape = "[" + ", ".join(str(d) for d in r["shape"]) + "]" if r["dtype"] else ""
    state = f"{r['wait_s'] * 1e3:.1f}ms" if r["done"] else f"NOT DONE, waiting {r['wait_s']:.1f}s"
    kind = r.get("kind") or ""
    what = f"{r['op']} ({kind})" if kind and kind.split("/")[0] != r["op"] else r["op"]
    return f"#{r['seq']} {what} {r['dtype']}{shape} {state} at {r['site']}"
