"""``tf.io``'s whole-file functions: ``read_file``, ``write_file``, ``matching_files`` and the
string codecs ``encode_base64``/``decode_base64``/``decode_compressed``, on the local file system.

A file's contents are a scalar ``tf.string`` (:class:`~unison.ops.string_tensor.StringTensor`
holding ``bytes``), which the image decoders of :mod:`unison.ops.image_codecs` take as they are.

Example:
    >>> import os, tempfile, unison as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "a", "b.txt")
    >>> tf.io.write_file(path, "hello")
    >>> tf.io.read_file(path).numpy()
    b'hello'
    >>> [os.path.basename(p) for p in tf.io.matching_files(os.path.dirname(path) + "/*.txt").numpy()]
    [b'b.txt']
"""

from __future__ import annotations

import base64
import csv
import glob
import gzip
import os
import zlib
from typing import Any

import numpy as np
import torch

from unison.errors import DataLossError, InvalidArgumentError, NotFoundError
from unison.ops.dtypes import as_dtype, is_string_value, string, to_tensor
from unison.ops.string_tensor import StringTensor

__all__ = [
    "decode_base64",
    "decode_compressed",
    "decode_csv",
    "encode_base64",
    "matching_files",
    "read_file",
    "write_file",
]


def _strings(value: Any) -> np.ndarray:
    return np.asarray(value.numpy() if isinstance(value, StringTensor) else value, dtype=object)


def _scalar_path(filename: Any, op: str, argument: str = "filename") -> str:
    array = _strings(filename)
    if array.ndim != 0:
        raise InvalidArgumentError(
            None, None, f"{op}: `{argument}` must be a scalar string, got shape {list(array.shape)}."
        )
    item = array.item()
    path = item.decode() if isinstance(item, (bytes, bytearray)) else str(os.fspath(item))
    if "://" in path:
        raise InvalidArgumentError(None, None, f"{op}: unison reads local paths only. Received {argument}={path!r}.")
    return path


def _scalar(data: bytes) -> StringTensor:
    out = np.empty((), dtype=object)
    out[()] = data
    return StringTensor(out)


def read_file(filename: Any, name: str | None = None) -> StringTensor:
    """``tf.io.read_file``: a file's whole contents as a scalar ``tf.string``.

    Raises:
        NotFoundError: the file does not exist (TF's error class), naming it.
    """
    path = _scalar_path(filename, "tf.io.read_file")
    try:
        with open(path, "rb") as handle:
            return _scalar(handle.read())
    except FileNotFoundError:
        raise NotFoundError(None, None, f"tf.io.read_file: {path}; No such file or directory") from None
    except IsADirectoryError:
        raise InvalidArgumentError(None, None, f"tf.io.read_file: {path} is a directory, not a file.") from None


def write_file(filename: Any, contents: Any, name: str | None = None) -> None:
    """``tf.io.write_file``: write a scalar string to ``filename``, making missing directories (as TF does)."""
    path = _scalar_path(filename, "tf.io.write_file")
    array = _strings(contents)
    if array.ndim != 0:
        raise InvalidArgumentError(
            None, None, f"tf.io.write_file: `contents` must be a scalar string, got shape {list(array.shape)}."
        )
    item = array.item()
    data = item.encode() if isinstance(item, str) else bytes(item)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def matching_files(pattern: Any, name: str | None = None) -> StringTensor:
    """``tf.io.matching_files``: the files matching a glob ``pattern`` (or a list of them), sorted.

    No match gives an empty 1-D string tensor, as in TF.
    """
    patterns = _strings(pattern)
    if patterns.ndim > 1:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.io.matching_files: `pattern` must be a scalar or a vector, got shape {list(patterns.shape)}.",
        )
    found: list[bytes] = []
    for item in patterns.reshape(-1).tolist():
        text = item.decode() if isinstance(item, (bytes, bytearray)) else str(item)
        found.extend(sorted(p.encode() for p in glob.glob(text)))
    return StringTensor(np.array(found, dtype=object).reshape(len(found)))


def _map_strings(value: Any, fn: Any) -> StringTensor:
    array = _strings(value)
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        out[index] = fn(item.encode() if isinstance(item, str) else bytes(item))
    return StringTensor(out)


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> StringTensor:
    """``tf.io.encode_base64``: web-safe base64 (``-`` and ``_``), without ``=`` padding unless ``pad``."""

    def encode(data: bytes) -> bytes:
        text = base64.urlsafe_b64encode(data)
        return text if pad else text.rstrip(b"=")

    return _map_strings(input, encode)


def decode_base64(input: Any, name: str | None = None) -> StringTensor:
    """``tf.io.decode_base64``: the inverse of :func:`encode_base64` (padding optional)."""

    def decode(data: bytes) -> bytes:
        stripped = data.rstrip(b"=")
        if len(stripped) % 4 == 1 or not all(c in _WEB_SAFE for c in stripped):
            raise InvalidArgumentError(
                None,
                None,
                f"tf.io.decode_base64: Invalid character found in base64 (web-safe alphabet expected). "
                f"Received {data[:40]!r}.",
            )
        return base64.urlsafe_b64decode(stripped + b"=" * (-len(stripped) % 4))

    return _map_strings(input, decode)


