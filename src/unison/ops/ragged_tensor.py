"""``tf.RaggedTensor``: rows of different lengths, in TF's layout (``values`` cut by ``row_splits``).

``values`` holds every row's items concatenated: a torch tensor (numbers, with any uniform inner
dimensions), a string tensor (numpy object array), or another ``RaggedTensor`` (a further ragged
dimension, as TF nests them); ``row_splits`` (int64) says row ``i`` is
``values[row_splits[i]:row_splits[i+1]]``. ``tf.strings.split`` & co return them for batches, and
``tf.ragged`` builds them. Conversions (``to_tensor``, ``to_sparse``, ``from_tensor``) are index
arithmetic on the splits (``value_rowids``), not loops over rows.

Example:
    >>> import unison as tf
    >>> rt = tf.RaggedTensor.from_row_splits(tf.constant([1, 2, 3]), [0, 2, 3])
    >>> rt.to_list(), rt.row_lengths().tolist(), rt.to_tensor().tolist()
    ([[1, 2], [3]], [2, 1], [[1, 2], [3, 0]])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.ragged_build import RaggedConstructors, _as_values, _i64
from unison.ops.ragged_dispatch import dispatch
from unison.ops.ragged_shape import register_ragged


class RaggedTensor(RaggedConstructors):
    """Rows of different lengths: ``values`` cut by ``row_splits`` (TF's ``tf.RaggedTensor``).

    Build one with the ``from_*`` class methods or ``tf.ragged.constant``.
    """

    def __init__(self, values: Any, row_splits: Any) -> None:
        splits = _i64(row_splits)
        n = len(values)
        if len(splits) < 1 or int(splits[0]) != 0 or int(splits[-1]) != n:
            raise InvalidArgumentError(
                None,
                None,
                "RaggedTensor: `row_splits` must be a 1-D int64 vector that starts at 0 and ends at "
                f"len(values) ({n}). Received: row_splits={splits.tolist()}",
            )
        if bool((splits[1:] < splits[:-1]).any()):
            raise InvalidArgumentError(
                None, None, f"RaggedTensor: `row_splits` must be sorted ascending. Received: {splits.tolist()}"
            )
        self.values = values
        self.row_splits = splits
        self._uniform_row_length: int | None = None  # set by from_uniform_row_length

    @property
    def uniform_row_length(self) -> torch.Tensor | None:
        """The rows' common length when built with ``from_uniform_row_length``, else None."""
        width = self._uniform_row_length
        return None if width is None else torch.tensor(width, dtype=torch.int64)

    # ---- structure

    def _tree_components(self) -> list[Any]:
        """What ``tf.nest.flatten(..., expand_composites=True)`` yields: flat values, then the row
        splits outermost first (TF's order)."""
        return [self.flat_values, *self.nested_row_splits]

    @classmethod
    def _tree_from_components(cls, components: list[Any]) -> RaggedTensor:
        return cls.from_nested_row_splits(components[0], components[1:])

    @property
    def flat_values(self) -> Any:
        """The innermost values (all ragged dimensions removed)."""
        return self.values.flat_values if isinstance(self.values, RaggedTensor) else self.values

    @property
    def nested_row_splits(self) -> tuple[torch.Tensor, ...]:
        """The row splits of each ragged dimension, outermost first."""
        inner = self.values.nested_row_splits if isinstance(self.values, RaggedTensor) else ()
        return (self.row_splits,) + inner

    def nested_row_lengths(self, name: str | None = None) -> tuple[torch.Tensor, ...]:
        """The row lengths of each ragged dimension, outermost first."""
        return tuple(s[1:] - s[:-1] for s in self.nested_row_splits)

    @property
    def ragged_rank(self) -> int:
        return 1 + (self.values.ragged_rank if isinstance(self.values, RaggedTensor) else 0)

    @property
    def dtype(self) -> Any:
        """``tf.string`` for strings, else the torch dtype of the values."""
        from unison.ops.dtypes import string

        flat = self.flat_values
        return string if isinstance(flat, np.ndarray) else flat.dtype

    @property
    def shape(self) -> Any:
        """A ``tf.TensorShape`` with ``None`` for the ragged dimensions."""
        from unison.ops.control_flow import TensorShape

        inner = list(self.values.shape)[1:]
        width = self._uniform_row_length
        return TensorShape([self.nrows_int(), width] + [None if d is None else int(d) for d in inner])

    def nrows_int(self) -> int:
        return len(self.row_splits) - 1

    def nrows(self, out_type: Any = None, name: str | None = None) -> torch.Tensor:
        """The number of rows (an int64 scalar tensor)."""
        return torch.tensor(self.nrows_int(), dtype=torch.int64)

    def row_starts(self, name: str | None = None) -> torch.Tensor:
        return self.row_splits[:-1]

    def row_limits(self, name: str | None = None) -> torch.Tensor:
        return self.row_splits[1:]

    def row_lengths(self, axis: int = 1, name: str | None = None) -> Any:
        """The length of each row (int64); ``axis > 1`` gives a RaggedTensor of inner lengths."""
        if axis == 1 or axis == -1 and self.ragged_rank == 1:
            return self.row_splits[1:] - self.row_splits[:-1]
        if axis > 1 and isinstance(self.values, RaggedTensor):
            return RaggedTensor(self.values.row_lengths(axis - 1), self.row_splits)
        raise ValueError(f"RaggedTensor.row_lengths: `axis` must be in [1, {self.ragged_rank}]. Received: {axis}")

    def value_rowids(self, name: str | None = None) -> torch.Tensor:
        """The row of each value (int64)."""
        return torch.repeat_interleave(torch.arange(self.nrows_int()), self.row_lengths())

    def bounding_shape(self, axis: Any = None, name: str | None = None, out_type: Any = None) -> torch.Tensor:
        """The smallest dense shape holding every row (int64)."""
        width = int(self.row_lengths().max()) if self.nrows_int() else 0
        inner = self.values.bounding_shape() if isinstance(self.values, RaggedTensor) else None
        rest = inner[1:].tolist() if inner is not None else list(self.values.shape[1:])
        out = torch.tensor([self.nrows_int(), width] + rest, dtype=torch.int64)
        return out if axis is None else out[axis]

    def with_values(self, new_values: Any) -> RaggedTensor:
        """The same row splits over ``new_values``."""
        return RaggedTensor(_as_values(new_values), self.row_splits)

    def with_flat_values(self, new_values: Any) -> RaggedTensor:
        """The same ragged structure over new innermost values."""
        if isinstance(self.values, RaggedTensor):
            return RaggedTensor(self.values.with_flat_values(new_values), self.row_splits)
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype: Any) -> RaggedTensor:
        """This tensor (unison's splits are always int64)."""
        return self

    def merge_dims(self, outer_axis: int, inner_axis: int) -> Any:
        """Dimensions ``outer_axis..inner_axis`` merged into one (``merge_dims(0, -1)`` flattens)."""
        rank = len(self.shape.as_list())
        outer, inner = outer_axis % rank, inner_axis % rank
        if outer >= inner:
            return self
        if outer == 0:
            merged = self.values
            if inner == 1:
                return merged
            if isinstance(merged, RaggedTensor):
                return merged.merge_dims(0, inner - 1)
            return merged.reshape((-1,) + tuple(merged.shape[inner:]))
        if outer == 1:
            positions, values = self.row_splits, self.values
            for _ in range(inner - 1):
                if isinstance(values, RaggedTensor):
                    positions, values = values.row_splits[positions], values.values
                else:
                    positions = positions * int(np.prod(values.shape[1:inner]))
                    values = values.reshape((-1,) + tuple(values.shape[inner:]))
                    break
            return RaggedTensor(values, positions)
        return RaggedTensor(self.values.merge_dims(outer - 1, inner - 1), self.row_splits)

    # ---- rows and conversions

    def _rows(self, lo: int, hi: int) -> RaggedTensor:
        start, stop = int(self.row_splits[lo]), int(self.row_splits[hi])
        return RaggedTensor(self.values[start:stop], self.row_splits[lo : hi + 1] - start)

    def __len__(self) -> int:
        return self.nrows_int()

    def __getitem__(self, key: Any) -> Any:
        rest: tuple[Any, ...] = ()
        if isinstance(key, tuple):
            key, rest = (key[0], key[1:]) if key else (slice(None), ())
        n = self.nrows_int()
        if isinstance(key, slice):
            lo, hi, step = key.indices(n)
            if step != 1:
                raise ValueError(f"RaggedTensor rows are sliced with step 1. Received: {key}")
            out: Any = self._rows(lo, max(lo, hi))
            return out._columns(rest[0], rest[1:]) if rest else out
        if isinstance(key, torch.Tensor) and key.dim() == 0:
            key = int(key)
        if not isinstance(key, (int, np.integer)):
            raise TypeError(f"A RaggedTensor is indexed by row numbers and slices. Received: {key!r}")
        if not -n <= int(key) < n:
            raise IndexError(f"RaggedTensor: row {key} is out of range for a RaggedTensor of {n} rows.")
        i = int(key) % n
        row = self.values[int(self.row_splits[i]) : int(self.row_splits[i + 1])]
        return row[rest] if rest else row

    def _columns(self, key: Any, rest: tuple[Any, ...]) -> Any:
        """``rt[:, key, *rest]``: the same range (a slice) of every row."""
        lengths, starts = self.row_lengths(), self.row_splits[:-1]
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise ValueError(f"RaggedTensor: a ragged dimension is sliced with step 1. Received: {key}")

            def bound(b: Any, default: torch.Tensor) -> torch.Tensor:
                if b is None:
                    return default
                b = torch.full_like(lengths, int(b))
                return torch.where(b < 0, lengths + b, b).clamp(torch.zeros_like(lengths), lengths)

            lo = bound(key.start, torch.zeros_like(lengths))
            hi = torch.maximum(bound(key.stop, lengths), lo)
            counts = hi - lo
            rowids = torch.repeat_interleave(torch.arange(len(counts)), counts)
            offsets = torch.arange(int(counts.sum())) - torch.repeat_interleave(counts.cumsum(0) - counts, counts)
            picked = _take(self.values, starts[rowids] + lo[rowids] + offsets)
            out = RaggedTensor.from_row_lengths(picked, counts)
            return out._columns(rest[0], rest[1:]) if rest else out
        # TF refuses an index into a ragged dimension (rows may be too short): slice it instead
        raise ValueError(
            f"Cannot index into an inner ragged dimension (rt[:, {key!r}]); slice it (rt[:, i:i + 1]) or "
            "use rt.to_tensor() first."
        )

    @staticmethod
    def __unison_tf_op__(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``tf.*`` functions called on a RaggedTensor: TF's ragged dispatch (ragged_dispatch.py)."""
        return dispatch(fn, args, kwargs)

    # element-wise arithmetic on the flat values (a scalar, or a RaggedTensor of the same rows)
    def _binary(self, other: Any, op: Callable[[Any, Any], Any], swap: bool = False) -> RaggedTensor:
        if isinstance(other, RaggedTensor):
            for a, b in zip(self.nested_row_splits, other.nested_row_splits):
                if a.shape != b.shape or not bool((a == b).all()):
                    raise InvalidArgumentError(None, None, "RaggedTensor arithmetic: the operands' row splits differ.")
            rhs: Any = other.flat_values
        else:
            from unison.ops.dtypes import to_tensor

            rhs = to_tensor(other)
            if getattr(rhs, "ndim", 0) > getattr(self.flat_values, "ndim", 1) - 1:
                rhs = self._broadcast_dense(rhs)
        lhs = self.flat_values
        return self.with_flat_values(op(rhs, lhs) if swap else op(lhs, rhs))

    def _broadcast_dense(self, rhs: torch.Tensor) -> torch.Tensor:
        """A dense operand as flat values: TF broadcasts a dense tensor across the ragged dimensions
        when those are 1 (``[[1000], [2000], [3000]]`` adds one value per row)."""
        rank = len(self.shape.as_list())
        full = rhs.reshape((1,) * (rank - rhs.ndim) + tuple(rhs.shape)) if rhs.ndim < rank else rhs
        n = self.nrows_int()
        ragged_dims = list(full.shape[1 : 1 + self.ragged_rank])
        if full.ndim > rank or full.shape[0] not in (1, n) or any(d != 1 for d in ragged_dims):
            raise InvalidArgumentError(
                None,
                None,
                f"RaggedTensor arithmetic: a dense operand of shape {list(rhs.shape)} does not broadcast to the "
                f"RaggedTensor's shape {self.shape}: its rows must number {n} or 1 and its ragged dimensions "
                "must be 1. Use rt.to_tensor() for dense arithmetic.",
            )
        rows = torch.zeros(0, dtype=torch.int64)
        rowids = self.value_rowids()
        level: Any = self.values
        while isinstance(level, RaggedTensor):  # the outermost row of every flat value
            rowids = rowids[level.value_rowids()]
            level = level.values
        rows = rowids if full.shape[0] == n else torch.zeros_like(rowids)
        return full.reshape((full.shape[0],) + tuple(full.shape[1 + self.ragged_rank :]))[rows]

    def __add__(self, other: Any) -> RaggedTensor:
        return self._binary(other, lambda a, b: a + b)

    def __radd__(self, other: Any) -> RaggedTensor:
        return self._binary(other, lambda a, b: a + b, swap=True)

    def __sub__(self, other: Any) -> RaggedTensor:
        return self._binary(other, lambda a, b: a - b)

    def __rsub__(self, other: Any) -> RaggedTensor:
        return self._binary(other, lambda a, b: a - b, swap=True)

    def __mul__(self, other: Any) -> RaggedTensor:
        return self._binary(other, lambda a, b: a * b)

    def __rmul__(self, other: Any) -> RaggedTensor:
        return self._binary(other, lambda a, b: a * b, swap=True)

    def __truediv__(self, other: Any) -> RaggedTensor:
        return self._binary(other, _truediv)

    def __neg__(self) -> RaggedTensor:
        return self.with_flat_values(-self.flat_values)

    def __abs__(self) -> RaggedTensor:
        return self.with_flat_values(self.flat_values.abs())

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self.nrows_int()))

    def to_list(self) -> list[Any]:
        """The rows as nested Python lists (strings as ``bytes``, as TF gives them)."""
        if isinstance(self.values, RaggedTensor):
            items: list[Any] = self.values.to_list()
        elif isinstance(self.values, np.ndarray):
            items = [v.encode() if isinstance(v, str) else v for v in np.asarray(self.values, dtype=object).tolist()]
        else:
            items = self.values.tolist()
        bounds = self.row_splits.tolist()
        return [items[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

    def numpy(self) -> np.ndarray:
        """The rows as numpy, as TF's ``RaggedTensor.numpy()``: a 1-D object array of rows when
        their lengths differ, one regular array when they agree."""
        values = self.values.numpy() if isinstance(self.values, RaggedTensor) else _np_values(self.values)
        splits = self.row_splits.tolist()
        rows = [values[a:b] for a, b in zip(splits[:-1], splits[1:])]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        if any(len(r) != len(rows[0]) for r in rows):
            out = np.empty(len(rows), dtype=object)
            for i, r in enumerate(rows):  # item by item: numpy would broadcast equal inner shapes
                out[i] = r
            return out
        return np.array(rows)

    def to_tensor(self, default_value: Any = None, name: str | None = None, shape: Any = None) -> Any:
        """Rows padded with ``default_value`` (0 or ``b""``) to the longest row, or cut/padded to ``shape``."""
        shape_list = None if shape is None else [None if d is None or int(d) < 0 else int(d) for d in shape]
        inner_shape = None if shape_list is None else shape_list[1:]
        values = self.values
        if isinstance(values, RaggedTensor):
            values = values.to_tensor(default_value, shape=[None] + inner_shape[1:] if inner_shape else None)
        lengths = self.row_lengths()
        rows = self.nrows_int() if shape_list is None or shape_list[0] is None else shape_list[0]
        longest = int(lengths.max()) if len(lengths) else 0
        width = longest if inner_shape is None or inner_shape[0] is None else inner_shape[0]
        tail = list(values.shape[1:])
        if inner_shape is not None:
            tail = [t if s is None else s for t, s in zip(tail, inner_shape[1:])]
            values = _fit(values, tail, default_value)
        rowids = self.value_rowids()
        cols = torch.arange(len(rowids)) - self.row_splits[rowids]
        keep = (cols < width) & (rowids < rows)
        if isinstance(values, np.ndarray):
            from unison.ops.string_tensor import StringTensor

            out: Any = np.full([rows, width] + tail, b"" if default_value is None else default_value, dtype=object)
            out[rowids[keep].numpy(), cols[keep].numpy()] = np.asarray(values, dtype=object)[keep.numpy()]
            return StringTensor(out)
        fill = 0 if default_value is None else default_value
        dense = torch.full([rows, width] + tail, 0, dtype=values.dtype)
        dense[...] = torch.as_tensor(fill, dtype=values.dtype)
        dense[rowids[keep], cols[keep]] = values[keep]
        return dense

    def to_sparse(self, name: str | None = None) -> Any:
        """A SparseTensor with one entry per flat value, at its position in the bounding shape."""
        from unison.ops.sparse_tensor import SparseTensor

        if isinstance(self.values, RaggedTensor):
            inner = self.values.to_sparse()
            first = inner.indices[:, 0]
        else:
            inner = None
            first = torch.arange(len(self.values))
        rowids = self.value_rowids()[first]
        cols = first - self.row_splits[rowids]
        rest = inner.indices[:, 1:] if inner is not None else torch.zeros((len(first), 0), dtype=torch.int64)
        values = inner.values if inner is not None else self.values
        if inner is None and getattr(self.values, "ndim", 1) > 1:
            raise ValueError("RaggedTensor.to_sparse: flat values with uniform inner dimensions are not supported.")
        idx = torch.cat([rowids.unsqueeze(1), cols.unsqueeze(1), rest], 1)
        return SparseTensor(idx, values, self.bounding_shape())

    def __repr__(self) -> str:
        # TF's form: numpy's array2string with ", " between items, rows wrapped at 75 columns
        with np.printoptions(formatter={"all": _formatter}):
            return f"<tf.RaggedTensor {_formatter(self.numpy())}>"


def _formatter(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return np.array2string(x, separator=", ") if x.size else repr(x.tolist())
    return str(x)


def _np_values(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return np.array(
            [v.encode() if isinstance(v, str) else v for v in values.ravel().tolist()] or [], dtype=object
        ).reshape(values.shape)
    return values.detach().cpu().numpy()


def _truediv(a: torch.Tensor, b: Any) -> torch.Tensor:
    # TF's truediv: integers divide into floats (int32 -> float64, as tf.math.truediv)
    if not a.is_floating_point():
        a = a.double() if a.dtype in (torch.int32, torch.int64) else a.float()
    return a / b


def _take(values: Any, idx: torch.Tensor) -> Any:
    """Rows ``idx`` of values (a tensor, a string array, or a RaggedTensor's rows)."""
    if isinstance(values, RaggedTensor):
        lengths = values.row_lengths()[idx]
        starts = values.row_splits[:-1][idx]
        inner = torch.repeat_interleave(starts - (lengths.cumsum(0) - lengths), lengths) + torch.arange(
            int(lengths.sum())
        )
        return RaggedTensor.from_row_lengths(_take(values.values, inner), lengths)
    if isinstance(values, np.ndarray):
        return values[idx.numpy()]
    return values[idx]


def _fit(values: Any, tail: list[int], default_value: Any) -> Any:
    """``values`` cut or padded in its inner dimensions to ``tail`` (for ``to_tensor(shape=...)``)."""
    for axis, size in enumerate(tail, start=1):
        have = values.shape[axis]
        if have > size:
            values = values[(slice(None),) * axis + (slice(0, size),)]
        elif have < size:
            pad_shape = list(values.shape)
            pad_shape[axis] = size - have
            fill = 0 if default_value is None else default_value
            if isinstance(values, np.ndarray):
                values = np.concatenate([values, np.full(pad_shape, fill, dtype=object)], axis=axis)
            else:
                values = torch.cat([values, torch.full(pad_shape, fill, dtype=values.dtype)], dim=axis)
    return values


register_ragged(RaggedTensor)

__all__ = ["RaggedTensor"]
