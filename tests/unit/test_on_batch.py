"""train_on_batch/test_on_batch/predict_on_batch: what Keras 3 leaves out (compared with it in
tests/conformance/test_vs_keras_on_batch.py): tf_keras's ``reset_metrics=False``, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import unison as tf
from unison.errors import NotCompiledError

pytestmark = pytest.mark.timeout(120)

X = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
Y = np.array([0, 1, 1, 0, 1, 0, 0, 1], "int64")


def _model(compiled: bool = True) -> tf.keras.Model:
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, activation="softmax")])
    if compiled:
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_reset_metrics_false_accumulates_over_batches() -> None:
    model = _model()
    model.test_on_batch(X[:4], Y[:4])
    alone = model.test_on_batch(X[4:], Y[4:], return_dict=True)
    model.test_on_batch(X[:4], Y[:4])
    both = model.test_on_batch(X[4:], Y[4:], reset_metrics=False, return_dict=True)
    whole = model.evaluate(X, Y, batch_size=8, verbose=0, return_dict=True)
    assert both["accuracy"] == pytest.approx(whole["accuracy"]) and both["loss"] == pytest.approx(whole["loss"])
    assert alone["loss"] != pytest.approx(both["loss"])


def test_uncompiled_model_is_refused() -> None:
    with pytest.raises(NotCompiledError, match="compile\\(\\)` before using the model for train_on_batch"):
        _model(compiled=False).train_on_batch(X, Y)
    with pytest.raises(NotCompiledError, match="test_on_batch"):
        _model(compiled=False).test_on_batch(X, Y)


def test_predict_on_batch_needs_no_compile() -> None:
    assert _model(compiled=False).predict_on_batch(X).shape == (8, 2)


def test_a_dataset_is_not_one_batch() -> None:
    data = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)
    with pytest.raises(ValueError, match="train_on_batch takes one batch.*Received: x of type .*fit\\(\\)"):
        _model().train_on_batch(data)


def test_train_on_batch_of_a_multi_input_model() -> None:
    a, b = tf.keras.Input((3,)), tf.keras.Input((2,))
    out = tf.keras.layers.Dense(1)(tf.keras.layers.Concatenate()([a, b]))
    model = tf.keras.Model([a, b], out)
    model.compile(optimizer="sgd", loss="mse")
    loss = model.train_on_batch([X, X[:, :2]], np.ones((8, 1), "float32"))
    assert isinstance(loss, float) and loss > 0
    assert model.predict_on_batch([X, X[:, :2]]).shape == (8, 1)
