"""``keras.applications.resnet_rs`` (Keras 2, ``tf_keras``): ResNetRS50 to ResNetRS420.

Keras 2's architecture and names (``stem_1_stem_conv_1``, its number counting the stems built, ``BlockGroup2__block_0__conv_1``,
``BlockGroup3__block_0__projection_conv``, ``..._se_se_reduce``): ResNet-D bottleneck blocks with
squeeze-and-excitation, a 3-convolution stem, average-pooled projections, batch normalisation
with momentum 0 and epsilon 1e-5. With ``include_preprocessing=True`` (the default) the model
rescales and normalises pixels in ``[0, 255]`` itself, so ``preprocess_input`` returns its input
unchanged, as in Keras 2. Keras 3 has no ResNetRS; unison offers it to both.

Example:
    >>> model = ResNetRS50(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.name, model.count_params()
    ('resnet-rs-50', 33716778)
"""

from __future__ import annotations

import itertools
from typing import Any

from unison.keras import initializers, layers
from unison.keras.applications import _blocks, _common, imagenet_utils
from unison.keras.models import Model

# depth -> (filters, repeats) of the four block groups, default size, drop-connect and dropout rates
_VARIANTS = {
    50: (((64, 3), (128, 4), (256, 6), (512, 3)), 160, 0.0, 0.25),
    101: (((64, 3), (128, 4), (256, 23), (512, 3)), 192, 0.0, 0.25),
    152: (((64, 3), (128, 8), (256, 36), (512, 3)), 224, 0.0, 0.25),
    200: (((64, 3), (128, 24), (256, 36), (512, 3)), 256, 0.1, 0.25),
    270: (((64, 4), (128, 29), (256, 53), (512, 4)), 256, 0.1, 0.25),
    350: (((64, 4), (128, 36), (256, 72), (512, 4)), 256, 0.1, 0.4),
    420: (((64, 4), (128, 44), (256, 87), (512, 4)), 320, 0.1, 0.4),
}
_MEAN = (0.485, 0.456, 0.406)
_VARIANCE = (0.229**2, 0.224**2, 0.225**2)
_BN_MOMENTUM, _BN_EPSILON = 0.0, 1e-5
_STEMS = itertools.count(1)  # Keras 2 names each stem by a process-wide counter ("stem_1_stem_conv_1")


def _conv_init() -> Any:
    return initializers.VarianceScaling(scale=2.0, mode="fan_out", distribution="truncated_normal")


