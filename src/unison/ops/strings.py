"""``tf.strings``: TF's string functions on numpy arrays of ``str``/``bytes`` (unison's strings).

torch has no string tensors, so unison's strings are numpy arrays (``tf.constant(["a"])`` is an
object array of ``str``; ``TextLineDataset`` and ``TFRecordDataset`` give ``bytes``). Every
function here takes a Python string, a (nested) list of strings or such an array, of any shape,
and returns the same kind of string TF returns element-wise:

- string results are numpy object arrays of the input's shape; an item stays ``str`` when it was
  ``str`` and ``bytes`` when it was ``bytes`` (TF always gives ``bytes``; unison keeps the kind its
  strings already have, so ``tf.strings.lower(x) == "abc"`` compares as a program expects);
- numeric results (``length``, ``regex_full_match``, ``to_number``, ``unicode_decode``) are torch
  tensors of TF's dtype;
- the splitting functions (``split``, ``unicode_split``, ``unicode_decode``, ``bytes_split``)
  return a 1-D array for a scalar string and a :class:`~unison.ops.ragged.RaggedTensor` for a 1-D
  batch, as TF does.

TF's semantics are kept where they differ from Python's str methods: ``lower``/``upper`` change
only ASCII letters unless ``encoding="utf-8"``; ``strip`` removes ASCII whitespace; ``length``
counts bytes of the UTF-8 encoding unless ``unit="UTF8_CHAR"``; ``regex_replace``'s rewrite
understands only ``\\1``..``\\9`` and ``\\\\`` (RE2's rewrite syntax). Patterns are Python ``re``
patterns, which accept everything RE2 accepts that text programs use (classes, groups,
alternation, quantifiers). A numeric tensor given to a string function raises
:class:`StringInputError`.

Example:
    >>> import unison as tf
    >>> tf.strings.lower(["Hello World", "<br />OK"]).tolist()
    ['hello world', '<br />ok']
    >>> tf.strings.regex_replace("a<br />b", "<br />", " ").item()
    'a b'
    >>> tf.strings.length(["héllo"]).tolist(), tf.strings.length(["héllo"], unit="UTF8_CHAR").tolist()
    ([6], [5])
"""

from __future__ import annotations

import builtins
import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError, StringInputError
from unison.ops.dtypes import as_dtype
from unison.ops.ragged import RaggedTensor
from unison.ops.string_tensor import StringTensor

_ASCII_WS = " \t\n\r\v\f"
_UPPER_TO_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_LOWER_TO_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


# --- conversion ----------------------------------------------------------------------------------
def _strings(value: Any, fn: str, arg: str = "input") -> np.ndarray:
    """``value`` as a numpy object array of str/bytes (any shape), or a named error."""
    if isinstance(value, torch.Tensor):
        raise StringInputError(
            f"tf.strings.{fn} expects strings for `{arg}`, but received a {value.dtype} tensor of shape "
            f"{tuple(value.shape)}. Convert numbers to strings first with tf.strings.as_string({arg})."
        )
    if isinstance(value, (str, bytes)):
        out = np.empty((), dtype=object)
        out[()] = value
        return out
    if isinstance(value, np.str_):
        return _strings(str(value), fn, arg)
    if isinstance(value, np.bytes_):
        return _strings(bytes(value), fn, arg)
    arr = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if arr.dtype.kind in "US":
        arr = arr.astype(object)
    if arr.dtype != object or not all(isinstance(v, (str, bytes)) for v in arr.reshape(-1).tolist()):
        bad = next(
            (v for v in np.asarray(arr, dtype=object).reshape(-1).tolist() if not isinstance(v, (str, bytes))), arr
        )
        raise StringInputError(
            f"tf.strings.{fn} expects strings for `{arg}`, but received {type(bad).__name__} values "
            f"({value!r:.80}). Convert numbers to strings first with tf.strings.as_string({arg})."
        )
    return arr


def _map(fn: Callable[[Any], Any], arr: np.ndarray) -> np.ndarray:
    """Apply ``fn`` to every item; an object array of the results, shaped as ``arr``."""
    flat = [fn(v) for v in arr.reshape(-1).tolist()]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return StringTensor(out.reshape(arr.shape))


