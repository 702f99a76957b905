"""``tf.RaggedTensor``'s constructors (``from_row_splits``, ``from_tensor``, ...), as a base class.

They build through ``cls(values, row_splits)``, so this module needs nothing of
:mod:`unison.ops.ragged_tensor` (which subclasses it).

Example:
    >>> import unison as tf
    >>> tf.RaggedTensor.from_value_rowids([1, 2, 3], [0, 0, 2], nrows=4).to_list()
    [[1, 2], [], [3], []]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError


def _i64(x: Any) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.to(torch.int64).reshape(-1)
    return torch.as_tensor(np.asarray(x, dtype=np.int64)).reshape(-1)


class RaggedConstructors:
    """TF's ``RaggedTensor.from_*`` class methods; ``cls(values, row_splits)`` makes the tensor."""

    def __init__(self, values: Any, row_splits: Any) -> None:
        """Defined by ``RaggedTensor``: the constructors only call it."""
        raise TypeError("RaggedConstructors is the base of tf.RaggedTensor; build a tf.RaggedTensor instead.")

    @classmethod
    def from_row_splits(cls, values: Any, row_splits: Any, name: str | None = None, validate: bool = True) -> Any:
        """Row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``."""
        return cls(_as_values(values), row_splits)

    @classmethod
    def from_row_lengths(cls, values: Any, row_lengths: Any, name: str | None = None, validate: bool = True) -> Any:
        """Row ``i`` holds the next ``row_lengths[i]`` values."""
        lengths = _i64(row_lengths)
        return cls(_as_values(values), torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]))

    @classmethod
    def from_value_rowids(
        cls, values: Any, value_rowids: Any, nrows: Any = None, name: str | None = None, validate: bool = True
    ) -> Any:
        """Value ``j`` goes to row ``value_rowids[j]`` (sorted); ``nrows`` adds trailing empty rows."""
        ids = _i64(value_rowids)
        n = int(nrows) if nrows is not None else (int(ids.max()) + 1 if len(ids) else 0)
        if len(ids) and (bool((ids[1:] < ids[:-1]).any()) or int(ids.max()) >= n or int(ids.min()) < 0):
            raise InvalidArgumentError(
                None, None, f"RaggedTensor.from_value_rowids: `value_rowids` must be sorted and in [0, nrows={n})."
            )
        return cls.from_row_lengths(values, torch.bincount(ids, minlength=n))

    @classmethod
    def from_row_starts(cls, values: Any, row_starts: Any, name: str | None = None, validate: bool = True) -> Any:
        """Row ``i`` starts at ``row_starts[i]`` and ends where the next starts."""
        v = _as_values(values)
        return cls(v, torch.cat([_i64(row_starts), torch.tensor([len(v)], dtype=torch.int64)]))

    @classmethod
    def from_row_limits(cls, values: Any, row_limits: Any, name: str | None = None, validate: bool = True) -> Any:
        """Row ``i`` ends at ``row_limits[i]`` and starts where the previous ended."""
        return cls(_as_values(values), torch.cat([torch.zeros(1, dtype=torch.int64), _i64(row_limits)]))

    @classmethod
    def from_uniform_row_length(
        cls, values: Any, uniform_row_length: Any, nrows: Any = None, validate: bool = True, name: str | None = None
    ) -> Any:
        """Rows of ``uniform_row_length`` values each: a dimension of known size over (ragged) values.

        Example:
            >>> import unison as tf
            >>> tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5, 6], 2).to_list()
            [[1, 2], [3, 4], [5, 6]]
        """
        vals = _as_values(values)
        width = int(uniform_row_length)
        total = len(vals)
        if width < 0 or (width == 0 and nrows is None) or (width and total % width):
            raise ValueError(
                f"RaggedTensor.from_uniform_row_length: the {total} values must split into rows of "
                f"uniform_row_length={width} (a positive divisor of their number; 0 needs nrows=)."
            )
        rows = total // width if width else int(nrows)
        if nrows is not None and int(nrows) != rows:
            raise ValueError(
                f"RaggedTensor.from_uniform_row_length: nrows={int(nrows)} does not match the {total} values in "
                f"rows of {width} ({rows} rows)."
            )
        out: Any = cls(vals, torch.arange(rows + 1, dtype=torch.int64) * width)
        out._uniform_row_length = width
        return out

    @classmethod
    def from_nested_row_splits(
        cls, flat_values: Any, nested_row_splits: Sequence[Any], name: str | None = None, validate: bool = True
    ) -> Any:
        """One ragged dimension per entry of ``nested_row_splits`` (outermost first)."""
        out: Any = _as_values(flat_values)
        for splits in reversed(list(nested_row_splits)):
            out = cls(out, splits)
        return out

    @classmethod
    def from_nested_row_lengths(
        cls, flat_values: Any, nested_row_lengths: Sequence[Any], name: str | None = None, validate: bool = True
    ) -> Any:
        """One ragged dimension per entry of ``nested_row_lengths`` (outermost first)."""
        out: Any = _as_values(flat_values)
        for lengths in reversed(list(nested_row_lengths)):
            out = cls.from_row_lengths(out, lengths)
        return out

    @classmethod
    def from_tensor(
        cls,
        tensor: Any,
        lengths: Any = None,
        padding: Any = None,
        ragged_rank: int = 1,
        name: str | None = None,
        row_splits_dtype: Any = None,
    ) -> Any:
        """Rows of a dense tensor: all of them, the first ``lengths[i]`` items, or up to the trailing ``padding``."""
        t = _as_values(tensor)
        if t.ndim < 2:
            raise ValueError(f"RaggedTensor.from_tensor needs a tensor of rank >= 2. Received shape {list(t.shape)}")
        if lengths is not None and padding is not None:
            raise ValueError("RaggedTensor.from_tensor takes `lengths` or `padding`, not both.")
        if ragged_rank > 1:
            if lengths is not None or padding is not None:
                raise ValueError("RaggedTensor.from_tensor: ragged_rank > 1 is supported without lengths/padding.")
            inner = cls.from_tensor(t.reshape((-1,) + tuple(t.shape[2:])), ragged_rank=ragged_rank - 1)
            width = t.shape[1]
            return cls(inner, torch.arange(t.shape[0] + 1, dtype=torch.int64) * width)
        n, width = t.shape[0], t.shape[1]
        if lengths is not None:
            lens = _i64(lengths).clamp(max=width)
        elif padding is not None:
            pad = padding if isinstance(t, np.ndarray) else torch.as_tensor(padding, dtype=t.dtype)
            is_pad = t == pad
            if isinstance(is_pad, np.ndarray):
                is_pad = torch.from_numpy(np.asarray(is_pad, dtype=bool))
            while is_pad.dim() > 2:
                is_pad = is_pad.all(dim=-1)
            keep = (~is_pad).to(torch.int64)
            # the length is one past the last item that is not padding
            pos = torch.arange(1, width + 1).expand(n, width)
            lens = (keep * pos).max(dim=1).values if width else torch.zeros(n, dtype=torch.int64)
        else:
            lens = torch.full((n,), width, dtype=torch.int64)
        mask = torch.arange(width).unsqueeze(0) < lens.unsqueeze(1)
        flat = t[mask.numpy()] if isinstance(t, np.ndarray) else t[mask]
        return cls.from_row_lengths(flat, lens)

    @classmethod
    def from_sparse(cls, st_input: Any, name: str | None = None, row_splits_dtype: Any = None) -> Any:
        """The rows of a 2-D SparseTensor whose indices are in row-major order, without gaps."""
        dense_shape = st_input.dense_shape.tolist()
        if len(dense_shape) != 2:
            raise ValueError(f"RaggedTensor.from_sparse needs a rank-2 SparseTensor. Received shape {dense_shape}")
        rows = st_input.indices[:, 0]
        return cls.from_value_rowids(st_input.values, rows, nrows=dense_shape[0])


def _as_values(values: Any) -> Any:
    if isinstance(values, (torch.Tensor, RaggedConstructors)):
        return values
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    arr = np.asarray(values, dtype=object if _is_strings(values) else None)
    if arr.dtype == object:
        from unison.ops.string_tensor import StringTensor

        return StringTensor(arr)
    from unison.ops.dtypes import to_tensor

    return to_tensor(values)


def _is_strings(values: Any) -> bool:
    arr = np.asarray(values)
    return arr.dtype.kind in "OUS"
