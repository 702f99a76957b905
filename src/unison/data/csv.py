"""CSV input, as TensorFlow reads it: ``tf.io.decode_csv``, ``tf.data.experimental.CsvDataset`` and
``tf.data.experimental.make_csv_dataset``.

TF's quoting rules (RFC 4180, ``tensorflow/core/kernels/data/experimental/csv_dataset_op.cc``): with
``use_quote_delim`` a field that starts with ``"`` is quoted, ``""`` inside it is one quote, the
closing quote must be followed by the delimiter or the end of the record, a quote inside an
unquoted field is an error, and a quoted field may span lines. An empty field (or one equal to
``na_value``) takes its column's default; a column without a default (a dtype or an empty tensor)
makes it an :class:`~unison.errors.InvalidArgumentError`. Int and float fields may carry leading
and trailing spaces. Numbers come out as torch tensors (int32, int64, float32, float64), strings as
``StringTensor`` of ``bytes``.

``CsvDataset`` lives in :mod:`unison.data.csv_dataset`, ``make_csv_dataset`` in
:mod:`unison.data.csv_make`. Records are split with ``bytes.split`` when they hold no quote (the common case) and by a small
scanner otherwise; columns are converted a chunk of records at a time.

Example:
    >>> import unison as tf
    >>> a, b = tf.io.decode_csv(["1,x", '2,"y,z"'], record_defaults=[[0], [""]])
    >>> a.tolist(), b.numpy().tolist()
    ([1, 2], [b'x', b'y,z'])
"""

from __future__ import annotations

import csv as _csv
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from unison.data.specs import STRING, _dtype
from unison.errors import InvalidArgumentError
from unison.ops.string_tensor import StringTensor

_CHUNK = 1024
_NUMERIC = (torch.int32, torch.int64, torch.float32, torch.float64)


class _Column:
    """One output column: its dtype and its default (``None``: the field is required)."""

    def __init__(self, dtype: torch.dtype | str, default: Any) -> None:
        self.dtype, self.default = dtype, default


def _column(spec: Any, index: int) -> _Column:
    """A column from one ``record_defaults`` item: a dtype (required), or a tensor/list of 0 or 1 values."""
    if isinstance(spec, (torch.dtype, str)) and not isinstance(spec, np.ndarray) or hasattr(spec, "is_floating"):
        if isinstance(spec, str) and spec not in ("string", "int32", "int64", "float32", "float64"):
            spec = np.asarray(spec)  # a Python string is a default value, not a dtype name
        else:
            return _checked(_dtype(spec), None, index)
    if not isinstance(spec, (torch.Tensor, np.ndarray)) and type(spec).__name__ == "StringDType":
        return _checked(STRING, None, index)
    if isinstance(spec, torch.Tensor):
        values = spec.reshape(-1)
        default = None if values.numel() == 0 else values[0].item()
        return _checked(spec.dtype, default, index)
    arr = np.asarray(spec.view(np.ndarray) if isinstance(spec, np.ndarray) else spec)
    if arr.dtype.kind in "OUS":
        flat = arr.reshape(-1)
        default = None if flat.size == 0 else flat[0]
        return _checked(STRING, default.encode() if isinstance(default, str) else default, index)
    if arr.size == 0 and arr.dtype == np.float64:
        raise ValueError(
            f"record_defaults[{index}] is an empty list, which has no dtype. Expected a dtype "
            "(tf.int32) or an empty tensor of one (tf.constant([], tf.int32)) for a required column."
        )
    kind = {"i": torch.int32, "u": torch.int32, "b": torch.int32, "f": torch.float32}.get(arr.dtype.kind)
    if kind is None:
        raise ValueError(f"record_defaults[{index}] has dtype {arr.dtype}, not a CSV type.")
    if arr.dtype in (np.int64, np.float64) and not isinstance(spec, (list, tuple, int, float)):
        kind = torch.from_numpy(arr.reshape(-1)[:0]).dtype
    flat = arr.reshape(-1)
    return _checked(kind, None if flat.size == 0 else flat[0].item(), index)


def _checked(dtype: torch.dtype | str, default: Any, index: int) -> _Column:
    if dtype != STRING and dtype not in _NUMERIC:
        raise ValueError(
            f"record_defaults[{index}] has dtype {dtype}; a CSV column must be one of float32, "
            "float64, int32, int64 or string."
        )
    return _Column(dtype, default)


