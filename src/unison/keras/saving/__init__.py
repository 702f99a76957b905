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
