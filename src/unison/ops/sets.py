"""``tf.sets``: set operations over the last axis of dense tensors or ``SparseTensor`` s.

Each position of the leading axes holds a set: the values along the last axis (for a
``SparseTensor``, the values present in that row). Results are ``SparseTensor`` s whose rows hold
the sorted members, as TF's are; ``size`` counts the distinct members of each row.

Example:
    >>> import unison as tf
    >>> s = tf.sets.intersection(tf.constant([[1, 2, 3]]), tf.constant([[3, 1, 7]]))
    >>> s.values.tolist(), s.dense_shape.tolist()
    ([1, 3], [1, 2])
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor
from unison.ops.sparse import SparseTensor

_ALLOWED = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16)


class _Members:
    """A set argument flattened: the row of each member, its value (as codes for strings), the batch shape."""

    def __init__(self, value: Any, op: str, arg: str) -> None:
        if isinstance(value, SparseTensor):
            shape = value.shape
            if len(shape) < 2:
                raise InvalidArgumentError(
                    f"tf.sets.{op}: `{arg}` must have rank >= 2. Received dense_shape {list(shape)}."
                )
            self.batch = tuple(shape[:-1])
            idx = value.indices[:, :-1]
            strides = torch.tensor(
                [int(np.prod(self.batch[i + 1 :])) for i in range(len(self.batch))], dtype=torch.int64
            )
            self.rows = (idx * strides).sum(-1) if len(idx) else torch.zeros(0, dtype=torch.int64)
            self.values: Any = value.values
        else:
            t = to_tensor(value)  # a torch tensor, or a StringTensor (an ndarray of bytes)
            shape = tuple(t.shape)
            if len(shape) < 2:
                raise InvalidArgumentError(
                    f"tf.sets.{op}: `{arg}` must have rank >= 2 (Shape {list(shape)} has rank {len(shape)} < 2)."
                )
            self.batch = shape[:-1]
            self.rows = torch.arange(int(np.prod(self.batch)), dtype=torch.int64).repeat_interleave(shape[-1])
            self.values = t.reshape(-1) if isinstance(t, torch.Tensor) else np.asarray(t, dtype=object).reshape(-1)
        self.is_string = not isinstance(self.values, torch.Tensor)
        if not self.is_string and self.values.dtype not in _ALLOWED:
            raise TypeError(
                f"tf.sets.{op}: `{arg}` has dtype {str(self.values.dtype).replace('torch.', '')}; sets hold int8, int16, "
                f"int32, int64, uint8, uint16 or string values. Cast it first (tf.cast)."
            )

    @property
    def dtype(self) -> Any:
        return "string" if self.is_string else self.values.dtype


def _codes(a: _Members, b: _Members) -> tuple[torch.Tensor, torch.Tensor, Any]:
    """Values as sortable int64 codes (strings by their sorted order) and how to map codes back."""
    if not a.is_string:
        return a.values.long(), b.values.long(), None
    both = np.concatenate([np.asarray(m.values, dtype=object).reshape(-1) for m in (a, b)])
    both = np.array([v.encode() if isinstance(v, str) else bytes(v) for v in both], dtype=object)
    uniques, inverse = np.unique(both, return_inverse=True) if len(both) else (both, np.zeros(0, dtype=np.int64))
    codes = torch.as_tensor(inverse.astype(np.int64))
    n = len(a.values)
    return codes[:n], codes[n:], uniques


def _unique_pairs(rows: torch.Tensor, codes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    pairs = torch.stack([rows, codes], dim=1)
    if not len(pairs):
        return pairs, torch.zeros(0, dtype=torch.int64)
    return torch.unique(pairs, dim=0, return_inverse=True)


def _result(pairs: torch.Tensor, batch: tuple[int, ...], dtype: Any, uniques: Any) -> SparseTensor:
    n_rows = int(np.prod(batch))
    rows, codes = pairs[:, 0], pairs[:, 1]
    counts = torch.bincount(rows, minlength=n_rows) if len(rows) else torch.zeros(n_rows, dtype=torch.int64)
    starts = torch.cumsum(counts, 0) - counts
    position = torch.arange(len(rows)) - starts[rows] if len(rows) else torch.zeros(0, dtype=torch.int64)
    batch_index = (
        torch.stack(torch.unravel_index(rows, batch), dim=1)
        if len(rows)
        else torch.zeros(0, len(batch), dtype=torch.int64)
    )
    indices = torch.cat([batch_index, position.unsqueeze(1)], dim=1)
    width = int(counts.max()) if n_rows and len(rows) else 0
    values: Any = np.asarray(uniques, dtype=object)[codes.numpy()] if uniques is not None else codes.to(dtype)
    return SparseTensor(indices, values, [*batch, width])


def _set_operation(a: Any, b: Any, op: str, keep: str) -> SparseTensor:
    # TF takes a dense `a` with a sparse `b` by swapping them (and the difference's direction).
    if not isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        a, b = b, a
        keep = {"a-b": "b-a", "b-a": "a-b"}.get(keep, keep)
    left, right = _Members(a, op, "a"), _Members(b, op, "b")
    if left.dtype != right.dtype:
        raise TypeError(
            f"tf.sets.{op}: `a` and `b` must have the same dtype (Types don't match, {left.dtype} vs {right.dtype})."
        )
    if left.batch != right.batch:
        raise InvalidArgumentError(
            f"tf.sets.{op}: `a` and `b` must have the same shape but for the last axis (Mismatched shapes "
            f"{list(left.batch)} vs {list(right.batch)})."
        )
    codes_a, codes_b, uniques = _codes(left, right)
    pairs, inverse = _unique_pairs(torch.cat([left.rows, right.rows]), torch.cat([codes_a, codes_b]))
    in_a = torch.zeros(len(pairs), dtype=torch.bool)
    in_b = torch.zeros(len(pairs), dtype=torch.bool)
    in_a[inverse[: len(codes_a)]] = True
    in_b[inverse[len(codes_a) :]] = True
    chosen = {"and": in_a & in_b, "or": in_a | in_b, "a-b": in_a & ~in_b, "b-a": in_b & ~in_a}[keep]
    return _result(pairs[chosen], left.batch, left.dtype, uniques)


def intersection(a: Any, b: Any, validate_indices: builtins.bool = True) -> SparseTensor:
    """``tf.sets.intersection``: the members in both ``a`` and ``b``, per row, as a ``SparseTensor``."""
    return _set_operation(a, b, "intersection", "and")


def union(a: Any, b: Any, validate_indices: builtins.bool = True) -> SparseTensor:
    """``tf.sets.union``: the members of ``a`` or ``b``, per row, as a ``SparseTensor``."""
    return _set_operation(a, b, "union", "or")


def difference(a: Any, b: Any, aminusb: builtins.bool = True, validate_indices: builtins.bool = True) -> SparseTensor:
    """``tf.sets.difference``: ``a - b`` (``b - a`` when ``aminusb`` is False), per row, as a ``SparseTensor``."""
    return _set_operation(a, b, "difference", "a-b" if aminusb else "b-a")


def size(a: Any, validate_indices: builtins.bool = True) -> torch.Tensor:
    """``tf.sets.size``: the number of distinct members of each row of a ``SparseTensor`` (int32)."""
    if not isinstance(a, SparseTensor):
        raise TypeError(f"tf.sets.size: Expected `SparseTensor`, got {type(a).__name__}: pass a tf.SparseTensor.")
    members = _Members(a, "size", "a")
    codes, _, _ = _codes(members, members)
    pairs, _ = _unique_pairs(members.rows, codes)
    n_rows = int(np.prod(members.batch))
    counts = torch.bincount(pairs[:, 0], minlength=n_rows) if len(pairs) else torch.zeros(n_rows, dtype=torch.int64)
    return counts.to(torch.int32).reshape(members.batch)


__all__ = ["difference", "intersection", "size", "union"]

# not wrapped for symbolic inputs: the symbolic hook is also how a SparseTensor refuses tf.* functions,
# and every set function takes SparseTensors


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.sets", name)
