"""Where a serialized record came from: the TFRecord file and byte offset, for parse errors.

The TFRecord reader (:mod:`unison.data.tfrecord`) notes each record it yields with
:func:`remember`; when ``tf.io.parse_example`` later finds a record that does not match its spec,
:func:`origin` gives the file and offset to name in the error. A record is known by its
``bytes`` object (batching and ``map`` pass the same object on), and the table holds the most
recent records only (:data:`KEEP` of them, :data:`KEEP_BYTES` in all), so a record that waited
long in a large shuffle buffer may be named by its place in the batch alone (as are empty and
1-byte records, which CPython shares between all their copies).

The table keeps a reference to each record it names, so an ``id`` in it always belongs to the
record it was noted for (an ``id`` is reused only after its object is freed).

Example:
    >>> data = b"\\x0a\\x00"
    >>> remember(data, "train.tfrecord", 48)
    >>> origin(data)
    ('train.tfrecord', 48)
    >>> origin(b"another record") is None
    True
"""

from __future__ import annotations

import threading
from collections import deque

KEEP = 65536  # records: more than a shuffle buffer usually holds
KEEP_BYTES = 64 << 20  # and no more than this many bytes of them held alive

_lock = threading.Lock()  # readers in pipeline threads note records concurrently
_table: dict[int, tuple[bytes, str, int]] = {}
_order: deque[int] = deque()
_held = [0]


def remember(data: bytes, path: str, offset: int) -> None:
    """Note that ``data`` is the record at ``offset`` of ``path`` (dropping the oldest notes beyond the limits)."""
    if len(data) < 2:
        return  # b"" and 1-byte strings are shared objects in CPython: their id names no one record
    key = id(data)
    with _lock:
        old = _table.get(key)
        _table[key] = (data, path, offset)
        if old is not None:  # the same object again (while held, its id is not reused): the newer place
            return
        _order.append(key)
        _held[0] += len(data)
        while len(_order) > KEEP or _held[0] > KEEP_BYTES:
            gone = _table.pop(_order.popleft(), None)
            if gone is not None:
                _held[0] -= len(gone[0])


def origin(data: object) -> tuple[str, int] | None:
    """``(path, offset)`` of a record the TFRecord reader noted recently, else None."""
    hit = _table.get(id(data))
    if hit is None or hit[0] is not data:
        return None
    return hit[1], hit[2]


def forget() -> None:
    """Drop every note (tests; a process that wants the memory back)."""
    with _lock:
        _table.clear()
        _order.clear()
        _held[0] = 0


__all__ = ["KEEP", "KEEP_BYTES", "forget", "origin", "remember"]
