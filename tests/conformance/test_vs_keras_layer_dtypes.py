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
