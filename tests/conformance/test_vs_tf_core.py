"""Core tensor functions of ``tf.*`` against TensorFlow 2.21 (see tf_oracle.py for the rules)."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf


@same_as_tf("reduce_mean", "math.reduce_mean")
def test_reduce_mean(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 5.0]])
    return tf.reduce_mean(x), tf.reduce_mean(x, axis=1), tf.math.reduce_mean(x, axis=0, keepdims=True)


@same_as_tf("reduce_mean", "math.reduce_mean", edge=True)
def test_reduce_mean_of_ints_truncates(tf):
    return tf.reduce_mean(tf.constant([1, 2])), tf.reduce_mean(tf.zeros([0, 3]), axis=0)


@same_as_tf("cast")
def test_cast(tf):
    return tf.cast(tf.constant([1.7, -1.7, 2.5]), tf.int32), tf.cast(tf.constant([0, 3]), tf.bool)


@same_as_tf("cast", edge=True)
def test_cast_nan_to_float16(tf):
    return tf.cast(tf.constant([np.nan, 1e6, -0.0]), tf.float16)


@pytest.mark.parametrize("depth", [3, 5])
@same_as_tf("one_hot")
def test_one_hot(tf, depth):
    return tf.one_hot(tf.constant([0, 2, -1]), depth)


@same_as_tf("one_hot", edge=True)
def test_one_hot_on_off_values_and_axis(tf):
    return tf.one_hot(tf.constant([[0, 1], [2, 0]]), 3, on_value=5.0, off_value=-1.0, axis=0)


@same_as_tf("reshape")
def test_reshape(tf):
    return tf.reshape(tf.range(6), [2, -1]), tf.reshape(tf.constant(3.0), [1, 1])


@same_as_tf("reshape", edge=True, match=r"tf.reshape.*`shape`")
def test_reshape_to_a_wrong_size_is_an_invalid_argument(tf):
    return tf.reshape(tf.constant([1, 2, 3]), [2, 2])


@same_as_tf("add", "math.add", edge=True)
def test_add_broadcasts(tf):
    return tf.add(tf.ones([2, 1, 3]), tf.constant([[1.0], [2.0]]))


@same_as_tf("strings.upper")
def test_strings_upper(tf):
    return tf.strings.upper(tf.constant(["abc", "Déj"]))
