"""``keras.applications.nasnet``: NASNetMobile and NASNetLarge (cells found by architecture search).

Keras 3's architecture and names (``stem_conv1``, ``reduction_conv_1_stem_1``,
``separable_conv_1_normal_left1_0``, ``adjust_conv_projection_5``, ``normal_concat_3``): a stem, two
reduction cells, then three groups of normal cells separated by reduction cells; each cell mixes
separable convolutions and poolings of its input and of the previous cell's output (``p``),
adjusted to the cell's size and width. ``preprocess_input`` is Keras's ``"tf"`` mode.

Example:
    >>> model = NASNetMobile(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.name, model.count_params()
    ('nasnet_mobile', 4280286)
"""

from __future__ import annotations

from typing import Any

from unison.keras import layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.models import Model


def _bn(x: Any, name: str | None = None) -> Any:
    return layers.BatchNormalization(axis=-1, momentum=0.9997, epsilon=1e-3, name=name)(x)


def _conv1x1(x: Any, filters: int, name: str) -> Any:
    return layers.Conv2D(
        filters, (1, 1), strides=(1, 1), padding="same", use_bias=False, kernel_initializer="he_normal", name=name
    )(x)


def _separable_conv_block(ip: Any, filters: int, kernel_size: int = 3, strides: int = 1, block_id: str = "") -> Any:
    """ReLU, separable convolution (strided after explicit padding), BN, ReLU, separable convolution, BN."""
    x = layers.Activation("relu")(ip)
    if strides == 2:
        pad = imagenet_utils.correct_pad(x, kernel_size)
        x = layers.ZeroPadding2D(padding=pad, name=f"separable_conv_1_pad_{block_id}")(x)
    x = layers.SeparableConv2D(
        filters, kernel_size, strides=strides, padding="valid" if strides == 2 else "same", use_bias=False,
        name=f"separable_conv_1_{block_id}",
    )(x)  # fmt: skip
    x = _bn(x, f"separable_conv_1_bn_{block_id}")
    x = layers.Activation("relu")(x)
    x = layers.SeparableConv2D(
        filters, kernel_size, padding="same", use_bias=False, name=f"separable_conv_2_{block_id}"
    )(x)
    return _bn(x, f"separable_conv_2_bn_{block_id}")


def _adjust_block(p: Any, ip: Any, filters: int, block_id: str) -> Any:
    """The previous cell's output at this cell's size (a factorised stride-2 reduction) and width."""
    if p is None:
        return ip
    if p.shape[-2] != ip.shape[-2]:
        p = layers.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
        p1 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_1_{block_id}")(p)
        p1 = _conv1x1(p1, filters // 2, f"adjust_conv_1_{block_id}")
        # the second half sees the input shifted by one pixel
        p2 = layers.ZeroPadding2D(padding=((0, 1), (0, 1)))(p)
        p2 = layers.Cropping2D(cropping=((1, 0), (1, 0)))(p2)
        p2 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_2_{block_id}")(p2)
        p2 = _conv1x1(p2, filters // 2, f"adjust_conv_2_{block_id}")
        p = layers.concatenate([p1, p2], axis=-1)
        return _bn(p, f"adjust_bn_{block_id}")
    if p.shape[-1] != filters:
        p = layers.Activation("relu")(p)
        p = _conv1x1(p, filters, f"adjust_conv_projection_{block_id}")
        return _bn(p, f"adjust_bn_{block_id}")
    return p


def _normal_a_cell(ip: Any, p: Any, filters: int, block_id: str) -> tuple[Any, Any]:
    """A normal cell: five pairs of operations on the input ``h`` and the adjusted ``p``, concatenated."""
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _bn(_conv1x1(h, filters, f"normal_conv_1_{block_id}"), f"normal_bn_1_{block_id}")
    x1_1 = _separable_conv_block(h, filters, 5, block_id=f"normal_left1_{block_id}")
    x1_2 = _separable_conv_block(p, filters, block_id=f"normal_right1_{block_id}")
    x1 = layers.add([x1_1, x1_2], name=f"normal_add_1_{block_id}")
    x2_1 = _separable_conv_block(p, filters, 5, block_id=f"normal_left2_{block_id}")
    x2_2 = _separable_conv_block(p, filters, 3, block_id=f"normal_right2_{block_id}")
    x2 = layers.add([x2_1, x2_2], name=f"normal_add_2_{block_id}")
    x3 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"normal_left3_{block_id}")(h)
    x3 = layers.add([x3, p], name=f"normal_add_3_{block_id}")
    x4_1 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"normal_left4_{block_id}")(p)
    x4_2 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"normal_right4_{block_id}")(p)
    x4 = layers.add([x4_1, x4_2], name=f"normal_add_4_{block_id}")
    x5 = _separable_conv_block(h, filters, block_id=f"normal_left5_{block_id}")
    x5 = layers.add([x5, h], name=f"normal_add_5_{block_id}")
    x = layers.concatenate([p, x1, x2, x3, x4, x5], axis=-1, name=f"normal_concat_{block_id}")
    return x, ip


