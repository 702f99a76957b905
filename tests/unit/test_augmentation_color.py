"""Errors and seeding of Keras 3's colour augmentation layers (values: tests/conformance/test_vs_keras_augmentation_color.py)."""

from __future__ import annotations

import pytest
import torch

from unison.keras import layers


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: layers.Equalization(bins=1), "`bins` must be an integer >= 2"),
        (lambda: layers.RandomPosterization(factor="3"), r"in the range \[1, 8\]"),
        (lambda: layers.Solarization(threshold_factor=(0.1, 0.2, 0.3)), "threshold_factor"),
        (lambda: layers.RandomColorDegeneration(factor=0.5, value_range=5), "value_range"),
    ],
)
def test_bad_arguments_say_what_is_expected(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_grayscale_needs_rgb_images():
    with pytest.raises(ValueError, match="3 channels"):
        layers.RandomGrayscale(factor=1.0)(torch.zeros(1, 2, 2, 4))


def test_a_seeded_layer_draws_the_same_transform_again():
    x = torch.rand(4, 5, 5, 3) * 255
    first = layers.RandomSharpness(factor=0.9, seed=3)(x)
    again = layers.RandomSharpness(factor=0.9, seed=3)(x)
    assert torch.equal(first, again) and not torch.equal(first, x)


def test_posterization_draws_integer_bits_within_the_factor():
    x = torch.full((64, 1, 1, 1), 255.0)
    out = layers.RandomPosterization(factor=(2, 5), seed=1)(x).flatten()
    kept = {int(v) for v in out.tolist()}
    assert kept <= {192, 224, 240} and len(kept) > 1  # 2, 3 or 4 bits: randint's high is excluded


def test_mixing_layers_check_their_arguments_and_inputs():
    with pytest.raises(ValueError, match="`alpha` must be a positive number"):
        layers.MixUp(alpha=0)
    with pytest.raises(ValueError, match="an 'images' key"):
        layers.CutMix()({"pixels": torch.zeros(2, 2, 2, 1)})
    with pytest.raises(ValueError, match="a list of layers"):
        layers.Pipeline(layers.AutoContrast())


def test_mixup_is_reproducible_with_a_seed_and_mixes_labels():
    x = torch.rand(6, 3, 3, 2)
    y = torch.eye(6)
    a = layers.MixUp(seed=4)({"images": x, "labels": y})
    b = layers.MixUp(seed=4)({"images": x, "labels": y})
    assert torch.equal(torch.as_tensor(a["images"]), torch.as_tensor(b["images"]))
    assert torch.allclose(torch.as_tensor(a["labels"]).sum(1), torch.ones(6))


def test_pipeline_passes_training_on():
    pipe = layers.Pipeline([layers.RandomInvert(factor=(1.0, 1.0)), lambda t: t + 1])
    x = torch.zeros(1, 2, 2, 1)
    assert torch.as_tensor(pipe(x)).flatten().tolist() == [256.0] * 4
    assert torch.as_tensor(pipe(x, training=False)).flatten().tolist() == [1.0] * 4


def test_mel_spectrogram_checks_its_arguments_and_audio():
    with pytest.raises(ValueError, match="`sequence_stride` must be a positive integer"):
        layers.MelSpectrogram(sequence_stride=0)
    with pytest.raises(ValueError, match='"hann"'):
        layers.MelSpectrogram(window="blackman")
    with pytest.raises(ValueError, match="needs more than 1024 samples"):
        layers.MelSpectrogram()(torch.zeros(1, 100))


def test_hue_and_saturation_need_rgb_images():
    for layer in (layers.RandomHue(factor=0.5), layers.RandomSaturation(factor=0.5)):
        with pytest.raises(ValueError, match="RGB images"):
            layer(torch.zeros(1, 2, 2, 1))


def test_random_shear_round_trips_its_config_and_checks_factors():
    layer = layers.RandomShear(x_factor=0.4, y_factor=(0.1, 0.3), seed=2)
    clone = type(layer).from_config(layer.get_config())
    x = torch.rand(2, 5, 5, 3)
    assert torch.equal(torch.as_tensor(layer(x)), torch.as_tensor(clone(x)))
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        layers.RandomShear(x_factor=-0.5)
    with pytest.raises(NotImplementedError, match="fill_mode"):
        layers.RandomShear(fill_mode="edge")


def test_random_erasing_says_what_fill_value_it_takes():
    with pytest.raises(ValueError, match="list of three numbers"):
        layers.RandomErasing(fill_value="black")(torch.zeros(1, 2, 2, 3))
