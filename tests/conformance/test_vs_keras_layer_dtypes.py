"""Every layer's ``dtype_policy``, ``compute_dtype``, ``variable_dtype`` and ``dtype``, also for
layers without weights (Dropout, Flatten, Activation), under the global policy and a ``dtype=``.
Keras 3 and Keras 2 on TF 2.21."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
LAYERS = ("Dropout", "Flatten", "Activation", "Add", "MaxPooling2D", "BatchNormalization", "Dense")


def _make(keras, name, **kwargs):
    args = {"Dropout": (0.1,), "Activation": ("relu",), "Dense": (2,)}.get(name, ())
    return getattr(keras.layers, name)(*args, **kwargs)


def _describe(layer):
    return str(layer.dtype), str(layer.compute_dtype), str(layer.variable_dtype), str(layer.dtype_policy.name)


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
@same_as_tf("keras:layers.Layer", "keras:mixed_precision.set_global_policy", dialects=BOTH)
def test_layer_dtypes_follow_the_global_policy(tf, policy):
    keras = tf.keras
    keras.mixed_precision.set_global_policy(policy)
    try:
        return [_describe(_make(keras, name)) for name in LAYERS]
    finally:
        keras.mixed_precision.set_global_policy("float32")


@same_as_tf("keras:layers.Layer", edge=True, dialects=BOTH)
def test_a_dtype_argument_sets_the_layer_policy(tf):
    keras = tf.keras
    return [_describe(_make(keras, name, dtype="float64")) for name in LAYERS]


RECURRENT = ("LSTM", "GRU", "SimpleRNN", "BidirectionalLSTM", "GRU_reset_before")


def _recurrent(keras, name):
    weights = {
        "kernel_initializer": keras.initializers.Constant(0.05),
        "recurrent_initializer": keras.initializers.Constant(-0.03),
        "bias_initializer": keras.initializers.Constant(0.01),
    }
    if name == "BidirectionalLSTM":
        return keras.layers.Bidirectional(keras.layers.LSTM(3, **weights))
    if name == "GRU_reset_before":  # Keras 1's GRU: unison's step loop, not torch's fused kernel
        return keras.layers.GRU(3, return_sequences=True, reset_after=False, **weights)
    return getattr(keras.layers, name)(3, return_sequences=True, **weights)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
@pytest.mark.parametrize("name", RECURRENT)
@same_as_tf(
    "keras:layers.LSTM",
    "keras:layers.GRU",
    "keras:mixed_precision.set_global_policy",
    edge=True,
    dialects=BOTH,
    atol=5e-3,
    rtol=5e-3,
)
def test_recurrent_layers_compute_under_mixed_policies(tf, name, policy):
    """oneDNN has no float16 recurrent kernel on CPU: unison runs the fused kernel in float32 there and
    gives float16 results, as Keras does (it failed with "could not create a primitive descriptor"); under
    mixed_bfloat16 GRU's kernel gave float32 results, Keras gives bfloat16."""
    import numpy as np

    keras = tf.keras
    keras.mixed_precision.set_global_policy(policy)
    try:
        x = np.linspace(-1.0, 1.0, 2 * 4 * 5, dtype="float32").reshape(2, 4, 5)
        return _recurrent(keras, name)(x)
    finally:
        keras.mixed_precision.set_global_policy("float32")


@same_as_tf("keras:layers.Attention", "keras:layers.MultiHeadAttention", edge=True, dialects=BOTH)
def test_numpy_arrays_anywhere_in_a_layer_call_are_converted(tf):
    """Keras converts every array argument, not only the first: a list of arrays (Attention,
    Concatenate) and a second positional array (MultiHeadAttention's value)."""
    import numpy as np

    keras = tf.keras
    q = np.linspace(-1.0, 1.0, 2 * 3 * 4).reshape(2, 3, 4)  # float64: becomes the float32 compute dtype
    v = np.linspace(1.0, -1.0, 2 * 3 * 4, dtype="float32").reshape(2, 3, 4)
    mha = keras.layers.MultiHeadAttention(2, 2, kernel_initializer="ones")
    return [keras.layers.Attention()([q, v]), keras.layers.Concatenate()([q, v]), mha(q, v)]
