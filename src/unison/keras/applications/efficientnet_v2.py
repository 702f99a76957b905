"""``keras.applications.efficientnet_v2``: EfficientNetV2B0 to B3, S, M and L.

Keras 3's architecture and names (``stem_conv``, ``block1a_project_conv``, ``block4a_dwconv2``,
``block4b_se_reduce``, ``top_conv``): fused inverted residual blocks (one full convolution) in the
early stages, inverted residual blocks with squeeze-and-excitation later. With
``include_preprocessing=True`` (the default) the model rescales pixels in ``[0, 255]`` itself (the
B variants also normalise with ImageNet's mean and variance), so ``preprocess_input`` returns its
input unchanged, as in Keras.

Example:
    >>> model = EfficientNetV2B0(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.name, model.count_params()
    ('efficientnetv2-b0', 5932122)
"""

from __future__ import annotations

import math
from typing import Any

from unison.keras import initializers, layers
from unison.keras.applications import _blocks, _common, imagenet_utils
from unison.keras.models import Model

# (kernel, repeats, filters in, filters out, expand ratio, se ratio, strides, fused) per stage
_B = (
    (3, 1, 32, 16, 1, 0, 1, True),
    (3, 2, 16, 32, 4, 0, 2, True),
    (3, 2, 32, 48, 4, 0, 2, True),
    (3, 3, 48, 96, 4, 0.25, 2, False),
    (3, 5, 96, 112, 6, 0.25, 1, False),
    (3, 8, 112, 192, 6, 0.25, 2, False),
)
_S = (
    (3, 2, 24, 24, 1, 0, 1, True),
    (3, 4, 24, 48, 4, 0, 2, True),
    (3, 4, 48, 64, 4, 0, 2, True),
    (3, 6, 64, 128, 4, 0.25, 2, False),
    (3, 9, 128, 160, 6, 0.25, 1, False),
    (3, 15, 160, 256, 6, 0.25, 2, False),
)
_M = (
    (3, 3, 24, 24, 1, 0, 1, True),
    (3, 5, 24, 48, 4, 0, 2, True),
    (3, 5, 48, 80, 4, 0, 2, True),
    (3, 7, 80, 160, 4, 0.25, 2, False),
    (3, 14, 160, 176, 6, 0.25, 1, False),
    (3, 18, 176, 304, 6, 0.25, 2, False),
    (3, 5, 304, 512, 6, 0.25, 1, False),
)
_L = ((3, 4, 32, 32, 1, 0, 1, True), (3, 7, 32, 64, 4, 0, 2, True), (3, 7, 64, 96, 4, 0, 2, True),
      (3, 10, 96, 192, 4, 0.25, 2, False), (3, 19, 192, 224, 6, 0.25, 1, False),
      (3, 25, 224, 384, 6, 0.25, 2, False), (3, 7, 384, 640, 6, 0.25, 1, False))  # fmt: skip
# variant -> (stages, width, depth, default size)
_VARIANTS = {
    "b0": (_B, 1.0, 1.0, 224), "b1": (_B, 1.0, 1.1, 240), "b2": (_B, 1.1, 1.2, 260), "b3": (_B, 1.2, 1.4, 300),
    "s": (_S, 1.0, 1.0, 384), "m": (_M, 1.0, 1.0, 480), "l": (_L, 1.0, 1.0, 480),
}  # fmt: skip
_MEAN = (0.485, 0.456, 0.406)
_VARIANCE = (0.229**2, 0.224**2, 0.225**2)


def _conv_init() -> Any:
    return initializers.VarianceScaling(scale=2.0, mode="fan_out", distribution="truncated_normal")


def _dense_init() -> Any:
    return initializers.VarianceScaling(scale=1.0 / 3.0, mode="fan_out", distribution="uniform")


def _conv(
    x: Any, filters: int, kernel: int, strides: int, name: str, activation: Any = None, bias: bool = False
) -> Any:
    return layers.Conv2D(
        filters, kernel, strides=strides, padding="same", use_bias=bias, activation=activation,
        kernel_initializer=_conv_init(), name=name,
    )(x)  # fmt: skip


def _bn(x: Any, name: str) -> Any:
    return layers.BatchNormalization(axis=-1, momentum=0.9, name=name)(x)


