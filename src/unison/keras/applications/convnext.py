"""``keras.applications.convnext``: ConvNeXtTiny, Small, Base, Large and XLarge.

Keras 3's architecture and names (``convnext_tiny_stem``, ``convnext_tiny_stage_0_block_0_depthwise_conv``,
``..._pointwise_conv_1``, ``..._layer_scale``, ``convnext_tiny_downsampling_block_0``,
``convnext_tiny_head_dense``): a 4x4 patchifying stem, stages of 7x7 depthwise convolution,
layer normalisation, an MLP with GELU and a layer scale, and 2x2 downsampling between stages.
With ``include_preprocessing=True`` (the default) the model normalises pixels in ``[0, 255]``
with ImageNet's mean and variance itself, so ``preprocess_input`` returns its input unchanged.

Example:
    >>> model = ConvNeXtTiny(weights=None, input_shape=(32, 32, 3), classes=10)
    >>> model.name, model.count_params()
    ('convnext_tiny', 27827818)
"""

from __future__ import annotations

from typing import Any

from unison.keras import layers
from unison.keras.applications import _blocks, _common, imagenet_utils
from unison.keras.models import Model, Sequential

# (depths, projection dims) of each variant
_VARIANTS = {
    "tiny": ((3, 3, 9, 3), (96, 192, 384, 768)),
    "small": ((3, 3, 27, 3), (96, 192, 384, 768)),
    "base": ((3, 3, 27, 3), (128, 256, 512, 1024)),
    "large": ((3, 3, 27, 3), (192, 384, 768, 1536)),
    "xlarge": ((3, 3, 27, 3), (256, 512, 1024, 2048)),
}
_MEAN = (0.485 * 255, 0.456 * 255, 0.406 * 255)
_VARIANCE = ((0.229 * 255) ** 2, (0.224 * 255) ** 2, (0.225 * 255) ** 2)


def ConvNeXtBlock(
    projection_dim: int, drop_path_rate: float = 0.0, layer_scale_init_value: float = 1e-6, name: str = ""
) -> Any:
    """A ConvNeXt block as a function of its input: ``x + scale * mlp(norm(dwconv7x7(x)))``."""

    def apply(inputs: Any) -> Any:
        x = _blocks.GroupedConv2D(projection_dim, 7, groups=projection_dim, name=f"{name}_depthwise_conv")(inputs)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_layernorm")(x)
        x = layers.Dense(4 * projection_dim, name=f"{name}_pointwise_conv_1")(x)
        x = layers.Activation("gelu", name=f"{name}_gelu")(x)
        x = layers.Dense(projection_dim, name=f"{name}_pointwise_conv_2")(x)
        if layer_scale_init_value is not None:
            x = _blocks.LayerScale(layer_scale_init_value, projection_dim, name=f"{name}_layer_scale")(x)
        if drop_path_rate:
            x = _blocks.StochasticDepth(drop_path_rate, name=f"{name}_stochastic_depth")(x)
        else:
            x = layers.Activation("linear", name=f"{name}_identity")(x)
        return layers.Add()([inputs, x])

    return apply


def ConvNeXt(
    depths: tuple[int, ...],
    projection_dims: tuple[int, ...],
    drop_path_rate: float = 0.0,
    layer_scale_init_value: float = 1e-6,
    default_size: int = 224,
    name: str = "convnext",
    include_preprocessing: bool = True,
    include_top: bool = True,
    weights: Any = None,
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    builder: str = "ConvNeXt",
    weights_name: str | None = None,
) -> Model:
    """A ConvNeXt with the given stage ``depths`` and widths (see :func:`ConvNeXtTiny` for the rest)."""
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, builder)
    shape = imagenet_utils.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    img_input = _common.image_input(shape, input_tensor)
    x = img_input
    if include_preprocessing:
        x = _blocks.FixedNormalization(_MEAN, _VARIANCE, name=f"{name}_prestem_normalization")(x)
    stem = Sequential(
        [
            layers.Conv2D(projection_dims[0], kernel_size=4, strides=4, name=f"{name}_stem_conv"),
            layers.LayerNormalization(epsilon=1e-6, name=f"{name}_stem_layernorm"),
        ],
        name=f"{name}_stem",
    )
    downsampling = [stem]
    for i in range(3):
        downsampling.append(
            Sequential(
                [
                    layers.LayerNormalization(epsilon=1e-6, name=f"{name}_downsampling_layernorm_{i}"),
                    layers.Conv2D(
                        projection_dims[i + 1], kernel_size=2, strides=2, name=f"{name}_downsampling_conv_{i}"
                    ),
                ],
                name=f"{name}_downsampling_block_{i}",
            )
        )
    total = sum(depths)
    rates = [drop_path_rate * i / max(total - 1, 1) for i in range(total)] if total > 1 else [0.0]
    cursor = 0
    for i, depth in enumerate(depths):
        x = downsampling[i](x)
        for j in range(depth):
            x = ConvNeXtBlock(
                projection_dims[i], rates[cursor + j], layer_scale_init_value, f"{name}_stage_{i}_block_{j}"
            )(x)
        cursor += depth
    if include_top:
        x = layers.GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_head_layernorm")(x)
        x = layers.Dense(classes, activation=classifier_activation, name=f"{name}_head_dense")(x)
    else:
        if pooling == "avg":
            x = layers.GlobalAveragePooling2D()(x)
        elif pooling == "max":
            x = layers.GlobalMaxPooling2D()(x)
        x = layers.LayerNormalization(epsilon=1e-6)(x)
    file = f"{weights_name or name}{'' if include_top else '_notop'}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, builder)


