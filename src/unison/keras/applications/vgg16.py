"""``keras.applications.vgg16``: VGG16 with Keras 3's layer names (``block1_conv1``, ..., ``fc1``).

``preprocess_input`` is Keras's ``"caffe"`` mode. With the top, the first ``Dense`` sees the
flattened last feature map, so its size (and the parameter count) depends on ``input_shape``.

Example:
    >>> model = VGG16(weights=None, include_top=False, input_shape=(32, 32, 3))
    >>> model.count_params()
    14714688
"""

from __future__ import annotations

from typing import Any

from unison.keras import layers
from unison.keras.applications import _common, imagenet_utils
from unison.keras.models import Model


def vgg(
    block_convs: tuple[int, ...],
    include_top: bool,
    weights: Any,
    input_tensor: Any,
    input_shape: Any,
    pooling: str | None,
    classes: int,
    classifier_activation: Any,
    name: str,
    weights_name: str,
) -> Model:
    """A VGG network: five blocks of 3x3 convolutions (``block_convs`` per block) and 2x2 max pools."""
    _common.check_arguments(weights, include_top, classes, pooling, classifier_activation, name)
    shape = imagenet_utils.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    img_input = _common.image_input(shape, input_tensor)
    x = img_input
    for block, (filters, convs) in enumerate(zip((64, 128, 256, 512, 512), block_convs), start=1):
        for conv in range(1, convs + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{conv}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    file = f"{weights_name}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _common.finish(img_input, input_tensor, x, name, weights, file, weights_name.upper())


def VGG16(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "vgg16",
) -> Model:
    """VGG16 (Keras's ``keras.applications.VGG16``): 138.4M parameters with the top at 224x224.

    Args:
        include_top: whether to end with ``flatten``, ``fc1``, ``fc2`` and ``predictions``.
        weights: ``None``, ``"imagenet"`` (Keras's file from ``~/.keras/models/``; nothing is
            downloaded) or the path of a weights file Keras wrote.
        input_tensor: a Keras tensor to build on.
        input_shape: ``(height, width, channels)``, at least 32x32.
        pooling: without the top: ``None``, ``"avg"`` or ``"max"``.
        classes: number of classes of the top.
        classifier_activation: the top's activation (``None`` for logits).
        name: the model's name.
    """
    return vgg(
        (2, 2, 3, 3, 3),
        include_top,
        weights,
        input_tensor,
        input_shape,
        pooling,
        classes,
        classifier_activation,
        name,
        "vgg16",
    )


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Images in ``[0, 255]`` (RGB) to VGG's inputs: BGR, ImageNet means subtracted ("caffe")."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["VGG16", "decode_predictions", "preprocess_input"]
