"""``tf.IndexedSlices`` (rows of a dense tensor at some indices) and ``tf.sparse.mask``.

TF's gradients of ``gather``/embedding lookups are ``IndexedSlices``; unison's gradients are
dense torch tensors, so here it is the value type programs build and convert themselves:
``tf.convert_to_tensor`` (TF's ``__tf_tensor__`` protocol) or :meth:`IndexedSlices.to_dense` sums the rows
into ``dense_shape`` (``index_add``, duplicates added, as TF does).

Example:
    >>> import unison as tf
    >>> s = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([2, 0]), tf.constant([3, 2]))
    >>> s.to_dense().tolist()
    [[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.ops.dtypes import to_tensor


class IndexedSlices:
    """``tf.IndexedSlices(values, indices, dense_shape=None)``: ``values[i]`` is row ``indices[i]``."""

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None) -> None:
        self.values = to_tensor(values)
        self.indices = to_tensor(indices)
        self.dense_shape = None if dense_shape is None else to_tensor(dense_shape)
        if len(self.indices) != len(self.values):
            raise ValueError(
                f"tf.IndexedSlices needs one index per row of values. Received {len(self.indices)} indices and "
                f"{len(self.values)} rows."
            )

    @property
    def dtype(self) -> Any:
        return self.values.dtype

    @property
    def shape(self) -> Any:
        """The dense shape as a ``tf.TensorShape`` (the first dimension unknown without ``dense_shape``)."""
        from unison.ops.control_flow import TensorShape

        if self.dense_shape is None:
            return TensorShape([None] + list(self.values.shape[1:]))
        return TensorShape([int(d) for d in self.dense_shape.tolist()])

    @property
    def device(self) -> str:
        return str(self.values.device)

    def to_dense(self) -> torch.Tensor:
        """The dense tensor: rows summed into ``dense_shape``."""
        if self.dense_shape is None:
            raise ValueError("IndexedSlices without dense_shape cannot be made dense; pass dense_shape.")
        out = torch.zeros([int(d) for d in self.dense_shape.tolist()], dtype=self.values.dtype)
        return out.index_add(0, self.indices.long(), self.values)

    def __tf_tensor__(self, dtype: Any = None, name: str | None = None) -> torch.Tensor:
        """TF's conversion protocol: ``tf.convert_to_tensor(slices)`` is the dense tensor."""
        dense = self.to_dense()
        return dense if dtype is None else dense.to(dtype)

    def __neg__(self) -> IndexedSlices:
        return IndexedSlices(-self.values, self.indices, self.dense_shape)

    def __repr__(self) -> str:
        return f"IndexedSlices(indices={self.indices!r}, values={self.values!r}, dense_shape={self.dense_shape!r})"


def mask(a: IndexedSlices, mask_indices: Any, name: str | None = None) -> IndexedSlices:
    """``tf.sparse.mask``: the rows of ``a`` whose index is not in ``mask_indices``."""
    if not isinstance(a, IndexedSlices):
        raise TypeError(f"tf.sparse.mask takes a tf.IndexedSlices as `a`. Received: {type(a).__name__}")
    drop = to_tensor(mask_indices).to(a.indices.dtype).reshape(-1)
    keep = ~torch.isin(a.indices, drop)
    return IndexedSlices(a.values[keep], a.indices[keep], a.dense_shape)


__all__ = ["IndexedSlices", "mask"]
