"""What TF programs read off a tensor, against TensorFlow 2.21: its shape's ``as_list()``/``rank``,
its dtype's ``name``/``is_floating``/``max``, ``ref()`` as a dict key, and ``==`` with a list."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "bool", "complex64", "complex128")  # fmt: skip


@same_as_tf("TensorShape", "Tensor")
def test_a_tensors_shape_has_tensorshapes_attributes(tf):
    x = tf.zeros([2, 3, 4])
    s = x.shape
    return (
        s.as_list(),
        s.rank,
        s.ndims,
        s.num_elements(),
        s.is_fully_defined(),
        s.is_compatible_with([2, None, 4]),
        s.is_compatible_with([2, 5, 4]),
        s.concatenate([5]).as_list(),
        s.merge_with([None, 3, 4]).as_list(),
        s[1:].as_list(),
        [d for d in s.dims] == [2, 3, 4],
        tf.zeros([]).shape.as_list(),
        tf.zeros([0, 2]).shape.num_elements(),
    )


@same_as_tf("TensorShape", "Tensor", edge=True, match="compatible")
def test_an_incompatible_shape_assertion_raises(tf):
    tf.zeros([2, 3]).shape.assert_is_compatible_with([2, 4])


@pytest.mark.parametrize("name", DTYPES)
@same_as_tf("DType", "as_dtype")
def test_dtype_attributes(tf, name):
    d = tf.as_dtype(name)
    numeric = name not in ("bool", "complex64", "complex128")
    return (
        d.name,
        d.is_floating,
        d.is_integer,
        d.is_bool,
        d.is_complex,
        d.is_unsigned,
        d.is_quantized,
        d.size,
        d.as_datatype_enum,
        d.base_dtype == d,
        d.real_dtype.name,
        d.is_compatible_with(name),
        d.max if numeric else None,
        d.min if numeric else None,
        tf.constant(np.ones(2), dtype=d).dtype.name,
        np.dtype(d.as_numpy_dtype).name,
    )


@same_as_tf("DType", edge=True)
def test_the_maximum_of_bool_is_a_type_error(tf):
    return tf.bool.max


@same_as_tf("Tensor", "Variable")
def test_ref_is_a_hashable_key_that_derefs(tf):
    a, b = tf.constant([1.0]), tf.Variable([2.0])
    table = {a.ref(): "a", b.ref(): "b"}
    return (
        table[a.ref()],
        table[b.ref()],
        a.ref() == a.ref(),
        a.ref() == tf.constant([1.0]).ref(),
        b.ref().deref() is b,
        a.experimental_ref() == a.ref(),
    )


@same_as_tf("Tensor", "math.equal", "math.not_equal")
def test_equality_with_a_list_or_array_is_elementwise(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    return (
        x == [[1.0, 2.0], [3.0, 5.0]],
        x != [1.0, 2.0],
        [1.0, 4.0] == x,
        x == np.array([3.0, 4.0]),
        tf.constant([1, 2]) == (1, 3),
    )
