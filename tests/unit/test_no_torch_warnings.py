"""No torch-internal warning reaches a user of a normal program (warnings are errors here)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _no_read_only_arrays_to_torch(monkeypatch):
    # torch warns about a read-only array once per process and then stays silent, so an earlier
    # test could hide a leak: catch the cause (a read-only array handed to torch) instead.
    for name in ("from_numpy", "as_tensor"):
        original = getattr(torch, name)

        def guarded(value, *args, _original=original, _name=name, **kwargs):
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                raise AssertionError(f"torch.{_name} got a read-only array: torch would warn the user")
            return _original(value, *args, **kwargs)

        monkeypatch.setattr(torch, name, guarded)


def _read_only(a: np.ndarray) -> np.ndarray:
    a = np.array(a)
    a.flags.writeable = False  # as pandas' .values, np.frombuffer and memory maps are
    return a


def test_read_only_arrays_fit_evaluate_predict_without_warnings():
    rng = np.random.default_rng(0)
    x = _read_only(rng.random((32, 3)))  # float64, as pandas gives
    y = _read_only(rng.random(32).astype("float32"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inputs = tf.keras.Input(shape=(3,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
        model.compile(optimizer="adam", loss="mse")
        model.fit(x, y, epochs=1, batch_size=8, verbose=0)
        model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(8), epochs=1, verbose=0)
        model.evaluate(x, y, verbose=0)
        model.predict(x, verbose=0)
        model(x[:2])
        seq = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        seq(x[:2])
        tf.constant(x)
        tf.convert_to_tensor(x)
        tf.keras.ops.convert_to_tensor(x)
    assert [str(w.message) for w in caught] == []


def test_pandas_values_without_warnings():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": np.arange(16.0), "b": np.arange(16.0) * 2})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        model.fit(frame.values, frame["b"].values, epochs=1, batch_size=4, verbose=0)
        model.fit(frame, frame["b"], epochs=1, batch_size=4, verbose=0)
    assert [str(w.message) for w in caught] == []
