"""``keras.applications.mobilenet_v3``: MobileNetV3Small and MobileNetV3Large.

Keras 3's architecture and names (``conv``, ``expanded_conv_3_expand``,
``expanded_conv_3_squeeze_excite_conv``, ``conv_1``, ``conv_2``, ``logits``): inverted residual
blocks with squeeze-and-excitation and hard-swish. With ``include_preprocessing=True`` (the
default) the model rescales pixels in ``[0, 255]`` itself, so ``preprocess_input`` returns its
input unchanged, as in Keras. ``minimalistic=True`` drops squeeze-and-excitation, hard-swish and
5x5 kernels. Keras exposes the builders as ``keras.applications.MobileNetV3Small`` and
``MobileNetV3Large``; this module holds them and the two functions Keras's module has.

Example:
    >>> model = MobileNetV3Small(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.name, model.count_params()
    ('MobileNetV3Small', 1540218)
"""

from __future__ import annotations

import warnings
from typing import Any

from unison.keras import layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.applications.mobilenet_v2 import _make_divisible
from unison.keras.models import Model

# (expansion, filters, kernel size, stride, squeeze-excite ratio, activation) of each block;
# "hs" is hard-swish. minimalistic=True turns kernels to 3, activations to ReLU, drops the SE.
_SMALL = (
    (1, 16, 3, 2, 0.25, "relu"), (72.0 / 16, 24, 3, 2, None, "relu"), (88.0 / 24, 24, 3, 1, None, "relu"),
    (4, 40, 5, 2, 0.25, "hs"), (6, 40, 5, 1, 0.25, "hs"), (6, 40, 5, 1, 0.25, "hs"), (3, 48, 5, 1, 0.25, "hs"),
    (3, 48, 5, 1, 0.25, "hs"), (6, 96, 5, 2, 0.25, "hs"), (6, 96, 5, 1, 0.25, "hs"), (6, 96, 5, 1, 0.25, "hs"),
)  # fmt: skip
_LARGE = (
    (1, 16, 3, 1, None, "relu"), (4, 24, 3, 2, None, "relu"), (3, 24, 3, 1, None, "relu"),
    (3, 40, 5, 2, 0.25, "relu"), (3, 40, 5, 1, 0.25, "relu"), (3, 40, 5, 1, 0.25, "relu"),
    (6, 80, 3, 2, None, "hs"), (2.5, 80, 3, 1, None, "hs"), (2.3, 80, 3, 1, None, "hs"), (2.3, 80, 3, 1, None, "hs"),
    (6, 112, 3, 1, 0.25, "hs"), (6, 112, 3, 1, 0.25, "hs"), (6, 160, 5, 2, 0.25, "hs"), (6, 160, 5, 1, 0.25, "hs"),
    (6, 160, 5, 1, 0.25, "hs"),
)  # fmt: skip


def _depth(v: float) -> int:
    return _make_divisible(v, 8)


def _activate(x: Any, activation: str) -> Any:
    if activation == "relu":
        return layers.ReLU()(x)
    return layers.Activation("hard_swish")(x)


def _bn(x: Any, name: str) -> Any:
    return layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)(x)


def _se_block(inputs: Any, filters: int, se_ratio: float, prefix: str) -> Any:
    """Squeeze-and-excitation: pooled channels through a bottleneck, a hard sigmoid gates the input."""
    x = layers.GlobalAveragePooling2D(keepdims=True, name=f"{prefix}squeeze_excite_avg_pool")(inputs)
    x = layers.Conv2D(_depth(filters * se_ratio), 1, padding="same", name=f"{prefix}squeeze_excite_conv")(x)
    x = layers.ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = layers.Conv2D(filters, 1, padding="same", name=f"{prefix}squeeze_excite_conv_1")(x)
    x = layers.Activation("hard_sigmoid")(x)  # relu6(x + 3) / 6, as Keras's
    return layers.Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, x])


def _inverted_res_block(
    x: Any, expansion: float, filters: int, kernel_size: int, stride: int, se_ratio: float | None, activation: str,
    block_id: int,
) -> Any:  # fmt: skip
    shortcut = x
    in_channels = int(x.shape[-1])
    prefix = "expanded_conv_"
    if block_id:
        prefix = f"expanded_conv_{block_id}_"
        x = layers.Conv2D(_depth(in_channels * expansion), 1, padding="same", use_bias=False, name=f"{prefix}expand")(x)
        x = _activate(_bn(x, f"{prefix}expand_bn"), activation)
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=f"{prefix}depthwise_pad")(x)
    x = layers.DepthwiseConv2D(
        kernel_size, strides=stride, padding="same" if stride == 1 else "valid", use_bias=False,
        name=f"{prefix}depthwise",
    )(x)  # fmt: skip
    x = _activate(_bn(x, f"{prefix}depthwise_bn"), activation)
    if se_ratio:
        x = _se_block(x, _depth(in_channels * expansion), se_ratio, prefix)
    x = layers.Conv2D(filters, 1, padding="same", use_bias=False, name=f"{prefix}project")(x)
    x = _bn(x, f"{prefix}project_bn")
    if stride == 1 and in_channels == filters:
        x = layers.Add(name=f"{prefix}add")([shortcut, x])
    return x


