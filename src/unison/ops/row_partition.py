"""``tf.experimental.RowPartition``: how a flat list of values splits into rows (a ragged dimension).

The partition is stored as ``row_splits`` (``[0, ..., nvals]``, non-decreasing) and, when built
with one, a ``uniform_row_length``; every other encoding (``value_rowids``, ``row_lengths``,
``row_starts``, ``row_limits``, ``offsets_in_rows``) is computed from it. Constructors validate
their argument as TF's do (``InvalidArgumentError``); the dtype is int64 unless ``dtype`` (or an
int32 argument with ``dtype_hint``) says int32.

Example:
    >>> p = RowPartition.from_row_lengths([2, 0, 3])
    >>> p.row_splits().tolist(), p.value_rowids().tolist()
    ([0, 2, 2, 5], [0, 0, 2, 2, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype

__all__ = ["RowPartition"]


def _ints(value: Any, what: str, dtype: Any, dtype_hint: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        t = value.detach()
    else:
        arr = np.asarray(value)
        if arr.dtype.kind not in "iu" and arr.size:
            raise TypeError(f"RowPartition: {what} must be integers. Received dtype {arr.dtype}.")
        t = torch.as_tensor(arr.astype(np.int64))
    if t.is_floating_point() or t.dtype == torch.bool:
        raise TypeError(f"RowPartition: {what} must be int32 or int64. Received dtype {t.dtype}.")
    if dtype is not None:
        want = as_dtype(dtype)
    elif isinstance(value, torch.Tensor) and value.dtype in (torch.int32, torch.int64):
        want = value.dtype
    else:
        want = as_dtype(dtype_hint) if dtype_hint is not None else torch.int64
    if want not in (torch.int32, torch.int64):
        raise ValueError(f"RowPartition: dtype must be int32 or int64. Received: {want}")
    return t.to(want)


def _invalid(fn: str, what: str, noun: str = "RaggedTensor") -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"Arguments to {fn} do not form a valid {noun}: {what}.")


class RowPartition:
    """``tf.experimental.RowPartition``: build it with a ``from_*`` class method (see the module notes)."""

    def __init__(self, row_splits: torch.Tensor, uniform_row_length: torch.Tensor | None = None) -> None:
        self._row_splits = row_splits
        self._uniform = uniform_row_length

    # --- constructors -------------------------------------------------------------------------
    @classmethod
    def from_row_splits(
        cls, row_splits: Any, validate: bool = True, dtype: Any = None, dtype_hint: Any = None
    ) -> RowPartition:
        """Rows ``values[row_splits[i]:row_splits[i + 1]]``."""
        splits = _ints(row_splits, "row_splits", dtype, dtype_hint)
        if splits.dim() != 1:
            raise ValueError(f"row_splits must be a vector. Received shape {list(splits.shape)}.")
        if validate:
            if splits.numel() == 0 or int(splits[0]) != 0:
                raise _invalid("from_row_splits", "zero (row_splits[0] must be 0)")
            if bool((splits[1:] < splits[:-1]).any()):
                raise _invalid("from_row_splits", "monotonic (row_splits must not decrease)")
        return cls(splits)

    @classmethod
    def from_row_lengths(
        cls, row_lengths: Any, validate: bool = True, dtype: Any = None, dtype_hint: Any = None
    ) -> RowPartition:
        """Rows of the given lengths."""
        lengths = _ints(row_lengths, "row_lengths", dtype, dtype_hint)
        if lengths.dim() != 1:
            raise ValueError(f"row_lengths must be a vector. Received shape {list(lengths.shape)}.")
        if validate and bool((lengths < 0).any()):
            raise _invalid("from_row_lengths", "row_lengths must be >= 0", "RowPartition")
        return cls(torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)]))

    @classmethod
    def from_value_rowids(
        cls, value_rowids: Any, nrows: Any = None, validate: bool = True, dtype: Any = None, dtype_hint: Any = None
    ) -> RowPartition:
        """Value ``i`` in row ``value_rowids[i]`` (non-decreasing); ``nrows`` defaults to the last id + 1."""
        ids = _ints(value_rowids, "value_rowids", dtype, dtype_hint)
        if ids.dim() != 1:
            raise ValueError(f"value_rowids must be a vector. Received shape {list(ids.shape)}.")
        n = (int(ids[-1]) + 1 if ids.numel() else 0) if nrows is None else int(nrows)
        if validate:
            if bool((ids < 0).any()) or bool((ids[1:] < ids[:-1]).any()) or (ids.numel() and int(ids[-1]) >= n):
                raise _invalid("from_value_rowids", "value_rowids must be non-negative, sorted and < nrows")
        counts = torch.bincount(ids.to(torch.int64), minlength=n)[:n].to(ids.dtype)
        return cls(torch.cat([ids.new_zeros(1), torch.cumsum(counts, 0)]))

    @classmethod
    def from_row_starts(
        cls, row_starts: Any, nvals: Any, validate: bool = True, dtype: Any = None, dtype_hint: Any = None
    ) -> RowPartition:
        """Rows starting at ``row_starts`` (the first 0), the last ending at ``nvals``."""
        starts = _ints(row_starts, "row_starts", dtype, dtype_hint)
        splits = torch.cat([starts, torch.tensor([int(nvals)], dtype=starts.dtype)])
        return cls.from_row_splits(splits, validate=validate)

    @classmethod
    def from_row_limits(
        cls, row_limits: Any, validate: bool = True, dtype: Any = None, dtype_hint: Any = None
    ) -> RowPartition:
        """Rows ending at ``row_limits``; the first starts at 0."""
        limits = _ints(row_limits, "row_limits", dtype, dtype_hint)
        return cls.from_row_splits(torch.cat([limits.new_zeros(1), limits]), validate=validate)

    @classmethod
    def from_uniform_row_length(
        cls, uniform_row_length: Any, nvals: Any = None, nrows: Any = None, validate: bool = True,
        dtype: Any = None, dtype_hint: Any = None,
    ) -> RowPartition:  # fmt: skip
        """Every row ``uniform_row_length`` long; ``nrows`` from ``nvals`` (or given)."""
        length = _ints(uniform_row_length, "uniform_row_length", dtype, dtype_hint)
        if length.dim() != 0:
            raise ValueError("uniform_row_length must be a scalar.")
        step = int(length)
        if validate and step < 0:
            raise _invalid("from_uniform_row_length", "uniform_row_length must be >= 0", "RowPartition")
        if nrows is None:
            if nvals is None:
                raise ValueError("from_uniform_row_length needs nvals or nrows.")
            n = int(nvals) // step if step else 0
        else:
            n = int(nrows)
        if validate and nvals is not None and step * n != int(nvals):
            raise _invalid("from_uniform_row_length", "nvals must equal nrows * uniform_row_length", "RowPartition")
        splits = torch.arange(n + 1, dtype=length.dtype) * step
        return cls(splits, length)

    # --- encodings ------------------------------------------------------------------------------
    @property
    def dtype(self) -> torch.dtype:
        return self._row_splits.dtype

    def row_splits(self) -> torch.Tensor:
        return self._row_splits

    def nrows(self) -> torch.Tensor:
        return torch.tensor(self._row_splits.numel() - 1, dtype=self.dtype)

    def nvals(self) -> torch.Tensor:
        return self._row_splits[-1].clone()

    def row_lengths(self) -> torch.Tensor:
        return self._row_splits[1:] - self._row_splits[:-1]

    def row_starts(self) -> torch.Tensor:
        return self._row_splits[:-1]

    def row_limits(self) -> torch.Tensor:
        return self._row_splits[1:]

    def value_rowids(self) -> torch.Tensor:
        rows = torch.arange(self._row_splits.numel() - 1, dtype=self.dtype)
        return torch.repeat_interleave(rows, self.row_lengths().to(torch.int64))

    def offsets_in_rows(self) -> torch.Tensor:
        ids = self.value_rowids()
        return torch.arange(ids.numel(), dtype=self.dtype) - self._row_splits[ids.to(torch.int64)]

    def uniform_row_length(self) -> torch.Tensor | None:
        return self._uniform

    def is_uniform(self) -> bool:
        return self._uniform is not None

    @property
    def static_nrows(self) -> int:
        return self._row_splits.numel() - 1

    @property
    def static_uniform_row_length(self) -> int | None:
        return None if self._uniform is None else int(self._uniform)

    def with_dtype(self, dtype: Any) -> RowPartition:
        """The same partition with int32 or int64 tensors."""
        want = as_dtype(dtype)
        if want not in (torch.int32, torch.int64):
            raise ValueError(f"dtype must be int32 or int64. Received: {dtype}")
        return RowPartition(self._row_splits.to(want), None if self._uniform is None else self._uniform.to(want))

    def __repr__(self) -> str:
        return f"tf.RowPartition(row_splits={self._row_splits.numpy()})"
