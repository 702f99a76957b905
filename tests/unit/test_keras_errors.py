"""Every user mistake of the Keras front end gets an error naming the value and the fix."""

from __future__ import annotations

import numpy as np
import pytest

import unison as tf
from unison.errors import NotCompiledError


def _model(compiled: bool = True) -> tf.keras.Sequential:
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
            tf.keras.layers.Dense(3, activation="softmax"),
        ]
    )
    if compiled:
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


X = np.zeros((10, 4), "float32")
Y = np.zeros(10, "int64")


def test_fit_before_compile() -> None:
    with pytest.raises(NotCompiledError, match=r"must call `compile\(\)` before using the model for training"):
        _model(compiled=False).fit(X, Y, verbose=0)


def test_x_y_length_mismatch() -> None:
    with pytest.raises(ValueError, match=r"Data cardinality is ambiguous: x sizes: 10, y sizes: 9"):
        _model().fit(X, Y[:9], verbose=0)


def test_label_outside_the_loss_range() -> None:
    y = Y.copy()
    y[3] = 3
    with pytest.raises(ValueError, match=r"label value of 3 which is outside the valid range of \[0, 3\)"):
        _model().fit(X, y, verbose=0)


@pytest.mark.parametrize("bad", [0, -4, 2.5])
def test_batch_size_below_one(bad: object) -> None:
    with pytest.raises(ValueError, match=r"`batch_size` must be an integer >= 1. Received: batch_size="):
        _model().fit(X, Y, batch_size=bad, verbose=0)


def test_unknown_optimizer_loss_metric_activation_list_the_known_names() -> None:
    with pytest.raises(ValueError, match=r"(?s)Unknown optimizer.*'adam'.*'sgd'"):
        _model(False).compile(optimizer="adamm", loss="mse")
    with pytest.raises(ValueError, match=r"(?s)Unknown loss.*'mean_squared_error'.*Received"):
        _model(False).compile(optimizer="adam", loss="msee")
    with pytest.raises(ValueError, match=r"(?s)Unknown activation.*'relu'.*Received: activation='rellu'"):
        tf.keras.layers.Dense(3, activation="rellu")
    model = _model(False)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["acuracy"])
    with pytest.raises(ValueError, match=r"(?s)Unknown metric.*'accuracy'.*Received: metric='acuracy'"):
        model.fit(X, Y, verbose=0)


def test_input_that_does_not_fit_the_first_layer_names_it_and_both_shapes() -> None:
    model = _model()
    with pytest.raises(ValueError) as info:
        model.fit(np.zeros((10, 5), "float32"), Y, verbose=0)
    text = str(info.value)
    assert "layer 'dense" in text and "(None, 4)" in text and "(None, 5)" in text


def test_lazy_model_input_mismatch_names_the_layer() -> None:
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, name="hidden"), tf.keras.layers.Dense(2, name="out")])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.zeros((4, 3), "float32"), np.zeros((4, 2), "float32"), verbose=0)
    with pytest.raises(ValueError, match=r"layer 'hidden'.*expected axis -1 of input shape to have value 3.*\(2, 7\)"):
        model.predict(np.zeros((2, 7), "float32"), verbose=0)


def test_other_fit_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="validation_split"):
        _model().fit(X, Y, validation_split=1.5, verbose=0)
    with pytest.raises(ValueError, match="verbose"):
        _model().fit(X, Y, verbose=3)
    with pytest.raises(ValueError, match="epochs"):
        _model().fit(X, Y, epochs=-1, verbose=0)
    with pytest.raises(ValueError, match="`y` must not be given"):
        _model().fit([(X, Y)], Y, verbose=0)


def test_compile_without_loss() -> None:
    model = _model(False)
    model.compile(optimizer="adam")  # accepted, as in Keras 3 (add_loss may give the loss)
    with pytest.raises(ValueError, match="needs a loss: compile\\(\\) was given none.*add_loss"):
        model.fit(X, Y, verbose=0)
