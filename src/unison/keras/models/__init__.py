"""``keras.models``: ``Sequential``, ``Model``, ``load_model``, ``save_model``, ``clone_model``,
``model_from_json``.

Example:
    >>> from unison import keras
    >>> keras.models.Sequential is keras.Sequential
    True
"""

from __future__ import annotations

from unison.keras.models.functional import Functional
from unison.keras.models.model import Model, Sequential
from unison.keras.saving import clone_model, load_model, model_from_json, save_model
from unison.keras.saving.serialization import register_model_classes

__all__ = ["Model", "Sequential", "clone_model", "load_model", "model_from_json", "save_model"]

# load_model and clone_model find the model classes through the registry (saving/serialization.py).
register_model_classes(Model, Sequential, Functional)
