"""The ops with a CPU fast path (``unison/ops/fastpath.py``) against TensorFlow 2.21.

``tanh``, the comparisons, ``argmax``/``argmin``, ``where`` and ``gather_nd`` take another route
than torch's kernel for plain CPU tensors; these tests feed that route what could tell it apart:
NaN, infinities, signed zeros, ties, every dtype width of the bitwise select, transposed (strided)
inputs, sizes on both sides of torch's one-thread grain, and out-of-range indices.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-7, 9.5, -20.0, 0.3]


def _big(n, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal((n, n)).astype(dtype) * 3


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [16, 256])
@same_as_tf("tanh", "math.tanh", "nn.tanh")
def test_tanh_fast_path(tf, dtype, n):
    x = tf.constant(_big(n, np.dtype(dtype)))
    return tf.tanh(x), tf.math.tanh(tf.transpose(x)), tf.nn.tanh(x[::2])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@same_as_tf("tanh", "math.tanh", "nn.tanh", edge=True)
def test_tanh_fast_path_special_values(tf, dtype):
    x = tf.constant(np.array(SPECIAL, dtype=dtype))
    return tf.tanh(x), tf.math.tanh(x[0]), tf.nn.tanh(tf.zeros([0, 3], dtype=dtype)), 1.0 / tf.tanh(-x)


COMPARISONS = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal")


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "uint8", "float64"])
@same_as_tf(*COMPARISONS)
def test_comparisons_fast_path(tf, name, dtype):
    a = (_big(64, np.float32, 1)).astype(dtype)
    b = (_big(64, np.float32, 2)).astype(dtype)
    a[3] = b[3]  # equal rows
    fn = getattr(tf, name)
    return fn(tf.constant(a), tf.constant(b)), fn(tf.constant(a), tf.constant(b[:1])), fn(tf.constant(a[0]), 0)


@pytest.mark.parametrize("name", COMPARISONS)
@same_as_tf(*COMPARISONS, edge=True)
def test_comparisons_fast_path_nan_and_zeros(tf, name):
    a = tf.constant(np.array(SPECIAL, dtype=np.float32))
    b = tf.constant(np.array(SPECIAL[::-1], dtype=np.float32))
    fn = getattr(tf, name)
    # NaN compares unequal to everything, -0.0 == 0.0, mixed dtypes promote a Python number
    return fn(a, b), fn(a, a), fn(a, 0.0)


@pytest.mark.parametrize("axis", [0, 1, -1])
@same_as_tf("argmax", "argmin", "math.argmax", "math.argmin")
def test_arg_extrema_fast_path(tf, axis):
    x = tf.constant(np.round(_big(40)))  # rounding makes ties: the first index wins
    ints = tf.constant(np.round(_big(40)).astype(np.int32))
    return (
        tf.argmax(x, axis=axis),
        tf.argmin(x, axis=axis),
        tf.math.argmax(ints, axis=axis, output_type=tf.int32),
        tf.math.argmin(tf.transpose(ints), axis=axis),
    )


@same_as_tf("argmax", "argmin", "math.argmax", "math.argmin", edge=True)
def test_arg_extrema_fast_path_with_nan_and_inf(tf):
    x = np.array([[1.0, np.nan, 3.0], [np.inf, 2.0, np.nan], [-np.inf, -np.inf, 0.0]], dtype=np.float32)
    return tf.argmax(x, axis=1), tf.argmin(x, axis=1), tf.math.argmax(x[2]), tf.math.argmin(tf.constant([True, False]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "float16"])
@same_as_tf("where")
def test_where_fast_path_every_width(tf, dtype):
    rng = np.random.default_rng(3)
    cond = rng.standard_normal((50, 70)) > 0
    x = (rng.standard_normal((50, 70)) * 50).astype(dtype)
    y = (rng.standard_normal((50, 70)) * 50).astype(dtype)
    return tf.where(tf.constant(cond), tf.constant(x), tf.constant(y))


@same_as_tf("where", edge=True)
def test_where_fast_path_keeps_the_bits(tf):
    x = tf.constant(np.array(SPECIAL, dtype=np.float32))
    y = tf.constant(np.array(SPECIAL[::-1], dtype=np.float32))
    cond = tf.constant(np.array([True, False] * 5))
    picked = tf.where(cond, x, y)
    # signed zeros and infinities come through as they were (1/x tells -0.0 from 0.0)
    return (
        picked,
        1.0 / picked,
        tf.where(cond[:1], x, y),
        tf.where(tf.transpose(tf.constant([[True, False]])), x[:2], y[:2]),
    )


@pytest.mark.parametrize("n", [8, 256])
@same_as_tf("gather_nd")
def test_gather_nd_fast_path(tf, n):
    rng = np.random.default_rng(4)
    params = tf.constant(_big(n))
    pairs = tf.constant(rng.integers(0, n, (n, 2)).astype(np.int32))
    rows = tf.constant(rng.integers(0, n, (3, 4, 1)).astype(np.int64))
    return tf.gather_nd(params, pairs), tf.gather_nd(params, rows), tf.gather_nd(tf.transpose(params), pairs)


@same_as_tf("gather_nd", edge=True)
def test_gather_nd_fast_path_out_of_range(tf):
    return tf.gather_nd(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([[0, 1], [2, 0]]))


@pytest.mark.parametrize("name", ("greater", "greater_equal", "less", "less_equal"))
@same_as_tf("greater", "greater_equal", "less", "less_equal", edge=True, match="bool tensors have no order")
def test_ordering_bools_is_an_error(tf, name):
    return getattr(tf, name)(tf.constant([True, False]), tf.constant([True, True]))


@same_as_tf("scatter_nd", "tensor_scatter_nd_update", edge=True, match="does not index into shape")
def test_scatter_nd_out_of_range(tf):
    return tf.scatter_nd([[5]], [1], [4])
