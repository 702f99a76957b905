"""Functional models adjust the rank of their input data like Keras 3 (``Functional._adjust_input_rank``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import layers

pytestmark = pytest.mark.timeout(120)


def _image_model() -> keras.Model:
    inputs = keras.Input((4, 4, 1))
    return keras.Model(inputs, layers.Flatten()(inputs))


def test_data_one_rank_short_gets_the_inputs_last_axis_of_size_one() -> None:
    x = torch.arange(32.0).reshape(2, 4, 4)
    out = _image_model()(x)  # Flatten sees (2, 4, 4, 1)
    np.testing.assert_allclose(out.numpy(), x.reshape(2, 16).numpy())


def test_data_with_an_extra_last_axis_of_size_one_loses_it() -> None:
    inputs = keras.Input((3,))
    model = keras.Model(inputs, layers.Dense(1, use_bias=False, kernel_initializer="ones")(inputs))
    out = model(torch.tensor([[[1.0], [2.0], [3.0]]]))  # (1, 3, 1) for Input((3,))
    np.testing.assert_allclose(out.detach().numpy(), [[6.0]])


def test_multi_input_model_trains_on_data_without_the_channel_axis() -> None:
    # keras.io's siamese network passes (N, 28, 28) pairs to Input((28, 28, 1)) inputs
    left, right = keras.Input((4, 4, 1)), keras.Input((4, 4, 1))
    tower = _image_model()
    merged = layers.Subtract()([tower(left), tower(right)])
    model = keras.Model([left, right], layers.Dense(1)(merged))
    model.compile("sgd", "mse")
    a, b = np.random.rand(6, 4, 4).astype("float32"), np.random.rand(6, 4, 4).astype("float32")
    history = model.fit([a, b], np.zeros((6, 1)), epochs=1, batch_size=3, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert model.predict([a, b], verbose=0).shape == (6, 1)


def test_other_rank_differences_are_errors_naming_the_input() -> None:
    inputs = keras.Input((3,), name="features")
    model = keras.Model(inputs, layers.Dense(1)(inputs))
    with pytest.raises(ValueError, match=r"Input 'features'.*\(None, 3\).*\(2, 3, 2\)"):
        model(torch.zeros(2, 3, 2))  # an extra last axis of size 2 is not squeezed
    with pytest.raises(ValueError, match=r"Input 'features'.*rank 2.*rank 1"):
        model(torch.zeros(3))  # the Input's last size is 3, not 1
    image = _image_model()
    with pytest.raises(ValueError, match=r"rank 4.*rank 2"):
        image(torch.zeros(2, 16))


def test_single_input_model_fits_evaluates_and_predicts_data_without_the_channel_axis() -> None:
    inputs = keras.Input((4, 4, 1))
    model = keras.Model(inputs, layers.Dense(1)(layers.Flatten()(inputs)))
    model.compile("sgd", "mse")
    x, y = np.random.rand(6, 4, 4).astype("float32"), np.zeros((6, 1), "float32")
    history = model.fit(x, y, epochs=1, batch_size=3, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert np.isfinite(model.evaluate(x, y, verbose=0))
    np.testing.assert_allclose(model.predict(x, verbose=0), model.predict(x[..., None], verbose=0), rtol=1e-6)
    with pytest.raises(ValueError, match=r"expected shape=\(None, 4, 4, 1\).*\(None, 4, 3\)"):
        model.fit(np.random.rand(6, 4, 3).astype("float32"), y, epochs=1, verbose=0)  # 4x3 is not 4x4x1