_WEB_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def decode_compressed(bytes: Any, compression_type: str = "", name: str | None = None) -> StringTensor:  # noqa: A002
    """``tf.io.decode_compressed``: decompress each string (``""``: as is, ``"ZLIB"`` or ``"GZIP"``)."""
    kind = str(compression_type).upper()
    if kind not in ("", "ZLIB", "GZIP"):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.io.decode_compressed: compression_type must be '', 'ZLIB' or 'GZIP'. Received {compression_type!r}.",
        )

    def decode(data: bytes) -> bytes:
        try:
            return data if not kind else zlib.decompress(data) if kind == "ZLIB" else gzip.decompress(data)
        except (zlib.error, OSError, EOFError) as exc:
            raise DataLossError(None, None, f"tf.io.decode_compressed: the {kind} data is invalid ({exc}).") from None

    return _map_strings(bytes, decode)


def _column_default(default: Any, column: int) -> tuple[Any, Any]:
    """``(dtype, default value or None when required)`` of one ``record_defaults`` entry."""
    if isinstance(default, StringTensor) or is_string_value(default):
        values = _strings(default).reshape(-1).tolist()
        return string, (values[0] if values else None)
    if isinstance(default, (list, tuple)) and not default:
        return torch.float32, None  # TF reads [] as an empty float32 tensor: a required float column
    t = to_tensor(default)
    if t.dtype not in (torch.int32, torch.int64, torch.float32, torch.float64):
        raise TypeError(
            f"tf.io.decode_csv: record_defaults[{column}] must be int32, int64, float32, float64 or string. "
            f"Received dtype {t.dtype}."
        )
    values = t.reshape(-1).tolist()
    return t.dtype, (values[0] if values else None)


def _parse_field(text: str, dtype: Any, column: int, record: int) -> Any:
    try:
        if dtype in (torch.int32, torch.int64):
            value = int(text)
            bits = 31 if dtype == torch.int32 else 63
            if not -(2**bits) <= value < 2**bits:
                raise ValueError(text)
            return value
        return float(text)
    except ValueError:
        kind = str(dtype).replace("torch.", "")
        raise InvalidArgumentError(
            None, None, f"tf.io.decode_csv: Field {column} in record {record} is not a valid {kind}: {text}"
        ) from None


def decode_csv(
    records: Any,
    record_defaults: Any,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    na_value: str = "",
    select_cols: Any = None,
    name: str | None = None,
) -> list[Any]:
    """``tf.io.decode_csv``: CSV lines to one tensor per column, shaped like ``records``.

    Each ``record_defaults`` entry gives a column's dtype (int32, int64, float32, float64 or
    string) and its default; an empty one makes the column required. A field equal to
    ``na_value`` (or empty) takes the default.

    Example:
        >>> import unison as tf
        >>> ints, words = tf.io.decode_csv(["1,a", '2,"b,c"'], [[0], [""]])
        >>> ints.tolist(), words.numpy().tolist()
        ([1, 2], [b'a', b'b,c'])
    """
    lines = _strings(records)
    columns = [_column_default(default, i) for i, default in enumerate(record_defaults)]
    selected = None if select_cols is None else [int(c) for c in select_cols]
    if selected is not None and (selected != sorted(set(selected)) or len(selected) != len(columns)):
        raise ValueError(
            "tf.io.decode_csv: select_cols must be strictly increasing and have one entry per record_defaults "
            f"entry. Received select_cols={list(select_cols)} for {len(columns)} defaults."
        )
    dialect: dict[str, Any] = {"delimiter": field_delim}
    dialect.update({"quotechar": '"'} if use_quote_delim else {"quoting": csv.QUOTE_NONE})
    out: list[list[Any]] = [[] for _ in columns]
    for record, item in enumerate(lines.reshape(-1).tolist()):
        text = item.decode() if isinstance(item, (bytes, bytearray)) else str(item)
        fields = next(csv.reader([text], **dialect), [""])
        if selected is not None:
            fields = [fields[c] if c < len(fields) else "" for c in selected]
        elif len(fields) != len(columns):
            raise InvalidArgumentError(
                None, None, f"tf.io.decode_csv: Expect {len(columns)} fields but have {len(fields)} in record {record}."
            )
        for column, (field, (dtype, default)) in enumerate(zip(fields, columns)):
            if field == "" or field == na_value:
                if default is None:
                    raise InvalidArgumentError(
                        None, None, f"tf.io.decode_csv: Field {column} is required but missing in record {record}!"
                    )
                out[column].append(default)
            else:
                out[column].append(field.encode() if dtype is string else _parse_field(field, dtype, column, record))
    results: list[Any] = []
    for values, (dtype, _) in zip(out, columns):
        if dtype is string:
            array = np.empty(len(values), dtype=object)
            array[:] = [v if isinstance(v, bytes) else str(v).encode() for v in values]
            results.append(StringTensor(array.reshape(lines.shape)))
        else:
            results.append(torch.tensor(values, dtype=as_dtype(dtype)).reshape(lines.shape))
    return results
