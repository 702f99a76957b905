"""``keras.applications.mobilenet``: MobileNet (depthwise separable convolutions, ReLU6).

Keras 3's architecture and names (``conv1``, ``conv_dw_1``, ``conv_pw_1``, ``conv_pad_2``,
``conv_preds``). ``alpha`` scales every layer's width, ``depth_multiplier`` the depthwise
convolutions' outputs. ``preprocess_input`` is Keras's ``"tf"`` mode (pixels to ``[-1, 1]``).

Example:
    >>> model = MobileNet(weights=None, input_shape=(32, 32, 3), alpha=0.25, classes=10)
    >>> model.name, model.count_params()
    ('mobilenet_0.25_32', 221114)
"""

from __future__ import annotations

import warnings
from typing import Any

from unison.keras import layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.models import Model

_IMAGENET_ALPHAS = (0.25, 0.50, 0.75, 1.0)
_IMAGENET_SIZES = (128, 160, 192, 224)
# (pointwise filters, stride) of the depthwise separable blocks 1..13
_BLOCKS = (
    (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1), (512, 1),
    (1024, 2), (1024, 1),
)  # fmt: skip


def MobileNet(
    input_shape: Any = None,
    alpha: float = 1.0,
    depth_multiplier: int = 1,
    dropout: float = 1e-3,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str | None = None,
) -> Model:
    """MobileNet (Keras's ``keras.applications.MobileNet``): 4.3M parameters with the top.

    Args:
        input_shape: ``(height, width, channels)``, at least 32x32 (default ``(224, 224, 3)``).
        alpha: width multiplier (Keras's ImageNet weights exist for 0.25, 0.5, 0.75 and 1.0).
        depth_multiplier: outputs per channel of the depthwise convolutions (1 for ImageNet weights).
        dropout: the dropout rate before the classifier.
        include_top: whether to end with pooling, dropout and a ``classes``-way 1x1 convolution.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name (default ``mobilenet_{alpha}_{rows}``).

    Raises:
        ValueError: for a bad argument (as Keras: ImageNet weights with another ``alpha`` or
            ``depth_multiplier``, a size below 32, an unknown ``pooling``).
    """
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, "MobileNet")
    if input_shape is None and input_tensor is not None:
        input_shape = tuple(input_tensor.shape[1:])
    default_size = 224
    if input_shape is not None and len(input_shape) == 3 and input_shape[0] == input_shape[1]:
        if input_shape[0] in _IMAGENET_SIZES:
            default_size = int(input_shape[0])
    shape = imagenet_utils.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    rows = shape[0]
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError(
                f"If imagenet weights are being loaded, depth multiplier must be 1.  Received depth_multiplier={depth_multiplier}"
            )
        if alpha not in _IMAGENET_ALPHAS:
            raise ValueError(
                "If imagenet weights are being loaded, alpha can be one of`0.25`, `0.50`, `0.75` or `1.0` only.  "
                f"Received alpha={alpha}"
            )
        if rows != shape[1] or rows not in _IMAGENET_SIZES:
            rows = 224
            warnings.warn(
                "`input_shape` is undefined or non-square, or `rows` is not in [128, 160, 192, 224]. "
                "Weights for input shape (224, 224) will be loaded as the default.",
                stacklevel=2,
            )
    img_input = _common.image_input(shape, input_tensor)
    x = layers.Conv2D(int(32 * alpha), 3, padding="same", use_bias=False, strides=(2, 2), name="conv1")(img_input)
    x = layers.BatchNormalization(axis=-1, name="conv1_bn")(x)
    x = layers.ReLU(6.0, name="conv1_relu")(x)
    for block_id, (filters, stride) in enumerate(_BLOCKS, start=1):
        x = _depthwise_conv_block(x, filters, alpha, depth_multiplier, stride, block_id)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        x = layers.Activation(classifier_activation, name="predictions")(x)
    else:
        x = _common.classifier_top(x, False, pooling, classes, classifier_activation, None, None)
    name = name if name is not None else f"mobilenet_{alpha:0.2f}_{rows}"
    alpha_text = {1.0: "1_0", 0.75: "7_5", 0.5: "5_0"}.get(alpha, "2_5")
    file = f"mobilenet_{alpha_text}_{rows}_tf{'' if include_top else '_no_top'}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, "MobileNet")


def _depthwise_conv_block(x: Any, filters: int, alpha: float, depth_multiplier: int, stride: int, block_id: int) -> Any:
    """Depthwise 3x3 (stride 2 after explicit padding), then pointwise 1x1, each with BN and ReLU6."""
    if stride == 1:
        padding = "same"
    else:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
        padding = "valid"
    x = layers.DepthwiseConv2D(
        (3, 3), padding=padding, depth_multiplier=depth_multiplier, strides=stride, use_bias=False,
        name=f"conv_dw_{block_id}",
    )(x)  # fmt: skip
    x = layers.BatchNormalization(axis=-1, name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(filters * alpha), (1, 1), padding="same", use_bias=False, name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=-1, name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Images in ``[0, 255]`` to MobileNet's inputs: scaled to ``[-1, 1]`` ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["MobileNet", "decode_predictions", "preprocess_input"]
