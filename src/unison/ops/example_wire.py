"""``tf.train.Example`` read straight from its wire format into columns, without protobuf objects.

``parse_example`` on a batch of records wants, for each feature of the spec, one array of every
record's values and each record's count (a *column*): the shape every feature kind is built from
(``FixedLenFeature`` reshapes it, ``VarLenFeature`` turns the counts into sparse indices,
``RaggedFeature`` into row splits). Building protobuf messages and walking their Python
containers costs far more than the bytes do, so this module reads the encoding itself:

- :func:`scan` walks one record's ``Example -> Features -> map entry -> Feature -> *List`` nesting
  with a tight loop over its bytes and returns, per wanted feature, the list's kind and where its
  payload lies in the record (one ``bytes`` slice per value list, no per-value work);
- :func:`column` joins those payloads across the batch and decodes them at once: packed floats
  with ``numpy.frombuffer``, packed int64 varints with a vectorised varint decoder (a short
  payload with the protobuf runtime's C parser, :func:`varint_values`), bytes lists by their
  length prefixes;
- :func:`scan_columns` does both in one pass over each record of a batch of varied layouts: each
  wanted list goes straight to its column (``parse_example`` below the lock-step threshold);
- ``example_batch_wire.batch_columns`` does both for a whole batch of varied layouts with numpy
  (batches of 192 or more; see that module).

Only the encoding TF (and every protobuf library) writes is read here: features in one
``Features`` message, each map entry as ``key`` then ``value``, packed number lists. Anything else
protobuf accepts (unpacked lists, a repeated key, unknown fields, a field split in pieces) raises
:class:`_Unusual`, and the caller parses the batch with the protobuf runtime instead, which also
writes the error message for a record that does not match its spec.

Example:
    >>> import unison as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0]))}))
    >>> data = ex.SerializeToString()
    >>> found = scan(data, {b"x": 0}, 1)
    >>> values, counts = column([data], [found[0]], FLOAT)
    >>> values.tolist(), counts.tolist()
    ([1.0, 2.0], [2])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

# the Feature oneof's field numbers: which value list a feature holds
BYTES, FLOAT, INT64 = 1, 2, 3
EMPTY = 0  # a Feature message with no list set (TF reads it as an empty list of any type)


class _Unusual(Exception):  # noqa: N818 - a signal to the caller, never raised to users
    """A record in an encoding this reader leaves to the protobuf runtime (never reaches users)."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it (the multi-byte case; callers inline one byte)."""
    result = 0
    shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _Unusual("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def scan(data: bytes, wanted: dict[bytes, int], n_wanted: int, free: list[Any] | None = None) -> list[Any]:
    """Where each wanted feature's value list lies in one serialized ``Example``.

    Args:
        data: one serialized record.
        wanted: feature name (UTF-8) -> slot in the result.
        n_wanted: the number of slots.
        free: when given, gets the ``(start, end)`` byte ranges of the features not wanted (after
            their key): the bytes a same-layout batch may differ in (:func:`same_layout_columns`).

    Returns:
        A list of ``n_wanted`` entries: ``None`` for a feature the record lacks, else
        ``(kind, start, end)`` with ``kind`` one of :data:`BYTES`, :data:`FLOAT`, :data:`INT64`,
        :data:`EMPTY` and ``data[start:end]`` the list message's bytes.

    Raises:
        _Unusual: the record is not in the encoding described in the module docstring.
    """
    found: list[Any] = [None] * n_wanted
    n = len(data)
    pos = 0
    while pos < n:  # Example: field 1 (features), length-delimited; TF writes it once
        if data[pos] != 0x0A or pos:
            raise _Unusual("Example field")
        length = data[pos + 1] if pos + 1 < n else 0x80
        if length < 0x80:
            pos += 2
        elif data[pos + 2] < 0x80:  # two bytes: lengths up to 16 KB, without a call
            length = (length & 0x7F) | (data[pos + 2] << 7)
            pos += 3
        else:
            length, pos = _varint(data, pos + 1)
        end = pos + length
        if end != n:
            raise _Unusual("Example length")
        while pos < end:  # Features: repeated field 1, one map entry each
            if data[pos] != 0x0A:
                raise _Unusual("Features field")
            length = data[pos + 1]
            if length < 0x80:
                pos += 2
            elif data[pos + 2] < 0x80:  # two bytes: lengths up to 16 KB, without a call
                length = (length & 0x7F) | (data[pos + 2] << 7)
                pos += 3
            else:
                length, pos = _varint(data, pos + 1)
            entry_end = pos + length
            if data[pos] != 0x0A:  # key first, as every writer puts it
                raise _Unusual("map entry key")
            klen = data[pos + 1]
            if klen < 0x80:
                pos += 2
            elif data[pos + 2] < 0x80:  # two bytes: lengths up to 16 KB, without a call
                klen = (klen & 0x7F) | (data[pos + 2] << 7)
                pos += 3
            else:
                klen, pos = _varint(data, pos + 1)
            slot = wanted.get(data[pos : pos + klen])
            pos += klen
            if slot is None:
                if pos > entry_end:
                    raise _Unusual("map entry length")
                if free is not None:
                    free.append((pos, entry_end))
                pos = entry_end
                continue
            if found[slot] is not None:
                raise _Unusual("repeated key")  # protobuf keeps the last: the runtime decides
            if pos == entry_end:
                found[slot] = (EMPTY, pos, pos)
                continue
            if data[pos] != 0x12:
                raise _Unusual("map entry value")
            flen = data[pos + 1]
            if flen < 0x80:
                pos += 2
            elif data[pos + 2] < 0x80:  # two bytes: lengths up to 16 KB, without a call
                flen = (flen & 0x7F) | (data[pos + 2] << 7)
                pos += 3
            else:
                flen, pos = _varint(data, pos + 1)
            if pos + flen != entry_end:
                raise _Unusual("map entry length")
            if flen == 0:
                found[slot] = (EMPTY, pos, pos)
            else:
                tag = data[pos]
                kind = tag >> 3
                if tag & 7 != 2 or not 1 <= kind <= 3:
                    raise _Unusual("Feature field")
                llen = data[pos + 1]
                if llen < 0x80:
                    pos += 2
                elif data[pos + 2] < 0x80:  # two bytes: lengths up to 16 KB, without a call
                    llen = (llen & 0x7F) | (data[pos + 2] << 7)
                    pos += 3
                else:
                    llen, pos = _varint(data, pos + 1)
                if pos + llen != entry_end:
                    raise _Unusual("Feature length")  # two lists set, or unknown fields
                found[slot] = (kind, pos, entry_end)
            pos = entry_end
        if pos != end:
            raise _Unusual("Features length")
    return found


def _packed(records: list[bytes], where: list[Any]) -> tuple[list[bytes], list[int]]:
    """The packed payload of each record's number list (``b""`` when absent or empty)."""
    parts: list[bytes] = []
    sizes: list[int] = []
    for data, (_, start, end) in zip(records, where):
        if start == end:
            parts.append(b"")
            sizes.append(0)
            continue
        if data[start] != 0x0A:
            raise _Unusual("unpacked list")
        length = data[start + 1]
        if length < 0x80:
            pos = start + 2
        else:
            length, pos = _varint(data, start + 1)
        if pos + length != end:
            raise _Unusual("list in pieces")
        parts.append(data[pos:end])
        sizes.append(length)
    return parts, sizes


def decode_varints(buf: bytes | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All varints in ``buf`` as int64 (two's complement, as protobuf writes int64) and where each ends.

    Vectorised: each byte's 7 payload bits are shifted by its place in its varint and the places
    of one varint summed (their bits never overlap).

    Example:
        >>> decode_varints(bytes([1, 0xAC, 0x02]))[0].tolist()
        [1, 300]
    """
    if len(buf) <= 96:  # a short list (one record's ids): a loop beats numpy's fixed cost per call
        if isinstance(buf, np.ndarray):
            buf = buf.tobytes()  # Python ints below: numpy's uint8 would overflow in the shifts
        if not buf or max(buf) < 0x80:  # one byte per value (labels): no loop
            return np.frombuffer(buf, dtype=np.uint8).astype(np.int64), np.arange(1, len(buf) + 1)
        out: list[int] = []
        ends_list: list[int] = []
        value = shift = 0
        for i, b in enumerate(buf):
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                value &= (1 << 64) - 1
                out.append(value - (1 << 64) if value >= 1 << 63 else value)
                ends_list.append(i + 1)
                value = shift = 0
            elif shift > 63:
                raise _Unusual("varint longer than 10 bytes")
        if shift:
            raise _Unusual("truncated varint")
        return np.array(out, dtype=np.int64), np.array(ends_list, dtype=np.int64)
    raw = buf if isinstance(buf, np.ndarray) else np.frombuffer(buf, dtype=np.uint8)
    last = raw < 0x80
    if last.all():
        return raw.astype(np.int64), np.arange(1, len(raw) + 1)
    if len(raw) and not last[-1]:
        raise _Unusual("truncated varint")
    ends = np.flatnonzero(last) + 1
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1]
    place = np.arange(len(raw)) - np.repeat(starts, ends - starts)
    if place.max() > 9:
        raise _Unusual("varint longer than 10 bytes")
    bits = (raw & 0x7F).astype(np.uint64) << (place * 7).astype(np.uint64)
    return np.add.reduceat(bits, starts).view(np.int64), ends


_UPB_MAX = 1024  # payload bytes up to which the protobuf runtime's C parser beats the numpy decoder


@functools.cache
def _int64_list_parser() -> Callable[[bytes], Any] | None:
    """``Int64List.FromString`` of the protobuf runtime (its C parser), or None without protobuf."""
    try:
        from unison.ops.example import Int64List
    except ImportError:
        return None
    parse: Callable[[bytes], Any] = Int64List.FromString
    return parse


def varint_values(buf: bytes) -> np.ndarray:
    """The int64 values of a packed varint payload (a list's bytes after its length), as numpy.

    A short payload goes through the protobuf runtime's C parser (wrapped as an ``Int64List``
    message: one call, no per-byte Python), a long one through :func:`decode_varints`.

    Example:
        >>> varint_values(bytes([1, 0xAC, 0x02])).tolist()
        [1, 300]
    """
    if len(buf) > _UPB_MAX:
        return decode_varints(buf)[0]  # numpy's fixed costs are small beside the work
    if not buf or max(buf) < 0x80:  # one byte per value (labels, small ids)
        return np.frombuffer(buf, dtype=np.uint8).astype(np.int64)
    parse = _int64_list_parser()
    if parse is None:
        return decode_varints(buf)[0]
    size = len(buf)
    head = bytes((0x0A, size)) if size < 0x80 else bytes((0x0A, (size & 0x7F) | 0x80, size >> 7))
    try:
        values = parse(head + buf).value[:]
    except Exception:  # noqa: BLE001 - protobuf's DecodeError: a varint cut short or too long
        raise _Unusual("varint") from None
    return np.array(values, dtype=np.int64)


def column(records: list[bytes], where: list[Any], kind: int) -> tuple[Any, np.ndarray]:
    """The values of one feature over a batch and each record's count.

    Args:
        records: the serialized records.
        where: per record, the ``(kind, start, end)`` :func:`scan` found (never ``None`` here:
            the caller leaves missing records out and fills them itself).
        kind: the list kind the spec asks for; a record of another kind is the caller's error.

    Returns:
        ``(values, counts)``: a float32 or int64 numpy array, or a list of bytes, and the int64
        count per record.
    """
    if kind == BYTES:
        values: list[bytes] = []
        counts = np.zeros(len(records), dtype=np.int64)
        for i, (data, (_, pos, end)) in enumerate(zip(records, where)):
            before = len(values)
            while pos < end:
                if data[pos] != 0x0A:
                    raise _Unusual("BytesList field")
                length = data[pos + 1]
                if length < 0x80:
                    pos += 2
                elif data[pos + 2] < 0x80:  # two bytes: lengths up to 16 KB, without a call
                    length = (length & 0x7F) | (data[pos + 2] << 7)
                    pos += 3
                else:
                    length, pos = _varint(data, pos + 1)
                values.append(data[pos : pos + length])
                pos += length
            if pos != end:
                raise _Unusual("BytesList length")
            counts[i] = len(values) - before
        return values, counts
    parts, sizes = _packed(records, where)
    if kind == FLOAT:
        sizes_arr = np.asarray(sizes, dtype=np.int64)
        if (sizes_arr & 3).any():
            raise _Unusual("FloatList size")
        return np.frombuffer(b"".join(parts), dtype="<f4").astype(np.float32, copy=False), sizes_arr >> 2
    joined = b"".join(parts)
    values_arr = varint_values(joined)
    sizes_arr = np.asarray(sizes, dtype=np.int64)
    if len(values_arr) == len(joined):  # one byte per value: each record's count is its size
        return values_arr, sizes_arr
    return values_arr, _varint_counts(np.frombuffer(joined, dtype=np.uint8), sizes_arr)


def _varint_counts(raw: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """How many varints each record's part of ``raw`` holds (parts of ``sizes`` bytes, in order).

    A varint ends at each byte below 0x80, so a record's count is how many of its bytes are
    below 0x80, provided its last byte is one (else a varint runs into the next record).
    """
    last = raw < 0x80
    bounds = np.cumsum(sizes)
    if not last[bounds[sizes > 0] - 1].all():
        raise _Unusual("varint across records")
    ends_before = np.concatenate(([0], np.cumsum(last)))
    return ends_before[bounds] - ends_before[bounds - sizes]


def _len_at(data: bytes, pos: int) -> tuple[int, int]:
    """The length varint at ``pos`` and the position after it (one or two bytes inline, else :func:`_varint`)."""
    b = data[pos]
    if b < 0x80:
        return b, pos + 1
    c = data[pos + 1]
    if c < 0x80:
        return (b & 0x7F) | (c << 7), pos + 2
    return _varint(data, pos)


def scan_columns(records: list[bytes], wanted: dict[bytes, int], kinds: list[int]) -> list[Any]:
    """Every wanted feature's column over a batch of records of any layouts, in one pass over each record.

    Each record's map entries are walked once, and each wanted feature's list goes straight to its
    column (a packed number payload, or each bytes value): no per-record result to walk again.

    Returns:
        ``[(values, counts)]`` per slot: float32/int64 numpy values or a list of bytes, counts
        ``-1`` where a record lacks the feature.

    Raises:
        _WrongKind: a record's list type is not ``kinds[slot]`` (the caller's per-record path names
            the error as TF orders it).
        _Unusual: an encoding left to the protobuf runtime (see the module docstring).

    Example:
        >>> import unison as tf
        >>> ex = lambda v: tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
        ...     int64_list=tf.train.Int64List(value=v))})).SerializeToString()
        >>> [(values, counts)] = scan_columns([ex([1, 2]), ex([300])], {b"x": 0}, [INT64])
        >>> values.tolist(), counts.tolist()
        ([1, 2, 300], [2, 1])
    """
    rows = len(records)
    n_slots = len(kinds)
    counts = [[-1] * rows for _ in range(n_slots)]
    parts: list[list[bytes]] = [[] for _ in range(n_slots)]
    last = [-1] * n_slots  # the record that last set each slot: a repeated key is left to protobuf
    get = wanted.get
    for i, data in enumerate(records):
        n = len(data)
        if not n:
            continue
        if data[0] != 0x0A:
            raise _Unusual("Example field")
        length = data[1]
        if length < 0x80:
            pos = 2
        else:
            length, pos = _len_at(data, 1)
        if pos + length != n:
            raise _Unusual("Example length")  # also: Features written twice (protobuf merges them)
        while pos < n:  # Features: one map entry each
            if data[pos] != 0x0A:
                raise _Unusual("Features field")
            length = data[pos + 1]
            if length < 0x80:
                pos += 2
            else:
                length, pos = _len_at(data, pos + 1)
            entry_end = pos + length
            if data[pos] != 0x0A:  # key first, as every writer puts it
                raise _Unusual("map entry key")
            length = data[pos + 1]
            if length < 0x80:
                pos += 2
            else:
                length, pos = _len_at(data, pos + 1)
            slot = get(data[pos : pos + length])
            pos += length
            if pos > entry_end or entry_end > n:
                raise _Unusual("map entry length")
            if slot is None:
                pos = entry_end
                continue
            if last[slot] == i:
                raise _Unusual("repeated key")  # protobuf keeps the last: the runtime decides
            last[slot] = i
            if pos == entry_end:  # a Feature with no list: an empty list of any type
                counts[slot][i] = 0
                continue
            if data[pos] != 0x12:
                raise _Unusual("map entry value")
            length = data[pos + 1]
            if length < 0x80:
                pos += 2
            else:
                length, pos = _len_at(data, pos + 1)
            if pos + length != entry_end:
                raise _Unusual("map entry length")
            if not length:
                counts[slot][i] = 0
                continue
            tag = data[pos]
            kind = tag >> 3
            if tag & 7 != 2 or not 1 <= kind <= 3:
                raise _Unusual("Feature field")
            length = data[pos + 1]
            if length < 0x80:
                pos += 2
            else:
                length, pos = _len_at(data, pos + 1)
            if pos + length != entry_end:
                raise _Unusual("Feature length")  # two lists set, or unknown fields
            if kind != kinds[slot]:
                raise _WrongKind(slot, i, kind)
            if kind == BYTES:
                out = parts[slot]
                before = len(out)
                while pos < entry_end:
                    if data[pos] != 0x0A:
                        raise _Unusual("BytesList field")
                    length = data[pos + 1]
                    if length < 0x80:
                        pos += 2
                    else:
                        length, pos = _len_at(data, pos + 1)
                    out.append(data[pos : pos + length])
                    pos += length
                if pos != entry_end:
                    raise _Unusual("BytesList length")
                counts[slot][i] = len(out) - before
                continue
            if pos == entry_end:
                counts[slot][i] = 0
                continue
            if data[pos] != 0x0A:
                raise _Unusual("unpacked list")
            length = data[pos + 1]
            if length < 0x80:
                pos += 2
            else:
                length, pos = _len_at(data, pos + 1)
            if pos + length != entry_end:
                raise _Unusual("list in pieces")
            parts[slot].append(data[pos:entry_end])
            counts[slot][i] = length  # bytes for now: values once decoded
            pos = entry_end
    columns: list[Any] = []
    for slot, kind in enumerate(kinds):
        found = np.array(counts[slot], dtype=np.int64)
        if kind == BYTES:
            columns.append((parts[slot], found))
            continue
        joined = b"".join(parts[slot])
        if kind == FLOAT:
            if (found & 3).any():  # -1 & 3 is 3: test the present ones only
                if (found[found >= 0] & 3).any():
                    raise _Unusual("FloatList size")
            columns.append(
                (
                    np.frombuffer(joined, dtype="<f4").astype(np.float32, copy=False),
                    np.where(found >= 0, found >> 2, -1),
                )
            )
            continue
        values = varint_values(joined)
        if len(values) != len(joined):  # multi-byte varints: count each record's ends
            present = found >= 0
            found[present] = _varint_counts(np.frombuffer(joined, dtype=np.uint8), found[present])
        columns.append((values, found))
    return columns


def _list_ranges(data: bytes, kind: int, start: int, end: int, free: list[Any]) -> list[tuple[int, int]]:
    """The value ranges of one list message in ``data[start:end]`` (added to ``free``): one per
    bytes value, the packed payload for numbers."""
    ranges: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        if data[pos] != 0x0A:
            raise _Unusual("unpacked list")
        length, pos = _varint(data, pos + 1)
        ranges.append((pos, pos + length))
        pos += length
        if kind != BYTES and pos != end:
            raise _Unusual("list in pieces")
    if pos != end:
        raise _Unusual("list length")
    free.extend(ranges)
    return ranges


def same_layout_columns(records: list[bytes], wanted: dict[bytes, int], kinds: list[int]) -> list[Any] | None:
    """Every wanted feature's column, when all records share one layout; else None.

    Records a writer made from one schema with fixed-size features (a label, a float vector, an
    image of fixed size...) have equal lengths, and every tag, key and length byte at the same
    place. The first record is scanned; one numpy comparison checks that every other record has
    the same bytes at all those places (so reading it would take the same path); then each
    feature is the same byte columns of every record: floats one ``view``, bytes values one slice
    per record. A record that differs anywhere but in the value bytes sends the batch back to the
    per-record scan.

    Returns:
        ``[(values, counts) or None per slot]`` (None: the feature is absent in every record), or
        None when the batch is not of one layout or a feature's kind is not ``kinds[slot]``.
    """
    size = len(records[0])
    if size == 0 or len(set(map(len, records))) != 1:
        return None
    first = records[0]
    free: list[Any] = []
    found = scan(first, wanted, len(kinds), free)
    spans: list[Any] = []
    for slot, where in enumerate(found):
        if where is None:
            spans.append(None)
            continue
        kind, start, end = where
        if kind != kinds[slot] and kind != EMPTY:
            return None  # a type error: the per-record path names the record
        spans.append(_list_ranges(first, kinds[slot], start, end, free))
    mask = np.ones(size, dtype=bool)
    for a, b in free:
        mask[a:b] = False
    rows = len(records)
    table = np.frombuffer(b"".join(records), dtype=np.uint8).reshape(rows, size)
    fixed = table[:, np.flatnonzero(mask)]
    if rows > 1 and not (fixed[1:] == fixed[0]).all():
        return None
    out: list[Any] = []
    for slot, ranges in enumerate(spans):
        if ranges is None:
            out.append(None)
            continue
        kind = kinds[slot]
        if kind == BYTES:
            values = [r[a:b] for r in records for a, b in ranges]
            out.append((values, np.full(rows, len(ranges), dtype=np.int64)))
            continue
        if not ranges:
            out.append((np.zeros(0, np.float32 if kind == FLOAT else np.int64), np.zeros(rows, np.int64)))
            continue
        a, b = ranges[0]
        block = table[:, a:b]
        if kind == FLOAT:
            if (b - a) & 3:
                return None
            out.append(
                (np.ascontiguousarray(block).view("<f4").astype(np.float32).reshape(-1), np.full(rows, (b - a) >> 2))
            )
            continue
        if (block < 0x80).all():  # one byte per value
            out.append((block.astype(np.int64).reshape(-1), np.full(rows, b - a, dtype=np.int64)))
            continue
        values_arr, ends = decode_varints(np.ascontiguousarray(block).tobytes())
        bounds = np.arange(1, rows + 1, dtype=np.int64) * (b - a)
        if not np.isin(bounds, ends).all():
            return None
        out.append((values_arr, np.diff(np.searchsorted(ends, bounds, side="right"), prepend=0)))
    return out


class _WrongKind(Exception):  # noqa: N818 - carries what the caller names in TF's type error
    """A record holds a feature as another list type than the spec's (the caller raises TF's error)."""

    def __init__(self, slot: int, index: int, kind: int) -> None:
        super().__init__(slot, index, kind)
        self.slot, self.index, self.kind = slot, index, kind


__all__ = [
    "BYTES",
    "EMPTY",
    "FLOAT",
    "INT64",
    "_WrongKind",
    "_Unusual",
    "column",
    "decode_varints",
    "same_layout_columns",
    "scan",
    "scan_columns",
    "varint_values",
]
