"""``tf.ragged`` and ``tf.RaggedTensor`` against TensorFlow 2.21 (see tf_oracle.py for the rules)."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf


@same_as_tf("RaggedTensor")
def test_ragged_tensor_constructors(tf):
    values = tf.constant([3, 1, 4, 1, 5, 9, 2])
    return (
        tf.RaggedTensor.from_row_splits(values, [0, 4, 4, 7]),
        tf.RaggedTensor.from_row_lengths(values, [4, 0, 3]),
        tf.RaggedTensor.from_value_rowids(values, [0, 0, 0, 0, 2, 2, 2], nrows=4),
        tf.RaggedTensor.from_row_starts(values, [0, 4, 4]),
        tf.RaggedTensor.from_row_limits(values, [4, 4, 7]),
        tf.RaggedTensor.from_nested_row_splits(values, ([0, 1, 3], [0, 4, 4, 7])),
        tf.RaggedTensor.from_nested_row_lengths(values, ([2, 1], [4, 0, 3])),
    )


@same_as_tf("RaggedTensor", edge=True)
def test_ragged_tensor_from_tensor_and_sparse(tf):
    dense = tf.constant([[1, 0, 0], [2, 3, 0], [0, 0, 0]])
    st = tf.sparse.SparseTensor([[0, 0], [0, 1], [2, 0]], [1.0, 2.0, 3.0], [4, 5])
    return (
        tf.RaggedTensor.from_tensor(dense),
        tf.RaggedTensor.from_tensor(dense, padding=0),
        tf.RaggedTensor.from_tensor(dense, lengths=[1, 2, 0]),
        tf.RaggedTensor.from_tensor(tf.zeros([2, 2, 2]), ragged_rank=2),
        tf.RaggedTensor.from_sparse(st),
    )


@same_as_tf("RaggedTensor")
def test_ragged_tensor_methods(tf):
    rt = tf.ragged.constant([[1, 2], [], [3, 4, 5]])
    r3 = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    return (
        rt.to_tensor(),
        rt.to_tensor(default_value=-1, shape=[4, 2]),
        rt.to_sparse(),
        rt.to_list(),
        rt.row_lengths(),
        rt.row_splits,
        rt.value_rowids(),
        rt.nrows(),
        rt.bounding_shape(),
        rt.shape,
        rt.ragged_rank,
        rt.with_flat_values(rt.flat_values * 2),
        rt[2],
        rt[1:],
        rt[2, 1],
        r3.merge_dims(0, 1),
        r3.merge_dims(1, 2),
        r3.to_tensor(),
        r3.to_sparse(),
        r3.nested_row_splits,
        r3.row_lengths(axis=2),
        r3.bounding_shape(),
    )


@same_as_tf("RaggedTensor", edge=True)
def test_ragged_tensor_row_out_of_range_and_bad_splits(tf):
    rt = tf.ragged.constant([[1, 2], [3]])
    try:
        rt[5]
    except IndexError as e:
        first = type(e).__name__
    return first, tf.RaggedTensor.from_row_splits(tf.constant([1, 2]), [0, 1, 3])


@same_as_tf("ragged.constant")
def test_constant(tf):
    return (
        tf.ragged.constant([[1, 2], [3]]),
        tf.ragged.constant([[1.5], [], [2.5, 3.5]]),
        tf.ragged.constant([["a", "b"], ["c"]]),
        tf.ragged.constant([[[1, 2], [3]], [[4]]]),
        tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1),
        tf.ragged.constant([[1, 2], [3]], dtype=tf.float64),
    )


@same_as_tf("ragged.constant", edge=True)
def test_constant_of_empty_rows_is_float32(tf):
    return tf.ragged.constant([[], []]), tf.ragged.constant([[], [1]])


@same_as_tf("ragged.range")
def test_range(tf):
    return tf.ragged.range([1, 3], [4, 4]), tf.ragged.range(3), tf.ragged.range([0.0, 1.0], 2.0, 0.5)


@same_as_tf("ragged.range", edge=True)
def test_range_empty_and_negative_delta(tf):
    return tf.ragged.range([5, 0], [1, 3], [-2, 1]), tf.ragged.range([3], [1])


@same_as_tf("ragged.stack")
def test_stack(tf):
    a = tf.ragged.constant([[1, 2], [3]])
    b = tf.ragged.constant([[4], [5, 6, 7]])
    return tf.ragged.stack([a, b]), tf.ragged.stack([a, b], axis=1)


@same_as_tf("ragged.stack", edge=True)
def test_stack_dense_and_ragged(tf):
    return tf.ragged.stack([tf.constant([[1, 2]]), tf.ragged.constant([[3], []])])


@same_as_tf("ragged.boolean_mask")
def test_boolean_mask(tf):
    a = tf.ragged.constant([[1, 2], [3]])
    return (
        tf.ragged.boolean_mask(tf.constant([[1, 2, 3], [4, 5, 6]]), tf.constant([[True, False, True], [False] * 3])),
        tf.ragged.boolean_mask(a, tf.ragged.constant([[True, False], [True]])),
        tf.ragged.boolean_mask(a, tf.constant([False, True])),
    )


@same_as_tf("ragged.boolean_mask", edge=True)
def test_boolean_mask_shape_mismatch(tf):
    return tf.ragged.boolean_mask(tf.constant([[1, 2, 3]]), tf.constant([[True, False]]))


@same_as_tf("ragged.map_flat_values")
def test_map_flat_values(tf):
    rt = tf.ragged.constant([[1.0, 2.0], [3.0]])
    return tf.ragged.map_flat_values(tf.math.square, rt), tf.ragged.map_flat_values(tf.add, rt, rt)


@same_as_tf("ragged.map_flat_values", edge=True)
def test_map_flat_values_splits_differ(tf):
    return tf.ragged.map_flat_values(
        tf.add, tf.ragged.constant([[1.0, 2.0], [3.0]]), tf.ragged.constant([[1.0], [2.0, 3.0]])
    )


@same_as_tf("ragged.row_splits_to_segment_ids", "ragged.segment_ids_to_row_splits")
def test_splits_and_segment_ids(tf):
    return (
        tf.ragged.row_splits_to_segment_ids([0, 2, 2, 3]),
        tf.ragged.segment_ids_to_row_splits([0, 0, 2]),
        tf.ragged.segment_ids_to_row_splits([0, 0, 2], num_segments=4),
    )


@same_as_tf("ragged.row_splits_to_segment_ids", "ragged.segment_ids_to_row_splits", edge=True)
def test_splits_and_segment_ids_empty(tf):
    return tf.ragged.row_splits_to_segment_ids([0]), tf.ragged.segment_ids_to_row_splits(tf.constant([], tf.int64))


@same_as_tf("ragged.stack_dynamic_partitions")
def test_stack_dynamic_partitions(tf):
    return tf.ragged.stack_dynamic_partitions(tf.constant([1, 2, 3, 4]), tf.constant([1, 0, 1, 2]), 4)


@same_as_tf("ragged.stack_dynamic_partitions", edge=True)
def test_stack_dynamic_partitions_rows_of_a_matrix(tf):
    data = tf.constant(np.arange(6.0).reshape(3, 2).astype(np.float32))
    return tf.ragged.stack_dynamic_partitions(data, tf.constant([2, 2, 0]), 3)


@same_as_tf("ragged.cross")
def test_cross(tf):
    a = tf.ragged.constant([["1", "2"], ["3"]])
    return tf.ragged.cross([a, tf.ragged.constant([["x"], ["y", "z"]])])


@same_as_tf("ragged.cross", edge=True)
def test_cross_with_dense_and_empty_row(tf):
    return tf.ragged.cross([tf.ragged.constant([["a"], []]), tf.constant([["p"], ["q"]])])


@same_as_tf("ragged.cross_hashed")
def test_cross_hashed(tf):
    a = tf.ragged.constant([["1", "2"], ["3"]])
    return tf.ragged.cross_hashed([a, tf.ragged.constant([["x"], ["y", "z"]])], num_buckets=50)


@same_as_tf("ragged.cross_hashed", edge=True)
def test_cross_hashed_ints_default_buckets(tf):
    return tf.ragged.cross_hashed([tf.ragged.constant([[1, 2], []], dtype=tf.int64), tf.constant([["p"], ["q"]])])


@same_as_tf("ragged_fill_empty_rows", "ragged_fill_empty_rows_grad")
def test_ragged_fill_empty_rows(tf):
    out = tf.ragged_fill_empty_rows(
        value_rowids=tf.constant([0, 0, 2], tf.int64),
        values=tf.constant([1.0, 2.0, 3.0]),
        nrows=tf.constant(4, tf.int64),
        default_value=tf.constant(9.0),
    )
    grad = tf.ragged_fill_empty_rows_grad(out.reverse_index_map, tf.constant([1.0, 2.0, 3.0, 4.0, 5.0]))
    return tuple(out), tuple(grad)


@same_as_tf("ragged_fill_empty_rows", "ragged_fill_empty_rows_grad", edge=True)
def test_ragged_fill_empty_rows_all_empty(tf):
    out = tf.ragged_fill_empty_rows(
        value_rowids=tf.constant([], tf.int64),
        values=tf.constant([], tf.int32),
        nrows=tf.constant(2, tf.int64),
        default_value=tf.constant(-1),
    )
    grad = tf.ragged_fill_empty_rows_grad(out.reverse_index_map, tf.constant([1.0, 2.0]))
    return tuple(out), tuple(grad)


@same_as_tf("RaggedTensor")
def test_ragged_tensor_column_indexing_and_arithmetic(tf):
    rt = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    r3 = tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]])
    return (
        rt[:, 1:],
        rt[:, -2:],
        rt[1:, :1],
        r3[:, -1:],
        rt + 1,
        2 * rt,
        rt - rt,
        rt * rt,
        -rt,
        rt / 2,
    )


@same_as_tf("RaggedTensor", edge=True)
def test_ragged_tensor_index_into_a_ragged_dimension(tf):
    return tf.ragged.constant([[1, 2, 3], [4]])[:, 0]


@same_as_tf("RaggedTensor")
def test_tf_functions_on_ragged_tensors(tf):
    rt = tf.ragged.constant([[1.0, 2.0], [], [3.0]])
    ri = tf.ragged.constant([[1, 2], [], [3]])
    return (
        tf.reduce_mean(rt, axis=1),
        tf.reduce_max(rt, axis=1),
        tf.reduce_min(rt, axis=-1),
        tf.reduce_sum(rt, axis=0),
        tf.reduce_sum(rt),
        tf.reduce_max(ri, axis=1),
        tf.reduce_mean(ri, axis=1),
        tf.reduce_sum(ri, axis=1, keepdims=True),
        tf.reduce_any(tf.ragged.constant([[True], []]), axis=1),
        tf.math.square(rt),
        tf.cast(ri, tf.float32),
        tf.add(rt, 1.0),
        tf.math.equal(ri, 2),
        tf.maximum(ri, ri * 2),
        tf.where(tf.ragged.constant([[True, False]]), tf.ragged.constant([[1, 2]]), tf.ragged.constant([[3, 4]])),
        tf.concat([ri, ri], axis=0),
        tf.concat([ri, ri], axis=1),
    )


@same_as_tf("RaggedTensor", edge=True)
def test_tf_reduce_on_a_ragged_tensor_axis_out_of_range(tf):
    return tf.reduce_sum(tf.ragged.constant([[1.0, 2.0], []]), axis=2)