def _reduction_a_cell(ip: Any, p: Any, filters: int, block_id: str) -> tuple[Any, Any]:
    """A reduction cell: halves the size (stride-2 separable convolutions and poolings)."""
    p = _adjust_block(p, ip, filters, block_id)
    h = layers.Activation("relu")(ip)
    h = _bn(_conv1x1(h, filters, f"reduction_conv_1_{block_id}"), f"reduction_bn_1_{block_id}")
    h3 = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(h, 3), name=f"reduction_pad_1_{block_id}")(h)
    x1_1 = _separable_conv_block(h, filters, 5, strides=2, block_id=f"reduction_left1_{block_id}")
    x1_2 = _separable_conv_block(p, filters, 7, strides=2, block_id=f"reduction_right1_{block_id}")
    x1 = layers.add([x1_1, x1_2], name=f"reduction_add_1_{block_id}")
    x2_1 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_left2_{block_id}")(h3)
    x2_2 = _separable_conv_block(p, filters, 7, strides=2, block_id=f"reduction_right2_{block_id}")
    x2 = layers.add([x2_1, x2_2], name=f"reduction_add_2_{block_id}")
    x3_1 = layers.AveragePooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_left3_{block_id}")(h3)
    x3_2 = _separable_conv_block(p, filters, 5, strides=2, block_id=f"reduction_right3_{block_id}")
    x3 = layers.add([x3_1, x3_2], name=f"reduction_add3_{block_id}")
    x4 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"reduction_left4_{block_id}")(x1)
    x4 = layers.add([x2, x4])
    x5_1 = _separable_conv_block(x1, filters, 3, block_id=f"reduction_left4_{block_id}")
    x5_2 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_right5_{block_id}")(h3)
    x5 = layers.add([x5_1, x5_2], name=f"reduction_add4_{block_id}")
    x = layers.concatenate([x2, x3, x4, x5], axis=-1, name=f"reduction_concat_{block_id}")
    return x, ip


def NASNet(
    input_shape: Any = None,
    penultimate_filters: int = 4032,
    num_blocks: int = 6,
    stem_block_filters: int = 96,
    skip_reduction: bool = True,
    filter_multiplier: int = 2,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    default_size: int | None = None,
    classifier_activation: Any = "softmax",
    name: str = "NASNet",
    builder: str = "NASNet",
    imagenet_file: str | None = None,
) -> Model:
    """A NASNet of ``num_blocks`` normal cells per group, ``penultimate_filters`` wide at the end."""
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    if penultimate_filters % (24 * filter_multiplier**2) != 0:
        raise ValueError(
            "For NASNet-A models, the `penultimate_filters` must be a multiple of 24 * (`filter_multiplier` ** 2). "
            f"Current value: {penultimate_filters}"
        )
    if input_shape is None and input_tensor is not None:
        input_shape = tuple(input_tensor.shape[1:])
    size = default_size if default_size is not None else 331
    shape = imagenet_utils.obtain_input_shape(input_shape, size, 32, include_top, weights)
    img_input = _common.image_input(shape, input_tensor)
    filters = penultimate_filters // 24
    x = layers.Conv2D(
        stem_block_filters, (3, 3), strides=(2, 2), padding="valid", use_bias=False, kernel_initializer="he_normal",
        name="stem_conv1",
    )(img_input)  # fmt: skip
    x = _bn(x, "stem_bn1")
    p = None
    x, p = _reduction_a_cell(x, p, filters // (filter_multiplier**2), block_id="stem_1")
    x, p = _reduction_a_cell(x, p, filters // filter_multiplier, block_id="stem_2")
    for i in range(num_blocks):
        x, p = _normal_a_cell(x, p, filters, block_id=f"{i}")
    x, p0 = _reduction_a_cell(x, p, filters * filter_multiplier, block_id=f"reduce_{num_blocks}")
    p = p0 if not skip_reduction else p
    for i in range(num_blocks):
        x, p = _normal_a_cell(x, p, filters * filter_multiplier, block_id=f"{num_blocks + i + 1}")
    x, p0 = _reduction_a_cell(x, p, filters * filter_multiplier**2, block_id=f"reduce_{2 * num_blocks}")
    p = p0 if not skip_reduction else p
    for i in range(num_blocks):
        x, p = _normal_a_cell(x, p, filters * filter_multiplier**2, block_id=f"{2 * num_blocks + i + 1}")
    x = layers.Activation("relu")(x)
    x = _common.classifier_top(x, include_top, pooling, classes, classifier_activation, None, None)
    return _common.finish(img_input, input_tensor, x, name, weights, imagenet_file, builder)


def NASNetMobile(
    input_shape: Any = None,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "nasnet_mobile",
) -> Model:
    """NASNetMobile (Keras's ``keras.applications.NASNetMobile``): 5.3M parameters, 224x224.

    Args:
        input_shape: ``(height, width, channels)``, at least 32x32 (224x224 with ImageNet's top).
        include_top: whether to end with global average pooling and a ``classes``-way ``Dense``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name.
    """
    file = "NASNet-mobile.h5" if include_top else "NASNet-mobile-no-top.h5"
    return NASNet(
        input_shape, penultimate_filters=1056, num_blocks=4, stem_block_filters=32, skip_reduction=False,
        filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor, pooling=pooling,
        classes=classes, default_size=224, classifier_activation=classifier_activation, name=name,
        builder="NASNetMobile", imagenet_file=file,
    )  # fmt: skip


def NASNetLarge(
    input_shape: Any = None,
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "nasnet_large",
) -> Model:
    """NASNetLarge (Keras's ``keras.applications.NASNetLarge``): 88.9M parameters, 331x331;
    arguments as :func:`NASNetMobile`."""
    file = "NASNet-large.h5" if include_top else "NASNet-large-no-top.h5"
    return NASNet(
        input_shape, penultimate_filters=4032, num_blocks=6, stem_block_filters=96, skip_reduction=True,
        filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor, pooling=pooling,
        classes=classes, default_size=331, classifier_activation=classifier_activation, name=name,
        builder="NASNetLarge", imagenet_file=file,
    )  # fmt: skip


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Images in ``[0, 255]`` to NASNet's inputs: scaled to ``[-1, 1]`` ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["NASNetLarge", "NASNetMobile", "decode_predictions", "preprocess_input"]
