"""Keras's subclassing contract: add_weight in both Keras spellings, and the `training` flag that
reaches a custom layer's or model's call() from fit, predict and an enclosing call."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras


class Linear(keras.layers.Layer):
    """TF's "Making new layers and models via subclassing" guide's layer, as written there."""

    def __init__(self, units: int = 32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True)

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b


class Recorder(keras.layers.Layer):
    """Doubles its input while training, so a missed flag changes the numbers."""

    def __init__(self, seen: list, **kwargs):
        super().__init__(**kwargs)
        self.seen = seen

    def call(self, inputs, training=None):
        self.seen.append(training)
        return inputs * 2.0 if training else inputs


class Net(keras.Model):
    def __init__(self, seen: list):
        super().__init__()
        self.record = Recorder(seen)
        self.dense = keras.layers.Dense(1, kernel_initializer="ones", bias_initializer="zeros")

    def call(self, x, training=False):  # the default a Keras subclass often declares
        return self.dense(self.record(x))


def test_add_weight_takes_keras3_keywords_and_positions_and_keras2_positions():
    layer = Linear(3)
    out = layer(torch.ones(2, 4))
    assert out.shape == (2, 3) and tuple(layer.w.shape) == (4, 3)
    assert torch.equal(layer.b, torch.zeros(3)) and layer.w.requires_grad
    assert [n for n, _ in layer.named_parameters()] == ["variable", "variable_1"]

    class Both(keras.layers.Layer):
        def build(self, input_shape):
            self.k3 = self.add_weight((input_shape[-1], 2), "ones")  # Keras 3: shape, initializer
            self.k2 = self.add_weight("k2", (2,), tf.float64, "zeros")  # Keras 2: name, shape, dtype, init
            self.count = self.add_weight(name="count", shape=(), dtype="int64", trainable=False)
            self.mean = self.add_weight(shape=(2,), initializer="ones", trainable=False, aggregation="mean")

        def call(self, inputs):
            return inputs @ self.k3

    both = Both()
    assert both(torch.ones(1, 3)).tolist() == [[3.0, 3.0]]
    assert both.k2.dtype == torch.float64 and torch.equal(both.k2, torch.zeros(2, dtype=torch.float64))
    assert both.count.dtype == torch.int64 and not both.count.requires_grad and both.count.item() == 0
    assert not both.mean.requires_grad
    assert len(both.trainable_weights) == 2 and len(both.non_trainable_weights) == 2
    default = keras.layers.Layer()
    glorot = default.add_weight(shape=(100, 100))
    assert 0 < glorot.abs().max().item() <= (6 / 200) ** 0.5  # glorot_uniform, Keras's default


def test_add_weight_names_what_is_wrong():
    layer = keras.layers.Layer()
    with pytest.raises(TypeError, match="add_weight needs shape="):
        layer.add_weight(initializer="zeros")
    with pytest.raises(ValueError, match=r"non-negative ints. Received: shape=\(2, -1\)"):
        layer.add_weight(shape=(2, -1))
    with pytest.raises(ValueError, match=r"Unknown constraint 'non_negative'"):
        layer.add_weight(shape=(2,), constraint="non_negative")
    with pytest.raises(TypeError, match=r"unexpected keyword arguments: \['initialiser'\]"):
        layer.add_weight(shape=(2,), initialiser="zeros")
    with pytest.raises(TypeError, match="'shape' both by position and by keyword"):
        layer.add_weight((2,), shape=(3,))


def test_a_subclassed_model_trains_with_training_true_and_predicts_with_false():
    seen: list = []
    model = Net(seen)
    model.compile(keras.optimizers.SGD(1e-12), loss="mse")  # the weights stay (as good as) ones
    x, y = np.ones((8, 3), "float32"), np.zeros((8, 1), "float32")
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert seen[-2:] == [True, True]  # both steps; a lost flag would give the call's False
    seen.clear()
    assert model.predict(x[:2], verbose=0) == pytest.approx(np.full((2, 1), 3.0))  # not doubled
    assert seen == [False]
    seen.clear()
    loss = model.evaluate(x[:4], np.full((4, 1), 3.0, "float32"), verbose=0)
    assert loss == pytest.approx(0.0, abs=1e-6) and seen == [False]


def test_training_reaches_inner_layers_and_is_restored_after_the_call():
    seen: list = []
    model = Net(seen)
    assert model(torch.ones(1, 3), training=True).tolist() == [[6.0]]
    assert model(torch.ones(1, 3), training=False).tolist() == [[3.0]]
    assert seen == [True, False]
    model.eval()
    drop = keras.layers.Dropout(0.5)
    drop.eval()
    torch.manual_seed(0)
    out = drop(torch.ones(1000), training=True)  # an explicit flag overrides the torch mode
    assert set(out.unique().tolist()) == {0.0, 2.0} and not drop.training
    assert drop(torch.ones(4)).tolist() == [1.0] * 4

    class TwoInputs(keras.layers.Layer):
        def call(self, a, b):
            return a + b

    assert TwoInputs()(torch.ones(2), torch.ones(2), training=True).tolist() == [2.0, 2.0]