def _columns(record_defaults: Sequence[Any]) -> list[_Column]:
    if isinstance(record_defaults, (str, bytes)) or not isinstance(record_defaults, Sequence):
        record_defaults = list(record_defaults)
    if not record_defaults:
        raise ValueError("record_defaults must name at least one column (a dtype or a default per column).")
    return [_column(spec, i) for i, spec in enumerate(record_defaults)]


def split_record(record: bytes, delim: bytes, quoted: bool) -> list[bytes]:
    """The fields of one record, by TF's quoting rules (:class:`ValueError` for a malformed one)."""
    if not quoted or b'"' not in record:
        return record.split(delim)
    fields: list[bytes] = []
    i, n = 0, len(record)
    while True:
        if record[i : i + 1] == b'"':
            parts, j = [], i + 1
            while True:
                k = record.find(b'"', j)
                if k < 0:
                    raise ValueError("Reached end of file without closing quoted field")
                parts.append(record[j:k])
                if record[k + 1 : k + 2] == b'"':
                    parts.append(b'"')
                    j = k + 2
                    continue
                break
            fields.append(b"".join(parts))
            i = k + 1
            if i == n:
                return fields
            if record[i : i + len(delim)] != delim:
                raise ValueError("Quoted field has to end with quote followed by delim or end")
            i += len(delim)
        else:
            j = record.find(delim, i)
            field = record[i:] if j < 0 else record[i:j]
            if b'"' in field:
                raise ValueError("Unquoted fields cannot have quotes inside")
            fields.append(field)
            if j < 0:
                return fields
            i = j + len(delim)


def _convert(fields: list[bytes], col: _Column, na: bytes, where: str) -> Any:
    """One column's fields as a tensor: empty/NA fields take the default (or raise when required)."""
    if col.default is None and any(f == b"" or f == na for f in fields):
        raise InvalidArgumentError(
            None,
            None,
            f"The {where} is required but empty (or na_value), and its column has no default. "
            "Give the column a default in record_defaults (a one-value tensor) to allow empty fields.",
        )
    default = col.default
    if col.dtype == STRING:
        fill = default if isinstance(default, bytes) else str(default).encode() if default is not None else b""
        out = np.empty(len(fields), dtype=object)
        out[:] = [fill if (f == b"" or f == na) else f for f in fields]
        return StringTensor(out)
    parse = float if col.dtype in (torch.float32, torch.float64) else int
    try:
        values = [default if (f == b"" or f == na) else parse(f) for f in fields]
        if any(b"_" in f for f in fields):  # Python's int/float take 1_000; TF's strtol/strtod do not
            raise ValueError
    except ValueError:
        bad = next(f for f in fields if f not in (b"", na) and (b"_" in f or not _parses(parse, f)))
        name = str(col.dtype).replace("torch.", "")
        raise InvalidArgumentError(
            None,
            None,
            f"The {where} is not a valid {name}: {bad!r}. Expected a number (or an empty field for the default).",
        ) from None
    numpy_dtypes: dict[Any, Any] = {torch.int32: np.int32, torch.int64: np.int64, torch.float32: np.float32}
    np_dtype = numpy_dtypes.get(col.dtype, np.float64)
    if parse is int:
        info = np.iinfo(np_dtype)
        if len(values) and (min(values) < info.min or max(values) > info.max):
            raise InvalidArgumentError(
                None,
                None,
                f"The {where} is out of the range of {str(col.dtype).replace('torch.', '')}: give that column a wider dtype (int64) in record_defaults.",
            )
    return torch.from_numpy(np.asarray(values, dtype=np_dtype))


def _parses(parse: Any, field: bytes) -> bool:
    try:
        parse(field)
    except ValueError:
        return False
    return True


def _select(n_defaults: int, select_cols: Any, exclude_cols: Any = None) -> list[int] | None:
    if select_cols is not None and exclude_cols is not None:
        raise ValueError("Pass at most one of select_cols and exclude_cols.")
    cols = select_cols if select_cols is not None else exclude_cols
    if cols is None:
        return None
    cols = [int(c) for c in cols]
    if any(b <= a for a, b in zip(cols, cols[1:])) or any(c < 0 for c in cols):
        raise InvalidArgumentError(None, None, f"select_cols/exclude_cols must be sorted, unique and >= 0: {cols}.")
    if select_cols is not None and len(cols) != n_defaults:
        raise InvalidArgumentError(
            None, None, f"len(select_cols) ({len(cols)}) must equal len(record_defaults) ({n_defaults})."
        )
    return cols


