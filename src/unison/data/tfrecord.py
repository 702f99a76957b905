"""TFRecord files, byte-compatible with TensorFlow's: ``TFRecordDataset``, ``TFRecordWriter``, ``TFRecordOptions``.

A TFRecord file is a sequence of records, each framed as TF frames it
(``tensorflow/core/lib/io/record_writer.cc``)::

    uint64 length (little-endian) | uint32 masked_crc32c(length) | data[length] | uint32 masked_crc32c(data)

``masked_crc(c) = ((c >> 15) | (c << 17)) + 0xA282EAD8`` (mod 2**32) over CRC-32C (Castagnoli).
Both checksums are verified on read (each 4 MiB read's records at once: the lengths' checksums
once per distinct length, the data's with one C call per record, compared with numpy); a mismatch
or a file that ends inside a record raises
:class:`CorruptRecordError` (a ``tf.errors.DataLossError``, as TF raises) naming the file and the
record's offset in the (uncompressed) record stream. ``"GZIP"`` files are gzip streams and
``"ZLIB"`` files zlib streams of that framing, as TF writes them.

CRC-32C comes from the ``google-crc32c`` package (Google's C implementation, used by the GCS
client libraries; ``pip install "unison[tf]"``).

Example:
    >>> import os, tempfile, unison as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "demo.tfrecord")
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     writer.write(b"first")
    ...     writer.write(b"second")
    >>> [r.item() for r in tf.data.TFRecordDataset(path)]
    [b'first', b'second']
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Any

import numpy as np

from unison.data.context import IterContext
from unison.data.dataset import Dataset
from unison.data.sources import _files
from unison.data.specs import TensorSpec
from unison.errors import CorruptRecordError
from unison.ops.record_origin import Ring, new_ring

_MASK_DELTA = 0xA282EAD8
_COMPRESSIONS = ("", "GZIP", "ZLIB")


def _crc_function() -> Callable[[bytes], int]:
    try:
        import google_crc32c
    except ImportError:
        raise ImportError(
            "TFRecord files need the google-crc32c package (CRC-32C checksums). Install it with "
            '`pip install "unison[tf]"` (or `pip install google-crc32c`).'
        ) from None
    value: Callable[[bytes], int] = google_crc32c.value
    return value


def masked_crc32c(data: bytes, crc: Callable[[bytes], int] | None = None) -> int:
    """TF's masked CRC-32C of ``data`` (what each record stores twice).

    Example:
        >>> hex(masked_crc32c(b"abc"))
        '0x21f1576e'
    """
    c = (crc or _crc_function())(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def _compression(value: Any, who: str) -> str:
    if isinstance(value, TFRecordOptions):
        return value.compression_type
    kind = "" if value is None else value
    if kind not in _COMPRESSIONS:
        raise ValueError(f"{who}: compression_type must be None, '', 'GZIP' or 'ZLIB'. Received: {value!r}")
    return str(kind)


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: how a TFRecord file is compressed (``""``, ``"GZIP"`` or ``"ZLIB"``).

    ``compression_level`` (0-9) and ``window_bits`` are honoured for GZIP/ZLIB; TF's buffer and
    zlib tuning arguments are accepted and have no effect.
    """

    compression_type_map = {"": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}

    def __init__(
        self,
        compression_type: str | None = None,
        flush_mode: int | None = None,
        input_buffer_size: int | None = None,
        output_buffer_size: int | None = None,
        window_bits: int | None = None,
        compression_level: int | None = None,
        compression_method: int | None = None,
        mem_level: int | None = None,
        compression_strategy: int | None = None,
    ) -> None:
        self.compression_type = _compression(compression_type, "tf.io.TFRecordOptions")
        if compression_level is not None and not (isinstance(compression_level, int) and -1 <= compression_level <= 9):
            raise ValueError(f"compression_level must be an integer in [-1, 9]. Received: {compression_level!r}")
        self.compression_level = compression_level
        self.window_bits = window_bits
        self.flush_mode, self.input_buffer_size, self.output_buffer_size = (
            flush_mode,
            input_buffer_size,
            output_buffer_size,
        )
        self.compression_method, self.mem_level, self.compression_strategy = (
            compression_method,
            mem_level,
            compression_strategy,
        )

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        """``""``, ``"GZIP"`` or ``"ZLIB"`` for options, a string or None."""
        return _compression(options, "TFRecordOptions.get_compression_type_string")

    def __repr__(self) -> str:
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


