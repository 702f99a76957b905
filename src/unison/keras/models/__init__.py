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

from unison.keras.models.functional import Functional
from unison.keras.models.model import Model
from unison.keras.models.sequential import Sequential
from unison.keras.saving import clone_model, load_model, model_from_json, save_model
from unison.keras.saving.serialization import register_model_classes

__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_json", "save_model"]

# load_model and clone_model find the model classes through the registry (saving/serialization.py).
register_model_classes(Model, Sequential, Functional)
