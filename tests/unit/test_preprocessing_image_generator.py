"""The errors and the pure-NumPy paths of Keras 2's ImageDataGenerator and image transforms
(their values are compared with tf_keras in tests/conformance/test_vs_keras_preprocessing_image.py)."""

from __future__ import annotations

import numpy as np
import pytest

from unison.keras.preprocessing import image


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: image.apply_affine_transform(np.zeros((2, 2))), ValueError, "must be 3-D"),
        (lambda: image.apply_affine_transform(np.zeros((1, 2, 2)), theta=1, fill_mode="edge"), ValueError, "fill_mode"),
        (lambda: image.apply_affine_transform(np.zeros((1, 2, 2)), theta=1, order=3), ValueError, "`order` must be 0"),
        (
            lambda: image.apply_affine_transform(np.zeros((1, 2, 2)), row_axis=1, col_axis=1),
            ValueError,
            "three different",
        ),
        (lambda: image.random_brightness(np.zeros((2, 2, 3)), 0.5), ValueError, "two floats"),
        (lambda: image.smart_resize(np.zeros((4, 4, 1)), 2), ValueError, r"\(height, width\)"),
        (lambda: image.ImageDataGenerator(fill_mode="edge"), ValueError, "fill_mode"),
        (lambda: image.ImageDataGenerator().fit(np.zeros((2, 2, 3))), ValueError, "rank 4"),
        (lambda: image.ImageDataGenerator().flow(np.zeros((2, 2, 2, 1)), subset="test"), ValueError, "Invalid subset"),
        (lambda: image.ImageDataGenerator().flow(np.zeros((2, 2, 2, 1)), batch_size=0), ValueError, "batch_size"),
        (lambda: image.ImageDataGenerator().flow_from_directory("/nonexistent/x"), FileNotFoundError, "one folder per"),
    ],
)
def test_mistakes_are_errors_that_say_what_to_do(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_directory_iterator_checks_its_modes(tmp_path):
    gen = image.ImageDataGenerator()
    with pytest.raises(ValueError, match="Invalid class_mode"):
        gen.flow_from_directory(str(tmp_path), class_mode="onehot")
    with pytest.raises(ValueError, match="Invalid color mode"):
        gen.flow_from_directory(str(tmp_path), color_mode="cmyk")


def test_standardize_warns_when_featurewise_statistics_are_missing():
    gen = image.ImageDataGenerator(featurewise_center=True)
    with pytest.warns(UserWarning, match="hasn't been fit"):
        gen.standardize(np.ones((2, 2, 1), np.float32))


def test_flow_cycles_and_reshuffles_with_its_seed():
    state = np.random.get_state()
    try:
        it = image.ImageDataGenerator().flow(np.arange(5.0).reshape(5, 1, 1, 1), np.arange(5), batch_size=2, seed=1)
        labels = np.concatenate([next(it)[1] for _ in range(6)])
    finally:
        np.random.set_state(state)
    assert sorted(labels[:5].tolist()) == [0, 1, 2, 3, 4] and len(labels) == 10


def test_save_to_dir_writes_the_augmented_images(tmp_path):
    gen = image.ImageDataGenerator()
    it = gen.flow(np.random.default_rng(0).uniform(0, 255, (3, 4, 4, 3)), batch_size=3, save_to_dir=str(tmp_path))
    it[0]
    assert len(list(tmp_path.glob("*.png"))) == 3


def test_smart_resize_keeps_a_torch_tensor_and_channels_first():
    import torch

    out = image.smart_resize(torch.ones(3, 4, 8), (2, 2), data_format="channels_first")
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == (3, 2, 2)
