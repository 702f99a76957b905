"""``tf.TensorArray`` (eager semantics) against TensorFlow 2.21 (see tf_oracle.py for the rules)."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf


@same_as_tf("TensorArray")
def test_tensor_array_write_read_stack(tf):
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, 1.0).write(2, 5.0)
    grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    for i in range(3):
        grown = grown.write(i, tf.fill([2], float(i)))
    kept = tf.TensorArray(tf.float32, size=1, clear_after_read=False).write(0, 4.0)
    return (
        ta.read(1),
        ta.read(2),
        ta.stack(),
        ta.size(),
        kept.read(0),
        kept.read(0),
        grown.stack(),
        grown.element_shape,
        grown.dtype == tf.float32,
    )


@same_as_tf("TensorArray")
def test_tensor_array_unstack_gather_scatter_concat_split(tf):
    un = tf.TensorArray(tf.float32, size=2).unstack([[1.0, 2.0], [3.0, 4.0]])
    sc = tf.TensorArray(tf.float32, size=3).scatter([2, 0], [[1.0], [2.0]])
    return un.concat(), un.gather([1, 0]), sc.stack(), sc.gather([0, 2])


@same_as_tf("TensorArray", edge=True)
def test_tensor_array_empty_stacks(tf):
    return tf.TensorArray(tf.float32, size=0, element_shape=[2]).stack(), tf.TensorArray(tf.float32, size=0).stack()


@same_as_tf("TensorArray", edge=True)
def test_tensor_array_write_past_a_fixed_size(tf):
    return tf.TensorArray(tf.float32, size=3).write(5, 2.0)


@same_as_tf("TensorArray", edge=True)
def test_tensor_array_read_past_the_end(tf):
    return tf.TensorArray(tf.float32, size=2).read(5)


@same_as_tf("TensorArray", edge=True, match=r"TensorArray dtype is float32 but Op is trying to write dtype int32")
def test_tensor_array_wrong_dtype(tf):
    return tf.TensorArray(tf.float32, size=2).write(1, tf.constant(3, tf.int32))


@pytest.mark.parametrize("second", [[2.0, 3.0], [[2.0]]])
@same_as_tf("TensorArray", edge=True)
def test_tensor_array_element_shape_is_fixed_by_the_first_write(tf, second):
    return tf.TensorArray(tf.float32, size=2).write(0, [1.0]).write(1, second).stack()


@same_as_tf("TensorArray", edge=True)
def test_tensor_array_split_lengths_differ_from_size(tf):
    return tf.TensorArray(tf.int32, size=0).split([1, 2, 3], [1, 2]).read(1)