def _se(x: Any, filters_in: int, filters: int, se_ratio: float, activation: Any, name: str) -> Any:
    """Squeeze-and-excitation: pooled channels through a bottleneck gate the block's channels."""
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    se = layers.Reshape((1, 1, filters), name=f"{name}se_reshape")(se)
    se = _conv(se, max(1, int(filters_in * se_ratio)), 1, 1, f"{name}se_reduce", activation, bias=True)
    se = _conv(se, filters, 1, 1, f"{name}se_expand", "sigmoid", bias=True)
    return layers.multiply([x, se], name=f"{name}se_excite")


def _residual(x: Any, inputs: Any, drop_rate: float, name: str) -> Any:
    if drop_rate:
        # stochastic depth: the whole residual branch of an example is dropped
        x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
    return layers.add([x, inputs], name=f"{name}add")


def mb_conv_block(
    inputs: Any, filters_in: int, filters_out: int, expand_ratio: int, kernel: int, strides: int, se_ratio: float,
    activation: Any, drop_rate: float, name: str,
) -> Any:  # fmt: skip
    """Inverted residual block: expand (1x1), depthwise, squeeze-and-excite, project (1x1)."""
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = _conv(x, filters, 1, 1, f"{name}expand_conv")
        x = layers.Activation(activation, name=f"{name}expand_activation")(_bn(x, f"{name}expand_bn"))
    x = layers.DepthwiseConv2D(
        kernel, strides=strides, padding="same", use_bias=False, depthwise_initializer=_conv_init(),
        name=f"{name}dwconv2",
    )(x)  # fmt: skip
    x = layers.Activation(activation, name=f"{name}activation")(_bn(x, f"{name}bn"))
    if 0 < se_ratio <= 1:
        x = _se(x, filters_in, filters, se_ratio, activation, name)
    x = _bn(_conv(x, filters_out, 1, 1, f"{name}project_conv"), f"{name}project_bn")
    if strides == 1 and filters_in == filters_out:
        x = _residual(x, inputs, drop_rate, name)
    return x


def fused_mb_conv_block(
    inputs: Any, filters_in: int, filters_out: int, expand_ratio: int, kernel: int, strides: int, se_ratio: float,
    activation: Any, drop_rate: float, name: str,
) -> Any:  # fmt: skip
    """Fused inverted residual block: one full ``kernel`` convolution expands, a 1x1 projects."""
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = _conv(x, filters, kernel, strides, f"{name}expand_conv")
        x = layers.Activation(activation, name=f"{name}expand_activation")(_bn(x, f"{name}expand_bn"))
    if 0 < se_ratio <= 1:
        x = _se(x, filters_in, filters, se_ratio, activation, name)
    fused = expand_ratio == 1  # without expansion the projection is the full convolution
    x = _conv(x, filters_out, kernel if fused else 1, strides if fused else 1, f"{name}project_conv")
    x = _bn(x, f"{name}project_bn")
    if fused:
        x = layers.Activation(activation, name=f"{name}project_activation")(x)
    if strides == 1 and filters_in == filters_out:
        x = _residual(x, inputs, drop_rate, name)
    return x


