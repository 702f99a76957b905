"""keras.utils.to_categorical and set_random_seed."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from unison import keras

pytestmark = pytest.mark.timeout(60)


def test_to_categorical_matches_keras() -> None:
    out = keras.utils.to_categorical(np.array([[1], [0], [2]]), num_classes=4)
    assert out.dtype == np.float32 and out.shape == (3, 4)
    assert out.tolist() == [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]]
    assert keras.utils.to_categorical(torch.tensor([[0, 1], [1, 1]])).shape == (2, 2, 2)


def test_to_categorical_bad_input() -> None:
    with pytest.raises(ValueError, match="class id 3, outside"):
        keras.utils.to_categorical([0, 3], num_classes=3)
    with pytest.raises(ValueError, match="integer class ids"):
        keras.utils.to_categorical([0.5])
    with pytest.raises(ValueError, match="num_classes"):
        keras.utils.to_categorical([0], num_classes=0)


def test_set_random_seed_repeats_python_numpy_torch() -> None:
    def draw() -> tuple[float, float, float]:
        return random.random(), float(np.random.rand()), float(torch.rand(()))

    keras.utils.set_random_seed(7)
    first = draw()
    keras.utils.set_random_seed(7)
    assert draw() == first
    keras.utils.set_random_seed(8)
    assert draw() != first
    with pytest.raises(ValueError, match="non-negative integer"):
        keras.utils.set_random_seed(-1)
