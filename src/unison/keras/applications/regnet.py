"""``keras.applications.regnet`` (Keras 2, ``tf_keras``): RegNetX002..RegNetX320, RegNetY002..RegNetY320.

Keras 2's architecture and names (``regnetx002_stem_conv``, ``regnetx002_Stage_0_XBlock_0_conv_3x3``,
``..._skip_1x1``, ``regnety002_Stage_0_YBlock_0_squeeze_and_excite_squeeze``): a 3x3 stem, then
four stages of bottleneck blocks with grouped 3x3 convolutions (X), plus squeeze-and-excitation
(Y). With ``include_preprocessing=True`` (the default) the model rescales pixels in ``[0, 255]``
to ``[0, 1]`` itself, so ``preprocess_input`` returns its input unchanged. As in Keras 2, the top
(``include_top=True``) ends with the ``Dense`` layer's logits: ``classifier_activation`` is
checked but not applied. Keras 3 has no RegNet; unison offers it to both.

Example:
    >>> model = RegNetX002(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.name, model.count_params()
    ('regnetx002', 2340330)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from unison.keras import layers
from unison.keras.applications import _blocks, _common, imagenet_utils
from unison.keras.models import Model

# variant -> (blocks per stage, widths per stage, group width): the RegNet paper's models
_CONFIGS = {
    "x002": ((1, 1, 4, 7), (24, 56, 152, 368), 8), "x004": ((1, 2, 7, 12), (32, 64, 160, 384), 16),
    "x006": ((1, 3, 5, 7), (48, 96, 240, 528), 24), "x008": ((1, 3, 7, 5), (64, 128, 288, 672), 16),
    "x016": ((2, 4, 10, 2), (72, 168, 408, 912), 24), "x032": ((2, 6, 15, 2), (96, 192, 432, 1008), 48),
    "x040": ((2, 5, 14, 2), (80, 240, 560, 1360), 40), "x064": ((2, 4, 10, 1), (168, 392, 784, 1624), 56),
    "x080": ((2, 5, 15, 1), (80, 240, 720, 1920), 120), "x120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112),
    "x160": ((2, 6, 13, 1), (256, 512, 896, 2048), 128), "x320": ((2, 7, 13, 1), (336, 672, 1344, 2520), 168),
    "y002": ((1, 1, 4, 7), (24, 56, 152, 368), 8), "y004": ((1, 3, 6, 6), (48, 104, 208, 440), 8),
    "y006": ((1, 3, 7, 4), (48, 112, 256, 608), 16), "y008": ((1, 3, 8, 2), (64, 128, 320, 768), 16),
    "y016": ((2, 6, 17, 2), (48, 120, 336, 888), 24), "y032": ((2, 5, 13, 1), (72, 216, 576, 1512), 24),
    "y040": ((2, 6, 12, 2), (128, 192, 512, 1088), 64), "y064": ((2, 7, 14, 2), (144, 288, 576, 1296), 72),
    "y080": ((2, 4, 10, 1), (168, 448, 896, 2016), 56), "y120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112),
    "y160": ((2, 4, 11, 1), (224, 448, 1232, 3024), 112), "y320": ((2, 5, 12, 1), (232, 696, 1392, 3712), 232),
}  # fmt: skip
_HEADS = itertools.count(1)  # Keras 2 names each head by a process-wide counter ("1_head_gap")


def _bn(x: Any, name: str) -> Any:
    return layers.BatchNormalization(momentum=0.9, epsilon=1e-5, name=name)(x)


def _conv1x1(x: Any, filters: int, name: str, strides: int = 1) -> Any:
    return layers.Conv2D(filters, 1, strides=strides, use_bias=False, kernel_initializer="he_normal", name=name)(x)


def _block(inputs: Any, filters_in: int, filters_out: int, group_width: int, stride: int, se: bool, name: str) -> Any:
    """X block (1x1, grouped 3x3, 1x1, residual); the Y block adds squeeze-and-excitation."""
    if filters_in != filters_out and stride == 1:
        raise ValueError(
            f"Input filters ({filters_in}) and output filters ({filters_out}) are not equal for stride {stride}. "
            "Input and output filters must be equal for stride=1."
        )
    if stride != 1:
        skip = _bn(_conv1x1(inputs, filters_out, f"{name}_skip_1x1", strides=stride), f"{name}_skip_bn")
    else:
        skip = inputs
    x = _conv1x1(inputs, filters_out, f"{name}_conv_1x1_1")
    x = layers.ReLU(name=f"{name}_conv_1x1_1_relu")(_bn(x, f"{name}_conv_1x1_1_bn"))
    # a stage narrower than the group width is one group (Keras 2's Conv2D reads groups=0 as 1)
    groups = max(filters_out // group_width, 1)
    x = _blocks.GroupedConv2D(filters_out, 3, groups=groups, strides=stride, use_bias=False, name=f"{name}_conv_3x3")(x)
    x = layers.ReLU(name=f"{name}_conv_3x3_relu")(_bn(x, f"{name}_conv_3x3_bn"))
    if se:
        gate = layers.GlobalAveragePooling2D(keepdims=True, name=f"{name}_squeeze_and_excite_gap")(x)
        gate = layers.Conv2D(
            int(filters_in * 0.25), 1, activation="relu", kernel_initializer="he_normal",
            name=f"{name}_squeeze_and_excite_squeeze",
        )(gate)  # fmt: skip
        gate = layers.Conv2D(
            filters_out, 1, activation="sigmoid", kernel_initializer="he_normal",
            name=f"{name}_squeeze_and_excite_excite",
        )(gate)  # fmt: skip
        x = layers.Multiply()([gate, x])
    x = _bn(_conv1x1(x, filters_out, f"{name}_conv_1x1_2"), f"{name}_conv_1x1_2_bn")
    return layers.ReLU(name=f"{name}_exit_relu")(layers.Add()([x, skip]))


def RegNet(
    variant: str,
    include_top: bool = True,
    include_preprocessing: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
) -> Model:
    """The RegNet ``variant`` (``"x002"``..``"y320"``); see :func:`RegNetX002` for the arguments."""
    depths, widths, group_width = _CONFIGS[variant]
    name, builder = f"regnet{variant}", f"RegNet{variant.upper()}"
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    shape = imagenet_utils.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    img_input = _common.image_input(shape, input_tensor)
    x = img_input
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 255.0, name=f"{name}_prestem_rescaling")(x)
    x = layers.Conv2D(
        32, 3, strides=2, padding="same", use_bias=False, kernel_initializer="he_normal", name=f"{name}_stem_conv"
    )(x)
    x = layers.ReLU(name=f"{name}_stem_relu")(_bn(x, f"{name}_stem_bn"))
    kind = variant[0].upper()
    filters_in = 32
    for stage, (depth, width) in enumerate(zip(depths, widths, strict=True)):
        for j in range(depth):
            x = _block(
                x, filters_in if j == 0 else width, width, group_width, 2 if j == 0 else 1, kind == "Y",
                f"{name}_Stage_{stage}_{kind}Block_{j}",
            )  # fmt: skip
        filters_in = width
    if include_top:
        head = next(_HEADS)
        x = layers.GlobalAveragePooling2D(name=f"{head}_head_gap")(x)
        x = layers.Dense(classes, name=f"{head}head_dense")(x)  # logits, as Keras 2
    else:
        x = _common.classifier_top(x, False, pooling, classes, classifier_activation, None, None)
    file = f"{name}{'' if include_top else '_notop'}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, builder)


def _builder(variant: str) -> Callable[..., Model]:
    def build(
        include_top: bool = True,
        include_preprocessing: bool = True,
        weights: Any = "imagenet",
        input_tensor: Any = None,
        input_shape: Any = None,
        pooling: str | None = None,
        classes: int = 1000,
        classifier_activation: Any = "softmax",
    ) -> Model:
        return RegNet(variant, include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
                      classes, classifier_activation)  # fmt: skip

    build.__name__ = build.__qualname__ = f"RegNet{variant.upper()}"
    build.__doc__ = f"""RegNet{variant.upper()} (Keras 2's ``tf_keras.applications.RegNet{variant.upper()}``).

    Args:
        include_top: whether to end with global average pooling and a ``classes``-way ``Dense``
            (logits, as Keras 2: ``classifier_activation`` is not applied).
        include_preprocessing: whether the model rescales pixels in ``[0, 255]`` itself.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        input_shape: ``(height, width, channels)``, at least 32x32 (default ``(224, 224, 3)``).
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: checked as Keras 2 does (``None`` or ``"softmax"`` with pretrained weights).
    """
    return build


RegNetX002 = _builder("x002")
RegNetX004 = _builder("x004")
RegNetX006 = _builder("x006")
RegNetX008 = _builder("x008")
RegNetX016 = _builder("x016")
RegNetX032 = _builder("x032")
RegNetX040 = _builder("x040")
RegNetX064 = _builder("x064")
RegNetX080 = _builder("x080")
RegNetX120 = _builder("x120")
RegNetX160 = _builder("x160")
RegNetX320 = _builder("x320")
RegNetY002 = _builder("y002")
RegNetY004 = _builder("y004")
RegNetY006 = _builder("y006")
RegNetY008 = _builder("y008")
RegNetY016 = _builder("y016")
RegNetY032 = _builder("y032")
RegNetY040 = _builder("y040")
RegNetY064 = _builder("y064")
RegNetY080 = _builder("y080")
RegNetY120 = _builder("y120")
RegNetY160 = _builder("y160")
RegNetY320 = _builder("y320")


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """RegNet rescales inside the model: the input is returned unchanged (as Keras 2 does)."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = [
    *(f"RegNet{v.upper()}" for v in _CONFIGS),
    "decode_predictions",
    "preprocess_input",
]
