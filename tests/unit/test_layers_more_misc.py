"""Activation, noise, shape, normalisation, Dot and image augmentation layers against Keras 3's formulas."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import unison as tf
from unison import keras
from unison.keras import layers
from unison.keras.layers.masking import get_mask, set_mask

pytestmark = pytest.mark.timeout(120)


# --- activations ---------------------------------------------------------------------------------
def test_relu_leaky_prelu_elu_follow_keras_formulas() -> None:
    x = torch.tensor([-3.0, -0.5, 0.0, 0.5, 2.0, 7.0])
    assert layers.ReLU()(x).tolist() == [0.0, 0.0, 0.0, 0.5, 2.0, 7.0]
    capped = layers.ReLU(max_value=6.0, negative_slope=0.1, threshold=1.0)(x)
    torch.testing.assert_close(capped, torch.tensor([-0.4, -0.15, -0.1, -0.05, 2.0, 6.0]))
    torch.testing.assert_close(layers.LeakyReLU()(x)[:2], torch.tensor([-0.9, -0.15]))  # default slope 0.3
    assert layers.LeakyReLU(negative_slope=0.5)(x)[0].item() == -1.5
    assert layers.LeakyReLU(alpha=0.2)(x)[0].item() == pytest.approx(-0.6)  # Keras 2 spelling
    torch.testing.assert_close(layers.ELU(alpha=2.0)(x), torch.where(x > 0, x, 2.0 * (torch.exp(x) - 1)))
    prelu = layers.PReLU(alpha_initializer=keras.initializers.Constant(0.25), shared_axes=[1, 2])
    images = torch.randn(2, 3, 4, 5)
    out = prelu(images)
    assert tuple(prelu.alpha.shape) == (1, 1, 5)
    torch.testing.assert_close(out, torch.where(images > 0, images, 0.25 * images))
    assert tuple(layers.PReLU()(torch.zeros(2, 3, 4)).shape) == (2, 3, 4)


def test_softmax_axis_and_explicit_mask() -> None:
    x = torch.randn(2, 3, 4)
    torch.testing.assert_close(layers.Softmax()(x), torch.softmax(x, -1))
    torch.testing.assert_close(layers.Softmax(axis=1)(x), torch.softmax(x, 1))
    joint = layers.Softmax(axis=[1, 2])(x)
    torch.testing.assert_close(joint.sum(dim=(1, 2)), torch.ones(2))
    mask = torch.tensor([[True, True, False, False]]).expand(2, 3, 4)
    masked = layers.Softmax()(x, mask=mask)
    assert torch.count_nonzero(masked[..., 2:]) == 0
    torch.testing.assert_close(masked[..., :2], torch.softmax(x[..., :2], -1))


def test_activation_errors() -> None:
    with pytest.raises(ValueError, match="max_value of a ReLU layer must be a float >= 0"):
        layers.ReLU(max_value=-1)
    with pytest.raises(ValueError, match="not both"):
        layers.LeakyReLU(negative_slope=0.1, alpha=0.2)
    with pytest.raises(ValueError, match="shared_axes are 1-based"):
        layers.PReLU(shared_axes=[0])(torch.zeros(2, 3))


# --- shapes, noise, regularisation, masking ---------------------------------------------------------
def test_permute_repeat_vector_identity() -> None:
    x = torch.randn(2, 3, 4, 5)
    torch.testing.assert_close(layers.Permute((3, 1, 2))(x), x.permute(0, 3, 1, 2))
    rep = layers.RepeatVector(3)(torch.tensor([[1.0, 2.0]]))
    assert rep.tolist() == [[[1.0, 2.0]] * 3]
    masked = set_mask(torch.randn(2, 3, 1), torch.tensor([[True, False, True]] * 2))
    out = layers.Identity()(masked)
    assert torch.equal(out, masked) and get_mask(out) is get_mask(masked)
    with pytest.raises(ValueError, match="must be consecutive and start from 1"):
        layers.Permute((0, 1))
    with pytest.raises(ValueError, match=r"rank 3"):
        layers.Permute((2, 1))(torch.zeros(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"\(batch, features\)"):
        layers.RepeatVector(2)(torch.zeros(2, 3, 4))


def test_noise_and_spatial_dropout_act_only_when_training() -> None:
    torch.manual_seed(0)
    x = torch.ones(64, 6, 8)
    for layer in (layers.GaussianNoise(0.5), layers.GaussianDropout(0.3), layers.SpatialDropout1D(0.5)):
        torch.testing.assert_close(layer(x), x)  # Keras: training defaults to False
        torch.testing.assert_close(layer(x, training=False), x)
        assert not torch.allclose(layer(x, training=True), x)
    noisy = layers.GaussianNoise(0.5, seed=3)(x, training=True)
    assert abs(float((noisy - 1).std()) - 0.5) < 0.02
    gd = layers.GaussianDropout(0.5)(x, training=True)
    assert abs(float(gd.mean()) - 1.0) < 0.03 and abs(float(gd.std()) - 1.0) < 0.03  # sqrt(0.5 / 0.5)
    dropped = layers.SpatialDropout1D(0.5)(x, training=True)
    per_channel = dropped.amax(dim=1) == dropped.amin(dim=1)  # a channel is dropped at every step or none
    assert bool(per_channel.all()) and set(dropped.unique().tolist()) == {0.0, 2.0}
    images = torch.ones(32, 4, 4, 3)
    d2 = layers.SpatialDropout2D(0.5)(images, training=True)
    assert bool((d2.amax(dim=(1, 2)) == d2.amin(dim=(1, 2))).all())
    with pytest.raises(ValueError, match=r"rate` must be a float in \[0, 1\)"):
        layers.GaussianDropout(1.0)
    with pytest.raises(ValueError, match="channels-last inputs only"):
        layers.SpatialDropout2D(0.1, data_format="channels_first")


def test_noise_layers_are_active_in_fit_and_seeded() -> None:
    a = layers.GaussianNoise(1.0, seed=5)(torch.zeros(3, 4), training=True)
    b = layers.GaussianNoise(1.0, seed=5)(torch.zeros(3, 4), training=True)
    torch.testing.assert_close(a, b)
    tf.random.set_seed(11)
    c = layers.GaussianNoise(1.0)(torch.zeros(3, 4), training=True)
    tf.random.set_seed(11)
    d = layers.GaussianNoise(1.0)(torch.zeros(3, 4), training=True)
    torch.testing.assert_close(c, d)


def test_activity_regularization_adds_its_penalty_to_the_loss() -> None:
    reg = layers.ActivityRegularization(l1=0.1, l2=0.01)
    assert [float(v) for v in reg.losses] == [0.0]
    x = torch.tensor([[1.0, -2.0], [3.0, 0.0]])
    torch.testing.assert_close(reg(x), x)
    assert float(reg.losses[0]) == pytest.approx(0.1 * 6 + 0.01 * 14)
    tf.random.set_seed(0)
    model = keras.Sequential([keras.Input(shape=(2,)), layers.Dense(2), layers.ActivityRegularization(l2=0.5)])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    data = np.ones((8, 2), "float32")
    out = model.predict(data, verbose=0)
    expected = float(((out - data) ** 2).mean() + 0.5 * (out**2).sum())  # Keras 3: not divided by the batch
    assert model.evaluate(data, data, batch_size=8, verbose=0) == pytest.approx(expected, rel=1e-5)
    model.fit(data, data, epochs=5, batch_size=8, verbose=0)
    assert float((model.predict(data, verbose=0) ** 2).sum()) < float((out**2).sum())  # fit shrinks activity
    with pytest.raises(ValueError, match="`l1` must be a float >= 0"):
        layers.ActivityRegularization(l1=-1)


def test_masking_zeroes_and_masks_steps_for_downstream_layers() -> None:
    x = torch.tensor([[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]])
    out = layers.Masking()(x)
    assert get_mask(out).tolist() == [[True, False, True]]
    torch.manual_seed(1)
    model = keras.Sequential([layers.Masking(mask_value=-1.0), layers.LSTM(3)])
    seq = torch.randn(1, 3, 2)
    padded = torch.cat([seq, torch.full((1, 2, 2), -1.0)], dim=1)
    torch.testing.assert_close(model(padded), model(seq), atol=1e-6, rtol=1e-5)


def test_unit_and_group_normalization() -> None:
    torch.manual_seed(2)
    x = torch.randn(3, 4, 6)
    y = layers.UnitNormalization()(x)
    torch.testing.assert_close(y.norm(dim=-1), torch.ones(3, 4))
    y = layers.UnitNormalization(axis=[1, 2])(x)
    torch.testing.assert_close(y.flatten(1).norm(dim=1), torch.ones(3))
    gn = layers.GroupNormalization(groups=2, epsilon=1e-3)
    out = gn(x)
    g = x.reshape(3, 4, 2, 3)
    var, mean = torch.var_mean(g, dim=(1, 3), keepdim=True, correction=0)
    torch.testing.assert_close(out, ((g - mean) / torch.sqrt(var + 1e-3)).reshape(3, 4, 6))
    assert tuple(gn.gamma.shape) == (6,) and tuple(gn.beta.shape) == (6,)
    inst = layers.GroupNormalization(groups=-1)(x)
    torch.testing.assert_close(inst.mean(dim=1), torch.zeros(3, 6), atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="must be a multiple of"):
        layers.GroupNormalization(groups=4)(x)


def test_dot_products_follow_keras_batch_dot() -> None:
    torch.manual_seed(3)
    a, b = torch.randn(4, 5), torch.randn(4, 5)
    out = layers.Dot(axes=1)([a, b])
    assert tuple(out.shape) == (4, 1)
    torch.testing.assert_close(out[:, 0], (a * b).sum(1))
    cos = layers.Dot(axes=1, normalize=True)([a, b])
    torch.testing.assert_close(cos[:, 0], F.cosine_similarity(a, b, dim=1))
    q, k = torch.randn(2, 3, 6), torch.randn(2, 7, 6)
    torch.testing.assert_close(layers.Dot(axes=2)([q, k]), q @ k.transpose(1, 2))
    torch.testing.assert_close(layers.Dot(axes=(1, 1))([q, torch.randn(2, 3, 2)]).shape, torch.Size([2, 6, 2]))
    with pytest.raises(ValueError, match="dot axes have different sizes"):
        layers.Dot(axes=1)([q, k])
    with pytest.raises(ValueError, match="not the batch axis"):
        layers.Dot(axes=0)([a, b])


# --- image augmentation ----------------------------------------------------------------------------
def _image_batch(n: int = 16, size: int = 6) -> torch.Tensor:
    return torch.arange(n * size * size * 2, dtype=torch.float32).reshape(n, size, size, 2) % 97


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.RandomFlip(),
        lambda: layers.RandomRotation(0.2),
        lambda: layers.RandomZoom(0.3),
        lambda: layers.RandomTranslation(0.3, 0.3),
        lambda: layers.RandomContrast(0.5),
        lambda: layers.RandomBrightness(0.3),
    ],
)
def test_random_layers_are_identity_at_inference_and_act_when_training(make: Any) -> None:
    tf.random.set_seed(0)
    layer = make()
    x = _image_batch()
    torch.testing.assert_close(layer(x, training=False), x)
    out = layer(x, training=True)
    assert out.shape == x.shape and out.dtype == torch.float32
    changed = [not torch.allclose(out[i], x[i]) for i in range(len(x))]
    assert any(changed)
    if not isinstance(layer, layers.RandomFlip):
        assert all(changed)
    model = keras.Sequential([keras.Input(shape=(6, 6, 2)), layer])
    np.testing.assert_allclose(model.predict(x.numpy(), verbose=0), x.numpy())  # predict: inference
    single = layer(x[0])  # one HWC image, as in a tf.data map: augmented (Keras's default)
    assert single.shape == x[0].shape


def test_random_flip_flips_each_image_independently() -> None:
    tf.random.set_seed(1)
    x = torch.randn(64, 3, 4, 1)
    out = layers.RandomFlip("horizontal")(x, training=True)
    flipped = [torch.equal(out[i], x[i].flip(1)) for i in range(64)]
    kept = [torch.equal(out[i], x[i]) for i in range(64)]
    assert all(f or k for f, k in zip(flipped, kept)) and 10 < sum(flipped) < 54
    both = layers.RandomFlip(seed=4)(x, training=True)
    options = [x[0], x[0].flip(0), x[0].flip(1), x[0].flip(0).flip(1)]
    assert any(torch.equal(both[0], o) for o in options)
    with pytest.raises(ValueError, match="unknown mode"):
        layers.RandomFlip("diagonal")


def test_rotation_by_a_quarter_turn_is_rot90_counter_clockwise() -> None:
    x = torch.arange(2 * 25, dtype=torch.float32).reshape(2, 5, 5, 1)
    out = layers.RandomRotation((0.25, 0.25), interpolation="nearest")(x, training=True)
    torch.testing.assert_close(out, torch.rot90(x, 1, dims=(1, 2)))
    bilinear = layers.RandomRotation((0.25, 0.25))(x, training=True)
    torch.testing.assert_close(bilinear, torch.rot90(x, 1, dims=(1, 2)), atol=1e-4, rtol=0)


@pytest.mark.parametrize(
    ("fill_mode", "expected"),
    [
        ("constant", [9.0, 9.0, 0.0, 1.0, 2.0]),
        ("reflect", [1.0, 0.0, 0.0, 1.0, 2.0]),
        ("wrap", [3.0, 4.0, 0.0, 1.0, 2.0]),
        ("nearest", [0.0, 0.0, 0.0, 1.0, 2.0]),
    ],
)
def test_translation_fill_modes(fill_mode: str, expected: list[float]) -> None:
    row = torch.arange(5, dtype=torch.float32).reshape(1, 1, 5, 1)
    layer = layers.RandomTranslation(0.0, (0.4, 0.4), fill_mode=fill_mode, fill_value=9.0)
    assert layer(row, training=True).flatten().tolist() == expected  # shifted right by 2 pixels


def test_zoom_contrast_and_brightness_values() -> None:
    x = torch.arange(25, dtype=torch.float32).reshape(1, 5, 5, 1)
    zoomed = layers.RandomZoom((-0.5, -0.5), interpolation="nearest")(x, training=True)  # zoom in 2x
    assert zoomed[0, 2, 2, 0] == x[0, 2, 2, 0] and zoomed[0, 0, 0, 0] == x[0, 1, 1, 0]
    out = layers.RandomZoom((1.0, 1.0), fill_mode="constant", interpolation="nearest")(x, training=True)
    assert out[0, 2, 2, 0] == x[0, 2, 2, 0] and out[0, 0, 0, 0] == 0.0  # zoom out 2x, outside is the fill
    imgs = torch.rand(8, 4, 4, 3) * 100 + 50
    contrast = layers.RandomContrast((0.5, 0.5), seed=1)(imgs, training=True)
    mean = imgs.mean(dim=(1, 2), keepdim=True)
    factor = (contrast - mean) / (imgs - mean)
    assert bool(((factor > 0.5 - 1e-3) & (factor < 1.5 + 1e-3)).all())
    torch.testing.assert_close(contrast.mean(dim=(1, 2)), imgs.mean(dim=(1, 2)), atol=1e-3, rtol=0)
    clipped = layers.RandomContrast(1.0, value_range=(0, 1))(imgs / 200, training=True)
    assert float(clipped.min()) >= 0 and float(clipped.max()) <= 1
    bright = layers.RandomBrightness((0.1, 0.1), value_range=(0, 255))(imgs, training=True)
    torch.testing.assert_close(bright, torch.clamp(imgs + 25.5, 0, 255))
    assert float(layers.RandomBrightness(1.0)(imgs, training=True).max()) <= 255


def test_random_crop_resizing_and_center_crop() -> None:
    tf.random.set_seed(2)
    x = torch.randn(6, 8, 10, 3)
    crop = layers.RandomCrop(4, 5)
    out = crop(x, training=True)
    assert tuple(out.shape) == (6, 4, 5, 3)
    for i in range(6):
        found = [(r, c) for r in range(5) for c in range(6) if torch.equal(out[i], x[i, r : r + 4, c : c + 5])]
        assert found, "each crop is a window of its own image"
    torch.testing.assert_close(crop(x, training=False), x)  # Keras 3: unchanged at inference
    small = crop(x[:, :3, :4], training=True)  # smaller than the crop: resized
    torch.testing.assert_close(small, layers.Resizing(4, 5, crop_to_aspect_ratio=True)(x[:, :3, :4]))
    resized = layers.Resizing(4, 5)(x)
    torch.testing.assert_close(resized, tf.image.resize(x, [4, 5]))
    assert layers.Resizing(4, 4, interpolation="nearest")(torch.ones(8, 8, 1, dtype=torch.uint8)).dtype == torch.float32
    padded = layers.Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=-1.0, interpolation="nearest")(
        torch.ones(1, 2, 4, 1)
    )
    assert padded[0, :, 0, 0].tolist() == [-1.0, 1.0, 1.0, -1.0]
    torch.testing.assert_close(layers.CenterCrop(4, 6)(x), x[:, 2:6, 2:8])
    assert tuple(layers.CenterCrop(12, 5)(x).shape) == (6, 12, 5, 3)  # smaller: resized instead
    with pytest.raises(ValueError, match="`height` must be a positive integer"):
        layers.CenterCrop(0, 3)
    with pytest.raises(ValueError, match="Only one of crop_to_aspect_ratio"):
        layers.Resizing(2, 2, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)


def test_augmentation_is_active_in_fit_and_works_in_a_dataset_map() -> None:
    seen: list[torch.Tensor] = []

    class Probe(layers.Layer):
        def call(self, inputs: torch.Tensor) -> torch.Tensor:
            seen.append(inputs.detach().clone())
            return inputs

    tf.random.set_seed(3)
    x = np.random.default_rng(0).random((16, 5, 5, 1)).astype("float32")
    model = keras.Sequential(
        [keras.Input(shape=(5, 5, 1)), layers.RandomFlip("horizontal"), Probe(), layers.Flatten(), layers.Dense(1)]
    )
    model.compile(optimizer="sgd", loss="mse")
    seen.clear()
    model.fit(x, np.zeros((16, 1), "float32"), batch_size=16, epochs=1, shuffle=False, verbose=0)
    assert not np.allclose(seen[-1].numpy(), x)  # fit: training=True
    seen.clear()
    model.predict(x, verbose=0)
    np.testing.assert_allclose(seen[-1].numpy(), x)  # predict: identity
    images = tf.random.uniform([4, 10, 10, 3], maxval=255)
    ds = (
        tf.data.Dataset.from_tensor_slices(images)
        .map(layers.Resizing(6, 6))
        .map(lambda img: layers.RandomRotation(0.1, seed=1)(img))
    )
    batches = list(ds.batch(4))
    assert tuple(batches[0].shape) == (4, 6, 6, 3)


def test_augmentation_argument_errors() -> None:
    with pytest.raises(NotImplementedError, match="Unknown `fill_mode`"):
        layers.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(NotImplementedError, match="Unknown `interpolation`"):
        layers.RandomZoom(0.1, interpolation="bicubic")
    with pytest.raises(ValueError, match="lower <= upper"):
        layers.RandomRotation((0.3, 0.1))
    with pytest.raises(ValueError, match=r"values must be in \[-1, 1\]"):
        layers.RandomTranslation(1.5, 0.1)
    with pytest.raises(ValueError, match=r"values must be in \[0, 1\]"):
        layers.RandomContrast(-0.2)
    with pytest.raises(ValueError, match="low < high"):
        layers.RandomBrightness(0.1, value_range=(1, 0))
    with pytest.raises(ValueError, match="a grayscale image needs a channels axis"):
        layers.RandomFlip()(torch.zeros(5, 5))
    with pytest.raises(ValueError, match="channels-last inputs only"):
        layers.RandomFlip(data_format="channels_first")
    assert math.isclose(layers.RandomRotation(0.1).fill_value, 0.0)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: layers.GaussianNoise(-1.0), ValueError, "expected a float >= 0"),
        (lambda: layers.GaussianNoise(0.1, seed="x"), ValueError, "seed must be an integer"),
        (lambda: layers.RepeatVector(0), TypeError, "Expected an integer value for `n`"),
        (lambda: layers.SpatialDropout1D(0.5)(torch.ones(2, 3), training=True), ValueError, "expects inputs of rank 3"),
        (lambda: layers.Dot(axes="last"), TypeError, "Invalid type/value for `axes`"),
        (lambda: layers.Dot(axes=1)([torch.ones(2, 3)] * 3), ValueError, "exactly 2 inputs"),
        (lambda: layers.GroupNormalization(groups=0), ValueError, "positive integer or -1"),
        (lambda: layers.RandomZoom(-1.5), ValueError, "must be >= -1.0"),
        (lambda: layers.RandomRotation("a lot"), ValueError, "a float or a tuple of 2 floats"),
    ],
)
def test_more_bad_arguments_raise_clear_errors(make: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        make()