def _conv_fixed_padding(x: Any, filters: int, kernel_size: int, strides: int, name: str) -> Any:
    """A bias-free convolution; strided ones pad explicitly (by the kernel, not by the input size)."""
    if strides > 1:
        total = kernel_size - 1
        x = layers.ZeroPadding2D(padding=((total // 2, total - total // 2),) * 2)(x)
    return layers.Conv2D(
        filters, kernel_size, strides=strides, padding="same" if strides == 1 else "valid", use_bias=False,
        kernel_initializer=_conv_init(), name=name,
    )(x)  # fmt: skip


def _bn(x: Any, name: str) -> Any:
    return layers.BatchNormalization(axis=3, momentum=_BN_MOMENTUM, epsilon=_BN_EPSILON, name=name)(x)


def _se(inputs: Any, in_filters: int, se_ratio: float, name: str) -> Any:
    """Squeeze-and-excitation on a bottleneck's ``4 * in_filters`` outputs."""
    x = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(inputs)
    x = layers.Reshape((1, 1, int(x.shape[-1])), name=f"{name}se_reshape")(x)
    x = layers.Conv2D(
        max(1, int(in_filters * 4 * se_ratio)), 1, padding="same", activation="relu", kernel_initializer=_conv_init(),
        name=f"{name}se_reduce",
    )(x)  # fmt: skip
    x = layers.Conv2D(
        4 * in_filters, 1, padding="same", activation="sigmoid", kernel_initializer=_conv_init(),
        name=f"{name}se_expand",
    )(x)  # fmt: skip
    return layers.multiply([inputs, x], name=f"{name}se_excite")


def _bottleneck(
    inputs: Any, filters: int, strides: int, use_projection: bool, se_ratio: float, survival: float, name: str
) -> Any:
    """1x1, 3x3 (strided), 1x1 (4x wider) with SE; the shortcut is average-pooled and projected."""
    shortcut = inputs
    if use_projection:
        if strides == 2:
            shortcut = layers.AveragePooling2D(2, strides=2, padding="same", name=f"{name}_projection_pooling")(inputs)
            shortcut = _conv_fixed_padding(shortcut, filters * 4, 1, 1, f"{name}_projection_conv")
        else:
            shortcut = _conv_fixed_padding(inputs, filters * 4, 1, strides, f"{name}_projection_conv")
        shortcut = _bn(shortcut, f"{name}_projection_batch_norm")
    x = _conv_fixed_padding(inputs, filters, 1, 1, f"{name}_conv_1")
    x = layers.Activation("relu", name=f"{name}_act_1")(_bn(x, f"{name}batch_norm_1"))  # Keras 2's "_" less
    x = _conv_fixed_padding(x, filters, 3, strides, f"{name}_conv_2")
    x = layers.Activation("relu", name=f"{name}_act_2")(_bn(x, f"{name}_batch_norm_2"))
    x = _bn(_conv_fixed_padding(x, filters * 4, 1, 1, f"{name}_conv_3"), f"{name}_batch_norm_3")
    if 0 < se_ratio < 1:
        x = _se(x, filters, se_ratio, f"{name}_se_")
    if survival:
        x = layers.Dropout(survival, noise_shape=(None, 1, 1, 1), name=f"{name}_drop")(x)
    x = layers.Add()([x, shortcut])
    return layers.Activation("relu", name=f"{name}_output_act")(x)


def ResNetRS(
    depth: int,
    include_top: bool = True,
    weights: Any = "imagenet",
    classes: int = 1000,
    input_shape: Any = None,
    input_tensor: Any = None,
    pooling: str | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
    se_ratio: float = 0.25,
) -> Model:
    """The ResNetRS of ``depth`` (50, 101, 152, 200, 270, 350 or 420); see :func:`ResNetRS50`."""
    groups, default_size, drop_connect_rate, dropout_rate = _VARIANTS[depth]
    builder = f"ResNetRS{depth}"
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    shape = imagenet_utils.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    img_input = _common.image_input(shape, input_tensor)
    x = img_input
    if include_preprocessing and int(x.shape[-1]) == 3:
        x = layers.Rescaling(scale=1.0 / 255)(x)
        x = _blocks.FixedNormalization(_MEAN, _VARIANCE)(x)
    stem = f"stem_{next(_STEMS)}"
    for k, (filters, strides) in enumerate(((32, 2), (32, 1), (64, 1), (64, 2)), start=1):
        x = _conv_fixed_padding(x, filters, 3, strides, f"{stem}_stem_conv_{k}")
        x = layers.Activation("relu", name=f"{stem}_stem_act_{k}")(_bn(x, f"{stem}_stem_batch_norm_{k}"))
    for i, (filters, repeats) in enumerate(groups):
        survival = drop_connect_rate * (i + 2) / (len(groups) + 1)
        strides = 1 if i == 0 else 2
        for j in range(repeats):
            x = _bottleneck(
                x, filters, strides if j == 0 else 1, j == 0, se_ratio, survival, f"BlockGroup{i + 2}__block_{j}_"
            )
    x = _common.classifier_top(x, include_top, pooling, classes, classifier_activation, dropout=dropout_rate)
    file = f"resnet-rs-{depth}-i{default_size}{'' if include_top else '_notop'}.h5"
    return _common.finish(img_input, input_tensor, x, f"resnet-rs-{depth}", weights, file, builder)


def ResNetRS50(
    include_top: bool = True,
    weights: Any = "imagenet",
    classes: int = 1000,
    input_shape: Any = None,
    input_tensor: Any = None,
    pooling: str | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
) -> Model:
    """ResNetRS50 (Keras 2's ``tf_keras.applications.ResNetRS50``): 35.7M parameters.

    Args:
        include_top: whether to end with pooling, dropout and a ``classes``-way ``Dense``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        classes: number of classes of the top.
        input_shape: ``(height, width, channels)``, at least 32x32; pixels in ``[0, 255]``.
        input_tensor: a Keras tensor to build on.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classifier_activation: the top's activation (``None`` for logits).
        include_preprocessing: whether the model rescales and normalises its inputs itself.
    """
    return ResNetRS(50, include_top, weights, classes, input_shape, input_tensor, pooling, classifier_activation,
                    include_preprocessing)  # fmt: skip


def ResNetRS101(
    include_top: bool = True,
    weights: Any = "imagenet",
    classes: int = 1000,
    input_shape: Any = None,
    input_tensor: Any = None,
    pooling: str | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
) -> Model:
    """ResNetRS101; arguments as :func:`ResNetRS50`."""
    return ResNetRS(101, include_top, weights, classes, input_shape, input_tensor, pooling, classifier_activation,
                    include_preprocessing)  # fmt: skip


def ResNetRS152(
    include_top: bool = True,
    weights: Any = "imagenet",
    classes: int = 1000,
    input_shape: Any = None,
    input_tensor: Any = None,
    pooling: str | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
) -> Model:
    """ResNetRS152; arguments as :func:`ResNetRS50`."""
    return ResNetRS(152, include_top, weights, classes, input_shape, input_tensor, pooling, classifier_activation,
                    include_preprocessing)  # fmt: skip


def ResNetRS200(
    include_top: bool = True,
    weights: Any = "imagenet",
    classes: int = 1000,
    input_shape: Any = None,
    input_tensor: Any = None,
    pooling: str | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
) -> Model:
    """ResNetRS200 (stochastic depth 0.1 while training); arguments as :func:`ResNetRS50`."""
    return ResNetRS(200, include_top, weights, classes, input_shape, input_tensor, pooling, classifier_activation,
                    include_preprocessing)  # fmt: skip


def ResNetRS270(
    include_top: bool = True,
    weights: Any = "imagenet",
    classes: int = 1000,
    input_shape: Any = None,
    input_tensor: Any = None,
    pooling: str | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
) -> Model:
    """ResNetRS270; arguments as :func:`ResNetRS50`."""
    return ResNetRS(270, include_top, weights, classes, input_shape, input_tensor, pooling, classifier_activation,
                    include_preprocessing)  # fmt: skip


def ResNetRS350(
    include_top: bool = True,
    weights: Any = "imagenet",
    classes: int = 1000,
    input_shape: Any = None,
    input_tensor: Any = None,
    pooling: str | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
) -> Model:
    """ResNetRS350; arguments as :func:`ResNetRS50`."""
    return ResNetRS(350, include_top, weights, classes, input_shape, input_tensor, pooling, classifier_activation,
                    include_preprocessing)  # fmt: skip


def ResNetRS420(
    include_top: bool = True,
    weights: Any = "imagenet",
    classes: int = 1000,
    input_shape: Any = None,
    input_tensor: Any = None,
    pooling: str | None = None,
    classifier_activation: Any = "softmax",
    include_preprocessing: bool = True,
) -> Model:
    """ResNetRS420; arguments as :func:`ResNetRS50`."""
    return ResNetRS(420, include_top, weights, classes, input_shape, input_tensor, pooling, classifier_activation,
                    include_preprocessing)  # fmt: skip


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """ResNetRS rescales inside the model: the input is returned unchanged (as Keras 2 does)."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = [
    "ResNetRS101",
    "ResNetRS152",
    "ResNetRS200",
    "ResNetRS270",
    "ResNetRS350",
    "ResNetRS420",
    "ResNetRS50",
    "decode_predictions",
    "preprocess_input",
]
