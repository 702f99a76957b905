"""What every ``keras.applications`` builder shares: argument checks, the input, the top, the weights.

Each architecture is a functional model built from :mod:`unison.keras.layers` with Keras 3's
layer names. ``weights`` is ``None`` (random initialisation), ``"imagenet"`` (Keras's pretrained
file, read from Keras's cache ``~/.keras/models/`` when it is there: unison downloads nothing) or
the path of a weights file Keras wrote (read by :mod:`unison.keras.saving.keras_h5`).
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

from unison.errors import WeightsFileError
from unison.keras import activations, layers
from unison.keras.models import Model

KERAS_WEIGHTS_URL = "https://storage.googleapis.com/tensorflow/keras-applications/"


def keras_models_dir() -> pathlib.Path:
    """Keras's cache of downloaded weights: ``$KERAS_HOME/models`` (default ``~/.keras/models``)."""
    home = os.environ.get("KERAS_HOME")
    return pathlib.Path(home) / "models" if home else pathlib.Path.home() / ".keras" / "models"


def check_arguments(
    weights: Any, include_top: Any, classes: Any, pooling: Any, classifier_activation: Any, builder: str
) -> None:
    """Keras's checks of the common arguments (and clear errors where Keras silently ignores a value)."""
    if not (weights is None or weights == "imagenet" or isinstance(weights, (str, os.PathLike))):
        raise ValueError(
            "The `weights` argument should be either `None` (random initialization), 'imagenet' "
            f"(pre-training on ImageNet), or the path to the weights file to be loaded.  Received: weights={weights!r}"
        )
    if weights is not None and weights != "imagenet" and not os.path.exists(weights):
        raise ValueError(
            "The `weights` argument should be either `None` (random initialization), 'imagenet' "
            "(pre-training on ImageNet), or the path to the weights file to be loaded.  Received: "
            f"weights={weights!r} (no such file)"
        )
    if not isinstance(include_top, bool):
        raise TypeError(f"{builder}: include_top must be True or False. Received: include_top={include_top!r}")
    if isinstance(classes, bool) or not isinstance(classes, int) or classes < 1:
        raise ValueError(f"{builder}: classes must be a positive integer. Received: classes={classes!r}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(
            "If using `weights='imagenet'` with `include_top=True`, `classes` should be 1000.  "
            f"Received classes={classes}"
        )
    if pooling not in (None, "avg", "max"):
        raise ValueError(
            f"{builder}: pooling must be None, 'avg' or 'max' (used when include_top=False). Received: pooling={pooling!r}"
        )
    if include_top and weights is not None:
        activations.get(classifier_activation)  # an unknown name fails here, as in Keras
        given = classifier_activation
        label = given if isinstance(given, str) or given is None else getattr(given, "__name__", repr(given))
        if label not in (None, "softmax", "linear"):
            raise ValueError(
                "Only `None` and `softmax` activations are allowed for the `classifier_activation` argument "
                "when using pretrained weights, with `include_top=True`; Received: "
                f"classifier_activation={classifier_activation!r}"
            )


def image_input(input_shape: tuple[int | None, ...], input_tensor: Any, min_size: int = 32, builder: str = "") -> Any:
    """The model's image input: a new ``keras.Input``, or the given Keras tensor."""
    if input_tensor is None:
        if min_size > 64 and None in input_shape[:2]:
            # unison builds a functional model by running it on examples; a None size is tried at
            # 64 and 96 pixels, and 64 is below this network's minimum
            raise ValueError(
                f"{builder} needs images of at least {min_size}x{min_size}, and unison builds the model on "
                f"64x64 examples where the size is None. Received: input_shape={input_shape}. Pass a fixed size, "
                f"e.g. input_shape=(299, 299, 3) (any size >= {min_size} works)."
            )
        return layers.Input(shape=input_shape)
    if not hasattr(input_tensor, "_node") or not hasattr(input_tensor, "shape"):
        raise ValueError(
            "input_tensor must be a Keras tensor (from keras.Input(...) or a layer called on one). Received: "
            f"input_tensor of type {type(input_tensor).__name__}. Wrap data in a model instead: "
            "model(tensor)."
        )
    if len(input_tensor.shape) != 4:
        raise ValueError(
            f"input_tensor must be a batch of images (batch, height, width, channels). Received: "
            f"input_tensor.shape={input_tensor.shape}"
        )
    return input_tensor


def source_inputs(tensor: Any) -> list[Any]:
    """The ``keras.Input`` tensors ``tensor`` is computed from (Keras's ``get_source_inputs``)."""
    found: list[Any] = []
    stack, seen = [tensor], set()
    while stack:
        kt = stack.pop()
        if id(kt) in seen:
            continue
        seen.add(id(kt))
        if kt.is_input:
            found.append(kt)
        else:
            stack.extend(reversed(kt._node.parents))
    return found


def classifier_top(
    x: Any,
    include_top: bool,
    pooling: str | None,
    classes: int,
    classifier_activation: Any,
    avg_name: str | None = "avg_pool",
    max_name: str | None = "max_pool",
    dropout: float = 0.0,
    dense_init: Any = "glorot_uniform",
) -> Any:
    """Keras's head: global average pooling and the ``predictions`` layer, or the ``pooling`` option."""
    if include_top:
        x = layers.GlobalAveragePooling2D(name=avg_name)(x)
        if dropout > 0:
            x = layers.Dropout(dropout, name="top_dropout")(x)
        return layers.Dense(
            classes, activation=classifier_activation, kernel_initializer=dense_init, name="predictions"
        )(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=avg_name)(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=max_name)(x)
    return x


def finish(
    img_input: Any,
    input_tensor: Any,
    outputs: Any,
    name: str,
    weights: Any,
    imagenet_file: str | None,
    builder: str,
) -> Model:
    """The functional model, with its weights loaded when ``weights`` asks for them."""
    inputs = source_inputs(input_tensor) if input_tensor is not None else img_input
    if isinstance(inputs, list) and len(inputs) == 1:
        inputs = inputs[0]
    model = Model(inputs=inputs, outputs=outputs, name=name)
    if weights is None:
        return model
    from unison.keras.saving.keras_h5 import load_weights

    if weights == "imagenet":
        path = keras_models_dir() / imagenet_file if imagenet_file else None
        if path is None or not path.is_file():
            raise WeightsFileError(imagenet_message(builder, imagenet_file))
        load_weights(model, path)
    else:
        load_weights(model, weights)
    return model


def imagenet_message(builder: str, imagenet_file: str | None) -> str:
    """The error for ``weights="imagenet"`` when Keras's file is not on this machine."""
    where = keras_models_dir()
    if imagenet_file is None:
        return (
            f"{builder}(weights='imagenet'): Keras publishes no ImageNet weights for this configuration. "
            "Use weights=None, or pass the path of a weights file."
        )
    return (
        f"{builder}(weights='imagenet') needs Keras's pretrained file {imagenet_file!r}, and unison downloads "
        f"nothing at run time. It is not in Keras's cache ({where}). Either copy it there (it is at "
        f"{KERAS_WEIGHTS_URL}..., and in ~/.keras/models/ on any machine where Keras loaded these weights once), "
        f"or pass its path: weights='/path/{imagenet_file}'. A weights file Keras wrote with "
        "model.save_weights('x.weights.h5') or model.save('x.keras') also loads: weights='x.weights.h5'. "
        "Or build without pretrained weights: weights=None."
    )
