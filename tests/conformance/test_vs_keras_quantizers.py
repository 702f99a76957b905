"""``keras.quantizers`` on unison against Keras 3.15 on TF 2.21: Keras's quantization math."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

X = (np.sin(np.arange(12)) * 3.0).reshape(3, 4).astype(np.float32)

ABS_MAX_NAMES = ("keras:quantizers.abs_max_quantize", "keras:quantizers.AbsMaxQuantizer", "keras:quantizers.Quantizer")


@pytest.mark.parametrize(("axis", "value_range"), [(-1, (-127, 127)), (0, (-100, 100)), ((0, 1), (-127, 127))])
@same_as_tf(*ABS_MAX_NAMES)
def test_abs_max_quantize(tf, axis, value_range):
    q = tf.keras.quantizers
    out, scale = q.abs_max_quantize(tf.constant(X), axis=axis, value_range=value_range)
    out2, scale2 = q.AbsMaxQuantizer(value_range=value_range)(tf.constant(X), axis=axis)
    quantizer = q.AbsMaxQuantizer(axis=1)
    return out, scale, out2, scale2, quantizer.get_config(), isinstance(quantizer, q.Quantizer)


@pytest.mark.parametrize("case", ["zeros", "bad_range"])
@same_as_tf(*ABS_MAX_NAMES, edge=True)
def test_abs_max_quantize_edge(tf, case):
    q = tf.keras.quantizers
    if case == "zeros":  # all-zero rows: epsilon keeps the scale finite
        return q.abs_max_quantize(tf.constant(np.zeros((2, 3), np.float32)), axis=-1)
    return q.AbsMaxQuantizer(value_range=(-200, 200))


FLOAT8_NAMES = (
    "keras:quantizers.compute_float8_scale",
    "keras:quantizers.compute_float8_amax_history",
    "keras:quantizers.quantize_and_dequantize",
)


@same_as_tf(*FLOAT8_NAMES, rtol=1e-6, atol=1e-7)
def test_float8_helpers(tf):
    q = tf.keras.quantizers
    amax = tf.constant([2.0, 0.5, 100.0])
    scale = tf.constant([1.0, 0.25, 2.0])
    history = q.compute_float8_amax_history(tf.constant(X), tf.constant([1.0, 2.0, 3.0, 4.0]))
    x = tf.constant([0.3, -1.7, 12.0, 600.0, -1e4])
    return (
        q.compute_float8_scale(amax, scale, 448.0),
        q.compute_float8_scale(amax, scale, 57344.0, margin=2),
        history,
        q.quantize_and_dequantize(x, tf.constant(1.0), "float8_e4m3fn", "float32"),
        q.quantize_and_dequantize(x, tf.constant(0.5), "float8_e5m2", "float32"),
    )


@same_as_tf(*FLOAT8_NAMES, edge=True)
def test_float8_helpers_keep_the_old_scale_for_zero_and_inf(tf):
    q = tf.keras.quantizers
    amax = tf.constant([0.0, float("inf"), float("nan")])
    return (
        q.compute_float8_scale(amax, tf.constant([0.5, 0.25, 2.0]), 448.0),
        q.compute_float8_amax_history(tf.constant([-float("inf"), 1.0]), tf.constant([5.0])),
        q.quantize_and_dequantize(tf.constant([float("inf"), 0.0]), tf.constant(1.0), "float8_e4m3fn", "float32"),
    )


INT4_NAMES = ("keras:quantizers.pack_int4", "keras:quantizers.unpack_int4")


@pytest.mark.parametrize(("shape", "axis", "dtype"), [((5, 3), 0, "int8"), ((4, 3), 1, "int8"), ((3, 2), 0, "uint8")])
@same_as_tf(*INT4_NAMES)
def test_int4_packing(tf, shape, axis, dtype):
    q = tf.keras.quantizers
    low, high = (-8, 8) if dtype == "int8" else (0, 16)
    values = (np.arange(np.prod(shape)) % (high - low) + low).reshape(shape).astype(dtype)
    packed, packed_shape, n = q.pack_int4(tf.constant(values), axis=axis, dtype=dtype)
    back = q.unpack_int4(packed, n, axis=axis, dtype=dtype)
    return packed, tuple(int(d) for d in packed_shape), n, back


@pytest.mark.parametrize("case", ["wrong_dtype", "bad_dtype_name"])
@same_as_tf(*INT4_NAMES, edge=True)
def test_int4_packing_refuses_bad_input(tf, case):
    q = tf.keras.quantizers
    if case == "wrong_dtype":
        return q.pack_int4(tf.constant(np.zeros((2, 2), np.int32)))
    return q.unpack_int4(tf.constant(np.zeros((2, 2), np.int8)), 4, dtype="int32")


FAKE_QUANT_NAMES = ("keras:quantizers.fake_quant_with_min_max_vars",)


@pytest.mark.parametrize(("num_bits", "narrow_range"), [(8, False), (4, True)])
@same_as_tf(*FAKE_QUANT_NAMES, rtol=1e-5, atol=1e-6)
def test_fake_quant(tf, num_bits, narrow_range):
    q = tf.keras.quantizers
    x = tf.constant(X)
    return (
        q.fake_quant_with_min_max_vars(x, -2.0, 2.5, num_bits=num_bits, narrow_range=narrow_range),
        q.fake_quant_with_min_max_vars(
            x,
            tf.constant([-1.0, -2.0, 0.0, -3.0]),
            tf.constant([1.0, 2.0, 3.0, 0.5]),
            num_bits=num_bits,
            narrow_range=narrow_range,
            axis=-1,
        ),
    )


@same_as_tf(*FAKE_QUANT_NAMES, edge=True, rtol=1e-5, atol=1e-6)
def test_fake_quant_range_off_zero(tf):
    # a range that excludes zero is nudged so that zero stays representable
    return tf.keras.quantizers.fake_quant_with_min_max_vars(tf.constant(X), 0.5, 2.0, num_bits=3)


CONFIG_NAMES = (
    "keras:quantizers.QuantizationConfig",
    "keras:quantizers.Int8QuantizationConfig",
    "keras:quantizers.Int4QuantizationConfig",
    "keras:quantizers.Float8QuantizationConfig",
    "keras:quantizers.serialize",
    "keras:quantizers.deserialize",
    "keras:quantizers.get",
)


def _describe(config):
    return type(config).__name__, config.mode, type(config.activation_quantizer).__name__


@same_as_tf(*CONFIG_NAMES)
def test_quantization_configs(tf):
    q = tf.keras.quantizers
    int8 = q.Int8QuantizationConfig()
    int4 = q.Int4QuantizationConfig(block_size=64)
    fp8 = q.Float8QuantizationConfig()
    quantizer = q.AbsMaxQuantizer(axis=0, value_range=(-100, 100))
    data = q.serialize(quantizer)
    rebuilt = q.deserialize(data)
    by_get = q.get(data)
    return (
        _describe(int8),
        _describe(int4),
        int4.block_size,
        _describe(fp8),
        isinstance(int8, q.QuantizationConfig),
        data["class_name"],
        rebuilt.get_config(),
        by_get.get_config(),
        type(q.get("abs_max_quantizer")).__name__,
        rebuilt(tf.constant(X))[0],
    )


@pytest.mark.parametrize("case", ["int4_block", "int4_custom", "int8_dtype", "get"])
@same_as_tf(*CONFIG_NAMES, edge=True)
def test_quantization_configs_refuse_bad_arguments(tf, case):
    q = tf.keras.quantizers
    if case == "int4_block":
        return q.Int4QuantizationConfig(block_size=0)
    if case == "int4_custom":
        return q.Int4QuantizationConfig(weight_quantizer=q.AbsMaxQuantizer(), block_size=32)
    if case == "int8_dtype":
        return q.Int8QuantizationConfig(weight_quantizer=q.AbsMaxQuantizer(output_dtype="int16", value_range=(-7, 7)))
    return q.get(3)