def _numbers(fn: Callable[[Any], Any], arr: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    flat = [fn(v) for v in arr.reshape(-1).tolist()]
    return torch.tensor(flat, dtype=dtype).reshape(arr.shape)


def _like(text: str | bytes, kind: Any) -> Any:
    """``text`` (str or bytes) converted to the kind of ``kind`` (a str or a bytes)."""
    if isinstance(kind, bytes):
        return text if isinstance(text, bytes) else text.encode("utf-8")
    return text if isinstance(text, str) else text.decode("utf-8", errors="surrogateescape")


def _utf8(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", errors="surrogateescape")


def _check_unit(unit: str, fn: str) -> None:
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"tf.strings.{fn}: unit must be 'BYTE' or 'UTF8_CHAR'. Received: unit={unit!r}")


# --- case, whitespace, regular expressions -------------------------------------------------------
def lower(input: Any, encoding: str = "", name: str | None = None) -> np.ndarray:
    """``tf.strings.lower``: lower-case ASCII letters (every letter with ``encoding="utf-8"``)."""
    arr = _strings(input, "lower")
    full = encoding.lower().replace("-", "") == "utf8"
    if encoding and not full:
        raise ValueError(f"tf.strings.lower: encoding must be '' or 'utf-8'. Received: encoding={encoding!r}")

    def one(v: Any) -> Any:
        if isinstance(v, bytes):
            return v.decode("utf-8").lower().encode("utf-8") if full else v.lower()
        return v.lower() if full else v.translate(_UPPER_TO_LOWER)

    return _map(one, arr)


def upper(input: Any, encoding: str = "", name: str | None = None) -> np.ndarray:
    """``tf.strings.upper``: upper-case ASCII letters (every letter with ``encoding="utf-8"``)."""
    arr = _strings(input, "upper")
    full = encoding.lower().replace("-", "") == "utf8"
    if encoding and not full:
        raise ValueError(f"tf.strings.upper: encoding must be '' or 'utf-8'. Received: encoding={encoding!r}")

    def one(v: Any) -> Any:
        if isinstance(v, bytes):
            return v.decode("utf-8").upper().encode("utf-8") if full else v.upper()
        return v.upper() if full else v.translate(_LOWER_TO_UPPER)

    return _map(one, arr)


def strip(input: Any, name: str | None = None) -> np.ndarray:
    """``tf.strings.strip``: remove leading and trailing ASCII whitespace."""
    return _map(lambda v: v.strip(_like(_ASCII_WS, v)), _strings(input, "strip"))


def _compile(pattern: Any, kind: Any, fn: str) -> re.Pattern[Any]:
    if isinstance(pattern, np.ndarray):
        if pattern.ndim:
            raise ValueError(f"tf.strings.{fn}: pattern must be one string. Received an array of shape {pattern.shape}")
        pattern = pattern.item()
    if not isinstance(pattern, (str, bytes)):
        raise StringInputError(f"tf.strings.{fn}: pattern must be a string. Received: {pattern!r}")
    try:
        return re.compile(_like(pattern, kind))
    except re.error as exc:
        raise InvalidArgumentError(f"tf.strings.{fn}: invalid pattern {pattern!r}: {exc}") from None


def _rewrite(rewrite: Any) -> Callable[[re.Match[Any]], Any]:
    """RE2's rewrite string: ``\\0``..``\\9`` insert groups, ``\\\\`` is a backslash, the rest is literal."""
    text = rewrite
    is_bytes = isinstance(text, bytes)
    s = text.decode("latin-1") if is_bytes else text
    parts: list[str | int] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and (s[i + 1].isdigit() or s[i + 1] == "\\"):
            parts.append(int(s[i + 1]) if s[i + 1].isdigit() else "\\")
            i += 2
            continue
        parts.append(c)
        i += 1

    def expand(m: re.Match[Any]) -> Any:
        out = []
        for p in parts:
            if isinstance(p, int):
                g = m.group(p) or (b"" if is_bytes else "")
                out.append(g.decode("latin-1") if isinstance(g, bytes) else g)
            else:
                out.append(p)
        joined = "".join(out)
        return joined.encode("latin-1") if is_bytes else joined

    return expand


def regex_replace(
    input: Any, pattern: Any, rewrite: Any, replace_global: bool = True, name: str | None = None
) -> np.ndarray:
    """``tf.strings.regex_replace``: replace matches of ``pattern`` with ``rewrite`` (``\\1`` inserts group 1)."""
    arr = _strings(input, "regex_replace")
    if isinstance(rewrite, np.ndarray):
        rewrite = rewrite.item()
    if not isinstance(rewrite, (str, bytes)):
        raise StringInputError(f"tf.strings.regex_replace: rewrite must be a string. Received: {rewrite!r}")
    compiled: dict[type, tuple[re.Pattern[Any], Callable[[re.Match[Any]], Any]]] = {}

    def one(v: Any) -> Any:
        kind = type(v)
        if kind not in compiled:
            compiled[kind] = (_compile(pattern, v, "regex_replace"), _rewrite(_like(rewrite, v)))
        regex, expand = compiled[kind]
        return regex.sub(expand, v, count=0 if replace_global else 1)

    return _map(one, arr)


def regex_full_match(input: Any, pattern: Any, name: str | None = None) -> torch.Tensor:
    """``tf.strings.regex_full_match``: whether each whole string matches ``pattern`` (bool)."""
    arr = _strings(input, "regex_full_match")
    compiled: dict[type, re.Pattern[Any]] = {}

    def one(v: Any) -> bool:
        kind = type(v)
        if kind not in compiled:
            compiled[kind] = _compile(pattern, v, "regex_full_match")
        return compiled[kind].fullmatch(v) is not None

    return _numbers(one, arr, torch.bool)


# --- hashing ---------------------------------------------------------------------------------------
def to_hash_bucket_fast(input: Any, num_buckets: int, name: str | None = None) -> torch.Tensor:
    """``tf.strings.to_hash_bucket_fast``: FarmHash ``Fingerprint64`` of each string mod ``num_buckets`` (int64).

    The same function as TF's, so the buckets equal TensorFlow's.
    """
    from unison.ops.farmhash import fingerprint64

    if isinstance(num_buckets, bool) or not isinstance(num_buckets, (int, np.integer)) or num_buckets < 1:
        raise ValueError(
            f"tf.strings.to_hash_bucket_fast: num_buckets must be a positive integer. Received: {num_buckets!r}"
        )
    arr = _strings(input, "to_hash_bucket_fast")
    n = int(num_buckets)
    return _numbers(lambda v: fingerprint64(_utf8(v)) % n, arr, torch.int64)


# --- lengths and pieces ---------------------------------------------------------------------------
def length(input: Any, unit: str = "BYTE", name: str | None = None) -> torch.Tensor:
    """``tf.strings.length``: bytes of each string's UTF-8 encoding (characters with ``unit="UTF8_CHAR"``), int32."""
    _check_unit(unit, "length")
    arr = _strings(input, "length")
    if unit == "BYTE":
        return _numbers(lambda v: len(_utf8(v)), arr, torch.int32)
    return _numbers(lambda v: len(v if isinstance(v, str) else v.decode("utf-8")), arr, torch.int32)


def substr(input: Any, pos: Any, len: Any, unit: str = "BYTE", name: str | None = None) -> np.ndarray:
    """``tf.strings.substr``: ``len`` bytes (or characters) from ``pos`` (negative: from the end)."""
    _check_unit(unit, "substr")
    arr = _strings(input, "substr")
    positions = np.broadcast_to(np.asarray(pos.numpy() if isinstance(pos, torch.Tensor) else pos), arr.shape)
    lengths = np.broadcast_to(np.asarray(len.numpy() if isinstance(len, torch.Tensor) else len), arr.shape)
    flat, p_flat, n_flat = arr.reshape(-1).tolist(), positions.reshape(-1).tolist(), lengths.reshape(-1).tolist()
    out = np.empty(builtins.len(flat), dtype=object)
    for i, (v, p, n) in enumerate(zip(flat, p_flat, n_flat)):
        seq: Any = _utf8(v) if unit == "BYTE" else (v if isinstance(v, str) else v.decode("utf-8"))
        size = builtins.len(seq)
        if not -size <= p <= size:
            raise InvalidArgumentError(
                f"tf.strings.substr: pos {p} out of range for string {v!r} at index {i} (its length is {size})."
            )
        start = p if p >= 0 else size + p
        piece = seq[start : start + max(int(n), 0)]
        out[i] = _like(piece, v) if unit == "BYTE" else (piece if isinstance(v, str) else piece.encode("utf-8"))
    return out.reshape(arr.shape)


def _pieces(arr: np.ndarray, fn: Callable[[Any], list[Any]], name: str, numeric: torch.dtype | None = None) -> Any:
    """Scalar -> a 1-D result; a 1-D batch -> a RaggedTensor (TF's shapes)."""
    if arr.ndim > 1:
        raise ValueError(
            f"tf.strings.{name} supports a scalar string or a 1-D batch of strings (one ragged axis). "
            f"Received shape {arr.shape}; reshape it to 1-D first (tf.reshape(x, [-1]))."
        )
    rows = [fn(v) for v in arr.reshape(-1).tolist()]
    flat = [p for row in rows for p in row]
    values: Any
    if numeric is not None:
        values = torch.tensor(flat, dtype=numeric)
    else:
        values = np.empty(builtins.len(flat), dtype=object)
        values[:] = flat
    if arr.ndim == 0:  # a scalar's pieces: a 1-D tensor (a string one indexes to scalar string tensors)
        return values if numeric is not None else StringTensor(values)
    return RaggedTensor.from_row_lengths(values, [builtins.len(r) for r in rows])


def split(input: Any, sep: Any = None, maxsplit: int = -1, name: str | None = None) -> Any:
    """``tf.strings.split``: pieces of each string (on whitespace, dropping empties, when ``sep`` is None).

    A scalar string gives a 1-D array of pieces; a 1-D batch gives a ``RaggedTensor`` (row ``i``
    holds the pieces of string ``i``).
    """
    arr = _strings(input, "split")
    if isinstance(sep, np.ndarray):
        sep = sep.item()
    if sep is not None and (not isinstance(sep, (str, bytes)) or not sep):
        raise ValueError(f"tf.strings.split: sep must be None or a non-empty string. Received: sep={sep!r}")
    n = int(maxsplit)
    if sep is None:
        return _pieces(arr, lambda v: v.split(None, n), "split")
    return _pieces(arr, lambda v: v.split(_like(sep, v), n), "split")


def _decode(v: Any, encoding: str, errors: str, replacement_char: int, fn: str) -> str:
    if isinstance(v, str):
        return v
    codec = encoding.lower().replace("-", "")
    if codec not in ("utf8", "utf16be", "utf32be"):
        raise ValueError(
            f"tf.strings.{fn}: input_encoding must be 'UTF-8', 'UTF-16-BE' or 'UTF-32-BE'. Received: {encoding!r}"
        )
    python_codec = {"utf8": "utf-8", "utf16be": "utf-16-be", "utf32be": "utf-32-be"}[codec]
    if errors == "strict":
        try:
            return v.decode(python_codec)
        except UnicodeDecodeError as exc:
            raise InvalidArgumentError(f"tf.strings.{fn}: invalid {encoding} in {v!r}: {exc}") from None
    if errors not in ("replace", "ignore"):
        raise ValueError(f"tf.strings.{fn}: errors must be 'strict', 'replace' or 'ignore'. Received: {errors!r}")
    text = v.decode(python_codec, errors=errors)
    return text.replace("\ufffd", chr(replacement_char)) if errors == "replace" else text


def unicode_split(
    input: Any,
    input_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    name: str | None = None,
) -> Any:
    """``tf.strings.unicode_split``: the characters of each string (bytes items give UTF-8 bytes pieces)."""
    arr = _strings(input, "unicode_split")

    def one(v: Any) -> list[Any]:
        chars = list(_decode(v, input_encoding, errors, replacement_char, "unicode_split"))
        return chars if isinstance(v, str) else [c.encode("utf-8") for c in chars]

    return _pieces(arr, one, "unicode_split")


def unicode_decode(
    input: Any,
    input_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: str | None = None,
) -> Any:
    """``tf.strings.unicode_decode``: the code points of each string (int32)."""
    arr = _strings(input, "unicode_decode")

    def one(v: Any) -> list[int]:
        return [ord(c) for c in _decode(v, input_encoding, errors, replacement_char, "unicode_decode")]

    return _pieces(arr, one, "unicode_decode", numeric=torch.int32)


def unicode_encode(input: Any, output_encoding: str, errors: str = "replace", name: str | None = None) -> Any:
    """``tf.strings.unicode_encode``: code points (1-D, or a RaggedTensor / 2-D of rows) to strings (bytes)."""
    codec = {"utf8": "utf-8", "utf16be": "utf-16-be", "utf32be": "utf-32-be"}.get(
        output_encoding.lower().replace("-", "")
    )
    if codec is None:
        raise ValueError(f"tf.strings.unicode_encode: unsupported output_encoding {output_encoding!r}")

    def one(points: Any) -> bytes:
        values = points.tolist() if hasattr(points, "tolist") else list(points)
        return "".join(chr(int(p)) for p in values).encode(codec)

    if isinstance(input, RaggedTensor):
        return _map(one, _object_rows(list(input)))
    t = torch.as_tensor(np.asarray(input.numpy() if isinstance(input, torch.Tensor) else input))
    if t.ndim == 1:
        out = np.empty((), dtype=object)
        out[()] = one(t)
        return out
    return _map(one, _object_rows(list(t.reshape(-1, t.shape[-1])))).reshape(tuple(t.shape[:-1]))


def _object_rows(rows: list[Any]) -> np.ndarray:
    out = np.empty(builtins.len(rows), dtype=object)
    for i, r in enumerate(rows):
        out[i] = r
    return out


def bytes_split(input: Any, name: str | None = None) -> Any:
    """``tf.strings.bytes_split``: each string's bytes, one ``bytes`` item per byte."""
    return _pieces(_strings(input, "bytes_split"), lambda v: [bytes([b]) for b in _utf8(v)], "bytes_split")


# --- joining ---------------------------------------------------------------------------------------
def join(inputs: Any, separator: str = "", name: str | None = None) -> np.ndarray:
    """``tf.strings.join``: join a list of string tensors element-wise (they broadcast)."""
    if isinstance(inputs, (str, bytes)) or isinstance(inputs, np.ndarray) and inputs.ndim == 0:
        raise StringInputError("tf.strings.join takes a list of string tensors. Received one string; wrap it: [s].")
    ragged = [p for p in inputs if isinstance(p, RaggedTensor)]
    if ragged:
        # TF joins RaggedTensors (and scalars) with the same rows element-wise on their flat values
        splits = ragged[0].nested_row_splits
        for other in ragged[1:]:
            if len(other.nested_row_splits) != len(splits) or any(
                a.shape != b.shape or not bool((a == b).all()) for a, b in zip(splits, other.nested_row_splits)
            ):
                raise ValueError("tf.strings.join: the RaggedTensor inputs must have the same row lengths.")
        flat = [p.flat_values if isinstance(p, RaggedTensor) else p for p in inputs]
        return ragged[0].with_flat_values(join(flat, separator))  # type: ignore[return-value]
    parts = [_strings(p, "join", "inputs") for p in inputs]
    if not parts:
        return _strings("", "join")
    try:
        columns = np.broadcast_arrays(*parts)
    except ValueError:
        raise ValueError(
            f"tf.strings.join: the inputs must have broadcastable shapes. Received shapes {[p.shape for p in parts]}"
        ) from None
    shape = columns[0].shape
    flat = [c.reshape(-1).tolist() for c in columns]
    out = np.empty(int(np.prod(shape)) if shape else 1, dtype=object)
    for i, items in enumerate(zip(*flat)):
        first = items[0]
        out[i] = _like(separator, first).join(_like(x, first) for x in items)
    return StringTensor(out.reshape(shape))


def reduce_join(
    inputs: Any,
    axis: int | None = None,
    keepdims: bool = False,
    separator: str = "",
    name: str | None = None,
) -> np.ndarray:
    """``tf.strings.reduce_join``: join strings along ``axis`` (all of them when ``axis`` is None).

    A :class:`RaggedTensor` of strings joins each row (``axis=-1`` or ``1``; TF's
    ``reduce_join(chars_from_ids(ids), axis=-1)``), or everything (``axis=None``).

    Example:
        >>> import unison as tf
        >>> tf.strings.reduce_join(tf.strings.unicode_split(["ab", "c"], "UTF-8"), axis=-1).numpy().tolist()
        [b'ab', b'c']
    """
    if isinstance(inputs, RaggedTensor):
        if axis is None:
            return reduce_join(inputs.values, None, keepdims, separator)
        if int(axis) not in (-1, 1):
            raise ValueError(
                f"tf.strings.reduce_join joins a RaggedTensor along its rows (axis=-1 or 1) or entirely "
                f"(axis=None). Received: axis={axis}; call .to_tensor() first to join along another axis."
            )
        pieces = [reduce_join(_strings(row, "reduce_join", "inputs"), None, False, separator) for row in inputs]
        per_row = np.empty(len(pieces), dtype=object)
        per_row[:] = [p.item() if isinstance(p, np.ndarray) else p for p in pieces]
        return StringTensor(per_row[:, None] if keepdims else per_row)
    arr = _strings(inputs, "reduce_join", "inputs")
    if arr.ndim == 0:
        return arr
    if axis is None:
        flat = arr.reshape(-1).tolist()
        kind = flat[0] if flat else ""
        result = _strings(_like(separator, kind).join(_like(x, kind) for x in flat), "reduce_join")
        return StringTensor(result.reshape((1,) * arr.ndim) if keepdims else result)
    ax = int(axis)
    if not -arr.ndim <= ax < arr.ndim:
        raise ValueError(f"tf.strings.reduce_join: axis {ax} is out of range for inputs of rank {arr.ndim}.")
    moved = np.moveaxis(arr, ax, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = np.empty(rows.shape[0], dtype=object)
    for i, row in enumerate(rows.tolist()):
        kind = row[0] if row else ""
        out[i] = _like(separator, kind).join(_like(x, kind) for x in row)
    joined: np.ndarray = out.reshape(moved.shape[:-1])
    return StringTensor(np.expand_dims(joined, ax) if keepdims else joined)


# --- numbers <-> strings ---------------------------------------------------------------------------
def as_string(
    input: Any,
    precision: int = -1,
    scientific: bool = False,
    shortest: bool = False,
    width: int = -1,
    fill: str = "",
    name: str | None = None,
) -> np.ndarray:
    """``tf.strings.as_string``: numbers to strings (floats as ``%f`` unless ``precision``/``scientific``/``shortest``)."""
    if scientific and shortest:
        raise ValueError("tf.strings.as_string: scientific and shortest cannot both be True.")
    if fill not in ("", " ", "0"):
        raise ValueError(f"tf.strings.as_string: fill must be '', ' ' or '0'. Received: fill={fill!r}")
    if isinstance(input, np.ndarray) and input.dtype.kind in "OUS" or isinstance(input, (str, bytes)):
        raise StringInputError("tf.strings.as_string takes numbers; the input is already strings.")
    t = torch.as_tensor(np.asarray(input.detach().cpu().numpy() if isinstance(input, torch.Tensor) else input))
    pad = f"{'0' if fill == '0' else ''}{width if width >= 0 else ''}"
    if t.dtype == torch.bool:
        spec = None
    elif t.is_floating_point():
        kind = "e" if scientific else "g" if shortest else "f"
        spec = f"%{pad}{'.' + str(precision) if precision >= 0 else ''}{kind}"
    elif t.is_complex():
        raise StringInputError("tf.strings.as_string: complex numbers are not supported by unison.")
    else:
        spec = f"%{pad}d"

    def one(v: Any) -> str:
        if spec is None:
            text = "true" if v else "false"
            return text.rjust(width) if width > 0 else text
        return spec % v

    values = t.reshape(-1).tolist()
    out = np.empty(builtins.len(values), dtype=object)
    out[:] = [one(v) for v in values]
    return out.reshape(tuple(t.shape))


def to_number(string_tensor: Any, out_type: Any = torch.float32, name: str | None = None) -> torch.Tensor:
    """``tf.strings.to_number``: parse each string as a number of ``out_type`` (float32 by default)."""
    arr = _strings(string_tensor, "to_number", "string_tensor")
    dtype = as_dtype(out_type)
    if not isinstance(dtype, torch.dtype) or dtype.is_complex or dtype == torch.bool:
        raise ValueError(f"tf.strings.to_number: out_type must be a real number dtype. Received: {out_type!r}")
    parse: Callable[[str], Any] = float if dtype.is_floating_point else int

    def one(v: Any) -> Any:
        text = v.decode("utf-8") if isinstance(v, bytes) else v
        try:
            return parse(text.strip(_ASCII_WS) if dtype.is_floating_point else text)
        except ValueError:
            raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: {text}") from None

    return _numbers(one, arr, dtype)


def _format_value(value: Any, summarize: int) -> str:
    if isinstance(value, (str, bytes)):
        return '"' + (value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value) + '"'
    if isinstance(value, np.ndarray) and value.dtype.kind in "OUS":
        arr = value
        fmt: Callable[[Any], str] = lambda v: _format_value(v, summarize)  # noqa: E731
    else:
        t = torch.as_tensor(np.asarray(value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value))
        arr = t.numpy()
        fmt = lambda v: f"{v:g}" if isinstance(v, float) else str(v).lower() if isinstance(v, bool) else str(v)  # noqa: E731
    if arr.ndim == 0:
        return fmt(arr.item() if arr.dtype != object else arr[()])

    def render(a: np.ndarray) -> str:
        items = list(a)
        if summarize >= 0 and builtins.len(items) > 2 * summarize:
            shown = [*items[:summarize], None, *items[-summarize:]]
        else:
            shown = items
        parts = [
            "..."
            if x is None
            else (
                render(x) if isinstance(x, np.ndarray) and x.ndim else fmt(x.item() if isinstance(x, np.generic) else x)
            )
            for x in shown
        ]
        return "[" + " ".join(parts) + "]"

    return render(arr)


def format(
    template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3, name: str | None = None
) -> np.ndarray:
    """``tf.strings.format``: fill each ``placeholder`` of ``template`` with one input, printed as TF prints it."""
    values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    pieces = template.split(placeholder)
    if builtins.len(pieces) - 1 != builtins.len(values):
        raise ValueError(
            f"tf.strings.format: num placeholders in template and num inputs must match: the template has "
            f"{builtins.len(pieces) - 1} {placeholder!r}, received {builtins.len(values)} inputs."
        )
    out = pieces[0]
    for value, rest in zip(values, pieces[1:]):
        out += _format_value(value, summarize) + rest
    return _strings(out, "format")


__all__ = [
    "StringInputError",
    "as_string",
    "bytes_split",
    "format",
    "join",
    "length",
    "lower",
    "reduce_join",
    "regex_full_match",
    "regex_replace",
    "split",
    "strip",
    "substr",
    "to_hash_bucket_fast",
    "to_number",
    "unicode_decode",
    "unicode_encode",
    "unicode_split",
    "upper",
]


def _ragged_elementwise(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` on a RaggedTensor runs on its flat values and keeps the rows, as TF's ragged dispatch."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], RaggedTensor):
            return args[0].with_flat_values(fn(args[0].flat_values, *args[1:], **kwargs))
        for key in ("input", "string_tensor"):
            value = kwargs.get(key)
            if isinstance(value, RaggedTensor):
                return value.with_flat_values(fn(*args, **{**kwargs, key: value.flat_values}))
        return fn(*args, **kwargs)

    return call


for _name in (
    "lower upper strip regex_replace regex_full_match to_hash_bucket_fast to_hash_bucket_strong length substr "
    "as_string to_number"
).split():
    if _name in globals():
        globals()[_name] = _ragged_elementwise(globals()[_name])


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.strings", name)
