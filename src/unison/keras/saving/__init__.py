"""``keras.saving``: whole-model files (``saving_lib.py``), verified weight files (``weights_file.py``).

Example:
    >>> from unison.keras import saving
    >>> saving.KERAS_FORMAT
    'unison.keras/1'
"""

from unison.keras.saving.saving_lib import (
    KERAS_FORMAT,
    CustomObjectScope,
    SavingError,
    clone_model,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    load_model,
    model_config,
    model_from_json,
    register_keras_serializable,
    save_model,
)
from unison.keras.saving.saving_lib import (
    from_config as from_config,
)
from unison.keras.saving.saving_lib import (
    layer_config as layer_config,
)

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
