"""From feature columns to ``tf.io.parse_example``'s outputs, with TF's checks and messages.

A *column* is one feature over a batch of records: every present record's values concatenated
(a float32 or int64 numpy array, or a list of ``bytes``) and each record's count (``-1`` where the
record lacks the feature). Both readers of :mod:`unison.ops.parsing` (the wire-format one and the
protobuf one) produce columns; this module checks them against the spec and shapes them, with
whole-batch numpy operations (no per-record Python for numbers):

- ``FixedLenFeature``: counts must equal ``prod(shape)``; missing rows take ``default_value``;
- ``VarLenFeature``: a ``SparseTensor`` whose indices come from the counts;
- ``FixedLenSequenceFeature``: padded to the longest record with ``default_value`` (or 0 / ``b""``);
- ``RaggedFeature``: row splits from the counts (and from the partition features).

Example:
    >>> import numpy as np
    >>> from unison.ops.feature_specs import VarLenFeature
    >>> col = Column(np.array([1, 2, 3]), np.array([2, -1, 1]))
    >>> st = build_var_len("x", VarLenFeature("int64"), col, batched=True)
    >>> st.indices.tolist(), st.dense_shape.tolist()
    ([[0, 0], [0, 1], [2, 0]], [3, 2])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from unison.errors import ExampleParseError
from unison.ops.dtypes import string
from unison.ops.feature_specs import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    Plan,
    RaggedFeature,
    RowLengths,
    RowLimits,
    RowSplits,
    RowStarts,
    UniformRowLength,
    VarLenFeature,
    list_kind,
)

_TF_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_NP = {torch.float32: np.float32, torch.int64: np.int64}


@dataclass
class Column:
    """One feature over a batch: the present records' values, concatenated, and each record's count (-1: absent)."""

    values: Any
    counts: np.ndarray


def type_error(key: str, index: int, found: str, dtype: Any) -> ExampleParseError:
    """TF's message for a feature whose list is not the spec's type (``found``: the list kind)."""
    return ExampleParseError(
        f"Key: {key}, Index: {index}.  Data types don't match. Data type: {_TF_NAME[found]} but expected type: "
        f"{_TF_NAME[list_kind(dtype)]}. Fix the feature spec's dtype for {key!r}, or write the feature as "
        f"a {list_kind(dtype)}.",
        feature=key,
        index=index,
    )


def _missing(key: str, dtype: Any, index: int, fix: str) -> ExampleParseError:
    return ExampleParseError(
        f"Feature: {key} (data type: {_TF_NAME[list_kind(dtype)]}) is required but could not be found "
        f"(example {index}). {fix}",
        feature=key,
        index=index,
    )


def _array(values: Any, dtype: Any) -> Any:
    """Column values as an output array: numpy object array of bytes for strings, else numpy."""
    if dtype is string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.asarray(values, dtype=_NP[dtype])


def _output(arr: np.ndarray, dtype: Any) -> Any:
    if dtype is string:
        from unison.ops.string_tensor import StringTensor

        return StringTensor(arr)  # a string tf.Tensor in TF: .numpy(), indexing to 0-d string tensors
    if not (arr.flags.c_contiguous and arr.flags.writeable):  # np.frombuffer's arrays are read-only
        arr = arr.copy()
    return torch.from_numpy(arr)


def _default(spec: Any, key: str, n: int) -> np.ndarray:
    value = spec.default_value
    flat = np.asarray(value.numpy() if isinstance(value, torch.Tensor) else value, dtype=object).reshape(-1).tolist()
    if len(flat) == 1 and n != 1:
        flat = flat * n
    if len(flat) != n:
        raise ValueError(
            f"The default_value of {key!r} must have {n} values (shape {list(spec.shape)}). Received: {value!r}"
        )
    return _array([v.encode() if isinstance(v, str) else v for v in flat], spec.dtype)


def build_fixed(key: str, spec: FixedLenFeature, col: Column, batched: bool) -> Any:
    """``[batch] + shape`` (``shape`` for one example) from a column."""
    n = math.prod(spec.shape)
    counts = col.counts
    present = counts >= 0
    wrong = present & (counts != n)
    if wrong.any():
        i = int(np.argmax(wrong))
        raise ExampleParseError(
            f"Key: {key}, Index: {i}.  Number of {_TF_NAME[list_kind(spec.dtype)]} values != expected.  "
            f"Values size: {int(counts[i])} but output shape: {list(spec.shape)}. Fix the shape of {key!r}'s "
            "FixedLenFeature, or read it with VarLenFeature/RaggedFeature for a varying count.",
            feature=key,
            index=i,
        )
    values = _array(col.values, spec.dtype)
    rows = len(counts)
    if not present.all():
        if spec.default_value is None:
            raise _missing(
                key, spec.dtype, int(np.argmin(present)), "Give the spec a default_value, or use VarLenFeature."
            )
        full = np.tile(_default(spec, key, n), rows).reshape(rows, n)
        full[present] = values.reshape(-1, n)
        values = full
    return _output(values.reshape(((rows,) if batched else ()) + spec.shape), spec.dtype)


def build_var_len(key: str, spec: VarLenFeature, col: Column, batched: bool) -> Any:
    """A ``SparseTensor``: ``[N, 2]`` indices and ``[batch, longest]`` shape (``[N, 1]``/``[N]`` for one)."""
    from unison.ops.sparse_tensor import SparseTensor

    counts = np.maximum(col.counts, 0)
    ends = np.cumsum(counts)
    total = int(ends[-1]) if len(ends) else 0
    values = _output(_array(col.values, spec.dtype), spec.dtype)
    if batched:
        rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        indices = np.empty((total, 2), dtype=np.int64)  # filled in place: no stack of two columns
        indices[:, 0] = rows
        np.subtract(np.arange(total, dtype=np.int64), (ends - counts)[rows], out=indices[:, 1])
        shape = [len(counts), int(counts.max()) if len(counts) else 0]
    else:
        indices, shape = np.arange(total, dtype=np.int64).reshape(-1, 1), [total]
    if isinstance(values, np.ndarray):
        from unison.ops.string_tensor import StringTensor

        values = StringTensor(values)
    return SparseTensor._from_parts(
        torch.from_numpy(indices), values, torch.from_numpy(np.array(shape, dtype=np.int64))
    )


def build_sequence(key: str, spec: FixedLenSequenceFeature, col: Column, batched: bool) -> Any:
    """``[batch, longest] + shape`` padded (``[n] + shape`` for one example)."""
    step = max(math.prod(spec.shape), 1)
    counts = col.counts
    if (counts < 0).any() and not spec.allow_missing:
        raise _missing(
            key,
            spec.dtype,
            int(np.argmax(counts < 0)),
            "Pass FixedLenSequenceFeature(..., allow_missing=True) to read a missing feature as empty.",
        )
    counts = np.maximum(counts, 0)
    odd = counts % step != 0
    if odd.any():
        i = int(np.argmax(odd))
        raise ExampleParseError(
            f"Key: {key}, Index: {i}.  Number of values is not a multiple of the inner shape {list(spec.shape)}: "
            f"{int(counts[i])} values. Fix the feature's shape in the spec or the record.",
            feature=key,
            index=i,
        )
    values = _array(col.values, spec.dtype)
    if not batched:
        return _output(values.reshape((len(values) // step,) + spec.shape), spec.dtype)
    rows = len(counts)
    longest = int(counts.max()) // step if rows else 0
    fill = spec.default_value
    if fill is None:
        fill = b"" if spec.dtype is string else 0
    elif isinstance(fill, str):
        fill = fill.encode()
    width = longest * step
    out = np.empty(rows * width, dtype=object) if spec.dtype is string else np.empty(rows * width, _NP[spec.dtype])
    out[:] = fill
    where = (
        np.arange(len(values), dtype=np.int64)
        - np.repeat(np.cumsum(counts) - counts, counts)
        + np.repeat(np.arange(rows, dtype=np.int64) * width, counts)
    )
    out[where] = values
    return _output(out.reshape((rows, longest) + spec.shape), spec.dtype)


def _lengths_of(part: Any, key: str, col: Column, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A partition feature as row lengths (concatenated) and the rows per record, checked against ``items``."""
    values = np.asarray(col.values, dtype=np.int64)
    counts = np.maximum(col.counts, 0)
    starts = np.cumsum(counts) - counts
    lengths: list[np.ndarray] = []
    rows = np.zeros(len(counts), dtype=np.int64)
    for r, (s, c) in enumerate(zip(starts.tolist(), counts.tolist())):
        v = values[s : s + c]
        if isinstance(part, RowLengths):
            ln = v
        elif isinstance(part, RowSplits):
            if c and v[0] != 0:
                raise ExampleParseError(
                    f"Key: {part.key}, Index: {r}.  RowSplits must start with 0.", feature=part.key, index=r
                )
            ln = np.diff(v) if c else np.zeros(0, np.int64)
        elif isinstance(part, RowStarts):
            ln = np.diff(np.append(v, items[r]))
        elif isinstance(part, RowLimits):
            ln = np.diff(np.concatenate([[0], v]))
        else:  # ValueRowIds: one row id per value, rows up to the largest id
            ln = np.bincount(v, minlength=int(v.max()) + 1 if c else 0) if c else np.zeros(0, np.int64)
        if (ln < 0).any() or int(ln.sum()) != int(items[r]):
            raise ExampleParseError(
                f"Key: {part.key}, Index: {r}.  The partition {type(part).__name__}({part.key!r}) of feature "
                f"{key!r} does not cover its {int(items[r])} values (it gives rows of lengths {ln.tolist()}).",
                feature=part.key,
                index=r,
            )
        lengths.append(ln)
        rows[r] = len(ln)
    return (np.concatenate(lengths) if lengths else np.zeros(0, np.int64)), rows


