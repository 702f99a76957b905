"""The models ``unison bench`` trains, as unison Keras models and as plain PyTorch modules.

Two built-in models and one way to bring your own:

* ``"cnn"``: the Keras ``mnist_convnet`` example: ``Input(28, 28, 1)``, ``Conv2D(32, 3, relu)``,
  ``MaxPooling2D(2)``, ``Conv2D(64, 3, relu)``, ``MaxPooling2D(2)``, ``Flatten``,
  ``Dropout(0.5)``, ``Dense(10, softmax)`` (34,826 parameters);
* ``"mlp"``: the seed program's model: ``Dense(128, relu, input_shape=(784,))``,
  ``Dense(10, softmax)`` (101,770 parameters);
* ``"package.module:factory"``: ``factory()`` is imported and called (inside the strategy's
  scope) and must return a ``unison.keras.Model``, compiled or not.

:func:`build_torch_model` gives the same architecture as a plain ``torch.nn.Module`` for the
DDP baseline, written as a PyTorch user writes it: images in NCHW (:func:`torch_input_shape`)
and logits out, the softmax folded into ``nn.CrossEntropyLoss`` (the same mathematics as
Keras's softmax + sparse categorical cross-entropy). A factory's model is already a
``torch.nn.Module`` and is returned as it is.

Example:
    >>> from unison.bench import models
    >>> models.input_shape("cnn"), models.torch_input_shape("cnn")
    ((28, 28, 1), (1, 28, 28))
    >>> sum(p.numel() for p in models.build_torch_model("mlp").parameters())
    101770
"""

from __future__ import annotations

import importlib
import math
import os
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

BUILTIN_MODELS = ("cnn", "mlp")
NUM_CLASSES = 10
_SHAPES = {"cnn": (28, 28, 1), "mlp": (784,)}
_DEFAULT_CUSTOM_SHAPE = (28, 28, 1)


def is_custom(name: str) -> bool:
    """True for a ``module:factory`` model name."""
    return ":" in name


def check_name(name: str) -> str:
    """Return ``name`` if it names a model, else raise ``ValueError`` saying what would."""
    if name in BUILTIN_MODELS:
        return name
    if is_custom(name):
        module, _, attr = name.partition(":")
        if module and attr and ":" not in attr:
            return name
    raise ValueError(
        f"Unknown model {name!r}. Choose 'cnn' (the Keras MNIST convnet), 'mlp' (the seed "
        "program's model), or 'package.module:factory' for a function that returns a "
        f"unison.keras model. Received: model={name!r}"
    )


def load_factory(name: str) -> Callable[[], Any]:
    """Import the ``factory`` of ``"module:factory"``; the current folder is importable too.

    Raises:
        ValueError: the module does not import or lacks the attribute.
        TypeError: the attribute is not callable.
    """
    check_name(name)
    module_name, _, attr = name.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # `unison bench` run from the folder holding the module
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any failure while importing user code, named below
        raise ValueError(
            f"Model {name!r}: the module {module_name!r} does not import "
            f"({type(exc).__name__}: {exc}). Put it on PYTHONPATH (or run from the folder that "
            f'holds it) and check that `python -c "import {module_name}"` works. '
            f"Received: model={name!r}"
        ) from exc
    factory = getattr(module, attr, None)
    if factory is None:
        public = sorted(n for n in vars(module) if not n.startswith("_") and callable(vars(module)[n]))
        raise ValueError(
            f"Model {name!r}: module {module_name!r} has no attribute {attr!r}. Its callables: "
            f"{', '.join(public) or '(none)'}. Received: model={name!r}"
        )
    if not callable(factory):
        raise TypeError(
            f"Model {name!r}: {module_name}.{attr} is a {type(factory).__name__}, not a function "
            f"that returns a model. Received: model={name!r}"
        )
    return factory


