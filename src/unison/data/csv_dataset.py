"""``tf.data.experimental.CsvDataset``: CSV files read record by record, parsed as :mod:`unison.data.csv` does.

A file is read whole (after GZIP/ZLIB decompression), split into lines, lines joined where a quoted
field spans them, and the records decoded a chunk at a time, column by column.

Example:
    >>> import os, tempfile, unison as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("a,b\\n1,x\\n,y\\n")
    >>> ds = tf.data.experimental.CsvDataset(path, [tf.constant([0]), tf.string], header=True)
    >>> [(int(a), b.numpy()) for a, b in ds]
    [(1, b'x'), (0, b'y')]
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

from unison.data.context import IterContext
from unison.data.csv import _CHUNK, _columns, _decode_rows, _select, split_record
from unison.data.dataset import Dataset
from unison.data.sources import _files
from unison.data.specs import TensorSpec
from unison.errors import InvalidArgumentError


def _open_quote(record: bytes, delim: bytes) -> bool:
    """Whether ``record`` ends inside a quoted field (so the next line continues it)."""
    try:
        split_record(record, delim, True)
    except ValueError as exc:
        return str(exc).startswith("Reached end")
    return False


def read_records(path: str, compression: str, quoted: bool, delim: bytes = b",") -> Iterator[tuple[int, bytes]]:
    """``(line number, record)`` of a CSV file: lines, joined where a quoted field spans them."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        from unison.errors import NotFoundError

        raise NotFoundError(None, None, f"{path}; No such file or directory (a CsvDataset input)") from None
    if compression == "GZIP":
        data = gzip.decompress(data)
    elif compression == "ZLIB":
        data = zlib.decompress(data)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    pending: list[bytes] = []
    start = 0
    for number, line in enumerate(lines, 1):
        if pending:
            pending.append(line)
            if not _open_quote(b"\n".join(pending), delim):
                yield start, b"\n".join(pending).removesuffix(b"\r")
                pending = []
            continue
        if quoted and line.count(b'"') % 2 and _open_quote(line, delim):
            pending, start = [line], number
            continue
        yield number, line.removesuffix(b"\r")
    if pending:
        raise InvalidArgumentError(
            None, None, f"Reached end of file without closing quoted field in record (file {path}, line {start})."
        )


class CsvDataset(Dataset):
    """``tf.data.experimental.CsvDataset``: the records of CSV files, one tuple of column values each.

    Args:
        filenames: a path, a list of paths, or a dataset of paths.
        record_defaults: one per output column (see :func:`decode_csv`).
        compression_type: ``None``/``""``, ``"GZIP"`` or ``"ZLIB"``.
        buffer_size: accepted for TF compatibility (each file is read whole).
        header: skip each file's first record.
        field_delim, use_quote_delim, na_value: as :func:`decode_csv`.
        select_cols: sorted indices of the columns to keep.
        exclude_cols: sorted indices of the columns to drop (the others are kept).

    A malformed record raises :class:`~unison.errors.InvalidArgumentError` naming the file and line
    when the iteration reaches it.
    """

    def __init__(
        self,
        filenames: Any,
        record_defaults: Sequence[Any],
        compression_type: str | None = None,
        buffer_size: int | None = None,
        header: bool = False,
        field_delim: str = ",",
        use_quote_delim: bool = True,
        na_value: str = "",
        select_cols: Sequence[int] | None = None,
        exclude_cols: Sequence[int] | None = None,
        name: str | None = None,
    ) -> None:
        if compression_type not in (None, "", "GZIP", "ZLIB"):
            raise ValueError(f"compression_type must be None, '', 'GZIP' or 'ZLIB'. Received: {compression_type!r}")
        if len(field_delim) != 1:
            raise ValueError(f"field_delim must be one character. Received: field_delim={field_delim!r}")
        self.filenames = _files(filenames)
        self._csv_columns = _columns(record_defaults)
        cols = _select(len(self._csv_columns), select_cols, exclude_cols)
        self._cols: Any = ("exclude", cols) if exclude_cols is not None else cols
        self._compression = compression_type or ""
        self._header, self._quoted = bool(header), bool(use_quote_delim)
        self._delim, self._na = field_delim.encode(), na_value.encode()
        self._ignore_errors = False  # make_csv_dataset(ignore_errors=True) skips bad records

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        files = self.filenames
        if ctx.file_shard is not None:
            files = files[ctx.file_shard[1] :: ctx.file_shard[0]]
        for path in files:
            records = read_records(path, self._compression, self._quoted, self._delim)
            if self._header:
                next(records, None)
            while True:
                chunk = [r for _, r in zip(range(_CHUNK), records)]
                if not chunk:
                    break
                yield from self._rows(chunk, path)

    def _rows(self, chunk: list[tuple[int, bytes]], path: str) -> Iterator[Any]:
        def where(i: int, rows: list[tuple[int, bytes]] = chunk) -> str:
            return f"record at line {rows[i][0]} of {path}"

        decode = (self._csv_columns, self._delim, self._quoted, self._na, self._cols)
        try:
            cols = _decode_rows([r for _, r in chunk], *decode, where=where)
        except InvalidArgumentError:
            for item in chunk:  # again one record at a time: the good records before the bad one come out first
                try:
                    one = _decode_rows([item[1]], *decode, where=lambda _, it=item: where(0, [it]))
                except InvalidArgumentError:
                    if self._ignore_errors:
                        continue
                    raise
                yield tuple(c[0] for c in one)
            return
        for i in range(len(chunk)):
            yield tuple(c[i] for c in cols)

    def _spec(self) -> Any:
        return tuple(TensorSpec((), c.dtype) for c in self._csv_columns)


__all__ = ["CsvDataset", "read_records"]
