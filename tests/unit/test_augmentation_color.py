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
