"""``keras.applications.resnet``: ResNet50, ResNet101, ResNet152 (and ResNetV2's blocks).

Keras 3's architecture and layer names (``conv1_conv``, ``conv2_block1_1_conv``, ...), built from
unison's layers. ``preprocess_input`` is Keras's ``"caffe"`` mode (RGB to BGR, ImageNet means
subtracted, no scaling).

Example:
    >>> import numpy as np
    >>> preprocess_input(np.array([[[[0.0, 0.0, 255.0]]]])).round(2).tolist()  # RGB -> BGR, minus the means
    [[[[151.06, -116.78, -123.68]]]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from unison.keras import layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.models import Model

_EPSILON = 1.001e-5
_BUILDERS = {
    "resnet50": "ResNet50",
    "resnet101": "ResNet101",
    "resnet152": "ResNet152",
    "resnet50v2": "ResNet50V2",
    "resnet101v2": "ResNet101V2",
    "resnet152v2": "ResNet152V2",
}


def ResNet(
    stack_fn: Callable[[Any], Any],
    preact: bool,
    use_bias: bool,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "resnet",
    weights_name: str | None = None,
) -> Model:
    """A ResNet (v1, or v2 when ``preact``) with ``stack_fn`` building its residual stages."""
    builder = _BUILDERS.get(weights_name or "", name)
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    shape = imagenet_utils.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    img_input = _common.image_input(shape, input_tensor)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
    if not preact:
        x = _bn_relu(x, "conv1")
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack_fn(x)
    if preact:
        x = _bn_relu(x, "post")
    x = _common.classifier_top(x, include_top, pooling, classes, classifier_activation)
    file = None
    if weights_name is not None:
        file = f"{weights_name}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, builder)


def _bn(x: Any, name: str) -> Any:
    return layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=f"{name}_bn")(x)


def _bn_relu(x: Any, name: str) -> Any:
    """Keras's ``{name}_bn`` then ``{name}_relu``."""
    return layers.Activation("relu", name=f"{name}_relu")(_bn(x, name))


def residual_block_v1(
    x: Any, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = True, name: str = ""
) -> Any:
    """A bottleneck block: 1x1, kxk, 1x1 convolutions, each batch-normalised, plus the shortcut."""
    if conv_shortcut:
        shortcut = _bn(layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x), f"{name}_0")
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x)
    x = _bn_relu(x, f"{name}_1")
    x = layers.Conv2D(filters, kernel_size, padding="same", name=f"{name}_2_conv")(x)
    x = _bn_relu(x, f"{name}_2")
    x = _bn(layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x), f"{name}_3")
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def stack_residual_blocks_v1(x: Any, filters: int, blocks: int, stride1: int = 2, name: str = "") -> Any:
    """``blocks`` v1 blocks; the first one projects the shortcut and strides by ``stride1``."""
    x = residual_block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = residual_block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def residual_block_v2(
    x: Any, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = False, name: str = ""
) -> Any:
    """A pre-activation bottleneck block (ResNetV2); the stride is on its last block's 3x3 convolution."""
    preact = _bn_relu(x, f"{name}_preact")
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact)
    x = _bn_relu(x, f"{name}_1")
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = _bn_relu(x, f"{name}_2")
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def stack_residual_blocks_v2(x: Any, filters: int, blocks: int, stride1: int = 2, name: str = "") -> Any:
    """``blocks`` v2 blocks; the first projects the shortcut, the last strides by ``stride1``."""
    x = residual_block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = residual_block_v2(x, filters, name=f"{name}_block{i}")
    return residual_block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def stages(stack: Callable[..., Any], depths: tuple[int, int, int, int], unstrided: int) -> Callable[[Any], Any]:
    """Keras's four residual stages ``conv2``..``conv5`` (64 to 512 filters, ``depths`` blocks) built
    by ``stack`` (v1 or v2); stage ``unstrided`` (0 to 3) keeps the resolution (``stride1=1``)."""

    def stack_fn(x: Any) -> Any:
        for i, (filters, blocks) in enumerate(zip((64, 128, 256, 512), depths)):
            x = stack(x, filters, blocks, stride1=1 if i == unstrided else 2, name=f"conv{i + 2}")
        return x

    return stack_fn


def _v1(depths: tuple[int, int, int, int]) -> Callable[[Any], Any]:
    return stages(stack_residual_blocks_v1, depths, unstrided=0)


def ResNet50(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "resnet50",
) -> Model:
    """ResNet50 (Keras's ``keras.applications.ResNet50``): 25.6M parameters with the top.

    Args:
        include_top: whether to end with global average pooling and a ``classes``-way ``Dense``.
        weights: ``None`` (random), ``"imagenet"`` (Keras's file, from ``~/.keras/models/``;
            nothing is downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build the model on (instead of a new ``keras.Input``).
        input_shape: ``(height, width, channels)``, at least 32x32 (default ``(224, 224, 3)``
            with the top, ``(None, None, 3)`` without).
        pooling: without the top: ``None`` (4-D output), ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name.
    """
    return ResNet(
        _v1((3, 4, 6, 3)), False, True, include_top, weights, input_tensor, input_shape, pooling, classes,
        classifier_activation, name, "resnet50",
    )  # fmt: skip


def ResNet101(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "resnet101",
) -> Model:
    """ResNet101 (Keras's ``keras.applications.ResNet101``); arguments as :func:`ResNet50`."""
    return ResNet(
        _v1((3, 4, 23, 3)), False, True, include_top, weights, input_tensor, input_shape, pooling, classes,
        classifier_activation, name, "resnet101",
    )  # fmt: skip


def ResNet152(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "resnet152",
) -> Model:
    """ResNet152 (Keras's ``keras.applications.ResNet152``); arguments as :func:`ResNet50`."""
    return ResNet(
        _v1((3, 8, 36, 3)), False, True, include_top, weights, input_tensor, input_shape, pooling, classes,
        classifier_activation, name, "resnet152",
    )  # fmt: skip


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Images in ``[0, 255]`` (RGB) to ResNet's inputs: BGR, ImageNet means subtracted ("caffe")."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["ResNet101", "ResNet152", "ResNet50", "decode_predictions", "preprocess_input"]
