"""``keras.applications.resnet_v2``: ResNet50V2, ResNet101V2, ResNet152V2 (pre-activation blocks).

``preprocess_input`` is Keras's ``"tf"`` mode (pixels scaled to ``[-1, 1]``).

Example:
    >>> import numpy as np
    >>> preprocess_input(np.array([[0.0, 127.5, 255.0]])).tolist()
    [[-1.0, 0.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from unison.keras.applications import imagenet_utils
from unison.keras.applications.resnet import ResNet, stack_residual_blocks_v2, stages
from unison.keras.models import Model


def _v2(depths: tuple[int, int, int, int]) -> Callable[[Any], Any]:
    return stages(stack_residual_blocks_v2, depths, unstrided=3)


def ResNet50V2(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "resnet50v2",
) -> Model:
    """ResNet50V2 (Keras's ``keras.applications.ResNet50V2``); arguments as :func:`.resnet.ResNet50`."""
    return ResNet(
        _v2((3, 4, 6, 3)), True, True, include_top, weights, input_tensor, input_shape, pooling, classes,
        classifier_activation, name, "resnet50v2",
    )  # fmt: skip


def ResNet101V2(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "resnet101v2",
) -> Model:
    """ResNet101V2 (Keras's ``keras.applications.ResNet101V2``); arguments as :func:`.resnet.ResNet50`."""
    return ResNet(
        _v2((3, 4, 23, 3)), True, True, include_top, weights, input_tensor, input_shape, pooling, classes,
        classifier_activation, name, "resnet101v2",
    )  # fmt: skip


def ResNet152V2(
    include_top: bool = True,
    weights: Any = "imagenet",
    input_tensor: Any = None,
    input_shape: Any = None,
    pooling: str | None = None,
    classes: int = 1000,
    classifier_activation: Any = "softmax",
    name: str = "resnet152v2",
) -> Model:
    """ResNet152V2 (Keras's ``keras.applications.ResNet152V2``); arguments as :func:`.resnet.ResNet50`."""
    return ResNet(
        _v2((3, 8, 36, 3)), True, True, include_top, weights, input_tensor, input_shape, pooling, classes,
        classifier_activation, name, "resnet152v2",
    )  # fmt: skip


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Images in ``[0, 255]`` to ResNetV2's inputs: scaled to ``[-1, 1]`` ("tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes per prediction (see :func:`.imagenet_utils.decode_predictions`)."""
    return imagenet_utils.decode_predictions(preds, top=top)


__all__ = ["ResNet101V2", "ResNet152V2", "ResNet50V2", "decode_predictions", "preprocess_input"]
