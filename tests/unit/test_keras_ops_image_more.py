"""Cases of ``keras.ops.image`` that Keras 3 on TensorFlow cannot run, so there is no oracle:
``scale_and_translate`` of integer images (Keras's TF code clips a float by int bounds and fails)."""

from __future__ import annotations

import numpy as np
import pytest

from unison.keras import ops


def test_scale_and_translate_of_an_int_image_rounds_and_keeps_the_dtype() -> None:
    image = (np.arange(48) % 7).reshape(4, 4, 3).astype(np.int32)
    same = ops.image.scale_and_translate(image, (4, 4, 3), [1.0, 1.0], [0.0, 0.0], (0, 1), "bilinear")
    assert str(same.dtype).endswith("int32")
    np.testing.assert_array_equal(ops.convert_to_numpy(same), image)
    up = ops.convert_to_numpy(ops.image.scale_and_translate(image, (8, 8, 3), [2.0, 2.0], [0.0, 0.0], (0, 1), "cubic"))
    assert up.shape == (8, 8, 3) and up.min() >= image.min() and up.max() <= image.max()


def test_scale_and_translate_refuses_an_unknown_method() -> None:
    with pytest.raises(ValueError, match="method"):
        ops.image.scale_and_translate(np.ones((2, 2, 1), np.float32), (4, 4, 1), [2.0, 2.0], [0.0, 0.0], (0, 1), "box")


def test_elastic_transform_follows_keras_random_seed_rules() -> None:
    from unison.keras import random

    images = np.random.default_rng(0).random((1, 6, 6, 2)).astype(np.float32)
    a = ops.image.elastic_transform(images, alpha=2.0, sigma=1.0, seed=random.SeedGenerator(4))
    b = ops.image.elastic_transform(images, alpha=2.0, sigma=1.0, seed=random.SeedGenerator(4))
    np.testing.assert_array_equal(ops.convert_to_numpy(a), ops.convert_to_numpy(b))
    with pytest.raises(TypeError, match="seed must be"):
        ops.image.elastic_transform(images, seed="seven")
