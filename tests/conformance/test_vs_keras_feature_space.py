"""``keras.utils.FeatureSpace`` on unison against Keras 3.15 and Keras 2 (tf_keras) on TF 2.21: adapted on
a ``tf.data`` dataset of feature dicts, then applied to a batch (normalized floats, one-hot
categories, hashed crosses), concatenated or as a dict."""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
DATA = {
    "age": np.array([20.0, 35.0, 50.0, 65.0, 35.0], np.float32),
    "rooms": np.array([1, 2, 2, 3, 1], np.int64),
    "city": np.array(["paris", "rome", "paris", "oslo", "rome"]),
}


def _space(tf, output_mode="concat", crosses=None):
    FS = tf.keras.utils.FeatureSpace
    space = FS(
        features={
            "age": FS.float_normalized(),
            "rooms": FS.integer_categorical(num_oov_indices=1),
            "city": FS.string_categorical(num_oov_indices=1),
        },
        crosses=crosses,
        output_mode=output_mode,
    )
    space.adapt(tf.data.Dataset.from_tensor_slices(DATA))
    return space


def _value(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


@same_as_tf("keras:utils.FeatureSpace", dialects=BOTH, rtol=1e-5, atol=1e-5)
def test_feature_space_concat(tf):
    space = _space(tf)
    batch = {"age": np.array([35.0, 80.0], np.float32), "rooms": np.array([2, 9]), "city": np.array(["rome", "lima"])}
    return _value(space(batch))


@same_as_tf("keras:utils.FeatureSpace", edge=True, dialects=BOTH, rtol=1e-5, atol=1e-5)
def test_feature_space_dict_output_and_a_bad_feature(tf):
    space = _space(tf, output_mode="dict")
    out = space({"age": np.array([50.0], np.float32), "rooms": np.array([1]), "city": np.array(["oslo"])})
    try:
        tf.keras.utils.FeatureSpace(features={"age": "no_such_kind"})
        bad = "accepted"
    except ValueError as exc:
        bad = type(exc).__name__
    return {k: _value(v) for k, v in out.items()}, bad
