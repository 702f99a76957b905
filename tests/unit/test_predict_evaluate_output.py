"""predict prints Keras's progress line; evaluate and fit's logs are float32 values as Python floats."""

from __future__ import annotations

import re

import numpy as np
import pytest

import unison as tf

pytestmark = pytest.mark.timeout(60)


def _model():
    inputs = tf.keras.Input(shape=(3,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return model


_X = np.random.default_rng(0).random((250, 3)).astype("float32")
_Y = np.random.default_rng(1).random((250, 2)).astype("float32")


@pytest.mark.parametrize("verbose", ["auto", 1])
def test_predict_prints_the_progress_line(capsys, verbose):
    out = _model().predict(_X, verbose=verbose)
    assert out.shape == (250, 2)
    printed = capsys.readouterr().out
    # stdout is not a terminal here: one plain line, as Keras prints to a log
    assert re.fullmatch(r"8/8 ━{20} \d+m?u?s \d+[mu]?s/step\n", printed), printed


def test_predict_verbose_2_and_0(capsys):
    model = _model()
    model.predict(_X, verbose=2)
    assert re.fullmatch(r"8/8 - \d+m?s - \d+[mu]?s/step\n", capsys.readouterr().out)
    model.predict(_X, verbose=0)
    assert capsys.readouterr().out == ""


def test_evaluate_returns_float32_values_as_python_floats():
    model = _model()
    loss, mae = model.evaluate(_X, _Y, verbose=0)
    for value in (loss, mae):
        assert type(value) is float
        assert value == float(np.float32(value))  # a float32 value, as TF's metric variables hold
    logs = model.evaluate(_X, _Y, verbose=0, return_dict=True)
    assert list(logs) == ["loss", "mae"] and logs["mae"] == mae
    history = model.fit(_X, _Y, epochs=1, verbose=0).history
    assert all(v[0] == float(np.float32(v[0])) for v in history.values())