def build_ragged(key: str, spec: RaggedFeature, plan: Plan, cols: list[Column], batched: bool) -> Any:
    """A ``RaggedTensor`` with one row per record (for one example: the values cut by the partitions)."""
    from unison.ops.ragged_tensor import RaggedTensor

    source = spec.value_key or key
    col = cols[plan.slot_of(source, spec.dtype)]
    items = np.maximum(col.counts, 0)
    current: Any = _output(_array(col.values, spec.dtype), spec.dtype)
    for part in reversed(spec.partitions):
        if isinstance(part, UniformRowLength):
            k = int(part.length)
            if k <= 0 or (items % k).any():
                i = int(np.argmax(items % k)) if k > 0 else 0
                raise ExampleParseError(
                    f"Key: {source}, Index: {i}.  {int(items[i])} values do not split into rows of "
                    f"UniformRowLength({k}).",
                    feature=source,
                    index=i,
                )
            current = current.reshape((-1, k) + tuple(current.shape[1:]))
            items = items // k
            continue
        lengths, items = _lengths_of(part, key, cols[plan.slot_of(part.key, torch.int64)], items)
        current = RaggedTensor.from_row_lengths(current, torch.from_numpy(lengths))
    if not batched:
        return current
    return RaggedTensor.from_row_lengths(current, torch.from_numpy(items))


def build(key: str, spec: Any, plan: Plan, cols: list[Column], batched: bool) -> Any:
    """The output of one spec entry from the batch's columns."""
    if isinstance(spec, RaggedFeature):
        return build_ragged(key, spec, plan, cols, batched)
    col = cols[plan.slot_of(key, spec.dtype)]
    if isinstance(spec, FixedLenFeature):
        return build_fixed(key, spec, col, batched)
    if isinstance(spec, VarLenFeature):
        return build_var_len(key, spec, col, batched)
    return build_sequence(key, spec, col, batched)


__all__ = ["Column", "build", "build_fixed", "build_ragged", "build_sequence", "build_var_len", "type_error"]
