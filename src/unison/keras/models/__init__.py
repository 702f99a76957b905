"""``keras.models``: ``Sequential``, ``Model``, ``load_model``, ``save_model``, ``clone_model``,
``model_from_json``.

The top of Keras: ``Model`` (``model.py``) inherits the trainer mixin and calls the loop of
``keras.trainers``; ``functional.py`` replays a recorded graph; ``summary.py`` prints the table.
This package may import everything below it (layers, losses, metrics, optimizers, saving,
trainers); nothing but the ``keras`` face imports it. It registers its classes with
``saving/serialization.py`` so that configs rebuild them without importing this package.

Example:
    >>> from unison import keras
    >>> keras.models.Sequential is keras.Sequential
    True
"""

from __future__ import annotations

from typing import Any

from unison.keras.models import experimental
from unison.keras.models.functional import Functional
from unison.keras.models.model import Model
from unison.keras.models.sequential import Sequential
from unison.keras.saving import clone_model, load_model, model_from_json, save_model
from unison.keras.saving.serialization import from_config, register_model_classes
from unison.keras.utils.object_registration import CustomObjectScope

__all__ = [
    "experimental",
    "Model",
    "Sequential",
    "clone_model",
    "load_model",
    "model_from_config",
    "model_from_json",
    "model_from_yaml",
    "save_model",
]


def model_from_config(config: dict[str, Any], custom_objects: dict[str, Any] | None = None) -> Any:
    """A new model (or layer) from ``{"class_name": ..., "config": ...}`` (Keras 2's ``model_from_config``).

    Example:
        >>> from unison import keras
        >>> m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        >>> again = model_from_config({"class_name": "Sequential", "config": m.get_config()})
        >>> [type(layer).__name__ for layer in again.layers]
        ['Dense']
    """
    if not isinstance(config, dict) or "class_name" not in config or "config" not in config:
        raise ValueError(
            "model_from_config expects a dict {'class_name': ..., 'config': ...} (e.g. "
            "{'class_name': 'Sequential', 'config': model.get_config()}). "
            f"Received: {config!r:.120}"
        )
    with CustomObjectScope(custom_objects):
        return from_config(config, custom_objects)


def model_from_yaml(yaml_string: str, custom_objects: dict[str, Any] | None = None) -> Any:
    """Keras 2's removed YAML loader: raises, as ``tf_keras`` does (YAML configs could run code).

    Raises:
        RuntimeError: always; use ``model.to_json()`` and :func:`model_from_json`.

    Example:
        >>> model_from_yaml("class_name: Sequential")
        Traceback (most recent call last):
        ...
        RuntimeError: Method `model_from_yaml()` has been removed due to security risk of arbitrary code execution. Please use `Model.to_json()` and `model_from_json()` instead.
    """
    raise RuntimeError(
        "Method `model_from_yaml()` has been removed due to security risk of arbitrary code execution. "
        "Please use `Model.to_json()` and `model_from_json()` instead."
    )


# load_model and clone_model find the model classes through the registry (saving/serialization.py).
register_model_classes(Model, Sequential, Functional)