class _ZlibWriter(io.RawIOBase):
    def __init__(self, raw: IO[bytes], level: int, wbits: int) -> None:
        self._raw, self._z, self._done = raw, zlib.compressobj(level, zlib.DEFLATED, wbits), False

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._raw.write(self._z.compress(bytes(data)))
        return len(data)

    def flush(self) -> None:
        if not self._done:
            self._raw.write(self._z.flush(zlib.Z_SYNC_FLUSH))
            self._raw.flush()

    def close(self) -> None:
        if not self._done:
            self._raw.write(self._z.flush(zlib.Z_FINISH))
            self._done = True
            self._raw.close()
        super().close()


class _ZlibReader(io.RawIOBase):
    def __init__(self, raw: IO[bytes]) -> None:
        self._raw, self._z, self._pending = raw, zlib.decompressobj(), b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            chunk = self._raw.read(1 << 16)
            if not chunk:
                self._pending = self._z.flush()
                break
            self._pending = self._z.decompress(chunk)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


class TFRecordWriter:
    """``tf.io.TFRecordWriter``: write records (bytes) to a TFRecord file TF can read.

    Args:
        path: the file to create (overwritten).
        options: a ``TFRecordOptions`` or a compression type string (``""``, ``"GZIP"``, ``"ZLIB"``).

    Example:
        >>> import os, tempfile, unison as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "x.tfrecord.gz")
        >>> with tf.io.TFRecordWriter(path, options="GZIP") as w:
        ...     w.write(b"payload")
        >>> [r.item() for r in tf.data.TFRecordDataset(path, compression_type="GZIP")]
        [b'payload']
    """

    def __init__(self, path: str | os.PathLike[str], options: TFRecordOptions | str | None = None) -> None:
        opts = (
            options
            if isinstance(options, TFRecordOptions)
            else TFRecordOptions(_compression(options, "TFRecordWriter"))
        )
        self.path = os.fspath(path)
        self._crc = _crc_function()
        level = 6 if opts.compression_level in (None, -1) else int(opts.compression_level)  # TF's default level
        bits = opts.window_bits or zlib.MAX_WBITS
        raw = open(self.path, "wb")
        self._fh: IO[bytes]
        if opts.compression_type == "GZIP":
            self._fh = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=level, mtime=0)  # type: ignore[assignment]
            self._raw: IO[bytes] | None = raw  # GzipFile does not close a fileobj it was given
        elif opts.compression_type == "ZLIB":
            self._fh, self._raw = io.BufferedWriter(_ZlibWriter(raw, level, bits)), None
        else:
            self._fh, self._raw = raw, None

    def write(self, record: Any) -> None:
        """Append one record (``bytes``, a ``str`` (UTF-8) or a 0-d string array)."""
        if isinstance(record, np.ndarray) and record.ndim == 0:
            record = record.item()
        if isinstance(record, str):
            record = record.encode("utf-8")
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"TFRecordWriter.write takes bytes (e.g. example.SerializeToString()). Received: {type(record).__name__}"
            )
        data = bytes(record)
        header = struct.pack("<Q", len(data))
        self._fh.write(header + struct.pack("<I", masked_crc32c(header, self._crc)))
        self._fh.write(data)
        self._fh.write(struct.pack("<I", masked_crc32c(data, self._crc)))

    def flush(self) -> None:
        """Push what was written to the file."""
        self._fh.flush()

    def close(self) -> None:
        """Finish the file (a compressed stream is only complete once closed)."""
        if not self._fh.closed:
            self._fh.close()
        if self._raw is not None and not self._raw.closed:
            self._raw.close()

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open(path: str, compression: str) -> IO[bytes]:
    if compression == "GZIP":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if compression == "ZLIB":
        return io.BufferedReader(_ZlibReader(open(path, "rb")), 1 << 16)
    return open(path, "rb", buffering=1 << 20)


_CHUNK = 1 << 22  # records are cut from 4 MiB reads: no read() call per record
_U32 = np.dtype("<u4")


