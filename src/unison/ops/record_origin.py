"""Where a serialized record came from: the TFRecord file and byte offset, for parse errors.

The TFRecord reader (:mod:`unison.data.tfrecord`) keeps each file's most recent records in a
:class:`Ring` (a reference and an offset per record: two list stores, no lock, no hashing);
when ``tf.io.parse_example`` later finds a record that does not match its spec, :func:`origin`
looks the record up by identity (batching and ``map`` pass the same ``bytes`` object on) and
gives the file and offset to name in the error. Only recent records are kept (a ring holds up to
:data:`RING_RECORDS` records and about :data:`RING_BYTES` bytes of them; the :data:`RINGS` most
recent files keep theirs), so a record that waited long in a large shuffle buffer may be named by
its place in the batch alone, as are empty and 1-byte records (CPython shares one object among
all equal copies of those, so their identity names no one record).

Example:
    >>> ring = new_ring("train.tfrecord", 100)
    >>> data = b"\\x0a\\x05 a record"
    >>> ring.records[0], ring.offsets[0] = data, 48
    >>> origin(data)
    ('train.tfrecord', 48)
    >>> origin(b"another record") is None
    True
"""

from __future__ import annotations

from collections import deque

RING_RECORDS = 1 << 16  # records per file: more than a shuffle buffer usually holds
RING_BYTES = 8 << 20  # and about this many bytes of them held alive (64 MiB over RINGS files at most)
RINGS = 8  # files whose recent records are kept (num_parallel_reads files at once, and the last done)


class Ring:
    """One file's recent records and their offsets; slot ``k`` is written at record ``k mod size``."""

    __slots__ = ("mask", "offsets", "path", "records")

    def __init__(self, path: str, size: int) -> None:
        self.path, self.mask = path, size - 1
        self.records: list[object] = [None] * size
        self.offsets: list[int] = [0] * size


_rings: deque[Ring] = deque(maxlen=RINGS)


def new_ring(path: str, record_size: int) -> Ring:
    """A ring for the records of ``path`` (sized from its first record's length), kept for :func:`origin`."""
    size = 1
    while size < RING_RECORDS and (size * 2) * max(record_size, 1) <= RING_BYTES:
        size *= 2
    ring = Ring(path, size)
    _rings.append(ring)  # the oldest ring (and its records) is dropped past RINGS
    return ring


def origin(data: object) -> tuple[str, int] | None:
    """``(path, offset)`` of a record the TFRecord reader read recently, else None."""
    if not isinstance(data, bytes) or len(data) < 2:
        return None
    for ring in reversed(list(_rings)):
        for k, record in enumerate(ring.records):
            if record is data:
                return ring.path, ring.offsets[k]
    return None


def forget() -> None:
    """Drop every ring (tests; a process that wants the memory back)."""
    _rings.clear()


__all__ = ["RINGS", "RING_BYTES", "RING_RECORDS", "Ring", "forget", "new_ring", "origin"]
