"""``tf.debugging`` against TensorFlow 2.21 (see tf_oracle.py for the rules).

A passing assertion returns None on both sides; a failing one raises TF's error class
(InvalidArgumentError for values, ValueError for static shapes, TypeError for dtypes).
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_BINARY = [
    ("assert_equal", [1, 2], [1, 2], [1, 3]),
    ("assert_none_equal", [1, 2], [2, 1], [1, 1]),
    ("assert_less", [1, 2], [2, 3], [2, 2]),
    ("assert_less_equal", [1, 2], [1, 2], [2, 1]),
    ("assert_greater", [2, 3], [1, 2], [1, 3]),
    ("assert_greater_equal", [2, 2], [1, 2], [1, 3]),
]


@pytest.mark.parametrize("op,x,ok,bad", _BINARY)
@same_as_tf(
    "debugging.assert_equal",
    "debugging.assert_none_equal",
    "debugging.assert_less",
    "debugging.assert_less_equal",
    "debugging.assert_greater",
    "debugging.assert_greater_equal",
)
def test_binary_assertions(tf, op, x, ok, bad):
    fn = getattr(tf.debugging, op)
    passed = fn(tf.constant(x), tf.constant(ok), message="m")
    try:
        fn(tf.constant(x), tf.constant(bad), summarize=2)
    except tf.errors.InvalidArgumentError:
        return passed, "raised InvalidArgumentError"
    return passed, "did not raise"


@pytest.mark.parametrize("op", [b[0] for b in _BINARY])
@same_as_tf(
    "debugging.assert_equal",
    "debugging.assert_none_equal",
    "debugging.assert_less",
    "debugging.assert_less_equal",
    "debugging.assert_greater",
    "debugging.assert_greater_equal",
    edge=True,
)
def test_binary_assertions_broadcast_and_empty(tf, op):
    fn = getattr(tf.debugging, op)
    empty = fn(tf.zeros([0, 3]), tf.zeros([0, 3]))
    try:
        fn(tf.constant([[1.0], [np.nan]]), tf.constant([1.0, 2.0]))
        nan = "passed"
    except tf.errors.InvalidArgumentError:
        nan = "raised"
    return empty, nan


@same_as_tf("debugging.assert_equal", edge=True)
def test_assert_equal_shapes_that_do_not_broadcast(tf):
    return tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 2, 3]))


@same_as_tf("debugging.assert_less", edge=True)
def test_assert_less_of_int_and_float(tf):
    return tf.debugging.assert_less(tf.constant([1, 2]), tf.constant([3.0, 4.0]))


@same_as_tf("debugging.assert_equal", edge=True)
def test_assert_equal_strings(tf):
    same = tf.debugging.assert_equal(tf.constant(["a", "b"]), tf.constant(["a", "b"]))
    try:
        tf.debugging.assert_equal(tf.constant(["a"]), tf.constant(["b"]))
    except tf.errors.InvalidArgumentError:
        return same, "raised"
    return same, "passed"


@same_as_tf("debugging.assert_near")
def test_assert_near(tf):
    ok = tf.debugging.assert_near(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.000001]))
    loose = tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.1]), rtol=0.2)
    try:
        tf.debugging.assert_near(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.001]))
    except tf.errors.InvalidArgumentError:
        return ok, loose, "raised"
    return ok, loose, "passed"


@same_as_tf("debugging.assert_near", edge=True)
def test_assert_near_nan(tf):
    return tf.debugging.assert_near(tf.constant([1.0, np.nan]), tf.constant([1.0, np.nan]))


@same_as_tf("debugging.assert_near", edge=True)
def test_assert_near_of_ints(tf):
    return tf.debugging.assert_near(tf.constant([1, 2]), tf.constant([1, 2]))


@pytest.mark.parametrize(
    "op,ok,bad",
    [
        ("assert_negative", [-1.0, -2.0], [-1.0, 0.0]),
        ("assert_positive", [1, 2], [1, 0]),
        ("assert_non_negative", [0, 2], [0, -1]),
        ("assert_non_positive", [0.0, -2.0], [0.0, 1.0]),
    ],
)
@same_as_tf(
    "debugging.assert_negative",
    "debugging.assert_positive",
    "debugging.assert_non_negative",
    "debugging.assert_non_positive",
)
def test_sign_assertions(tf, op, ok, bad):
    fn = getattr(tf.debugging, op)
    passed = fn(tf.constant(ok))
    try:
        fn(tf.constant(bad), message="sign")
    except tf.errors.InvalidArgumentError:
        return passed, "raised"
    return passed, "passed"


@pytest.mark.parametrize("op", ["assert_negative", "assert_positive", "assert_non_negative", "assert_non_positive"])
@same_as_tf(
    "debugging.assert_negative",
    "debugging.assert_positive",
    "debugging.assert_non_negative",
    "debugging.assert_non_positive",
    edge=True,
)
def test_sign_assertions_of_empty_and_nan(tf, op):
    fn = getattr(tf.debugging, op)
    empty = fn(tf.zeros([0]))
    try:
        fn(tf.constant([np.nan]))
    except tf.errors.InvalidArgumentError:
        return empty, "raised"
    return empty, "passed"


@same_as_tf("debugging.assert_rank", "debugging.assert_rank_at_least", "debugging.assert_rank_in")
def test_rank_assertions_pass(tf):
    x = tf.ones([2, 3])
    return (
        tf.debugging.assert_rank(x, 2),
        tf.debugging.assert_rank(x, tf.constant(2)),
        tf.debugging.assert_rank_at_least(x, 1),
        tf.debugging.assert_rank_in(x, [1, 2]),
    )


@pytest.mark.parametrize(
    "op,arg", [("assert_rank", 3), ("assert_rank_at_least", 3), ("assert_rank_in", (1, 3)), ("assert_rank", [1])]
)
@same_as_tf("debugging.assert_rank", "debugging.assert_rank_at_least", "debugging.assert_rank_in", edge=True)
def test_rank_assertions_fail(tf, op, arg):
    return getattr(tf.debugging, op)(tf.ones([2, 3]), arg)


@same_as_tf("debugging.assert_scalar")
def test_assert_scalar(tf):
    return tf.debugging.assert_scalar(tf.constant(1.0))


@same_as_tf("debugging.assert_scalar", edge=True)
def test_assert_scalar_of_a_vector(tf):
    return tf.debugging.assert_scalar(tf.ones([1]))


@same_as_tf("debugging.assert_type", "debugging.assert_integer")
def test_dtype_assertions_pass(tf):
    return tf.debugging.assert_type(tf.ones([2]), tf.float32), tf.debugging.assert_integer(tf.constant([1, 2]))


@same_as_tf("debugging.assert_type", edge=True)
def test_assert_type_wrong(tf):
    return tf.debugging.assert_type(tf.ones([2]), tf.int32)


@same_as_tf("debugging.assert_integer", edge=True)
def test_assert_integer_of_floats(tf):
    return tf.debugging.assert_integer(tf.ones([2]))


@same_as_tf("debugging.check_numerics", "debugging.assert_all_finite")
def test_check_numerics_passes_values_through(tf):
    x = tf.constant([1.0, -2.5])
    return tf.debugging.check_numerics(x, "x"), tf.debugging.assert_all_finite(x, "x")


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@same_as_tf("debugging.check_numerics", "debugging.assert_all_finite", edge=True)
def test_check_numerics_of_nan_and_inf(tf, value):
    return tf.debugging.check_numerics(tf.constant([1.0, value]), "bad")


@same_as_tf("debugging.check_numerics", "debugging.assert_all_finite", edge=True)
def test_check_numerics_of_ints(tf):
    return tf.debugging.assert_all_finite(tf.constant([1, 2]), "ints")


@same_as_tf("debugging.is_numeric_tensor")
def test_is_numeric_tensor(tf):
    return (
        tf.debugging.is_numeric_tensor(tf.constant([1.0])),
        tf.debugging.is_numeric_tensor(tf.constant([1])),
        tf.debugging.is_numeric_tensor(tf.constant([True])),
        tf.debugging.is_numeric_tensor(tf.constant(["a"])),
    )


@same_as_tf("debugging.is_numeric_tensor", edge=True)
def test_is_numeric_tensor_of_arrays_and_numbers(tf):
    return tf.debugging.is_numeric_tensor(np.ones(2)), tf.debugging.is_numeric_tensor(3.0)


@same_as_tf("debugging.assert_proper_iterable")
def test_assert_proper_iterable(tf):
    return tf.debugging.assert_proper_iterable([1, 2]), tf.debugging.assert_proper_iterable(x for x in "ab")


@pytest.mark.parametrize("kind", ["tensor", "string", "array", "int"])
@same_as_tf("debugging.assert_proper_iterable", edge=True)
def test_assert_proper_iterable_refuses(tf, kind):
    value = {"tensor": tf.constant([1]), "string": "ab", "array": np.ones(2), "int": 5}[kind]
    return tf.debugging.assert_proper_iterable(value)


@same_as_tf("debugging.assert_same_float_dtype")
def test_assert_same_float_dtype(tf):
    return (
        tf.debugging.assert_same_float_dtype([tf.ones([1]), tf.ones([2])]) == tf.float32,
        tf.debugging.assert_same_float_dtype(None, tf.float16) == tf.float16,
        tf.debugging.assert_same_float_dtype() == tf.float32,
    )


@pytest.mark.parametrize("case", ["mixed", "ints"])
@same_as_tf("debugging.assert_same_float_dtype", edge=True)
def test_assert_same_float_dtype_refuses(tf, case):
    if case == "mixed":
        return tf.debugging.assert_same_float_dtype([tf.ones([1]), tf.ones([1], tf.float64)])
    return tf.debugging.assert_same_float_dtype([tf.constant([1])])


@same_as_tf("debugging.Assert")
def test_assert(tf):
    passed = tf.debugging.Assert(tf.constant(True), [tf.constant([1, 2])])
    try:
        tf.debugging.Assert(tf.reduce_all(tf.constant([True, False])), ["x", tf.constant([1.5])])
    except tf.errors.InvalidArgumentError:
        return passed, "raised"
    return passed, "passed"


@same_as_tf("debugging.Assert", edge=True)
def test_assert_of_a_python_bool(tf):
    return tf.debugging.Assert(False, ["no data tensors"])


@same_as_tf("debugging.assert_shapes")
def test_assert_shapes(tf):
    a, b = tf.ones([2, 3]), tf.ones([2])
    return (
        tf.debugging.assert_shapes([(a, ("N", "D")), (b, ("N",))]),
        tf.debugging.assert_shapes([(a, (2, 3)), (tf.ones([5, 2, 3]), ("*", 2, "."))]),
        tf.debugging.assert_shapes([(tf.constant(1.0), ()), (tf.ones([1]), ())]),
    )


@pytest.mark.parametrize("case", ["symbol", "explicit", "rank", "scalar", "star", "not_iterable"])
@same_as_tf("debugging.assert_shapes", edge=True)
def test_assert_shapes_mismatch(tf, case):
    a = tf.ones([2, 3])
    specs = {
        "symbol": [(a, ("N", "D")), (tf.ones([3]), ("N",))],
        "explicit": [(a, (2, 4))],
        "rank": [(a, ("N",)), (tf.ones([2, 3, 4]), ("N", "D"))],
        "scalar": [(tf.ones([2]), ())],
        "star": [(a, ("N", "*"))],
        "not_iterable": [(a, 5)],
    }
    return tf.debugging.assert_shapes(specs[case])


@same_as_tf("debugging.enable_check_numerics", "debugging.disable_check_numerics")
def test_check_numerics_mode_finds_the_first_inf(tf):
    tf.debugging.enable_check_numerics()
    try:
        ok = tf.math.log(tf.constant([1.0, 2.0]))
        tf.math.log(tf.constant([0.0]))
        outcome = "passed"
    except tf.errors.InvalidArgumentError:
        outcome = "raised"
    finally:
        tf.debugging.disable_check_numerics()
    return ok, outcome, tf.math.log(tf.constant([0.0]))


@same_as_tf("debugging.enable_check_numerics", "debugging.disable_check_numerics", edge=True)
def test_check_numerics_mode_twice_and_ints(tf):
    tf.debugging.enable_check_numerics()
    tf.debugging.enable_check_numerics()
    try:
        ints = tf.constant([1]) * tf.constant([0])
    finally:
        tf.debugging.disable_check_numerics()
        tf.debugging.disable_check_numerics()
    return ints.dtype == tf.int32, tf.math.log(tf.constant([0.0]))


@same_as_tf("debugging.set_log_device_placement", "debugging.get_log_device_placement")
def test_log_device_placement(tf):
    before = tf.debugging.get_log_device_placement()
    tf.debugging.set_log_device_placement(True)
    try:
        on = tf.debugging.get_log_device_placement()
        value = tf.reduce_sum(tf.constant([1.0, 2.0]))
    finally:
        tf.debugging.set_log_device_placement(False)
    return before, on, value, tf.debugging.get_log_device_placement()


@same_as_tf("debugging.set_log_device_placement", "debugging.get_log_device_placement", edge=True)
def test_log_device_placement_takes_truthy_values(tf):
    tf.debugging.set_log_device_placement(1)
    try:
        on = tf.debugging.get_log_device_placement()
    finally:
        tf.debugging.set_log_device_placement(0)
    return bool(on), tf.debugging.get_log_device_placement()


@same_as_tf(
    "debugging.enable_traceback_filtering",
    "debugging.disable_traceback_filtering",
    "debugging.is_traceback_filtering_enabled",
)
def test_traceback_filtering_switch(tf):
    before = tf.debugging.is_traceback_filtering_enabled()
    tf.debugging.disable_traceback_filtering()
    off = tf.debugging.is_traceback_filtering_enabled()
    tf.debugging.enable_traceback_filtering()
    return before, off, tf.debugging.is_traceback_filtering_enabled()


@same_as_tf(
    "debugging.enable_traceback_filtering",
    "debugging.disable_traceback_filtering",
    "debugging.is_traceback_filtering_enabled",
    edge=True,
)
def test_traceback_filtering_twice(tf):
    tf.debugging.enable_traceback_filtering()
    tf.debugging.enable_traceback_filtering()
    on = tf.debugging.is_traceback_filtering_enabled()
    tf.debugging.disable_traceback_filtering()
    tf.debugging.disable_traceback_filtering()
    off = tf.debugging.is_traceback_filtering_enabled()
    tf.debugging.enable_traceback_filtering()
    return on, off
