"""Where a serialized record came from: the TFRecord file and byte offset, for parse errors.

The TFRecord reader (:mod:`unison.data.tfrecord`) notes each record it reads in its file's
:class:`Ring`: the record's ``id``, its CRC-32C (which the reader computes anyway to verify it)
and its offset, three slice stores per block of records and no reference to the record (holding records would keep
them alive and cost the reader its memory reuse). When ``tf.io.parse_example`` later finds a
record that does not match its spec, :func:`origin` finds the slot whose ``id`` and checksum are
the record's (batching and ``map`` pass the same ``bytes`` object on; a reused ``id`` would also
need an equal checksum to be taken for it) and gives the file and offset to name in the error.

Only recent records are noted (:data:`RING_RECORDS` per file, the :data:`RINGS` most recent
files), so a record that waited long in a large shuffle buffer may be named by its place in the
batch alone, as are empty and 1-byte records (CPython shares one object among all equal copies
of those, so their identity names no one record).

Example:
    >>> import zlib
    >>> ring = new_ring("train.tfrecord", zlib.crc32)
    >>> data = b"\\x0a\\x05 a record"
    >>> ring.ids[0], ring.crcs[0], ring.offsets[0] = id(data), zlib.crc32(data), 48
    >>> origin(data)
    ('train.tfrecord', 48)
    >>> origin(b"another record") is None
    True
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

RING_RECORDS = 1 << 14  # records noted per file (a power of 2): more than most shuffle buffers hold
RINGS = 8  # files whose recent records are noted (num_parallel_reads files at once, and the last done)


class Ring:
    """One file's recent records: slot ``k`` notes record ``k mod size`` (id, checksum, offset)."""

    __slots__ = ("crc", "crcs", "ids", "mask", "next", "offsets", "path")

    def __init__(self, path: str, crc: Callable[[bytes], int], size: int) -> None:
        self.path, self.crc, self.mask, self.next = path, crc, size - 1, 0
        self.ids: list[int] = [0] * size
        self.crcs: list[int] = [0] * size
        self.offsets: list[int] = [0] * size

    def note(self, records: list[bytes], crcs: list[int], offsets: list[int]) -> None:
        """Note a block of records just read (their CRC-32Cs and offsets): slice stores, no per-record loop.

        Example:
            >>> import zlib
            >>> ring = Ring("f.tfrecord", zlib.crc32, 4)
            >>> ring.note([b"ab", b"cd"], [zlib.crc32(b"ab"), zlib.crc32(b"cd")], [0, 18])
            >>> ring.next, ring.offsets
            (2, [0, 18, 0, 0])
        """
        size = self.mask + 1
        if len(records) > size:  # only the last `size` records stay
            records, crcs, offsets = records[-size:], crcs[-size:], offsets[-size:]
        ids = list(map(id, records))
        a = self.next
        split = min(len(ids), size - a)
        self.ids[a : a + split], self.crcs[a : a + split], self.offsets[a : a + split] = (
            ids[:split],
            crcs[:split],
            offsets[:split],
        )
        rest = len(ids) - split
        if rest:
            self.ids[:rest], self.crcs[:rest], self.offsets[:rest] = ids[split:], crcs[split:], offsets[split:]
        self.next = (a + len(ids)) & self.mask


_rings: deque[Ring] = deque(maxlen=RINGS)


def new_ring(path: str, crc: Callable[[bytes], int]) -> Ring:
    """A ring for the records of ``path`` whose checksums ``crc`` computes, kept for :func:`origin`."""
    ring = Ring(path, crc, RING_RECORDS)
    _rings.append(ring)  # the oldest ring is dropped past RINGS
    return ring


def origin(data: object) -> tuple[str, int] | None:
    """``(path, offset)`` of a record the TFRecord reader read recently, else None."""
    if not isinstance(data, bytes) or len(data) < 2:
        return None
    key = id(data)
    for ring in reversed(list(_rings)):
        for k, seen in enumerate(ring.ids):
            if seen == key and ring.crcs[k] == ring.crc(data):
                return ring.path, ring.offsets[k]
    return None


def forget() -> None:
    """Drop every ring (tests)."""
    _rings.clear()


__all__ = ["RINGS", "RING_RECORDS", "Ring", "forget", "new_ring", "origin"]
