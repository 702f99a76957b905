"""``tf.sparse``: the namespace (the class in :mod:`sparse_tensor`, the functions in :mod:`sparse_ops`).

Example:
    >>> import unison as tf
    >>> st = tf.sparse.eye(2)
    >>> tf.sparse.to_dense(st).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

from unison.ops.indexed_slices import mask
from unison.ops.sparse_features import (
    bincount,
    cross,
    cross_hashed,
    eye,
    map_values,
    sampled_addmm,
    segment_mean,
    segment_sqrt_n,
    segment_sum,
    to_indicator,
)
from unison.ops.sparse_ops import (
    add,
    concat,
    expand_dims,
    fill_empty_rows,
    from_dense,
    maximum,
    minimum,
    reduce_max,
    reduce_sum,
    reorder,
    reset_shape,
    reshape,
    retain,
    slice,
    softmax,
    sparse_dense_matmul,
    split,
    transpose,
)
from unison.ops.sparse_tensor import SparseTensor, to_dense

__all__ = [
    "SparseTensor",
    "add",
    "bincount",
    "concat",
    "cross",
    "cross_hashed",
    "expand_dims",
    "eye",
    "fill_empty_rows",
    "from_dense",
    "map_values",
    "mask",
    "maximum",
    "minimum",
    "reduce_max",
    "reduce_sum",
    "reorder",
    "reset_shape",
    "reshape",
    "retain",
    "sampled_addmm",
    "segment_mean",
    "segment_sqrt_n",
    "segment_sum",
    "slice",
    "softmax",
    "sparse_dense_matmul",
    "split",
    "to_dense",
    "to_indicator",
    "transpose",
]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.sparse", name)
