"""``tf.SparseTensor`` as ``tf.io.parse_example`` returns it for a ``VarLenFeature``, and ``tf.sparse.to_dense``.

TF's layout: ``indices`` (int64, ``[N, rank]``: the position of each value), ``values`` (the
``N`` values: a torch tensor, or a numpy object array of bytes for strings) and ``dense_shape``
(int64, ``[rank]``). There are no sparse kernels: turn it into a dense value with
``tf.sparse.to_dense`` (or ``.to_dense()``) before math or batching in ``tf.data``.

Example:
    >>> import unison as tf
    >>> st = tf.SparseTensor(indices=[[0, 1], [1, 0]], values=[5, 6], dense_shape=[2, 3])
    >>> tf.sparse.to_dense(st).tolist()
    [[0, 5, 0], [6, 0, 0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


class SparseTensor:
    """``tf.SparseTensor(indices, values, dense_shape)``: values at positions of a dense shape."""

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        self.indices = torch.as_tensor(np.asarray(indices, dtype=np.int64)).reshape(-1, len(np.asarray(dense_shape)))
        arr = values if isinstance(values, torch.Tensor) else np.asarray(values)
        self.values: Any = arr if isinstance(arr, torch.Tensor) or arr.dtype.kind in "OUS" else torch.as_tensor(arr)
        if isinstance(self.values, np.ndarray):
            self.values = self.values.astype(object)
        self.dense_shape = torch.as_tensor(np.asarray(dense_shape, dtype=np.int64))
        if len(self.values) != len(self.indices):
            raise ValueError(
                f"A SparseTensor needs one index row per value. Received {len(self.indices)} index rows and "
                f"{len(self.values)} values."
            )

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.dense_shape.tolist())

    @property
    def dtype(self) -> Any:
        from unison.ops.dtypes import string

        return string if isinstance(self.values, np.ndarray) else self.values.dtype

    def to_dense(self, default_value: Any = None) -> Any:
        """The dense value: ``default_value`` (0 or ``b""``) where no value is given."""
        return to_dense(self, default_value)

    def __repr__(self) -> str:
        return f"SparseTensor(indices={self.indices.tolist()}, values={self.values!r}, dense_shape={self.shape})"


def to_dense(
    sp_input: SparseTensor, default_value: Any = None, validate_indices: bool = True, name: str | None = None
) -> Any:
    """``tf.sparse.to_dense``: a dense tensor (numpy object array for strings) from a ``SparseTensor``."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"tf.sparse.to_dense takes a tf.SparseTensor. Received: {type(sp_input).__name__}")
    shape = sp_input.shape
    index = tuple(sp_input.indices.T.tolist()) if len(sp_input.indices) else None
    if isinstance(sp_input.values, np.ndarray):
        out: Any = np.full(shape, b"" if default_value is None else default_value, dtype=object)
        if index is not None:
            out[index] = sp_input.values
        return out
    dense = torch.full(shape, 0 if default_value is None else default_value, dtype=sp_input.values.dtype)
    if index is not None:
        dense[index] = sp_input.values
    return dense


__all__ = ["SparseTensor", "to_dense"]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.sparse", name)
