"""``keras.applications.xception``: Xception (depthwise separable convolutions, residual blocks).

Keras 3's architecture and names (``block1_conv1``, ``block2_sepconv1``, ...); the residual
projections carry Keras's default names (``conv2d``, ``batch_normalization``). Inputs are at
least 71x71 (default 299x299). ``preprocess_input`` is Keras's ``"tf"`` mode.

Example:
    >>> import numpy as np
    >>> preprocess_input(np.array([[0.0, 255.0]])).tolist()
    [[-1.0, 1.0]]
"""

from __future__ import annotations

from typing import Any

from unison.keras import layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.models import Model


def _sepconv_bn(x: Any, filters: int, name: str) -> Any:
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=-1, name=f"{name}_bn")(x)


def _projection(x: Any, filters: int) -> Any:
    residual = layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    return layers.BatchNormalization(axis=-1)(residual)


def _entry_block(x: Any, filters: int, block: int, first_act: bool = True) -> Any:
    """Two separable convolutions, a stride-2 max pool, plus a 1x1 stride-2 projection of the input."""
    residual = _projection(x, filters)
    if first_act:
        x = layers.Activation("relu", name=f"block{block}_sepconv1_act")(x)
    x = _sepconv_bn(x, filters, f"block{block}_sepconv1")
    x = layers.Activation("relu", name=f"block{block}_sepconv2_act")(x)
    x = _sepconv_bn(x, filters, f"block{block}_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
    return layers.add([x, residual])


def Xception(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "xception",
) -> Model:
    """Xception (Keras's ``keras.applications.Xception``): 22.9M parameters with the top.

    Args:
        include_top: whether to end with global average pooling and a ``classes``-way ``Dense``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        input_shape: ``(height, width, channels)``, at least 71x71 (default ``(299, 299, 3)``).
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name.
    """
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, "Xception")
    shape = imagenet_utils.obtain_input_shape(input_shape, 299, 71, include_top, weights)
    img_input = _common.image_input(shape, input_tensor, 71, "Xception")
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(img_input)
    x = layers.BatchNormalization(axis=-1, name="block1_conv1_bn")(x)
    x = layers.Activation("relu", name="block1_conv1_act")(x)
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = layers.BatchNormalization(axis=-1, name="block1_conv2_bn")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(x)
    x = _entry_block(x, 128, 2, first_act=False)
    x = _entry_block(x, 256, 3)
    x = _entry_block(x, 728, 4)
    for i in range(8):  # the middle flow
        residual = x
        prefix = f"block{i + 5}"
        for conv in (1, 2, 3):
            x = layers.Activation("relu", name=f"{prefix}_sepconv{conv}_act")(x)
            x = _sepconv_bn(x, 728, f"{prefix}_sepconv{conv}")
        x = layers.add([x, residual])
    residual = _projection(x, 1024)
    x = layers.Activation("relu", name="block13_sepconv1_act")(x)
    x = _sepconv_bn(x, 728, "block13_sepconv1")
    x = layers.Activation("relu", name="block13_sepconv2_act")(x)
    x = _sepconv_bn(x, 1024, "block13_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name="block13_pool")(x)
    x = layers.add([x, residual])
    x = _sepconv_bn(x, 1536, "block14_sepconv1")
    x = layers.Activation("relu", name="block14_sepconv1_act")(x)
    x = _sepconv_bn(x, 2048, "block14_sepconv2")
    x = layers.Activation("relu", name="block14_sepconv2_act")(x)
    x = _common.classifier_top(
        x, include_top, pooling, classes, classifier_activation, "avg_pool" if include_top else None, None
    )
    file = f"xception_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, "Xception")


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Images in ``[0, 255]`` to Xception's inputs: scaled to ``[-1, 1]`` ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["Xception", "decode_predictions", "preprocess_input"]
