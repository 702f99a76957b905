"""Inputs that were accepted, or failed with a bare error from deep inside torch, now fail with
a named error saying what was received, what was expected and how to fix it (issue 40's list)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras


@pytest.mark.timeout(60)
def test_distribute_dataset_refuses_an_array() -> None:
    strategy = tf.distribute.get_strategy()
    with pytest.raises(TypeError, match=r"not a ndarray.*Received: ndarray of shape \(8, 3\).*from_tensor_slices"):
        strategy.experimental_distribute_dataset(np.zeros((8, 3), "float32"))
    with pytest.raises(TypeError, match=r"not a Tensor"):
        strategy.experimental_distribute_dataset(torch.zeros(8, 3))
    batches = [(torch.zeros(2, 3), torch.zeros(2))]  # an iterable of global batches is still fine
    assert len(list(strategy.experimental_distribute_dataset(batches))) == 1


@pytest.mark.timeout(60)
def test_reduce_names_a_bad_value_and_axis() -> None:
    strategy = tf.distribute.get_strategy()
    with pytest.raises(TypeError, match=r"a string cannot be summed.*Received: value='abc'"):
        strategy.reduce("SUM", "abc")
    with pytest.raises(TypeError, match=r"Received: value of type object"):
        strategy.reduce("SUM", object())
    with pytest.raises(ValueError, match=r"axis=5 is out of range for a value of shape \(3,\)"):
        strategy.reduce("SUM", torch.ones(3), axis=5)
    with pytest.raises(TypeError, match=r"axis must be an integer"):
        strategy.reduce("SUM", torch.ones(3), axis="0")
    assert strategy.reduce("SUM", torch.ones(3, 2), axis=-1).tolist() == [2.0, 2.0, 2.0]


@pytest.mark.timeout(60)
def test_sparse_crossentropy_with_one_hot_labels_says_what_is_wrong() -> None:
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    with pytest.raises(ValueError, match=r"y_true.shape=\(64, 3\), y_pred.shape=\(64, 3\)\..*look one-hot encoded"):
        loss(torch.zeros(64, 3, dtype=torch.int64), torch.zeros(64, 3))
    assert loss(torch.zeros(64, dtype=torch.int64), torch.zeros(64, 3)).item() == pytest.approx(np.log(3))


@pytest.mark.timeout(60)
def test_complex_input_is_refused_not_truncated() -> None:
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    model.compile(optimizer="sgd", loss="mse")
    x = (np.ones((8, 4)) + 1j * np.ones((8, 4))).astype("complex64")
    with pytest.raises(TypeError, match=r"data is complex \(complex64, shape \(8, 4\)\).*imaginary part"):
        model.fit(x, np.zeros((8, 3), "float32"), epochs=1, verbose=0)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("size", [-1, 0, -5])
def test_shuffle_refuses_a_buffer_below_one(size: int) -> None:
    with pytest.raises(ValueError, match=rf"buffer_size` must be an integer >= 1.*Received: buffer_size={size}"):
        tf.data.Dataset.range(4).shuffle(size)


@pytest.mark.timeout(60)
def test_string_labels_are_named() -> None:
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match=r"y holds strings \(dtype \w+, e\.g\. '[a-d]'\).*np\.unique"):
        model.fit(np.zeros((4, 4), "float32"), ["a", "b", "c", "d"], epochs=1, verbose=0)