def _variant(
    kind: str,
    default_size: int,
    include_top: bool,
    include_preprocessing: bool,
    weights: Any,
    input_tensor: Any,
    input_shape: Any,
    pooling: str | None,
    classes: int,
    classifier_activation: Any,
    name: str,
) -> Model:
    depths, dims = _VARIANTS[kind]
    return ConvNeXt(
        depths, dims, default_size=default_size, name=name, include_preprocessing=include_preprocessing,
        include_top=include_top, weights=weights, input_tensor=input_tensor, input_shape=input_shape,
        pooling=pooling, classes=classes, classifier_activation=classifier_activation,
        builder=f"ConvNeXt{kind.capitalize().replace('large', 'Large')}", weights_name=f"convnext_{kind}",
    )  # fmt: skip


def ConvNeXtTiny(
    include_top: bool = True,
    include_preprocessing: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "convnext_tiny",
) -> Model:
    """ConvNeXtTiny (Keras's ``keras.applications.ConvNeXtTiny``): 28.6M parameters, 224x224.

    Args:
        include_top: whether to end with pooling, layer normalisation and a ``classes``-way ``Dense``.
        include_preprocessing: whether the model normalises pixels in ``[0, 255]`` itself.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        input_shape: ``(height, width, channels)``, at least 32x32.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"`` (then a layer normalisation).
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name (and the prefix of its layers' names).
    """
    return _variant("tiny", 224, include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)  # fmt: skip


def ConvNeXtSmall(
    include_top: bool = True,
    include_preprocessing: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "convnext_small",
) -> Model:
    """ConvNeXtSmall (50.2M parameters, 224x224); arguments as :func:`ConvNeXtTiny`."""
    return _variant("small", 224, include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)  # fmt: skip


def ConvNeXtBase(
    include_top: bool = True,
    include_preprocessing: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "convnext_base",
) -> Model:
    """ConvNeXtBase (88.6M parameters, 224x224); arguments as :func:`ConvNeXtTiny`."""
    return _variant("base", 224, include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)  # fmt: skip


def ConvNeXtLarge(
    include_top: bool = True,
    include_preprocessing: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "convnext_large",
) -> Model:
    """ConvNeXtLarge (197.8M parameters, 224x224); arguments as :func:`ConvNeXtTiny`."""
    return _variant("large", 224, include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)  # fmt: skip


def ConvNeXtXLarge(
    include_top: bool = True,
    include_preprocessing: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "convnext_xlarge",
) -> Model:
    """ConvNeXtXLarge (350.2M parameters, 224x224); arguments as :func:`ConvNeXtTiny`."""
    return _variant("xlarge", 224, include_top, include_preprocessing, weights, input_tensor, input_shape, pooling,
                    classes, classifier_activation, name)  # fmt: skip


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """ConvNeXt normalises inside the model: the input is returned unchanged (as Keras does)."""
    return x


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = [
    "ConvNeXtBase",
    "ConvNeXtLarge",
    "ConvNeXtSmall",
    "ConvNeXtTiny",
    "ConvNeXtXLarge",
    "decode_predictions",
    "preprocess_input",
]
