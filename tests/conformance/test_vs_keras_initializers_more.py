"""Keras's other spellings of the initializers (``zeros``, ``glorot_uniform``...), ``serialize``,
``deserialize`` and Keras 3's ``STFT`` on unison against Keras 3.15 and Keras 2 (tf_keras) on TF 2.21."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")

# (alias, class) in both Keras versions
ALIASES = (
    ("constant", "Constant"),
    ("glorot_normal", "GlorotNormal"),
    ("glorot_uniform", "GlorotUniform"),
    ("he_normal", "HeNormal"),
    ("he_uniform", "HeUniform"),
    ("identity", "Identity"),
    ("lecun_normal", "LecunNormal"),
    ("lecun_uniform", "LecunUniform"),
    ("ones", "Ones"),
    ("orthogonal", "Orthogonal"),
    ("random_normal", "RandomNormal"),
    ("random_uniform", "RandomUniform"),
    ("truncated_normal", "TruncatedNormal"),
    ("variance_scaling", "VarianceScaling"),
    ("zeros", "Zeros"),
)
ALIAS_NAMES = (
    "keras:initializers.constant",
    "keras:initializers.glorot_normal",
    "keras:initializers.glorot_uniform",
    "keras:initializers.he_normal",
    "keras:initializers.he_uniform",
    "keras:initializers.identity",
    "keras:initializers.lecun_normal",
    "keras:initializers.lecun_uniform",
    "keras:initializers.ones",
    "keras:initializers.orthogonal",
    "keras:initializers.random_normal",
    "keras:initializers.random_uniform",
    "keras:initializers.truncated_normal",
    "keras:initializers.variance_scaling",
    "keras:initializers.zeros",
    "keras:initializers.serialize",
    "keras:initializers.deserialize",
)


def _alias(tf, alias: str, cls: str, shape: tuple):
    inits = tf.keras.initializers
    init = (
        getattr(inits, alias)(seed=3)
        if "normal" in alias or "uniform" in alias or alias in ("orthogonal", "variance_scaling")
        else getattr(inits, alias)()
    )
    same_class = getattr(inits, alias) is getattr(inits, cls)
    data = inits.serialize(init)
    rebuilt = inits.deserialize(data)
    by_name = inits.deserialize(alias) if alias != "constant" else rebuilt  # Keras: KeyError for "constant"
    a, b = np.asarray(init(shape)), np.asarray(rebuilt(shape))
    return (
        same_class,
        data["class_name"],
        type(rebuilt).__name__,
        type(by_name).__name__,
        # seeded draws are compared as "the rebuilt one draws the same"; fixed ones by value
        bool(np.array_equal(a, b)),
        a if alias in ("constant", "ones", "zeros", "identity") else a.shape,
    )


@pytest.mark.parametrize(("alias", "cls"), ALIASES)
@same_as_tf(*ALIAS_NAMES, dialects=BOTH)
def test_alias_serialize_roundtrip(tf, alias, cls):
    return _alias(tf, alias, cls, (3, 3))


@pytest.mark.parametrize(("alias", "cls"), ALIASES)
@same_as_tf(*ALIAS_NAMES, edge=True, dialects=BOTH)
def test_alias_on_an_empty_shape(tf, alias, cls):
    if alias == "identity":  # Identity is 2-D only: both refuse a 3-D shape
        return _alias(tf, alias, cls, (2, 2, 2))
    if alias == "orthogonal":
        return _alias(tf, alias, cls, (2, 5))
    return _alias(tf, alias, cls, (0, 4))


K3_NAMES = (
    "keras:initializers.STFT",
    "keras:initializers.stft",
    "keras:initializers.STFTInitializer",
    "keras:initializers.IdentityInitializer",
    "keras:initializers.OrthogonalInitializer",
)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"side": "imag", "window": None, "scaling": None},
        {"window": "hamming", "scaling": "spectrum", "periodic": True},
    ],
)
@same_as_tf(*K3_NAMES, rtol=1e-5, atol=1e-5)  # Keras computes the angles in float32
def test_stft_kernel(tf, kwargs):
    inits = tf.keras.initializers
    init = inits.STFT(**kwargs)
    rebuilt = inits.deserialize(inits.serialize(init))
    return (
        init((8, 1, 5)),
        rebuilt((8, 1, 5)),
        init.get_config(),
        inits.stft is inits.STFT and inits.STFTInitializer is inits.STFT,
        inits.IdentityInitializer(gain=2.0)((2, 3)),
        inits.OrthogonalInitializer is inits.Orthogonal,
    )


@pytest.mark.parametrize("kwargs", [{"side": "both"}, {"scaling": "l2"}])
@same_as_tf(*K3_NAMES, edge=True)
def test_stft_refuses_bad_arguments(tf, kwargs):
    tf.keras.initializers.STFT(**kwargs)