def _split_quoted(rows: list[bytes], delim: bytes) -> dict[int, list[bytes]]:
    """The fields of the rows holding quotes, by the C ``csv`` reader (strict: TF's rules for a
    closing quote); a row it rejects, or whose fields keep a quote (a quote inside an unquoted field
    is TF's error, ``""`` inside a quoted one is not), is left to :func:`split_record`."""
    index = [i for i, rec in enumerate(rows) if b'"' in rec and b"\r" not in rec]
    if not index:
        return {}
    texts = [rows[i].decode("latin-1") for i in index]  # latin-1: every byte maps to one char and back
    try:
        parsed = list(_csv.reader(texts, delimiter=delim.decode("latin-1"), strict=True))
    except _csv.Error:
        return {}
    if len(parsed) != len(index):
        return {}
    return {
        i: [f.encode("latin-1") for f in fields]
        for i, fields, text in zip(index, parsed, texts)
        if fields and not any('"' in f for f in fields) and text.count('"') % 2 == 0
    }


def _decode_rows(
    rows: list[bytes], columns: list[_Column], delim: bytes, quoted: bool, na: bytes, cols: Any, where: Any
) -> list[Any]:
    """Columns of ``rows``; ``cols`` is the selected indices (or ``("exclude", list)``)."""
    n_out = len(columns)
    split: list[list[bytes]] = []
    fast = _split_quoted(rows, delim) if quoted else {}
    for r, rec in enumerate(rows):
        try:
            fields = fast[r] if r in fast else split_record(rec, delim, quoted)
        except ValueError as exc:
            raise InvalidArgumentError(None, None, f"{exc} in {where(r)}.") from None
        if cols is None:
            if len(fields) != n_out:
                raise InvalidArgumentError(None, None, f"Expect {n_out} fields but have {len(fields)} in {where(r)}.")
        elif isinstance(cols, tuple):
            excluded = cols[1]
            if len(fields) != n_out + len(excluded):
                raise InvalidArgumentError(
                    None, None, f"Expect {n_out + len(excluded)} fields but have {len(fields)} in {where(r)}."
                )
            drop = set(excluded)
            fields = [f for i, f in enumerate(fields) if i not in drop]
        else:
            if len(fields) <= cols[-1]:
                raise InvalidArgumentError(
                    None, None, f"Expect at least {cols[-1] + 1} fields but have {len(fields)} in {where(r)}."
                )
            fields = [fields[i] for i in cols]
        split.append(fields)
    by_col = list(zip(*split)) if split else [() for _ in columns]
    out = []
    for c, col in enumerate(columns):
        try:
            out.append(_convert(list(by_col[c]), col, na, "field of these records"))
        except InvalidArgumentError:
            for r, fields in enumerate(split):  # find the record, to name it
                _convert([fields[c]], col, na, f"field {c} of {where(r)}")
            raise
    return out


def decode_csv(
    records: Any,
    record_defaults: Sequence[Any],
    field_delim: str = ",",
    use_quote_delim: bool = True,
    na_value: str = "",
    select_cols: Sequence[int] | None = None,
    name: str | None = None,
) -> list[Any]:
    """``tf.io.decode_csv``: each string of ``records`` parsed into one value per column.

    Args:
        records: a string tensor (any shape) of CSV records.
        record_defaults: one per output column: a dtype or empty tensor (required) or a one-value
            tensor/list (the default for an empty field); its dtype is the column's.
        field_delim: the one-character delimiter.
        use_quote_delim: apply RFC 4180 quoting (``False``: quotes are ordinary characters).
        na_value: a field equal to this is missing.
        select_cols: sorted column indices to keep (one ``record_defaults`` item each).
        name: unused (TF's op name).

    Returns:
        One tensor per column, each of ``records``' shape.
    """
    if len(field_delim) != 1:
        raise ValueError(f"field_delim must be one character. Received: field_delim={field_delim!r}")
    columns = _columns(record_defaults)
    cols = _select(len(columns), select_cols)
    arr = np.asarray(records.numpy() if hasattr(records, "numpy") else records, dtype=object)
    shape = arr.shape
    rows = [r.encode() if isinstance(r, str) else bytes(r) for r in arr.reshape(-1).tolist()]
    try:
        out = _decode_rows(
            rows, columns, field_delim.encode(), use_quote_delim, na_value.encode(), cols, lambda r: f"record {r}"
        )
    except InvalidArgumentError as exc:  # name the op, as the message of a tf.* function does
        raise InvalidArgumentError(f"tf.io.decode_csv: {exc}") from None
    return [o.reshape(shape) for o in out]


__all__ = ["decode_csv", "split_record"]
