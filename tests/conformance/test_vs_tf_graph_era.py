"""Top-level names against TensorFlow 2.21: DeviceSpec, CriticalSection, RegisterGradient/no_gradient,
vectorized_map, TypeSpec & co, the unsigned dtypes and register_tensor_conversion_function."""

from __future__ import annotations

import itertools

import pytest
from tf_oracle import same_as_tf

_COUNTER = itertools.count()


@same_as_tf("DeviceSpec")
def test_device_spec(tf):
    spec = tf.DeviceSpec.from_string("/job:worker/replica:0/task:1/device:gpu:2")
    short = tf.DeviceSpec.from_string("/cpu:0")
    built = tf.DeviceSpec(job="ps", task=0, device_type="CPU", device_index=1)
    return (
        spec.to_string(),
        [spec.job, spec.replica, spec.task, spec.device_type, spec.device_index],
        short.to_string(),
        built.to_string(),
        built.replace(task=3).to_string(),
        spec.make_merged_spec(short).to_string(),
        tf.DeviceSpec(job="a").parse_from_string("/task:2").to_string(),
        tf.DeviceSpec.from_string("/job:ps") == tf.DeviceSpec(job="ps"),
        tf.DeviceSpec(device_type="GPU").to_string(),
    )


@same_as_tf("DeviceSpec", edge=True)
def test_device_spec_empty_and_bad(tf):
    out = [tf.DeviceSpec().to_string(), tf.DeviceSpec.from_string("").to_string()]
    try:
        tf.DeviceSpec.from_string("/jobb:x")
    except ValueError:
        out.append("bad")
    return out


@same_as_tf("CriticalSection")
def test_critical_section(tf):
    section = tf.CriticalSection()
    v = tf.Variable(0)
    results = [section.execute(lambda: v.assign_add(2)) for _ in range(3)]
    return results, v.read_value()


@same_as_tf("CriticalSection", edge=True)
def test_critical_section_nested_execute_is_refused(tf):
    section = tf.CriticalSection()
    try:
        section.execute(lambda: section.execute(lambda: tf.constant(1)))
    except ValueError:
        return "refused"
    return "ran"


GRADIENTS = ("RegisterGradient", "no_gradient")


@same_as_tf(*GRADIENTS)
def test_register_gradient_returns_the_function(tf):
    op = f"UnisonConformanceOp{next(_COUNTER)}_{id(tf)}"

    @tf.RegisterGradient(op)
    def grad(op, dy):
        return dy * 2

    tf.no_gradient(op + "NoGrad")
    return grad.__name__, grad(None, 3)


@same_as_tf(*GRADIENTS, edge=True)
def test_register_gradient_twice_and_bad_name(tf):
    op = f"UnisonTwiceOp{next(_COUNTER)}_{id(tf)}"
    tf.RegisterGradient(op)(lambda op, dy: dy)
    out = []
    try:
        tf.RegisterGradient(op)(lambda op, dy: dy)
    except KeyError:
        out.append("twice")
    try:
        tf.no_gradient(op)
    except KeyError:
        out.append("no_gradient after register")
    try:
        tf.RegisterGradient(3)
    except TypeError:
        out.append("not a string")
    return out


@same_as_tf("vectorized_map")
def test_vectorized_map(tf):
    x = tf.reshape(tf.range(12, dtype=tf.float32), [4, 3])
    return (
        tf.vectorized_map(lambda row: tf.reduce_sum(row * row), x),
        tf.vectorized_map(lambda pair: pair[0] + pair[1], (x, x * 2)),
        tf.vectorized_map(lambda row: tf.tensordot(row, row, 0), x[:2]),
    )


@same_as_tf("vectorized_map", edge=True)
def test_vectorized_map_of_an_empty_batch(tf):
    return tf.vectorized_map(lambda row: row * 2.0, tf.zeros([0, 3]))


SPECS = ("TypeSpec", "type_spec_from_value", "NoneTensorSpec", "OptionalSpec")


@same_as_tf(*SPECS)
def test_type_specs(tf):
    tensor_spec = tf.type_spec_from_value(tf.constant([[1.0, 2.0]]))
    ragged = tf.type_spec_from_value(tf.ragged.constant([[1, 2], [3]]))
    dataset = tf.type_spec_from_value(tf.data.Dataset.range(3))
    optional = tf.OptionalSpec(tf.TensorSpec([], tf.int32))
    return (
        [list(tensor_spec.shape), tensor_spec.dtype == tf.float32],
        [isinstance(s, tf.TypeSpec) for s in (tensor_spec, ragged, dataset, optional, tf.NoneTensorSpec())],
        type(ragged).__name__,
        dataset.element_spec.dtype == tf.int64,
        tf.type_spec_from_value(3).dtype == tf.int32,
        tf.NoneTensorSpec() == tf.NoneTensorSpec(),
        optional == tf.OptionalSpec(tf.TensorSpec([], tf.int32)),
    )


@same_as_tf(*SPECS, edge=True)
def test_type_spec_of_unsupported_values(tf):
    out = []
    out.append(repr(tf.type_spec_from_value(None)))
    for value in ({"a": 1}, object()):
        try:
            tf.type_spec_from_value(value)
        except TypeError:
            out.append("TypeError")
    out.append(isinstance(3, tf.TypeSpec))
    out.append(list(tf.type_spec_from_value(tf.zeros([0, 2])).shape))
    return out


UNSIGNED = ("uint16", "uint32", "uint64", "dtypes.uint16", "dtypes.uint32", "dtypes.uint64")


@pytest.mark.parametrize("kind", ["uint16", "uint32", "uint64"])
@same_as_tf(*UNSIGNED)
def test_unsigned_dtypes(tf, kind):
    dtype = getattr(tf, kind)
    x = tf.constant([0, 7, 65535], dtype=dtype)
    return (
        x,
        tf.cast(x, tf.int64),
        tf.cast(tf.constant([3.9, 1.0]), dtype),
        dtype == getattr(tf.dtypes, kind),
        tf.as_dtype(kind) == dtype,
    )


@pytest.mark.parametrize("kind", ["uint16", "uint32", "uint64"])
@same_as_tf(*UNSIGNED, edge=True)
def test_unsigned_dtypes_empty_and_bits(tf, kind):
    dtype = getattr(tf, kind)
    return tf.zeros([0], dtype), tf.bitwise.bitwise_and(tf.constant([12, 10], dtype), tf.constant([10, 6], dtype))


@same_as_tf("register_tensor_conversion_function")
def test_register_tensor_conversion_function(tf):
    class Meters:
        def __init__(self, value):
            self.value = value

    def convert(value, dtype=None, name=None, as_ref=False):
        return tf.constant(value.value, dtype=dtype or tf.float32)

    tf.register_tensor_conversion_function(Meters, convert)
    return (
        tf.convert_to_tensor(Meters(2.5)),
        tf.convert_to_tensor(Meters(3), dtype=tf.float64),
        tf.add(Meters(1.0), 1.0),
    )


@same_as_tf("register_tensor_conversion_function", edge=True)
def test_register_tensor_conversion_function_refuses_builtin_types(tf):
    out = []
    for base in (int, float, bool):
        try:
            tf.register_tensor_conversion_function(base, lambda v, dtype=None, name=None, as_ref=False: v)
        except TypeError:
            out.append(base.__name__)
    return out
