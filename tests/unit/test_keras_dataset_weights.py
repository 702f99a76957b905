"""sample_weight and class_weight with tf.data datasets, and per-class metric vectors in fit's logs
(F1Score(average=None)), as Keras does."""

from __future__ import annotations

import numpy as np
import pytest

import unison as tf
from unison import keras

RNG = np.random.default_rng(0)
X = RNG.normal(size=(12, 4)).astype("float32")
Y = np.arange(12) % 3


def _model() -> keras.Model:
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy")
    return model


def _weights_after(fit) -> list[np.ndarray]:
    model = _model()
    fit(model)
    return model.get_weights()


CLASS_WEIGHT = {0: 1.0, 1: 3.0, 2: 0.5}
EXPECTED_SW = np.array([CLASS_WEIGHT[c] for c in Y], dtype="float32")


def test_class_weight_with_a_dataset_equals_the_arrays_path() -> None:
    arrays = _weights_after(lambda m: m.fit(X, Y, batch_size=4, shuffle=False, verbose=0, class_weight=CLASS_WEIGHT))
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)
    dataset = _weights_after(lambda m: m.fit(ds, verbose=0, class_weight=CLASS_WEIGHT))
    for a, b in zip(arrays, dataset):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    one_hot = tf.data.Dataset.from_tensor_slices((X, np.eye(3, dtype="float32")[Y])).batch(4)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    model.fit(one_hot, verbose=0, class_weight=CLASS_WEIGHT)  # argmax of one-hot labels


def test_sample_weight_as_third_element_and_times_class_weight() -> None:
    arrays = _weights_after(lambda m: m.fit(X, Y, sample_weight=EXPECTED_SW, batch_size=4, shuffle=False, verbose=0))
    ds = tf.data.Dataset.from_tensor_slices((X, Y, EXPECTED_SW)).batch(4)
    dataset = _weights_after(lambda m: m.fit(ds, verbose=0))
    for a, b in zip(arrays, dataset):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    halves = tf.data.Dataset.from_tensor_slices((X, Y, np.full(12, 2.0, "float32"))).batch(4)
    both = _weights_after(lambda m: m.fit(halves, verbose=0, class_weight=CLASS_WEIGHT))
    doubled = _weights_after(
        lambda m: m.fit(X, Y, sample_weight=2 * EXPECTED_SW, batch_size=4, shuffle=False, verbose=0)
    )
    for a, b in zip(both, doubled):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_class_weight_errors_are_named() -> None:
    with pytest.raises(TypeError, match="class_weight must be a dict"):
        _model().fit(tf.data.Dataset.from_tensor_slices((X, Y)).batch(4), verbose=0, class_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"\(batch,\), \(batch, 1\) or one-hot"):
        bad = tf.data.Dataset.from_tensor_slices((X, np.zeros((12, 2, 2), "float32"))).batch(4)
        _model().fit(bad, verbose=0, class_weight=CLASS_WEIGHT)


def test_per_class_f1_is_a_vector_in_the_logs() -> None:
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=[keras.metrics.F1Score(average=None)])
    labels = np.eye(3, dtype="float32")[Y]
    history = model.fit(X, labels, epochs=2, verbose=0, validation_data=(X, labels))
    f1 = history.history["f1_score"][-1]
    assert isinstance(f1, np.ndarray) and f1.shape == (3,)
    metric = keras.metrics.F1Score(average=None)
    metric.update_state(labels, model.predict(X, verbose=0))
    np.testing.assert_allclose(history.history["val_f1_score"][-1], metric.result().numpy(), rtol=1e-5)