def EfficientNetV2(
    variant: str,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str | None = None,
    dropout_rate: float = 0.2,
    drop_connect_rate: float = 0.2,
    activation: Any = "swish",
) -> Model:
    """The EfficientNetV2 ``variant`` (``"b0"``..``"b3"``, ``"s"``, ``"m"``, ``"l"``)."""
    stages, width, depth, default_size = _VARIANTS[variant]
    builder = f"EfficientNetV2{variant.upper()}"
    name = name if name is not None else f"efficientnetv2-{variant}"
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    shape = imagenet_utils.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    img_input = _common.image_input(shape, input_tensor)

    def round_filters(filters: float) -> int:
        filters *= width
        return int(max(8, int(filters + 4) // 8 * 8))

    x = img_input
    if include_preprocessing:
        if variant.startswith("b") and int(x.shape[-1]) == 3:
            x = layers.Rescaling(scale=1.0 / 255)(x)
            x = _blocks.FixedNormalization(_MEAN, _VARIANCE)(x)
        else:
            x = layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)
    x = _conv(x, round_filters(stages[0][2]), 3, 2, "stem_conv")
    x = layers.Activation(activation, name="stem_activation")(_bn(x, "stem_bn"))
    total = float(sum(stage[1] for stage in stages))
    b = 0
    for i, (kernel, repeats, filters_in, filters_out, expand, se_ratio, strides, fused) in enumerate(stages):
        filters_in, filters_out = round_filters(filters_in), round_filters(filters_out)
        block = fused_mb_conv_block if fused else mb_conv_block
        for j in range(int(math.ceil(depth * repeats))):
            if j > 0:
                strides, filters_in = 1, filters_out
            x = block(
                x, filters_in, filters_out, expand, kernel, strides, se_ratio, activation, drop_connect_rate * b / total,
                f"block{i + 1}{chr(j + 97)}_",
            )  # fmt: skip
            b += 1
    x = _conv(x, round_filters(1280), 1, 1, "top_conv")
    x = layers.Activation(activation, name="top_activation")(_bn(x, "top_bn"))
    x = _common.classifier_top(
        x, include_top, pooling, classes, classifier_activation, dropout=dropout_rate, dense_init=_dense_init()
    )
    file = f"efficientnetv2-{variant}{'' if include_top else '_notop'}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, builder)


def EfficientNetV2B0(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "efficientnetv2-b0",
) -> Model:
    """EfficientNetV2B0 (Keras's ``keras.applications.EfficientNetV2B0``): 7.2M parameters, 224x224.

    Args:
        include_top: whether to end with pooling, dropout and a ``classes``-way ``Dense``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        input_shape: ``(height, width, channels)``, at least 32x32; pixels in ``[0, 255]``.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        include_preprocessing: whether the model rescales (and normalises) its inputs itself.
        name: the model's name.
    """
    return EfficientNetV2("b0", include_top, weights, input_tensor, input_shape, pooling, classes,
                          classifier_activation, include_preprocessing, name)  # fmt: skip


def EfficientNetV2B1(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "efficientnetv2-b1",
) -> Model:
    """EfficientNetV2B1 (240x240); arguments as :func:`EfficientNetV2B0`."""
    return EfficientNetV2("b1", include_top, weights, input_tensor, input_shape, pooling, classes,
                          classifier_activation, include_preprocessing, name)  # fmt: skip


def EfficientNetV2B2(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "efficientnetv2-b2",
) -> Model:
    """EfficientNetV2B2 (260x260); arguments as :func:`EfficientNetV2B0`."""
    return EfficientNetV2("b2", include_top, weights, input_tensor, input_shape, pooling, classes,
                          classifier_activation, include_preprocessing, name)  # fmt: skip


def EfficientNetV2B3(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "efficientnetv2-b3",
) -> Model:
    """EfficientNetV2B3 (300x300); arguments as :func:`EfficientNetV2B0`."""
    return EfficientNetV2("b3", include_top, weights, input_tensor, input_shape, pooling, classes,
                          classifier_activation, include_preprocessing, name)  # fmt: skip


def EfficientNetV2S(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "efficientnetv2-s",
) -> Model:
    """EfficientNetV2S (384x384); arguments as :func:`EfficientNetV2B0`."""
    return EfficientNetV2("s", include_top, weights, input_tensor, input_shape, pooling, classes,
                          classifier_activation, include_preprocessing, name)  # fmt: skip


def EfficientNetV2M(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "efficientnetv2-m",
) -> Model:
    """EfficientNetV2M (480x480); arguments as :func:`EfficientNetV2B0`."""
    return EfficientNetV2("m", include_top, weights, input_tensor, input_shape, pooling, classes,
                          classifier_activation, include_preprocessing, name)  # fmt: skip


def EfficientNetV2L(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "efficientnetv2-l",
) -> Model:
    """EfficientNetV2L (480x480); arguments as :func:`EfficientNetV2B0`."""
    return EfficientNetV2("l", include_top, weights, input_tensor, input_shape, pooling, classes,
                          classifier_activation, include_preprocessing, name)  # fmt: skip


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """EfficientNetV2 rescales inside the model: the input is returned unchanged (as Keras does)."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = [
    "EfficientNetV2B0",
    "EfficientNetV2B1",
    "EfficientNetV2B2",
    "EfficientNetV2B3",
    "EfficientNetV2L",
    "EfficientNetV2M",
    "EfficientNetV2S",
    "decode_predictions",
    "preprocess_input",
]
