"""The tensor basics every TF program uses, against TensorFlow 2.21: creation, shapes, joins,
indexing, sorting, contractions, clipping, dtypes and tf.nest."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from tf_oracle import same_as_tf

M = np.arange(12, dtype=np.float32).reshape(3, 4)

CREATE = (
    "constant",
    "convert_to_tensor",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "fill",
    "eye",
    "linspace",
    "range",
)


@same_as_tf(*CREATE)
def test_creation(tf):
    x = tf.constant(M)
    return (
        tf.constant([[1, 2], [3, 4]]),
        tf.constant(1.5, shape=[2, 2]),
        tf.constant([1, 2], dtype=tf.float64),
        tf.convert_to_tensor(np.array([1.0, 2.0])),
        tf.convert_to_tensor([1, 2], dtype_hint=tf.float32),
        tf.zeros([2, 3], dtype=tf.int32),
        tf.ones((2,)),
        tf.zeros_like(x),
        tf.ones_like(x, dtype=tf.int64),
        tf.fill([2, 2], 7),
        tf.eye(3, num_columns=2),
        tf.eye(2, batch_shape=[2]),
        tf.linspace(0.0, 1.0, 5),
        tf.range(5),
        tf.range(1, 10, 3),
        tf.range(0.0, 1.0, 0.25),
        tf.range(5, dtype=tf.float32),
    )


@same_as_tf(*CREATE, edge=True)
def test_creation_edges(tf):
    return (
        tf.constant([]),
        tf.constant(True),
        tf.convert_to_tensor(3),
        tf.zeros([0, 2]),
        tf.ones([]),
        tf.zeros_like(tf.constant([1, 2], dtype=tf.int8)),
        tf.ones_like(tf.constant([True])),
        tf.fill([0], 1.0),
        tf.eye(0),
        tf.linspace(1.0, 1.0, 1),
        tf.range(5, 1),
        tf.range(10, 0, -3),
    )


JOINS = (
    "concat",
    "stack",
    "unstack",
    "split",
    "squeeze",
    "expand_dims",
    "tile",
    "transpose",
    "reverse",
    "roll",
    "pad",
    "reshape",
)


@same_as_tf(*JOINS)
def test_shapes_and_joins(tf):
    x = tf.constant(M)
    return (
        tf.concat([x, x], axis=0),
        tf.concat([x, x], -1),
        tf.stack([x, x]),
        tf.stack([x[0], x[1]], axis=1),
        tf.unstack(x),
        tf.unstack(x, axis=1),
        tf.split(x, 2, axis=1),
        tf.split(x, [1, -1], axis=0),
        tf.squeeze(tf.zeros([1, 3, 1])),
        tf.squeeze(tf.zeros([1, 3, 1]), axis=[2]),
        tf.expand_dims(x, -1),
        tf.tile(x, [2, 1]),
        tf.transpose(x),
        tf.transpose(tf.zeros([2, 3, 4]), perm=[2, 0, 1]),
        tf.reverse(x, [0, 1]),
        tf.roll(x, shift=[1, -1], axis=[0, 1]),
        tf.pad(x, [[1, 0], [0, 2]]),
        tf.pad(x, [[1, 1], [2, 2]], mode="REFLECT"),
        tf.pad(x, [[1, 1], [1, 1]], mode="SYMMETRIC", constant_values=0),
        tf.pad(x, [[0, 1], [0, 0]], constant_values=-1),
        tf.reshape(x, [2, 2, 3]),
    )


@same_as_tf(*JOINS, edge=True)
def test_shapes_and_joins_edges(tf):
    empty = tf.zeros([0, 4])
    return (
        tf.concat([empty, tf.ones([1, 4])], 0),
        tf.stack([tf.constant(1), tf.constant(2)]),
        tf.unstack(tf.zeros([0, 2]), axis=1),
        tf.split(tf.zeros([4]), 4),
        tf.squeeze(tf.zeros([1])),
        tf.expand_dims(tf.constant(3), 0),
        tf.tile(empty, [3, 1]),
        tf.transpose(tf.constant(5)),
        tf.reverse(tf.constant([1, 2, 3]), [-1]),
        tf.roll(tf.constant([1, 2, 3]), 5, 0),
        tf.pad(tf.constant([[1]]), [[0, 0], [0, 0]]),
        tf.reshape(empty, [-1, 2]),
    )


@same_as_tf("squeeze", edge=True)
def test_squeeze_of_a_non_unit_axis_is_an_error(tf):
    return tf.squeeze(tf.zeros([2, 3]), axis=0)


@same_as_tf("concat", edge=True)
def test_concat_of_mismatched_shapes_is_an_error(tf):
    return tf.concat([tf.zeros([2, 3]), tf.zeros([2, 4])], axis=0)


INDEXING = (
    "gather",
    "gather_nd",
    "boolean_mask",
    "where",
    "meshgrid",
    "one_hot",
    "searchsorted",
    "sort",
    "argsort",
    "argmax",
    "argmin",
)


@same_as_tf(*INDEXING)
def test_indexing(tf):
    x = tf.constant(M)
    a, b = tf.meshgrid(tf.constant([1, 2]), tf.constant([3, 4, 5]))
    i, j = tf.meshgrid(tf.constant([1, 2]), tf.constant([3, 4, 5]), indexing="ij")
    return (
        tf.gather(x, [2, 0]),
        tf.gather(x, [[1], [3]], axis=1),
        tf.gather(tf.reshape(tf.range(24), [2, 3, 4]), [[0, 2], [1, 0]], axis=2, batch_dims=1),
        tf.gather_nd(x, [[0, 1], [2, 3]]),
        tf.gather_nd(x, [[1]]),
        tf.boolean_mask(x, x[:, 0] > 3),
        tf.boolean_mask(x, tf.constant([[True, False, True, False]] * 3)),
        tf.where(x > 5),
        tf.where(x > 5, x, -x),
        (a, b, i, j),
        tf.one_hot([1, 0], 3, dtype=tf.int32),
        tf.searchsorted(tf.constant([[1, 3, 5], [2, 4, 6]]), tf.constant([[3, 6], [1, 5]])),
        tf.searchsorted(tf.constant([1, 3, 5]), tf.constant([3]), side="right"),
        tf.sort(tf.constant([3.0, 1.0, 2.0]), direction="DESCENDING"),
        tf.argsort(tf.constant([[3, 1, 2], [1, 1, 0]])),
        tf.argmax(x, axis=1),
        tf.argmin(x),
    )


@same_as_tf(*INDEXING, edge=True)
def test_indexing_edges(tf):
    x = tf.constant(M)
    return (
        tf.gather(x, tf.constant([], dtype=tf.int32)),
        tf.gather_nd(x, tf.zeros([0, 2], dtype=tf.int32)),
        tf.boolean_mask(x, tf.zeros([3], dtype=tf.bool)),
        tf.where(tf.zeros([2, 2], dtype=tf.bool)),
        tf.where(tf.constant([True, False]), 1.0, tf.constant([[5.0], [6.0]])),
        tf.one_hot(tf.zeros([0], dtype=tf.int32), 2),
        tf.sort(tf.constant([np.nan, 1.0, -np.inf])),
        tf.argsort(tf.constant([2, 2, 1, 2]), stable=True),
    )


@same_as_tf("gather", edge=True)
def test_gather_out_of_range_is_an_invalid_argument(tf):
    return tf.gather(tf.constant([1, 2, 3]), [5])


MATHS = (
    "add_n",
    "cumsum",
    "einsum",
    "tensordot",
    "matmul",
    "norm",
    "clip_by_value",
    "clip_by_norm",
    "clip_by_global_norm",
    "scalar_mul",
    "logical_and",
    "logical_or",
    "logical_not",
)


@same_as_tf(*MATHS, rtol=1e-5, atol=1e-5)
def test_contractions_and_clipping(tf):
    x = tf.constant(M)
    y = tf.constant(M.T)
    clipped, norm = tf.clip_by_global_norm([x, 2 * x], 10.0)
    return (
        tf.add_n([x, x, x]),
        tf.cumsum(x, axis=1, reverse=True),
        tf.einsum("ij,jk->ik", x, y),
        tf.einsum("bi,bi->b", x, x),
        tf.tensordot(x, y, axes=1),
        tf.tensordot(x, x, axes=[[0, 1], [0, 1]]),
        tf.matmul(x, x, transpose_b=True),
        tf.matmul(tf.ones([2, 3, 4]), tf.ones([4, 5])),
        tf.norm(x),
        tf.norm(x, ord=1, axis=1),
        tf.norm(x, ord="fro", axis=[0, 1]),
        tf.clip_by_value(x, 2.0, 5.0),
        tf.clip_by_norm(x, 3.0, axes=[1]),
        clipped,
        norm,
        tf.scalar_mul(3, tf.constant([1, 2])),
        tf.logical_and(x > 2, x < 8),
        tf.logical_or(x > 9, x < 1),
        tf.logical_not(x > 5),
    )


@same_as_tf(*MATHS, edge=True, rtol=1e-5, atol=1e-5)
def test_contractions_and_clipping_edges(tf):
    z = tf.zeros([0, 3])
    return (
        tf.add_n([tf.constant(1)]),
        tf.cumsum(tf.constant([1, 2, 3]), exclusive=True),
        tf.einsum("ij->", tf.constant(M)),
        tf.tensordot(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]), axes=0),
        tf.matmul(z, tf.zeros([3, 2])),
        tf.norm(tf.zeros([3])),
        tf.clip_by_value(tf.constant([np.nan, 1.0]), 0.0, 0.5),
        tf.clip_by_norm(tf.zeros([2]), 1.0),
        tf.clip_by_global_norm([tf.zeros([2])], 1.0)[1],
        tf.scalar_mul(0.5, tf.constant([2.0])),
        tf.logical_and(tf.constant([True]), tf.constant([[True], [False]])),
        tf.logical_or(tf.zeros([0], dtype=tf.bool), tf.zeros([0], dtype=tf.bool)),
        tf.logical_not(tf.constant(False)),
    )


@same_as_tf("matmul", edge=True)
def test_matmul_of_mismatched_shapes_is_an_invalid_argument(tf):
    return tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))


DTYPES = (
    "as_dtype",
    "dtypes.as_dtype",
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
    "complex64",
    "complex128",
    "double",
    "half",
    "string",
    "dtypes.float16",
    "dtypes.float32",
    "dtypes.float64",
    "dtypes.bfloat16",
    "dtypes.int8",
    "dtypes.int16",
    "dtypes.int32",
    "dtypes.int64",
    "dtypes.uint8",
    "dtypes.bool",
    "dtypes.complex64",
    "dtypes.complex128",
    "dtypes.double",
    "dtypes.half",
    "dtypes.string",
    "cast",
)
NAMES = (
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
    "complex64",
    "complex128",
)


@same_as_tf(*DTYPES)
def test_dtypes_cast_values_as_tf(tf):
    x = tf.constant([-1.5, 0.0, 2.7])
    return [tf.cast(x, tf.as_dtype(name)) for name in NAMES] + [tf.cast(x, tf.double), tf.cast(x, tf.half)]


@same_as_tf(*DTYPES, edge=True)
def test_dtypes_from_numpy_and_names(tf):
    return (
        [
            tf.zeros([1], dtype=tf.dtypes.as_dtype(np.dtype(name))).dtype == tf.as_dtype(name)
            for name in NAMES
            if name != "bfloat16"
        ],
        tf.constant(["a"]).dtype == tf.string,
        tf.dtypes.string == tf.string,
        tf.float64 == tf.double,
        tf.float16 == tf.half,
        tf.zeros([1], dtype=tf.dtypes.float32).dtype == tf.float32,
    )


NEST = ("nest.flatten", "nest.map_structure", "nest.pack_sequence_as", "nest.assert_same_structure", "nest.is_nested")
Point = collections.namedtuple("Point", ["x", "y"])


@same_as_tf(*NEST)
def test_nest(tf):
    structure = {"b": [1, (2, 3)], "a": Point(4, 5)}
    flat = tf.nest.flatten(structure)
    return (
        flat,
        tf.nest.map_structure(lambda v: v * 10, structure),
        tf.nest.pack_sequence_as(structure, list(range(5))),
        tf.nest.assert_same_structure([1, (2,)], [3, (4,)]),
        tf.nest.is_nested([1]),
        tf.nest.is_nested(tf.constant([1])),
    )


@same_as_tf(*NEST, edge=True)
def test_nest_mismatch_is_a_value_error(tf):
    return tf.nest.assert_same_structure([1, 2], [1, [2]])


@pytest.mark.parametrize("value", [None, [], {}, "text", b"bytes"])
@same_as_tf(*NEST, edge=True)
def test_nest_leaves_and_empties(tf, value):
    return tf.nest.flatten(value), tf.nest.is_nested(value), tf.nest.map_structure(lambda v: v, value)
