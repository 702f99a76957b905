"""``tf.saved_model``: export a Keras model or a module to a directory and load it back.

Owns the SavedModel directory format: :mod:`~unison.saved_model.save` (``save``, ``load``, the Keras
export), :mod:`~unison.saved_model.modules` (``tf.Module`` trees), :mod:`~unison.saved_model.signatures`
(serving signatures) and :mod:`~unison.saved_model.keras_hook` (how it reaches Keras). It may import
``train`` (the variables travel as a ``tf.train.Checkpoint``), ``core``, ``ops`` and ``errors``; it
never imports ``keras``: Keras's save/load functions are registered from above (``keras_hook``).

Example:
    >>> import unison as tf
    >>> tf.saved_model.SaveOptions().namespace_whitelist is None
    True
"""

import types

from unison.saved_model.constants import (
    ASSETS_DIRECTORY,
    ASSETS_KEY,
    CLASSIFY_INPUTS,
    CLASSIFY_METHOD_NAME,
    CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES,
    DEBUG_DIRECTORY,
    DEBUG_INFO_FILENAME_PB,
    GPU,
    PREDICT_INPUTS,
    PREDICT_METHOD_NAME,
    PREDICT_OUTPUTS,
    REGRESS_INPUTS,
    REGRESS_METHOD_NAME,
    REGRESS_OUTPUTS,
    SAVED_MODEL_FILENAME_PB,
    SAVED_MODEL_FILENAME_PBTXT,
    SAVED_MODEL_SCHEMA_VERSION,
    SERVING,
    TPU,
    TRAINING,
    VARIABLES_DIRECTORY,
    VARIABLES_FILENAME,
)
from unison.saved_model.resources import Asset, TrackableResource
from unison.saved_model.save import (
    DEFAULT_SERVING_SIGNATURE_DEF_KEY as DEFAULT_SERVING_SIGNATURE_DEF_KEY,
)
from unison.saved_model.save import (
    LoadedModel,
    LoadedModule,
    LoadOptions,
    SaveOptions,
    VariablePolicy,
    contains_saved_model,
    load,
    save,
)
from unison.saved_model.save import (
    write_keras_export as write_keras_export,  # model.save('dir') (keras) writes the same export
)
from unison.saved_model.save import (
    write_serving_export as write_serving_export,  # model.export(format='tf_saved_model') writes it
)

# tf.saved_model.experimental: the variable policy of SaveOptions
experimental = types.SimpleNamespace(VariablePolicy=VariablePolicy, TrackableResource=TrackableResource)

__all__ = [
    "Asset",
    "experimental",
    "ASSETS_DIRECTORY",
    "ASSETS_KEY",
    "CLASSIFY_INPUTS",
    "CLASSIFY_METHOD_NAME",
    "CLASSIFY_OUTPUT_CLASSES",
    "CLASSIFY_OUTPUT_SCORES",
    "DEBUG_DIRECTORY",
    "DEBUG_INFO_FILENAME_PB",
    "GPU",
    "LoadOptions",
    "LoadedModel",
    "LoadedModule",
    "PREDICT_INPUTS",
    "PREDICT_METHOD_NAME",
    "PREDICT_OUTPUTS",
    "REGRESS_INPUTS",
    "REGRESS_METHOD_NAME",
    "REGRESS_OUTPUTS",
    "SAVED_MODEL_FILENAME_PB",
    "SAVED_MODEL_FILENAME_PBTXT",
    "SAVED_MODEL_SCHEMA_VERSION",
    "SERVING",
    "SaveOptions",
    "TPU",
    "TRAINING",
    "VARIABLES_DIRECTORY",
    "VARIABLES_FILENAME",
    "contains_saved_model",
    "load",
    "save",
]
