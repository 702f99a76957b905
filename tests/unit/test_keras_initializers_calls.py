"""Keras's two ways of using initializers: called with a shape (returns values), and custom ones
written Keras's way (a function or an Initializer subclass taking ``shape, dtype``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras

pytestmark = pytest.mark.timeout(60)


def test_an_initializer_called_with_a_shape_returns_values():
    values = keras.initializers.Identity(gain=2.0)(shape=(2, 3))
    assert values.tolist() == [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]] and values.dtype == torch.float32
    assert keras.initializers.Ones()((2,), dtype="float64").dtype == torch.float64
    seeded = keras.initializers.GlorotUniform(seed=3)
    torch.testing.assert_close(seeded(shape=(4, 4)), seeded(shape=(4, 4)))  # a seed repeats its values
    limit = float(np.sqrt(6.0 / 8.0))
    assert float(seeded(shape=(4, 4)).abs().max()) <= limit
    with pytest.raises(TypeError, match=r"needs a shape"):
        keras.initializers.Zeros()()


def test_identity_is_a_name_and_refuses_other_ranks():
    layer = keras.layers.Dense(3, kernel_initializer="identity", use_bias=False)
    layer.build((None, 3))
    assert layer.kernel.numpy().tolist() == np.eye(3).tolist()
    with pytest.raises(ValueError, match="2-D tensors only"):
        keras.initializers.Identity()(shape=(2, 2, 2))


def test_custom_initializers_written_keras_style_fill_the_weights():
    def ramp(shape, dtype=None):
        return tf.reshape(tf.range(int(np.prod(shape)), dtype=dtype), shape)

    class Fives(keras.initializers.Initializer):
        def __call__(self, shape, dtype=None):
            return np.full(shape, 5.0)

    layer = keras.layers.Dense(2, kernel_initializer=ramp, bias_initializer=Fives())
    layer.build((None, 3))
    assert layer.kernel.numpy().tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert layer.bias.numpy().tolist() == [5.0, 5.0]


def test_a_custom_initializer_of_the_wrong_shape_names_both_shapes():
    layer = keras.layers.Dense(2, kernel_initializer=lambda shape, dtype=None: np.zeros(1))
    with pytest.raises(ValueError, match=r"returned values of shape \(1,\) for a weight of shape \(3, 2\)"):
        layer.build((None, 3))
