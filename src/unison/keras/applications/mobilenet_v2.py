"""``keras.applications.mobilenet_v2``: MobileNetV2 (inverted residual blocks, ReLU6).

Keras 3's architecture and names (``Conv1``, ``block_1_expand``, ``expanded_conv_depthwise``,
``Conv_1``). ``alpha`` scales every layer's width. ``preprocess_input`` is Keras's ``"tf"`` mode.

Example:
    >>> model = MobileNetV2(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.count_params()
    2270794
"""

from __future__ import annotations

import warnings
from typing import Any

from unison.keras import layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.models import Model

_IMAGENET_ALPHAS = (0.35, 0.50, 0.75, 1.0, 1.3, 1.4)
_IMAGENET_SIZES = (96, 128, 160, 192, 224)
# (filters, stride, expansion) of blocks 0..16
_BLOCKS = (
    (16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6), (64, 1, 6),
    (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6), (320, 1, 6),
)  # fmt: skip


def _make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """``v`` rounded to a multiple of ``divisor``, never more than 10% below ``v`` (Keras's rule)."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _default_size(input_shape: Any, input_tensor: Any) -> int:
    shape = tuple(input_shape) if input_shape is not None else None
    if shape is None and input_tensor is not None:
        shape = tuple(input_tensor.shape[1:])
    if shape is not None and len(shape) == 3 and shape[0] == shape[1] and shape[0] in _IMAGENET_SIZES:
        return int(shape[0])
    return 224


def MobileNetV2(
    input_shape: Any = None,
    alpha: float = 1.0,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str | None = None,
) -> Model:
    """MobileNetV2 (Keras's ``keras.applications.MobileNetV2``): 3.5M parameters with the top.

    Args:
        input_shape: ``(height, width, channels)``, at least 32x32 (default ``(224, 224, 3)``).
        alpha: width multiplier (Keras's ImageNet weights exist for 0.35, 0.5, 0.75, 1.0, 1.3, 1.4).
        include_top: whether to end with global average pooling and a ``classes``-way ``Dense``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name (default ``mobilenetv2_{alpha}_{rows}``).
    """
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, "MobileNetV2")
    if input_shape is not None and input_tensor is not None and tuple(input_tensor.shape[1:]) != tuple(input_shape):
        raise ValueError(
            f"input_shape and input_tensor disagree: input_tensor.shape={input_tensor.shape}, "
            f"input_shape={input_shape}. Pass one of them."
        )
    default_size = _default_size(input_shape, input_tensor)
    if input_shape is None and input_tensor is not None:
        input_shape = tuple(input_tensor.shape[1:])
    shape = imagenet_utils.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    rows = shape[0]
    if weights == "imagenet":
        if alpha not in _IMAGENET_ALPHAS:
            raise ValueError(
                "If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, `1.0`, `1.3` "
                f"or `1.4` only; Received `alpha={alpha}`"
            )
        if rows != shape[1] or rows not in _IMAGENET_SIZES:
            rows = 224
            warnings.warn(
                "`input_shape` is undefined or non-square, or `rows` is not in [96, 128, 160, 192, 224]. "
                "Weights for input shape (224, 224) will be loaded as the default.",
                stacklevel=2,
            )
    img_input = _common.image_input(shape, input_tensor)
    x = layers.Conv2D(
        _make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False, name="Conv1"
    )(img_input)
    x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name="bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = _inverted_res_block(x, expansion=expansion, stride=stride, alpha=alpha, filters=filters, block_id=block_id)
    last_filters = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name="Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = _common.classifier_top(x, include_top, pooling, classes, classifier_activation, None, None)
    name = name if name is not None else f"mobilenetv2_{alpha:0.2f}_{rows}"
    top = "" if include_top else "_no_top"
    file = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}{top}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, "MobileNetV2")


def _inverted_res_block(x: Any, expansion: int, stride: int, alpha: float, filters: int, block_id: int) -> Any:
    """Expand (1x1), depthwise 3x3, project (1x1, linear); residual when the shape is kept."""
    inputs = x
    in_channels = int(x.shape[-1])
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(
            expansion * in_channels, kernel_size=1, padding="same", use_bias=False, name=f"{prefix}expand"
        )(x)
        x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=f"{prefix}expand_BN")(x)
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(
        kernel_size=3,
        strides=stride,
        use_bias=False,
        padding="same" if stride == 1 else "valid",
        name=f"{prefix}depthwise",
    )(x)
    x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=f"{prefix}depthwise_BN")(x)
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, name=f"{prefix}project")(x)
    x = layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=f"{prefix}project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Images in ``[0, 255]`` to MobileNetV2's inputs: scaled to ``[-1, 1]`` ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["MobileNetV2", "decode_predictions", "preprocess_input"]
