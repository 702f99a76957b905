"""``keras.applications.efficientnet``: EfficientNetB0 to EfficientNetB7.

Keras 3's architecture and names (``stem_conv``, ``block1a_dwconv``, ``block2b_se_excite``,
``top_conv``). The model takes pixels in ``[0, 255]``: its first layers rescale and normalise
(``Rescaling(1/255)``, then ``Normalization``, whose mean and variance come with the weights), so
``preprocess_input`` returns its input unchanged, as in Keras.

Example:
    >>> import numpy as np
    >>> pixels = np.full((1, 2, 2, 3), 255.0)
    >>> preprocess_input(pixels) is pixels  # the model rescales its [0, 255] inputs itself
    True
"""

from __future__ import annotations

import copy
import math
from typing import Any

from unison.keras import initializers, layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.models import Model

# (kernel_size, repeats, filters_in, filters_out, expand_ratio, strides) of the seven stages;
# every block has id_skip=True and se_ratio=0.25 (Keras's DEFAULT_BLOCKS_ARGS).
_STAGES = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
           (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1))  # fmt: skip
IMAGENET_STDDEV_RGB = (0.229, 0.224, 0.225)


def _conv_init() -> Any:
    return initializers.VarianceScaling(scale=2.0, mode="fan_out", distribution="truncated_normal")


def _dense_init() -> Any:
    return initializers.VarianceScaling(scale=1.0 / 3.0, mode="fan_out", distribution="uniform")


def _pointwise_conv(x: Any, filters: int, name: str) -> Any:
    """A 1x1 convolution without bias (expansion, projection and the top)."""
    return layers.Conv2D(filters, 1, padding="same", use_bias=False, kernel_initializer=_conv_init(), name=name)(x)


def _bn_activation(x: Any, activation: Any, prefix: str) -> Any:
    """Keras's ``{prefix}bn`` then ``{prefix}activation``."""
    x = layers.BatchNormalization(axis=3, name=f"{prefix}bn")(x)
    return layers.Activation(activation, name=f"{prefix}activation")(x)