def _masked(crcs: np.ndarray) -> np.ndarray:
    """TF's mask of each CRC-32C (uint64 arithmetic, reduced mod 2**32)."""
    return ((((crcs >> 15) | (crcs << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def _u32_at(raw: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The little-endian uint32 at each of ``pos`` in ``raw`` (uint8), as uint64."""
    return np.ascontiguousarray(raw[pos[:, None] + np.arange(4)]).view(_U32).reshape(-1).astype(np.uint64)


def _walk(buf: bytes, unpack_q: Callable[[bytes, int], tuple[Any, ...]]) -> tuple[list[int], int]:
    """Where each record that ``buf`` holds whole starts (its length prefixes followed, nothing checked yet), and
    where the first incomplete one starts. A damaged length sends the walk astray: the header check finds it."""
    starts: list[int] = []
    append = starts.append
    n = len(buf)
    limit = n - 16
    pos = 0
    while pos <= limit:
        end = pos + 16 + unpack_q(buf, pos)[0]
        if end > n:
            break
        append(pos)
        pos = end
    return starts, pos


def _verified(
    buf: bytes, starts: list[int], stop: int, base: int, crc: Callable[[bytes], int], path: str
) -> tuple[list[bytes], list[int], list[int], CorruptRecordError | None]:
    """The records at ``starts`` (the last ending at ``stop``) with both checksums verified, their CRC-32Cs and
    stream offsets; and the error for the first damaged record (the records before it are returned).

    The lengths' checksums are computed once per distinct length and compared for all records with
    numpy; the data's with one C call per record (``map``), compared with numpy.
    """
    raw = np.frombuffer(buf, dtype=np.uint8)
    at = np.array(starts, dtype=np.int64)
    lengths = np.empty_like(at)
    lengths[:-1] = at[1:] - at[:-1]
    lengths[-1] = stop - at[-1]
    lengths -= 16
    distinct, which = np.unique(lengths, return_inverse=True)
    header = np.array([crc(struct.pack("<Q", n)) for n in distinct.tolist()], dtype=np.uint64)
    bad = np.flatnonzero(_masked(header)[which.reshape(-1)] != _u32_at(raw, at + 8))
    good = int(bad[0]) if bad.size else len(starts)
    first = at[:good] + 12
    records = [buf[a:b] for a, b in zip(first.tolist(), (first + lengths[:good]).tolist())]
    crcs = list(map(crc, records))
    wrong = np.flatnonzero(_masked(np.array(crcs, dtype=np.uint64)) != _u32_at(raw, first + lengths[:good]))
    error = None
    if wrong.size:
        good = int(wrong[0])
        error = CorruptRecordError(path, base + starts[good], "the data's checksum does not match")
        del records[good:], crcs[good:]
    elif good < len(starts):
        error = CorruptRecordError(path, base + starts[good], "the length's checksum does not match")
    return records, crcs, (at[:good] + base).tolist(), error


def _check_header(buf: bytes, pos: int, base: int, crc: Callable[[bytes], int], path: str) -> int:
    """The length at ``buf[pos:]`` (12 bytes there at least), after checking its checksum: a damaged length
    must not make the reader wait for (or read) that many bytes."""
    c = crc(buf[pos : pos + 8])
    if (((c >> 15 | c << 17) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF != struct.unpack_from("<I", buf, pos + 8)[0]:
        raise CorruptRecordError(path, base + pos, "the length's checksum does not match")
    length: int = struct.unpack_from("<Q", buf, pos)[0]
    return length


def read_blocks(path: str, compression_type: str = "") -> Iterator[list[bytes]]:
    """The records of one TFRecord file in lists (one per 4 MiB read), checksums verified.

    Each read's records are found by following their length prefixes in a tight loop, checked
    with a few numpy operations and one C checksum call per record, cut from the read (one copy:
    the record's bytes) and noted for parse errors (:mod:`unison.ops.record_origin`). A damaged or
    truncated record raises :class:`CorruptRecordError` naming the file and its offset, after the
    records before it were given.
    """
    crc = _crc_function()
    unpack_q = struct.Struct("<Q").unpack_from
    base = 0  # the stream offset of buf[0]
    try:
        fh = _open(path, compression_type)
    except FileNotFoundError:
        from unison.errors import NotFoundError

        raise NotFoundError(f"{path}; No such file or directory (a TFRecordDataset input)") from None

    def more(n: int, at: int) -> bytes:
        try:
            return fh.read(n)
        except (OSError, EOFError, zlib.error) as exc:
            raise CorruptRecordError(path, at, f"the compressed stream cannot be read ({exc})") from None

    ring: Ring | None = None
    with fh:
        buf = more(_CHUNK, 0)
        while True:
            starts, pos = _walk(buf, unpack_q)
            if starts:
                records, crcs, offsets, error = _verified(buf, starts, pos, base, crc, path)
                if records:
                    if ring is None:
                        ring = new_ring(path, crc)
                    ring.note(records, crcs, offsets)
                    yield records
                if error is not None:
                    raise error
            rest = len(buf) - pos
            need = 16 + _check_header(buf, pos, base, crc, path) if rest >= 12 else 12
            extra = more(max(_CHUNK, need - rest), base + pos)
            if not extra:
                if not rest:
                    return
                if rest < 12:
                    raise CorruptRecordError(
                        path, base + pos, f"truncated record: the file ends {rest} bytes into a header"
                    )
                raise CorruptRecordError(
                    path, base + pos, f"truncated record: {need - 16} bytes of data announced, the file ends first"
                )
            buf = buf[pos:] + extra
            base += pos


def read_records(path: str, compression_type: str = "") -> Iterator[bytes]:
    """The records of one TFRecord file, checksums verified (:class:`CorruptRecordError` otherwise).

    Example:
        >>> import os, tempfile, unison as tf
        >>> path = os.path.join(tempfile.mkdtemp(), "r.tfrecord")
        >>> with tf.io.TFRecordWriter(path) as w:
        ...     w.write(b"a")
        >>> list(read_records(path))
        [b'a']
    """
    for block in read_blocks(path, compression_type):
        yield from block


def _scalar(data: bytes) -> np.ndarray:
    # an object array: numpy's fixed-width bytes dtype would drop trailing NUL bytes of the record
    out = np.empty((), dtype=object)
    out[()] = data
    return out


class TFRecordDataset(Dataset):
    """``tf.data.TFRecordDataset``: the records of TFRecord files, as 0-d numpy ``bytes`` arrays (``tf.string``).

    Args:
        filenames: a path, a list of paths, or a dataset of paths (``list_files``).
        compression_type: ``None``/``""``, ``"GZIP"`` or ``"ZLIB"``.
        buffer_size: accepted for TF compatibility (files are read through a 1 MiB buffer).
        num_parallel_reads: read this many files at a time, interleaving their records one by one
            in TF's deterministic order (file 0's first record, file 1's first, ...; a finished
            file's slot takes the next file). Reading stays in the iterating thread; put
            ``.map(..., num_parallel_calls=...)`` after it for parallel parsing.

    A file-based source: under ``AutoShardPolicy.FILE`` (or ``AUTO``) each worker reads its share
    of ``filenames``.
    """

    def __init__(
        self,
        filenames: Any,
        compression_type: str | None = None,
        buffer_size: int | None = None,
        num_parallel_reads: int | None = None,
        name: str | None = None,
    ) -> None:
        self._compression = _compression(compression_type, "tf.data.TFRecordDataset")
        self.filenames = _files(filenames)
        if (
            num_parallel_reads is not None
            and num_parallel_reads != -1
            and (
                isinstance(num_parallel_reads, bool)
                or not isinstance(num_parallel_reads, int)
                or num_parallel_reads < 1
            )
        ):
            raise ValueError(
                "num_parallel_reads must be None, a positive integer or tf.data.AUTOTUNE. "
                f"Received: num_parallel_reads={num_parallel_reads!r}"
            )
        self._parallel = num_parallel_reads
        _crc_function()  # fail at construction, not at the first element, when the package is missing

    def _files(self, ctx: IterContext) -> list[str]:
        files: list[str] = self.filenames
        return files if ctx.file_shard is None else files[ctx.file_shard[1] :: ctx.file_shard[0]]

    def _blocks(self, ctx: IterContext) -> Iterator[list[bytes]]:
        """Every record, in TF's order, in lists: a file's reads one after another, or with
        ``num_parallel_reads`` the files' records interleaved one by one (lists of one cycle)."""
        files = self._files(ctx)
        cycle = 1 if self._parallel is None else len(files) if self._parallel == -1 else self._parallel
        if cycle <= 1:
            for path in files:
                yield from read_blocks(path, self._compression)
            return
        pending = iter(files)
        slots: list[Iterator[bytes]] = []
        for path in pending:
            slots.append(read_records(path, self._compression))
            if len(slots) == cycle:
                break
        while slots:
            out: list[bytes] = []
            i = 0
            while i < len(slots):
                try:
                    out.append(next(slots[i]))
                except StopIteration:
                    nxt = next(pending, None)
                    if nxt is None:
                        slots.pop(i)
                    else:
                        slots[i] = read_records(nxt, self._compression)
                    continue
                except Exception:
                    if out:  # the records before the damaged one are given first
                        yield out
                    raise
                i += 1
            if out:
                yield out

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        for block in self._blocks(ctx):
            yield from map(_scalar, block)

    def _record_batches(self, ctx: IterContext, size: int, drop_remainder: bool) -> Iterator[np.ndarray]:
        """``batch(size)`` of the records cut straight from the reader's lists: one object array per
        batch, without a 0-d array per record and a stack per batch (``Batch`` asks for this)."""
        held: list[bytes] = []
        for block in self._blocks(ctx):
            held.extend(block)
            if len(held) < size:
                continue
            end = len(held) - len(held) % size
            for i in range(0, end, size):
                out = np.empty(size, dtype=object)
                out[:] = held[i : i + size]
                yield out
            del held[:end]
        if held and not drop_remainder:
            out = np.empty(len(held), dtype=object)
            out[:] = held
            yield out

    def _spec(self) -> Any:
        return TensorSpec((), "string")


__all__ = [
    "CorruptRecordError",
    "TFRecordDataset",
    "TFRecordOptions",
    "TFRecordWriter",
    "masked_crc32c",
    "read_blocks",
    "read_records",
]