def build_keras_model(name: str) -> Any:
    """Build model ``name`` as a ``unison.keras.Model`` (call it inside ``strategy.scope()``).

    Built-in models come back uncompiled; a factory's model comes back as the factory made it.

    Example:
        >>> build_keras_model("mlp").count_params()
        101770
    """
    from unison import keras

    check_name(name)
    if name == "cnn":
        return keras.Sequential(
            [
                keras.Input(shape=_SHAPES["cnn"]),
                keras.layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
                keras.layers.MaxPooling2D(pool_size=(2, 2)),
                keras.layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
                keras.layers.MaxPooling2D(pool_size=(2, 2)),
                keras.layers.Flatten(),
                keras.layers.Dropout(0.5),
                keras.layers.Dense(NUM_CLASSES, activation="softmax"),
            ],
            name="mnist_convnet",
        )
    if name == "mlp":
        return keras.Sequential(
            [
                keras.layers.Dense(128, activation="relu", input_shape=_SHAPES["mlp"]),
                keras.layers.Dense(NUM_CLASSES, activation="softmax"),
            ],
            name="seed_mlp",
        )
    model = load_factory(name)()
    if not isinstance(model, keras.Model):
        raise TypeError(
            f"Model {name!r}: the factory returned a {type(model).__name__}, but unison bench "
            "needs a unison.keras.Model (e.g. unison.keras.Sequential([...]), or "
            f"unison.keras.Model(your_torch_module)). Received: model={name!r}"
        )
    return model


class _TorchCNN(nn.Module):
    """The Keras MNIST convnet in plain PyTorch: NCHW in, logits out."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.5), nn.Linear(64 * 5 * 5, NUM_CLASSES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def build_torch_model(name: str) -> nn.Module:
    """Model ``name`` as a plain ``torch.nn.Module`` (logits out; a factory's model as is).

    Example:
        >>> build_torch_model("cnn")(torch.zeros(2, 1, 28, 28)).shape
        torch.Size([2, 10])
    """
    check_name(name)
    if name == "cnn":
        return _TorchCNN()
    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, NUM_CLASSES))
    model = build_keras_model(name)
    model.build((1, *input_shape(name)))
    return model


def input_shape(name: str) -> tuple[int, ...]:
    """The shape of one example as the Keras model takes it (no batch axis).

    A factory's model is asked for its ``input_shape=``; without one, MNIST's ``(28, 28, 1)``.
    """
    check_name(name)
    if name in _SHAPES:
        return _SHAPES[name]
    hint = getattr(build_keras_model(name), "input_shape_hint", None)
    shape = tuple(int(d) for d in hint) if hint else _DEFAULT_CUSTOM_SHAPE
    if math.prod(shape) != 28 * 28:
        raise ValueError(
            f"Model {name!r} takes inputs of shape {shape}, but the bench data sets are 28x28 "
            "images (784 values per example). Give the model an input shape of 784 values, e.g. "
            f"(28, 28, 1) or (784,). Received: model={name!r}"
        )
    return shape


def torch_input_shape(name: str) -> tuple[int, ...]:
    """The shape of one example as :func:`build_torch_model`'s module takes it (NCHW images)."""
    shape = input_shape(name)
    if name == "cnn":
        return (shape[2], shape[0], shape[1])
    return shape


def torch_loss(name: str, model: nn.Module) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """The per-example loss the DDP baseline minimises with ``model`` (mean taken by the caller).

    Built-in torch models emit logits: cross-entropy on logits. A factory's Keras model keeps
    its compiled loss, else Keras's default here, sparse categorical cross-entropy on
    probabilities (unison's softmax carries its logits, so this stays exact and stable).
    """
    if not is_custom(name):
        return nn.CrossEntropyLoss(reduction="none")
    from unison.keras import losses

    loss = getattr(model, "loss", None) or losses.resolve("sparse_categorical_crossentropy")
    return lambda logits, y: loss.per_example(y, logits)


__all__ = [
    "BUILTIN_MODELS",
    "build_keras_model",
    "build_torch_model",
    "check_name",
    "input_shape",
    "is_custom",
    "load_factory",
    "torch_input_shape",
    "torch_loss",
]
