"""``keras.applications.inception_resnet_v2``: InceptionResNetV2 (Inception blocks with residual sums).

Keras 3's architecture and names (``mixed_5b``, ``block35_1_mixed``, ``block17_3_conv``,
``block8_10_conv``, ``conv_7b``); the other convolutions carry Keras's default names. Each
residual block adds its branch scaled by 0.17 (35x35 blocks), 0.1 (17x17) or 0.2 (8x8). Inputs
are at least 75x75 (default 299x299); ``preprocess_input`` is Keras's ``"tf"`` mode.

Example:
    >>> import numpy as np
    >>> preprocess_input(np.array([[0.0, 255.0]])).tolist()
    [[-1.0, 1.0]]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras import layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.layers.base import Layer
from unison.keras.models import Model


class CustomScaleLayer(Layer):
    """``inputs[0] + inputs[1] * scale``: the residual sum of Keras 3's InceptionResNetV2 blocks."""

    def __init__(self, scale: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale = float(scale)

    def call(self, inputs: list[torch.Tensor]) -> torch.Tensor:  # type: ignore[override]
        return inputs[0] + inputs[1] * self.scale

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "scale": self.scale}


def conv2d_bn(
    x: Any,
    filters: int,
    kernel_size: int | tuple[int, int],
    strides: int = 1,
    padding: str = "same",
    activation: str | None = "relu",
    use_bias: bool = False,
    name: str | None = None,
) -> Any:
    """A convolution, batch normalisation without scale (only without bias) and an activation."""
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias, name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=3, scale=False, name=f"{name}_bn" if name else None)(x)
    if activation is not None:
        x = layers.Activation(activation, name=f"{name}_ac" if name else None)(x)
    return x


def inception_resnet_block(
    x: Any, scale: float, block_type: str, block_idx: int, activation: str | None = "relu"
) -> Any:
    """One residual Inception block: ``block35``, ``block17`` or ``block8``; ``x + scale * branches``."""
    if block_type == "block35":
        branches = [
            conv2d_bn(x, 32, 1),
            conv2d_bn(conv2d_bn(x, 32, 1), 32, 3),
            conv2d_bn(conv2d_bn(conv2d_bn(x, 32, 1), 48, 3), 64, 3),
        ]
    elif block_type == "block17":
        branches = [conv2d_bn(x, 192, 1), conv2d_bn(conv2d_bn(conv2d_bn(x, 128, 1), 160, (1, 7)), 192, (7, 1))]
    elif block_type == "block8":
        branches = [conv2d_bn(x, 192, 1), conv2d_bn(conv2d_bn(conv2d_bn(x, 192, 1), 224, (1, 3)), 256, (3, 1))]
    else:
        raise ValueError(
            f"Unknown Inception-ResNet block type. Expects 'block35', 'block17' or 'block8', but got: {block_type!r}"
        )
    block_name = f"{block_type}_{block_idx}"
    mixed = layers.Concatenate(axis=3, name=f"{block_name}_mixed")(branches)
    up = conv2d_bn(mixed, int(x.shape[3]), 1, activation=None, use_bias=True, name=f"{block_name}_conv")
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = layers.Activation(activation, name=f"{block_name}_ac")(x)
    return x


def InceptionResNetV2(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "inception_resnet_v2",
) -> Model:
    """InceptionResNetV2 (Keras's ``keras.applications.InceptionResNetV2``): 55.9M parameters.

    Args:
        include_top: whether to end with global average pooling and a ``classes``-way ``Dense``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        input_shape: ``(height, width, channels)``, at least 75x75 (default ``(299, 299, 3)``).
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name.
    """
    builder = "InceptionResNetV2"
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    shape = imagenet_utils.obtain_input_shape(input_shape, 299, 75, include_top, weights)
    img_input = _common.image_input(shape, input_tensor, min_size=75, builder=builder)
    # stem: 299 -> 35
    x = conv2d_bn(img_input, 32, 3, strides=2, padding="valid")
    x = conv2d_bn(x, 32, 3, padding="valid")
    x = conv2d_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = conv2d_bn(x, 80, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    # mixed_5b (Inception-A)
    branch_0 = conv2d_bn(x, 96, 1)
    branch_1 = conv2d_bn(conv2d_bn(x, 48, 1), 64, 5)
    branch_2 = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1), 96, 3), 96, 3)
    branch_pool = conv2d_bn(layers.AveragePooling2D(3, strides=1, padding="same")(x), 64, 1)
    x = layers.Concatenate(axis=3, name="mixed_5b")([branch_0, branch_1, branch_2, branch_pool])
    for block_idx in range(1, 11):
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=block_idx)
    # mixed_6a (Reduction-A): 35 -> 17
    branch_0 = conv2d_bn(x, 384, 3, strides=2, padding="valid")
    branch_1 = conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 256, 3), 384, 3, strides=2, padding="valid")
    branch_pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = layers.Concatenate(axis=3, name="mixed_6a")([branch_0, branch_1, branch_pool])
    for block_idx in range(1, 21):
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=block_idx)
    # mixed_7a (Reduction-B): 17 -> 8
    branch_0 = conv2d_bn(conv2d_bn(x, 256, 1), 384, 3, strides=2, padding="valid")
    branch_1 = conv2d_bn(conv2d_bn(x, 256, 1), 288, 3, strides=2, padding="valid")
    branch_2 = conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 288, 3), 320, 3, strides=2, padding="valid")
    branch_pool = layers.MaxPooling2D(3, strides=2, padding="valid")(x)
    x = layers.Concatenate(axis=3, name="mixed_7a")([branch_0, branch_1, branch_2, branch_pool])
    for block_idx in range(1, 10):
        x = inception_resnet_block(x, scale=0.2, block_type="block8", block_idx=block_idx)
    x = inception_resnet_block(x, scale=1.0, activation=None, block_type="block8", block_idx=10)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    x = _common.classifier_top(x, include_top, pooling, classes, classifier_activation, "avg_pool", None)
    top = "" if include_top else "_notop"
    file = f"inception_resnet_v2_weights_tf_dim_ordering_tf_kernels{top}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, builder)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Images in ``[0, 255]`` to InceptionResNetV2's inputs: scaled to ``[-1, 1]`` ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["InceptionResNetV2", "decode_predictions", "preprocess_input"]
