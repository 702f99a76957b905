"""More of ``keras.utils`` (interactive logging, object (de)serialization, ``set_random_seed``,
``split_dataset``, ``Sequence``/``PyDataset``, Keras 2's ``to_ordinal``/``warmstart_embedding_matrix``,
Keras 3's ``standardize_dtype``) and Keras 2's ``metrics.MeanRelativeError`` on unison against
Keras 3.15 and Keras 2 (tf_keras) on TF 2.21. Switches are restored."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")

LOGGING_NAMES = (
    "keras:utils.enable_interactive_logging",
    "keras:utils.disable_interactive_logging",
    "keras:utils.is_interactive_logging_enabled",
)


@same_as_tf(*LOGGING_NAMES, dialects=BOTH)
def test_interactive_logging_switch(tf):
    u = tf.keras.utils
    before = u.is_interactive_logging_enabled()
    try:
        u.disable_interactive_logging()
        off = u.is_interactive_logging_enabled()
        u.enable_interactive_logging()
        on = u.is_interactive_logging_enabled()
    finally:
        (u.enable_interactive_logging if before else u.disable_interactive_logging)()
    return before, off, on


@same_as_tf(*LOGGING_NAMES, edge=True, dialects=BOTH)
def test_interactive_logging_off_keeps_fit_quiet_and_working(tf):
    u = tf.keras.utils
    before = u.is_interactive_logging_enabled()
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer="sgd", loss="mse")
    try:
        u.disable_interactive_logging()
        u.disable_interactive_logging()  # twice: still off
        history = model.fit(np.ones((4, 2), np.float32), np.ones((4, 1), np.float32), epochs=2, verbose=1)
        state = u.is_interactive_logging_enabled()
    finally:
        (u.enable_interactive_logging if before else u.disable_interactive_logging)()
    return state, len(history.history["loss"])


OBJECT_NAMES = (
    "keras:utils.serialize_keras_object",
    "keras:utils.deserialize_keras_object",
    "keras:saving.serialize_keras_object",
    "keras:saving.deserialize_keras_object",
)


@pytest.mark.parametrize("kind", ["initializer", "regularizer", "loss"])
@same_as_tf(*OBJECT_NAMES, dialects=BOTH, rtol=1e-6, atol=1e-7)
def test_object_serialization(tf, kind):
    k = tf.keras
    obj = {
        "initializer": k.initializers.Constant(0.5),
        "regularizer": k.regularizers.L1L2(l1=0.1, l2=0.3),
        "loss": k.losses.MeanAbsoluteError(),
    }[kind]
    data = k.utils.serialize_keras_object(obj)
    back = k.utils.deserialize_keras_object(data)
    again = k.saving.deserialize_keras_object(k.saving.serialize_keras_object(obj))
    assert type(again) is type(back)
    w = tf.constant(np.array([[1.0, -2.0], [0.5, 0.0]], np.float32))
    if kind == "initializer":
        value = back((2, 2))
    elif kind == "regularizer":
        value = back(w)
    else:
        value = back(w, w * 2.0)
    return data["class_name"], type(back).__name__, value


@same_as_tf(*OBJECT_NAMES, edge=True, dialects=BOTH)
def test_object_serialization_of_plain_values(tf):
    u = tf.keras.utils
    return (
        u.serialize_keras_object(None),
        u.serialize_keras_object(3),
        u.serialize_keras_object("relu"),
        u.deserialize_keras_object(None),
    )


SEED_NAMES = ("keras:utils.set_random_seed",)


@same_as_tf(*SEED_NAMES, dialects=BOTH)
def test_set_random_seed_repeats_draws(tf):
    import random

    u = tf.keras.utils
    u.set_random_seed(1234)
    a = (np.random.rand(3), random.random(), np.asarray(tf.keras.layers.Dense(2)(np.ones((1, 2), np.float32))))
    u.set_random_seed(1234)
    b = (np.random.rand(3), random.random(), np.asarray(tf.keras.layers.Dense(2)(np.ones((1, 2), np.float32))))
    return bool(np.array_equal(a[0], b[0])), a[1] == b[1], bool(np.array_equal(a[2], b[2])), a[0]


@same_as_tf(*SEED_NAMES, edge=True, dialects=BOTH)
def test_set_random_seed_refuses_a_string(tf):
    tf.keras.utils.set_random_seed("seed")


SPLIT_NAMES = ("keras:utils.split_dataset",)


@pytest.mark.parametrize(("left", "right"), [(0.75, None), (None, 3), (0.5, 0.25)])
@same_as_tf(*SPLIT_NAMES, dialects=BOTH)
def test_split_dataset(tf, left, right):
    x = np.arange(24, dtype=np.float32).reshape(12, 2)
    a, b = tf.keras.utils.split_dataset(x, left_size=left, right_size=right, shuffle=False)
    return [np.asarray(e) for e in a], [np.asarray(e) for e in b]


@same_as_tf(*SPLIT_NAMES, edge=True, dialects=BOTH)
def test_split_dataset_refuses_too_large_a_split(tf):
    tf.keras.utils.split_dataset(np.zeros((4, 2), np.float32), left_size=10)


SEQUENCE_NAMES = ("keras:utils.Sequence", "keras:utils.PyDataset")


def _sequence_fit(tf, base_name, epochs, steps=None):
    base = getattr(tf.keras.utils, base_name)

    class Batches(base):
        def __init__(self):
            super().__init__()

        def __len__(self):
            return 3

        def __getitem__(self, i):
            x = np.full((2, 2), float(i), np.float32)
            return x, x.sum(axis=1, keepdims=True)

    seq = Batches()
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    history = model.fit(seq, epochs=epochs, verbose=0, shuffle=False, steps_per_epoch=steps)
    return len(seq), seq[2], history.history["loss"], model.predict(seq, verbose=0).shape


@same_as_tf(*SEQUENCE_NAMES, dialects=("keras",), rtol=1e-5, atol=1e-6)
def test_pydataset_trains(tf):
    return _sequence_fit(tf, "PyDataset", 2)


@same_as_tf(*SEQUENCE_NAMES, edge=True, dialects=("keras",), rtol=1e-5, atol=1e-6)
def test_sequence_alias_trains_for_no_epochs(tf):
    return _sequence_fit(tf, "Sequence", 0)[:2], tf.keras.utils.Sequence is tf.keras.utils.PyDataset


@same_as_tf("tf_keras:utils.Sequence", dialects=("tf_keras",), rtol=1e-5, atol=1e-6)
def test_keras2_sequence_trains(tf):
    return _sequence_fit(tf, "Sequence", 2)


@same_as_tf("tf_keras:utils.Sequence", edge=True, dialects=("tf_keras",), rtol=1e-5, atol=1e-6)
def test_keras2_sequence_for_one_step(tf):
    return _sequence_fit(tf, "Sequence", 1, steps=1)


ORDINAL_NAMES = ("tf_keras:utils.to_ordinal",)


@same_as_tf(*ORDINAL_NAMES, dialects=("tf_keras",))
def test_to_ordinal(tf):
    u = tf.keras.utils
    return u.to_ordinal([0, 3, 1, 2]), u.to_ordinal(np.array([[1], [0]]), num_classes=4), u.to_ordinal([[0, 1], [2, 2]])


@same_as_tf(*ORDINAL_NAMES, edge=True, dialects=("tf_keras",))
def test_to_ordinal_of_one_class(tf):
    return tf.keras.utils.to_ordinal([0, 0], num_classes=1), tf.keras.utils.to_ordinal([1], dtype="int32")


WARMSTART_NAMES = ("tf_keras:utils.warmstart_embedding_matrix",)


@same_as_tf(*WARMSTART_NAMES, dialects=("tf_keras",))
def test_warmstart_embedding_matrix(tf):
    base = np.arange(8, dtype=np.float32).reshape(4, 2)
    return tf.keras.utils.warmstart_embedding_matrix(
        ["a", "b", "c", "d"], ["c", "x", "a", "y", "d"], tf.constant(base), new_embeddings_initializer="zeros"
    )


@same_as_tf(*WARMSTART_NAMES, edge=True, dialects=("tf_keras",))
def test_warmstart_embedding_matrix_with_no_shared_word(tf):
    base = np.arange(4, dtype=np.float32).reshape(2, 2)
    return tf.keras.utils.warmstart_embedding_matrix(
        ["a", "b"], ["x"], tf.constant(base), new_embeddings_initializer="ones"
    )


@same_as_tf("keras:utils.standardize_dtype")
def test_standardize_dtype(tf):
    u = tf.keras.utils
    return (
        u.standardize_dtype("bfloat16"),
        u.standardize_dtype("int32"),
        u.standardize_dtype(np.float64),
        u.standardize_dtype(None),
    )


@same_as_tf("keras:utils.standardize_dtype", edge=True)
def test_standardize_dtype_refuses_an_unknown_name(tf):
    tf.keras.utils.standardize_dtype("float7")


MRE_NAMES = ("tf_keras:metrics.MeanRelativeError",)


@same_as_tf(*MRE_NAMES, dialects=("tf_keras",), rtol=1e-6, atol=1e-7)
def test_mean_relative_error(tf):
    m = tf.keras.metrics.MeanRelativeError(normalizer=[1.0, 2.0, 4.0])
    m.update_state(tf.constant([[1.0, 2.0, 3.0]]), tf.constant([[2.0, 2.0, 7.0]]))
    first = float(m.result())
    m.update_state(tf.constant([[0.0, 0.0, 0.0]]), tf.constant([[1.0, 1.0, 1.0]]), sample_weight=tf.constant([3.0]))
    return first, m.result()


@same_as_tf(*MRE_NAMES, edge=True, dialects=("tf_keras",), rtol=1e-6, atol=1e-7)
def test_mean_relative_error_with_a_zero_normalizer(tf):
    m = tf.keras.metrics.MeanRelativeError(normalizer=[0.0, 2.0])
    m.update_state(tf.constant([1.0, 1.0]), tf.constant([3.0, 5.0]))
    return m.result()


WEIGHTS_NAMES = ("keras:saving.save_weights", "keras:saving.load_weights")


def _weights_roundtrip(tf, skip_mismatch):
    import os
    import tempfile

    def build(units):
        model = tf.keras.Sequential(
            [tf.keras.Input((3,)), tf.keras.layers.Dense(units, kernel_initializer="glorot_uniform")]
        )
        return model

    source, target = build(2), build(2)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "w.weights.h5")
        tf.keras.saving.save_weights(source, path)
        tf.keras.saving.load_weights(target, path, skip_mismatch=skip_mismatch)
        return bool(np.allclose(np.asarray(source(x)), np.asarray(target(x)))), sorted(os.listdir(folder))


@same_as_tf(*WEIGHTS_NAMES)
def test_save_and_load_weights(tf):
    return _weights_roundtrip(tf, False)


@same_as_tf(*WEIGHTS_NAMES, edge=True)
def test_save_and_load_weights_refuse_another_file_name(tf):
    import os
    import tempfile

    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    with tempfile.TemporaryDirectory() as folder:
        tf.keras.saving.save_weights(model, os.path.join(folder, "w.h5"))
