"""``keras.applications.densenet``: DenseNet121, DenseNet169, DenseNet201.

Keras 3's architecture and names (``conv2_block1_0_bn``, ``pool2_conv``, ...).
``preprocess_input`` is Keras's ``"torch"`` mode (pixels to ``[0, 1]``, then standardised per
channel with ImageNet's mean and standard deviation).

Example:
    >>> import numpy as np
    >>> preprocess_input(np.array([[123.675, 116.28, 103.53]])).round(6).tolist()  # the ImageNet mean
    [[0.0, 0.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

from unison.keras import layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.models import Model

_EPSILON = 1.001e-5


def dense_block(x: Any, blocks: int, name: str) -> Any:
    """``blocks`` convolution blocks, each adding 32 feature maps to its input."""
    for i in range(blocks):
        x = conv_block(x, 32, name=f"{name}_block{i + 1}")
    return x


def transition_block(x: Any, reduction: float, name: str) -> Any:
    """Batch norm, ReLU, a 1x1 convolution keeping ``reduction`` of the channels, 2x2 average pooling."""
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_bn")(x)
    x = layers.Activation("relu", name=f"{name}_relu")(x)
    x = layers.Conv2D(int(x.shape[3] * reduction), 1, use_bias=False, name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def conv_block(x: Any, growth_rate: int, name: str) -> Any:
    """BN-ReLU-1x1 conv, BN-ReLU-3x3 conv to ``growth_rate`` maps, concatenated to the input."""
    x1 = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_0_bn")(x)
    x1 = layers.Activation("relu", name=f"{name}_0_relu")(x1)
    x1 = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(x1)
    x1 = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_1_bn")(x1)
    x1 = layers.Activation("relu", name=f"{name}_1_relu")(x1)
    x1 = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(x1)
    return layers.Concatenate(axis=3, name=f"{name}_concat")([x, x1])


_KNOWN: dict[tuple[int, ...], str] = {
    (6, 12, 24, 16): "densenet121",
    (6, 12, 32, 32): "densenet169",
    (6, 12, 48, 32): "densenet201",
}


def DenseNet(
    blocks: tuple[int, int, int, int] | list[int],
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "densenet",
) -> Model:
    """A DenseNet with ``blocks`` convolution blocks in each of its four dense blocks."""
    known = _KNOWN.get(tuple(blocks))
    builder = known.replace("densenet", "DenseNet") if known else "DenseNet"
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    shape = imagenet_utils.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    img_input = _common.image_input(shape, input_tensor)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for stage, count in enumerate(blocks, start=2):
        x = dense_block(x, count, name=f"conv{stage}")
        if stage < 5:
            x = transition_block(x, 0.5, name=f"pool{stage}")
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = _common.classifier_top(x, include_top, pooling, classes, classifier_activation)
    file = f"{known}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5" if known else None
    return _common.finish(img_input, input_tensor, x, name, weights, file, builder)


def DenseNet121(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "densenet121",
) -> Model:
    """DenseNet121 (Keras's ``keras.applications.DenseNet121``): 8.1M parameters with the top.

    Args:
        include_top: whether to end with global average pooling and a ``classes``-way ``Dense``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        input_shape: ``(height, width, channels)``, at least 32x32.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name.
    """
    return DenseNet(
        (6, 12, 24, 16), include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name
    )


def DenseNet169(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "densenet169",
) -> Model:
    """DenseNet169 (Keras's ``keras.applications.DenseNet169``); arguments as :func:`DenseNet121`."""
    return DenseNet(
        (6, 12, 32, 32), include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name
    )


def DenseNet201(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "densenet201",
) -> Model:
    """DenseNet201 (Keras's ``keras.applications.DenseNet201``); arguments as :func:`DenseNet121`."""
    return DenseNet(
        (6, 12, 48, 32), include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name
    )


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Images in ``[0, 255]`` to DenseNet's inputs: ``[0, 1]``, standardised per channel ("torch" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["DenseNet121", "DenseNet169", "DenseNet201", "decode_predictions", "preprocess_input"]
