"""``keras.saving``: Keras's model files and the configs inside them.

``serialization.py`` turns layers and models into Keras's ``{"class_name", "config"}`` JSON and
back (low: layers use it; it finds layer, loss, metric and model classes through the registry
their packages fill). ``saving_lib.py`` writes and reads whole models (``model.save``,
``load_model``, ``clone_model``), ``weights_file.py`` the verified weight files. Nothing here
imports models or trainers: a model passes itself to these functions.

Example:
    >>> from unison.keras import saving
    >>> saving.KERAS_FORMAT
    'unison.keras/1'
"""

from typing import Any

from unison.keras.saving.object_io import deserialize_keras_object, serialize_keras_object
from unison.keras.saving.saving_lib import (
    CustomObjectScope,
    clone_model,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    load_model,
    model_from_json,
    register_keras_serializable,
    save_model,
)
from unison.keras.saving.serialization import (
    KERAS_FORMAT,
    SavingError,
    model_config,
)
from unison.keras.saving.serialization import from_config as from_config
from unison.keras.saving.serialization import layer_config as layer_config

__all__ = [
    "deserialize_keras_object",
    "load_weights",
    "save_weights",
    "serialize_keras_object",
    "KERAS_FORMAT",
    "CustomObjectScope",
    "SavingError",
    "clone_model",
    "custom_object_scope",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "load_model",
    "model_config",
    "model_from_json",
    "register_keras_serializable",
    "save_model",
]


def save_weights(model: Any, filepath: str, overwrite: bool = True, **kwargs: Any) -> None:
    """``keras.saving.save_weights(model, filepath)``: ``model.save_weights(filepath)`` in Keras 3's ``.weights.h5``.

    Raises:
        ValueError: a ``filepath`` that does not end in ``.weights.h5`` (Keras 3's rule for this function).
    """
    if not str(filepath).endswith(".weights.h5"):
        raise ValueError(f"The filename must end in `.weights.h5`. Received: filepath={filepath}")
    model.save_weights(filepath, overwrite=overwrite, **kwargs)


def load_weights(model: Any, filepath: str, skip_mismatch: bool = False, **kwargs: Any) -> None:
    """``keras.saving.load_weights(model, filepath)``: ``model.load_weights(filepath)``.

    Raises:
        ValueError: ``skip_mismatch=True`` (unison loads every weight or none).
    """
    if skip_mismatch:
        raise ValueError(
            "keras.saving.load_weights(skip_mismatch=True) is not supported: unison checks every weight against "
            "the model and loads all or none. Build the model with the saved shapes, then load."
        )
    model.load_weights(filepath, **kwargs)