def MobileNetV3(
    stack: tuple[tuple[Any, ...], ...],
    last_point_ch: int,
    input_shape: Any = None,
    alpha: float = 1.0,
    model_type: str = "large",
    minimalistic: bool = False,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    classes: int = 1000,
    pooling: str | None = None,
    dropout_rate: float = 0.2,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "MobileNetV3",
    builder: str = "MobileNetV3",
) -> Model:
    """A MobileNetV3 of the given block ``stack`` (see :func:`MobileNetV3Small` for the arguments)."""
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    if input_shape is None and input_tensor is not None:
        input_shape = tuple(input_tensor.shape[1:])
    if input_shape is None:
        input_shape = (None, None, 3)
    if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 3:
        raise ValueError(f"`input_shape` must be a tuple of three integers. Received: input_shape={input_shape!r}")
    rows, cols = input_shape[0], input_shape[1]
    if (rows is not None and rows < 32) or (cols is not None and cols < 32):
        raise ValueError(f"Input size must be at least 32x32; Received `input_shape={tuple(input_shape)}`")
    if weights == "imagenet":
        if (not minimalistic and alpha not in (0.75, 1.0)) or (minimalistic and alpha != 1.0):
            raise ValueError(
                "If imagenet weights are being loaded, alpha can be one of `0.75`, `1.0` for non minimalistic "
                "or `1.0` for minimalistic only."
            )
        if rows != cols or rows != 224:
            warnings.warn(
                "`input_shape` is undefined or non-square, or `rows` is not 224. Weights for input shape "
                "(224, 224) will be loaded as the default.",
                stacklevel=3,
            )
    img_input = _common.image_input(tuple(input_shape), input_tensor)
    kernel, activation, se_ratio = 3, "relu", None
    if not minimalistic:
        kernel, activation, se_ratio = 5, "hs", 0.25
    x = img_input
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(x)
    x = layers.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False, name="conv")(x)
    x = _activate(_bn(x, "conv_bn"), activation)
    for block_id, (expansion, filters, size, stride, ratio, act) in enumerate(stack):
        if minimalistic:
            size, ratio, act = 3, None, "relu"
        else:
            size, ratio, act = (kernel if size == 5 else size), ratio and se_ratio, act
        x = _inverted_res_block(x, expansion, _depth(filters * alpha), size, stride, ratio, act, block_id)
    last_conv_ch = _depth(int(x.shape[-1]) * 6)
    if alpha > 1.0:
        last_point_ch = _depth(last_point_ch * alpha)
    x = layers.Conv2D(last_conv_ch, kernel_size=1, padding="same", use_bias=False, name="conv_1")(x)
    x = _activate(_bn(x, "conv_1_bn"), activation)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Conv2D(last_point_ch, kernel_size=1, padding="same", use_bias=True, name="conv_2")(x)
        x = _activate(x, activation)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate)(x)
        x = layers.Conv2D(classes, kernel_size=1, padding="same", name="logits")(x)
        x = layers.Flatten()(x)
        x = layers.Activation(classifier_activation, name="predictions")(x)
    else:
        x = _common.classifier_top(x, False, pooling, classes, classifier_activation)
    kind = f"{model_type}{'_minimalistic' if minimalistic else ''}"
    file = f"weights_mobilenet_v3_{kind}_224_{float(alpha)}_float{'' if include_top else '_no_top_v2'}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, builder)


def MobileNetV3Small(
    input_shape: Any = None,
    alpha: float = 1.0,
    minimalistic: bool = False,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    classes: int = 1000,
    pooling: str | None = None,
    dropout_rate: float = 0.2,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "MobileNetV3Small",
) -> Model:
    """MobileNetV3Small (Keras's ``keras.applications.MobileNetV3Small``): 2.6M parameters with the top.

    Args:
        input_shape: ``(height, width, channels)``, at least 32x32 (default ``(None, None, 3)``).
        alpha: width multiplier (Keras's ImageNet weights exist for 0.75 and 1.0).
        minimalistic: without squeeze-and-excitation, hard-swish and 5x5 kernels.
        include_top: whether to end with pooling, two 1x1 convolutions and the ``predictions``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        classes: number of classes of the top.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        dropout_rate: the dropout rate before the logits.
        classifier_activation: the top's activation (``None`` for logits).
        include_preprocessing: whether the model rescales pixels in ``[0, 255]`` to ``[-1, 1]``.
        name: the model's name.
    """
    return MobileNetV3(
        _SMALL, 1024, input_shape, alpha, "small", minimalistic, include_top, weights, input_tensor, classes,
        pooling, dropout_rate, classifier_activation, include_preprocessing, name, "MobileNetV3Small",
    )  # fmt: skip


def MobileNetV3Large(
    input_shape: Any = None,
    alpha: float = 1.0,
    minimalistic: bool = False,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    classes: int = 1000,
    pooling: str | None = None,
    dropout_rate: float = 0.2,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    name: str = "MobileNetV3Large",
) -> Model:
    """MobileNetV3Large (Keras's ``keras.applications.MobileNetV3Large``): 5.5M parameters with the
    top; arguments as :func:`MobileNetV3Small`."""
    return MobileNetV3(
        _LARGE, 1280, input_shape, alpha, "large", minimalistic, include_top, weights, input_tensor, classes,
        pooling, dropout_rate, classifier_activation, include_preprocessing, name, "MobileNetV3Large",
    )  # fmt: skip


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """MobileNetV3 rescales inside the model: the input is returned unchanged (as Keras does)."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["decode_predictions", "preprocess_input"]
