"""Keras 3's top-level names (``DTypePolicy``, ``Initializer``, ``Regularizer``, ``Quantizer``,
``name_scope``, ``device``, ``version``) and ``keras.dtype_policies`` on unison against Keras 3.15
on TF 2.21. Tests that change the global policy restore it."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

POLICY_NAMES = (
    "keras:dtype_policies.DTypePolicy",
    "keras:dtype_policies.FloatDTypePolicy",
    "keras:dtype_policies.get",
    "keras:dtype_policies.serialize",
    "keras:dtype_policies.deserialize",
    "keras:DTypePolicy",
    "keras:FloatDTypePolicy",
    "keras:mixed_precision.DTypePolicy",
    "keras:mixed_precision.dtype_policy",
    "keras:mixed_precision.set_dtype_policy",
)


def _describe(p):
    return p.name, p.compute_dtype, p.variable_dtype, p.quantization_mode, p.get_config()


@pytest.mark.parametrize("name", ["mixed_float16", "mixed_bfloat16", "float64", "float16"])
@same_as_tf(*POLICY_NAMES)
def test_dtype_policies(tf, name):
    d = tf.keras.dtype_policies
    p = d.DTypePolicy(name)
    data = d.serialize(p)
    back = d.deserialize(data)
    before = tf.keras.mixed_precision.dtype_policy()
    try:
        tf.keras.mixed_precision.set_dtype_policy(name)
        now = tf.keras.mixed_precision.dtype_policy().name
    finally:
        tf.keras.mixed_precision.set_dtype_policy(before)
    return (
        _describe(p),
        _describe(d.FloatDTypePolicy(name)),
        _describe(d.get(name)),
        data,
        _describe(back),
        tf.keras.DTypePolicy is d.DTypePolicy,
        tf.keras.mixed_precision.DTypePolicy is d.DTypePolicy,
        isinstance(tf.keras.FloatDTypePolicy(name), tf.keras.DTypePolicy),
        now,
        tf.keras.mixed_precision.dtype_policy().name,
        d.deserialize(name),
    )


@pytest.mark.parametrize("case", ["unknown", "not_a_string", "get_number"])
@same_as_tf(*POLICY_NAMES, edge=True)
def test_dtype_policies_refuse_bad_names(tf, case):
    d = tf.keras.dtype_policies
    if case == "unknown":
        return d.DTypePolicy("float8")
    if case == "not_a_string":
        return d.DTypePolicy(3)
    return d.get(3)


BASE_NAMES = ("keras:Initializer", "keras:Regularizer", "keras:Quantizer")


@same_as_tf(*BASE_NAMES)
def test_base_classes(tf):
    k = tf.keras
    return (
        k.Initializer is k.initializers.Initializer,
        k.Regularizer is k.regularizers.Regularizer,
        k.Quantizer is k.quantizers.Quantizer,
        isinstance(k.initializers.Ones(), k.Initializer),
        isinstance(k.regularizers.L2(0.1), k.Regularizer),
        isinstance(k.quantizers.AbsMaxQuantizer(), k.Quantizer),
        k.Quantizer(output_dtype="int8").output_dtype,
    )


@same_as_tf(*BASE_NAMES, edge=True)
def test_base_classes_subclassed(tf):
    k = tf.keras

    class Scaled(k.Regularizer):
        def __call__(self, w):
            return 2.0 * k.ops.sum(w)

    class Halves(k.Initializer):
        def __call__(self, shape, dtype=None):
            return k.ops.full(shape, 0.5)

    class Identity(k.Quantizer):
        def get_config(self):
            return {"output_dtype": self.output_dtype}

    q = Identity.from_config(Identity("int4").get_config())
    return Scaled()(tf.constant(np.ones(3, np.float32))), Halves()((2, 2)), q.output_dtype, q(tf.constant([1.0]))


SCOPE_NAMES = ("keras:name_scope", "keras:device", "keras:version")


@same_as_tf(*SCOPE_NAMES)
def test_scopes_and_version(tf):
    k = tf.keras
    with k.name_scope("outer") as outer:
        with k.name_scope("inner") as inner:
            names = (outer.name, inner.name)
    with k.device("cpu:0"):
        x = k.ops.ones((2,)) * 2.0
    return names, x, k.version().split(".")[0]


@same_as_tf(*SCOPE_NAMES, edge=True)
def test_device_refuses_a_number(tf):
    with tf.keras.device(3):
        pass