def EfficientNet(
    width_coefficient: float,
    depth_coefficient: float,
    default_size: int,
    dropout_rate: float = 0.2,
    drop_connect_rate: float = 0.2,
    depth_divisor: int = 8,
    activation: Any = "swish",
    name: str = "efficientnet",
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    builder: str = "EfficientNet",
) -> Model:
    """An EfficientNet scaled by ``width_coefficient`` (channels) and ``depth_coefficient`` (blocks)."""
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    shape = imagenet_utils.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    img_input = _common.image_input(shape, input_tensor)

    def round_filters(filters: float, divisor: int = depth_divisor) -> int:
        filters *= width_coefficient
        new_filters = max(divisor, int(filters + divisor / 2) // divisor * divisor)
        if new_filters < 0.9 * filters:
            new_filters += divisor
        return int(new_filters)

    def round_repeats(repeats: int) -> int:
        return int(math.ceil(depth_coefficient * repeats))

    x = layers.Rescaling(1.0 / 255.0)(img_input)
    x = layers.Normalization(axis=-1)(x)
    if weights == "imagenet":
        # Keras's ImageNet checkpoints hold a variance where the standard deviation belongs; this
        # rescaling corrects it (Keras does the same, for these weights only).
        x = layers.Rescaling([1.0 / math.sqrt(stddev) for stddev in IMAGENET_STDDEV_RGB])(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(
        round_filters(32), 3, strides=2, padding="valid", use_bias=False, kernel_initializer=_conv_init(),
        name="stem_conv",
    )(x)  # fmt: skip
    x = _bn_activation(x, activation, "stem_")
    stages = [list(stage) for stage in copy.deepcopy(_STAGES)]
    total = float(sum(round_repeats(stage[1]) for stage in stages))
    b = 0
    for i, (kernel_size, repeats, filters_in, filters_out, expand_ratio, strides) in enumerate(stages):
        filters_in, filters_out = round_filters(filters_in), round_filters(filters_out)
        for j in range(round_repeats(repeats)):
            if j > 0:
                strides, filters_in = 1, filters_out
            x = block(
                x, activation, drop_connect_rate * b / total, f"block{i + 1}{chr(j + 97)}_", filters_in,
                filters_out, kernel_size, strides, expand_ratio, 0.25,
            )  # fmt: skip
            b += 1
    x = _bn_activation(_pointwise_conv(x, round_filters(1280), "top_conv"), activation, "top_")
    x = _common.classifier_top(
        x, include_top, pooling, classes, classifier_activation, dropout=dropout_rate, dense_init=_dense_init()
    )
    file = f"{name}{'' if include_top else '_notop'}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, builder)


def block(
    inputs: Any,
    activation: Any = "swish",
    drop_rate: float = 0.0,
    name: str = "",
    filters_in: int = 32,
    filters_out: int = 16,
    kernel_size: int = 3,
    strides: int = 1,
    expand_ratio: int = 1,
    se_ratio: float = 0.0,
    id_skip: bool = True,
) -> Any:
    """An inverted residual block with squeeze-and-excitation (MBConv), Keras's ``block``."""
    filters = filters_in * expand_ratio
    if expand_ratio != 1:
        x = _bn_activation(_pointwise_conv(inputs, filters, f"{name}expand_conv"), activation, f"{name}expand_")
    else:
        x = inputs
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=f"{name}dwconv_pad")(x)
        conv_pad = "valid"
    else:
        conv_pad = "same"
    x = layers.DepthwiseConv2D(
        kernel_size, strides=strides, padding=conv_pad, use_bias=False, depthwise_initializer=_conv_init(),
        name=f"{name}dwconv",
    )(x)  # fmt: skip
    x = _bn_activation(x, activation, name)
    if 0 < se_ratio <= 1:
        filters_se = max(1, int(filters_in * se_ratio))
        se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
        se = layers.Reshape((1, 1, filters), name=f"{name}se_reshape")(se)
        se = layers.Conv2D(
            filters_se, 1, padding="same", activation=activation, kernel_initializer=_conv_init(),
            name=f"{name}se_reduce",
        )(se)  # fmt: skip
        se = layers.Conv2D(
            filters, 1, padding="same", activation="sigmoid", kernel_initializer=_conv_init(), name=f"{name}se_expand"
        )(se)
        x = layers.multiply([x, se], name=f"{name}se_excite")
    x = _pointwise_conv(x, filters_out, f"{name}project_conv")
    x = layers.BatchNormalization(axis=3, name=f"{name}project_bn")(x)
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            # stochastic depth: the whole residual branch of an example is dropped
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


# (width, depth, default size, dropout) of B0..B7
_VARIANTS = {
    0: (1.0, 1.0, 224, 0.2), 1: (1.0, 1.1, 240, 0.2), 2: (1.1, 1.2, 260, 0.3), 3: (1.2, 1.4, 300, 0.3),
    4: (1.4, 1.8, 380, 0.4), 5: (1.6, 2.2, 456, 0.4), 6: (1.8, 2.6, 528, 0.5), 7: (2.0, 3.1, 600, 0.5),
}  # fmt: skip


def _variant(
    index: int,
    include_top: bool,
    weights: Any,
    input_tensor: Any,
    input_shape: Any,
    pooling: str | None,
    classes: int,
    classifier_activation: Any,
    name: str,
) -> Model:
    width, depth, size, dropout = _VARIANTS[index]
    return EfficientNet(
        width, depth, size, dropout, name=name, include_top=include_top, weights=weights, input_tensor=input_tensor,
        input_shape=input_shape, pooling=pooling, classes=classes, classifier_activation=classifier_activation,
        builder=f"EfficientNetB{index}",
    )  # fmt: skip


def EfficientNetB0(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "efficientnetb0",
) -> Model:
    """EfficientNetB0 (Keras's ``keras.applications.EfficientNetB0``): 5.3M parameters, 224x224.

    Args:
        include_top: whether to end with pooling, dropout and a ``classes``-way ``Dense``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        input_shape: ``(height, width, channels)``, at least 32x32; pixels in ``[0, 255]``.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name.
    """
    return _variant(0, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def EfficientNetB1(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "efficientnetb1",
) -> Model:
    """EfficientNetB1 (240x240); arguments as :func:`EfficientNetB0`."""
    return _variant(1, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def EfficientNetB2(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "efficientnetb2",
) -> Model:
    """EfficientNetB2 (260x260); arguments as :func:`EfficientNetB0`."""
    return _variant(2, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def EfficientNetB3(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "efficientnetb3",
) -> Model:
    """EfficientNetB3 (300x300); arguments as :func:`EfficientNetB0`."""
    return _variant(3, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def EfficientNetB4(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "efficientnetb4",
) -> Model:
    """EfficientNetB4 (380x380); arguments as :func:`EfficientNetB0`."""
    return _variant(4, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def EfficientNetB5(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "efficientnetb5",
) -> Model:
    """EfficientNetB5 (456x456); arguments as :func:`EfficientNetB0`."""
    return _variant(5, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def EfficientNetB6(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "efficientnetb6",
) -> Model:
    """EfficientNetB6 (528x528); arguments as :func:`EfficientNetB0`."""
    return _variant(6, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def EfficientNetB7(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "efficientnetb7",
) -> Model:
    """EfficientNetB7 (600x600); arguments as :func:`EfficientNetB0`."""
    return _variant(7, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """EfficientNet rescales inside the model: the input is returned unchanged (as Keras does)."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = [
    "EfficientNetB0",
    "EfficientNetB1",
    "EfficientNetB2",
    "EfficientNetB3",
    "EfficientNetB4",
    "EfficientNetB5",
    "EfficientNetB6",
    "EfficientNetB7",
    "decode_predictions",
    "preprocess_input",
]
