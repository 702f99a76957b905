"""Inputs fit/evaluate/predict cannot use as given: each refused or warned, naming the value (issue 40).

The cases Keras 3 decides are compared with it in ``tests/conformance/test_vs_keras_fit_data.py``;
these are unison's own answers where Keras says nothing (a batch size it ignores silently) or
where torch's error would reach the user (a tensor on the meta device).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(120)

X = np.arange(20, dtype="float32").reshape(10, 2)
Y = np.ones((10, 1), "float32")


def _model() -> Any:
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_batch_size_with_a_dataset_is_ignored_with_a_warning() -> None:
    data = tf.data.Dataset.from_tensor_slices((X, Y)).batch(2)
    model = _model()
    with pytest.warns(UserWarning, match=r"fit: `batch_size=4` is ignored because x is a tf.data Dataset"):
        history = model.fit(data, batch_size=4, epochs=1, verbose=0)
    assert len(history.history["loss"]) == 1
    with pytest.warns(UserWarning, match=r"evaluate: `batch_size=4` is ignored"):
        model.evaluate(data, batch_size=4, verbose=0)
    with pytest.warns(UserWarning, match=r"predict: `batch_size=3` is ignored"):
        assert model.predict(data, batch_size=3, verbose=0).shape == (10, 1)  # the dataset's batches of 2


def test_batch_size_with_arrays_warns_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _model().fit(X, Y, batch_size=4, verbose=0)


@pytest.mark.parametrize("which", ["x", "y"])
def test_a_tensor_on_the_meta_device_is_refused(which: str) -> None:
    x = torch.empty(10, 2, device="meta") if which == "x" else X
    y = torch.empty(10, 1, device="meta") if which == "y" else Y
    with pytest.raises(ValueError, match=rf"{which} is a tensor on the meta device: it has a shape \(10, [12]\)"):
        _model().fit(x, y, verbose=0)


def test_predict_on_the_meta_device_is_refused() -> None:
    with pytest.raises(ValueError, match="meta device.*Materialize it first"):
        _model().predict(torch.empty(4, 2, device="meta"), verbose=0)


def test_a_list_of_lists_names_the_fix() -> None:
    with pytest.raises(ValueError, match=r"Unrecognized data type: x=\[\[1.0, 2.0\], \[3.0, 4.0\]\].*np.array\(x\)"):
        _model().fit([[1.0, 2.0], [3.0, 4.0]], np.array([0.0, 1.0]), verbose=0)


def test_an_object_is_not_data_with_or_without_y() -> None:
    for y in (None, np.zeros(2)):
        with pytest.raises(ValueError, match="Unrecognized data type: x=<object object.*\\(of type object\\)"):
            _model().fit(object(), y, verbose=0)


def test_a_list_of_batches_still_trains() -> None:
    batches = [(X[:5], Y[:5]), (X[5:], Y[5:])]
    assert len(_model().fit(batches, epochs=2, verbose=0).history["loss"]) == 2


def test_a_dict_into_an_unbuilt_sequential_model() -> None:
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match=r"Received: inputs=\{'a': Tensor\(shape=\(\d+, 2\)\)\}.*functional model"):
        model.fit({"a": X}, Y, verbose=0)


def test_steps_per_epoch_beyond_a_generator_ends_the_epoch_with_a_warning() -> None:
    class Batches:
        def __iter__(self) -> Any:
            return iter([(X[i : i + 2], Y[i : i + 2]) for i in range(0, 10, 2)])

    model = _model()
    with pytest.warns(UserWarning, match="ran out of data"):
        model.fit(Batches(), steps_per_epoch=7, epochs=2, verbose=0)
    assert int(model.optimizer.iterations) == 10  # 5 batches an epoch, not 7
