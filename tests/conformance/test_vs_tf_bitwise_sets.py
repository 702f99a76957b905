"""``tf.bitwise`` and ``tf.sets`` against TensorFlow 2.21 (see tf_oracle.py for the rules)."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

INTS = ["int8", "int16", "int32", "int64", "uint8"]


@pytest.mark.parametrize("dtype", INTS)
@same_as_tf("bitwise.bitwise_and", "bitwise.bitwise_or", "bitwise.bitwise_xor", "bitwise.invert")
def test_bitwise_logic(tf, dtype):
    x = tf.constant([0, 5, 12, 127, 100], getattr(tf, dtype))
    y = tf.constant([3, 6, 10, 1, 27], getattr(tf, dtype))
    return tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y), tf.bitwise.bitwise_xor(x, y), tf.bitwise.invert(x)


@same_as_tf("bitwise.bitwise_and", "bitwise.bitwise_or", "bitwise.bitwise_xor", edge=True)
def test_bitwise_broadcasts_and_takes_python_ints(tf):
    x = tf.constant([[3], [5]])
    y = tf.constant([1, 2, 4])
    return (
        tf.bitwise.bitwise_and(x, y),
        tf.bitwise.bitwise_or(tf.constant([3], tf.int8), 8),
        tf.bitwise.bitwise_xor(6, tf.constant([3], tf.int16)),
    )


@same_as_tf("bitwise.bitwise_and", "bitwise.bitwise_or", edge=True, match=r"bitwise_and.*`x` and `y`.*same dtype")
def test_bitwise_mixed_dtypes_are_refused(tf):
    return tf.bitwise.bitwise_and(tf.constant([3]), tf.constant([1], tf.int64))


@same_as_tf("bitwise.invert", "bitwise.bitwise_xor", edge=True, match=r"invert.*`x`.*allowed")
def test_bitwise_of_bools_is_refused(tf):
    return tf.bitwise.invert(tf.constant([True]))


@pytest.mark.parametrize("dtype", INTS)
@same_as_tf("bitwise.left_shift", "bitwise.right_shift")
def test_shifts(tf, dtype):
    x = tf.constant([1, 5, 64, 127, 3], getattr(tf, dtype))
    y = tf.constant([0, 1, 2, 3, 7], getattr(tf, dtype))
    return tf.bitwise.left_shift(x, y), tf.bitwise.right_shift(x, y)


@same_as_tf("bitwise.left_shift", "bitwise.right_shift", edge=True)
def test_shifts_are_clamped_and_arithmetic(tf):
    return (
        tf.bitwise.left_shift(tf.constant([1, 1, 3], tf.int8), tf.constant([7, 9, -1], tf.int8)),
        tf.bitwise.right_shift(tf.constant([-8, 8, -3, -3]), tf.constant([1, 40, -1, 33])),
        tf.bitwise.left_shift(tf.constant([3, 3]), tf.constant([-1, 33])),
        tf.bitwise.right_shift(tf.constant([200, 255], tf.uint8), tf.constant([1, 9], tf.uint8)),
    )


def _sparse(result):
    return result.indices, result.values, result.dense_shape


A = [[[1, 2, 3], [4, 5, 5]], [[9, 9, 9], [1, 2, 3]]]
B = [[[3, 1, 7], [5, 6, 8]], [[1, 9, 2], [0, 0, 0]]]


@same_as_tf("sets.intersection", "sets.union", "sets.difference")
def test_set_operations_on_dense(tf):
    a, b = tf.constant(A), tf.constant(B)
    return (
        _sparse(tf.sets.intersection(a, b)),
        _sparse(tf.sets.union(a, b)),
        _sparse(tf.sets.difference(a, b)),
        _sparse(tf.sets.difference(a, b, aminusb=False)),
        _sparse(tf.sets.union(tf.constant([["a", "b"]]), tf.constant([["c", "a"]]))),
    )


@same_as_tf("sets.intersection", "sets.union", "sets.difference", "sets.size")
def test_set_operations_on_sparse(tf):
    s = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], tf.constant([5, 3, 7], tf.int64), [3, 4])
    t = tf.SparseTensor([[0, 1], [2, 0]], tf.constant([3, 4], tf.int64), [3, 2])
    dense = tf.constant([[3, 5], [1, 2], [0, 0]], tf.int64)
    return (
        _sparse(tf.sets.intersection(s, dense)),
        _sparse(tf.sets.difference(dense, s)),
        _sparse(tf.sets.union(s, t)),
        _sparse(tf.sets.difference(s, t)),
        tf.sets.size(s),
        tf.sets.size(t),
    )


@same_as_tf("sets.intersection", "sets.union", "sets.difference", edge=True)
def test_set_operations_with_an_empty_result(tf):
    a, b = tf.constant([[1, 2], [3, 3]]), tf.constant([[3, 4], [5, 6]])
    return (
        _sparse(tf.sets.intersection(a, b)),
        _sparse(tf.sets.difference(a, a)),
        _sparse(tf.sets.union(tf.zeros([2, 0], tf.int32), tf.zeros([2, 0], tf.int32))),
    )


@same_as_tf("sets.union", "sets.intersection", edge=True, match=r"union.*rank >= 2")
def test_set_operations_need_rank_2(tf):
    return tf.sets.union(tf.constant([1, 2]), tf.constant([2, 3]))


@same_as_tf("sets.difference", edge=True, match=r"difference.*Mismatched shapes")
def test_set_operations_need_the_same_batch(tf):
    return tf.sets.difference(tf.constant([[1, 2]]), tf.constant([[1, 2], [3, 4]]))


@same_as_tf("sets.size", edge=True, match=r"sets.size.*SparseTensor")
def test_set_size_of_a_dense_tensor_is_refused(tf):
    return tf.sets.size(tf.constant([[1, 2, 2]]))


@same_as_tf("bitwise.bitwise_and", "bitwise.left_shift", edge=True, match=r"bitwise_and.*Incompatible shapes")
def test_bitwise_shapes_must_broadcast(tf):
    return tf.bitwise.bitwise_and(tf.ones([2], tf.int32), tf.ones([3], tf.int32))


@same_as_tf("sets.union", "sets.size", edge=True)
def test_sets_of_higher_rank_sparse_and_negative_values(tf):
    sparse = tf.SparseTensor([[0, 1, 0], [0, 1, 2], [1, 0, 2]], tf.constant([4, -4, 2]), [2, 2, 3])
    union = tf.sets.union(sparse, tf.constant([[[1], [4]], [[2], [-9]]]))
    return (union.indices, union.values, union.dense_shape), tf.sets.size(sparse)
