"""``tf.io.serialize_sparse``, ``serialize_many_sparse`` and ``deserialize_many_sparse``: a
SparseTensor as three serialized ``TensorProto`` strings (indices, values, dense_shape), the
format TF writes, so either side reads the other's strings.

Example:
    >>> import unison as tf
    >>> sp = tf.sparse.SparseTensor(indices=[[0, 1]], values=[5.0], dense_shape=[2, 2])
    >>> tf.io.serialize_sparse(sp).shape
    (3,)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, string
from unison.ops.parsing import parse_tensor, serialize_tensor
from unison.ops.sparse import SparseTensor
from unison.ops.string_tensor import StringTensor

__all__ = ["deserialize_many_sparse", "serialize_many_sparse", "serialize_sparse"]


def _item(value: Any) -> bytes:
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=object)
    return array.item() if array.ndim == 0 else bytes(array.reshape(-1)[0])


def _check(sp_input: Any, out_type: Any, op: str) -> None:
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"tf.io.{op} takes a tf.sparse.SparseTensor. Received {type(sp_input).__name__}.")
    if out_type is not string and getattr(out_type, "name", out_type) != "string":
        raise ValueError(f"tf.io.{op}: unison serializes to out_type=tf.string only. Received out_type={out_type!r}.")


def serialize_sparse(sp_input: Any, out_type: Any = string, name: str | None = None) -> StringTensor:
    """``tf.io.serialize_sparse``: ``[3]`` strings, the serialized indices, values and dense shape."""
    _check(sp_input, out_type, "serialize_sparse")
    parts = np.empty(3, dtype=object)
    parts[:] = [_item(serialize_tensor(t)) for t in (sp_input.indices, sp_input.values, sp_input.dense_shape)]
    return StringTensor(parts)


def serialize_many_sparse(sp_input: Any, out_type: Any = string, name: str | None = None) -> StringTensor:
    """``tf.io.serialize_many_sparse``: ``[N, 3]`` strings, one serialized SparseTensor per row of the
    first dimension (its indices without the first column, its shape without the first size)."""
    _check(sp_input, out_type, "serialize_many_sparse")
    if sp_input.indices.shape[1] < 2:
        raise InvalidArgumentError(
            None,
            None,
            "tf.io.serialize_many_sparse: the SparseTensor must have rank >= 2 (a minibatch). "
            f"Received dense_shape {sp_input.dense_shape.tolist()}.",
        )
    rows = int(sp_input.dense_shape[0])
    out = np.empty((rows, 3), dtype=object)
    first = sp_input.indices[:, 0]
    for row in range(rows):  # one TensorProto triple per minibatch entry
        mask = first == row
        keep = torch.nonzero(mask).reshape(-1)
        values = sp_input.values[keep] if isinstance(sp_input.values, torch.Tensor) else sp_input.values[keep.numpy()]
        entry = SparseTensor(sp_input.indices[mask][:, 1:], values, sp_input.dense_shape[1:])
        out[row] = serialize_sparse(entry).view(np.ndarray)
    return StringTensor(out)


def deserialize_many_sparse(
    serialized_sparse: Any, dtype: Any, rank: int | None = None, name: str | None = None
) -> SparseTensor:
    """``tf.io.deserialize_many_sparse``: the ``[N, 3]`` strings of :func:`serialize_many_sparse` back
    into one SparseTensor with a leading minibatch dimension (the shape is the largest of each)."""
    rows = np.asarray(serialized_sparse.numpy() if hasattr(serialized_sparse, "numpy") else serialized_sparse)
    if rows.ndim != 2 or rows.shape[1] != 3:
        raise InvalidArgumentError(
            None, None, f"tf.io.deserialize_many_sparse: serialized_sparse must be [N, 3]. Received {list(rows.shape)}."
        )
    target = as_dtype(dtype)
    indices, values, shapes = [], [], []
    for row, (idx, val, shape) in enumerate(rows.tolist()):
        entry_indices = parse_tensor(idx, torch.int64)
        indices.append(torch.cat([torch.full((entry_indices.shape[0], 1), row), entry_indices], dim=1))
        values.append(parse_tensor(val, target))
        shapes.append(parse_tensor(shape, torch.int64))
    if not shapes:
        raise InvalidArgumentError(None, None, "tf.io.deserialize_many_sparse: serialized_sparse is empty.")
    if len({s.shape[0] for s in shapes}) > 1 or (rank is not None and shapes[0].shape[0] + 1 != int(rank)):
        raise InvalidArgumentError(
            None,
            None,
            "tf.io.deserialize_many_sparse: every serialized SparseTensor must have the same rank "
            f"(rank={rank}). Received ranks {[int(s.shape[0]) for s in shapes]}.",
        )
    dense = torch.stack(shapes).amax(dim=0)
    all_values: Any = torch.cat(values) if isinstance(values[0], torch.Tensor) else np.concatenate(values)
    return SparseTensor(torch.cat(indices), all_values, torch.cat([torch.tensor([len(shapes)]), dense]))
