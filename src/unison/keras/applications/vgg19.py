"""``keras.applications.vgg19``: VGG19 (VGG16 with four convolutions in blocks 3 to 5).

Example:
    >>> model = VGG19(weights=None, include_top=False, input_shape=(32, 32, 3))
    >>> model.count_params()
    20024384
"""

from __future__ import annotations

from typing import Any

from unison.keras.applications.vgg16 import decode_predictions, preprocess_input, vgg
from unison.keras.models import Model


def VGG19(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "vgg19",
) -> Model:
    """VGG19 (Keras's ``keras.applications.VGG19``); arguments as :func:`.vgg16.VGG16`."""
    return vgg(
        (2, 2, 4, 4, 4),
        include_top,
        weights,
        input_tensor,
        input_shape,
        pooling,
        classes,
        classifier_activation,
        name,
        "vgg19",
    )


__all__ = ["VGG19", "decode_predictions", "preprocess_input"]
