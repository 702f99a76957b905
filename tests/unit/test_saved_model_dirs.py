"""tf.keras 2's SavedModel paths: model.save("my_model") writes a directory that load_model,
load_weights and tf.saved_model.load all read (TF's "Save and load a model using a distribution
strategy" tutorial, whose cells these follow)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras

pytestmark = pytest.mark.timeout(120)


def _functional() -> keras.Model:
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(3, name="output_layer")(keras.layers.Dense(5)(inputs)))
    model.compile("adam", "mse")
    return model


class SubclassedModel(keras.Model):
    def __init__(self):
        super().__init__()
        self._dense_layer = keras.layers.Dense(5, name="output_layer")

    def call(self, inputs):
        return self._dense_layer(inputs)


def test_a_path_without_extension_is_a_directory_every_loader_reads(tmp_path):
    model, x = _functional(), torch.rand(6, 4)
    path = str(tmp_path / "my_model")
    model.save(path)
    assert os.path.isdir(path) and tf.saved_model.contains_saved_model(path)
    expected = model(x).detach()
    torch.testing.assert_close(keras.models.load_model(path)(x).detach(), expected)
    serving = tf.saved_model.load(path).signatures["serving_default"]
    torch.testing.assert_close(serving(x)["output_layer"], expected)
    fresh = _functional()
    fresh.load_weights(path)
    torch.testing.assert_close(fresh(x).detach(), expected)
    model.save(str(tmp_path / "m.keras"))  # an extension still names one file
    assert os.path.isfile(tmp_path / "m.keras")
    model.save(str(tmp_path / "as_tf.bin"), save_format="tf")
    assert os.path.isdir(tmp_path / "as_tf.bin")


def test_an_unbuilt_subclassed_model_cannot_be_saved_but_exports_without_signatures(tmp_path):
    path = str(tmp_path / "tf_save")
    my_model = SubclassedModel()
    tf.saved_model.save(my_model, path)  # TF exports it; there is no traced call to serve
    assert len(tf.saved_model.load(path).signatures) == 0
    assert my_model.save_spec() is None
    with pytest.raises(ValueError, match="cannot be saved either because the input shape is not available"):
        my_model.save(path)


def test_a_fitted_subclassed_model_saves_its_weights_to_the_directory(tmp_path):
    path = str(tmp_path / "tf_save")
    my_model = SubclassedModel()
    my_model.compile(optimizer="adam", loss="mean_squared_error")
    data = np.tile(np.arange(5, dtype="float32"), (8, 1))
    my_model.fit(data, data, epochs=1, verbose=0)
    my_model.save(path)
    with pytest.raises(ValueError, match="architecture"):
        keras.models.load_model(path)  # no config to rebuild a subclassed model from
    other = SubclassedModel()
    other(torch.zeros(1, 5))
    other.load_weights(path)
    torch.testing.assert_close(other(torch.ones(2, 5)).detach(), my_model(torch.ones(2, 5)).detach())
    assert not tf.saved_model.contains_saved_model(path) or len(tf.saved_model.load(path).signatures) == 0


def test_tf_keras_2_keywords_are_checked(tmp_path):
    model = _functional()
    model.save(str(tmp_path / "opts"), options=tf.saved_model.SaveOptions(experimental_io_device="/job:localhost"))
    loaded = keras.models.load_model(
        str(tmp_path / "opts"), options=tf.saved_model.LoadOptions(experimental_io_device="/job:localhost")
    )
    assert loaded.save_spec()[0][0].shape == (None, 4)
    with pytest.raises(TypeError, match="options must be a tf.saved_model.SaveOptions"):
        model.save(str(tmp_path / "x"), options=3)
    with pytest.raises(TypeError, match="options must be a tf.saved_model.LoadOptions"):
        keras.models.load_model(str(tmp_path / "opts"), options=3)
    with pytest.raises(ValueError, match="save_format must be 'tf', 'h5' or 'keras'"):
        model.save(str(tmp_path / "y"), save_format="onnx")
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        model.save(str(tmp_path / "z"), compress=True)


def test_a_sequential_without_an_input_exports_after_it_was_built(tmp_path):
    # the parameter-server tutorial's ModelCheckpoint saves such a model to a path without extension
    model = keras.Sequential([keras.layers.Dense(2, name="out")])
    model.compile("sgd", "mse")
    model.fit(np.ones((4, 3), "float32"), np.ones((4, 2), "float32"), verbose=0)
    model.save(str(tmp_path / "ckpt"))
    x = torch.rand(2, 3)
    torch.testing.assert_close(tf.saved_model.load(str(tmp_path / "ckpt"))(x), model(x).detach())
    model.save(str(tmp_path / "m.keras"))  # the .keras file rebuilds it from its first call's shape too
    torch.testing.assert_close(keras.models.load_model(str(tmp_path / "m.keras"))(x), model(x))
