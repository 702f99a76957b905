"""``tf.keras.utils``: ``to_categorical``, ``set_random_seed``, ``unpack_x_y_sample_weight``,
``PyDataset``/``Sequence``, the image helpers (``load_img``, ``img_to_array``, ...),
``experimental.DatasetCreator``, ``FeatureSpace``.

``FeatureSpace`` is a layer (``keras/layers/feature_space.py``): it is imported when first asked
for, since the layers import modules of this package (``weight_lists``, ``image_utils``) and a
package's ``__init__`` runs before any of its modules.
"""

from typing import Any

from unison.keras.utils import bounding_boxes, experimental
from unison.keras.utils.audio_dataset import audio_dataset_from_directory
from unison.keras.utils.data_adapter_utils import pack_x_y_sample_weight, unpack_x_y_sample_weight
from unison.keras.utils.dataset_utils import split_dataset
from unison.keras.utils.enqueuers import GeneratorEnqueuer, OrderedEnqueuer, SequenceEnqueuer
from unison.keras.utils.file_utils import get_file
from unison.keras.utils.image_dataset import image_dataset_from_directory
from unison.keras.utils.image_utils import array_to_img, img_to_array, load_img, save_img
from unison.keras.utils.io_utils import (
    disable_interactive_logging,
    enable_interactive_logging,
    is_interactive_logging_enabled,
)
from unison.keras.utils.model_visualization import model_to_dot, plot_model
from unison.keras.utils.numerical import set_random_seed, to_categorical, to_ordinal, warmstart_embedding_matrix
from unison.keras.utils.object_registration import (
    CustomObjectScope,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
)
from unison.keras.utils.progbar import Progbar
from unison.keras.utils.py_dataset import PyDataset, Sequence
from unison.keras.utils.sequence_utils import normalize, pad_sequences
from unison.keras.utils.sidecar_evaluator import SidecarEvaluator
from unison.keras.utils.text_dataset import text_dataset_from_directory
from unison.keras.utils.timed_threads import StepsPerExecutionTuner, TimedThread
from unison.keras.utils.timeseries import timeseries_dataset_from_array

__all__ = [
    "SidecarEvaluator",
    "GeneratorEnqueuer",
    "OrderedEnqueuer",
    "SequenceEnqueuer",
    "StepsPerExecutionTuner",
    "TimedThread",
    "audio_dataset_from_directory",
    "to_ordinal",
    "warmstart_embedding_matrix",
    "standardize_dtype",
    "disable_interactive_logging",
    "enable_interactive_logging",
    "is_interactive_logging_enabled",
    "CustomObjectScope",
    "FeatureSpace",
    "custom_object_scope",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "register_keras_serializable",
    "PyDataset",
    "Sequence",
    "array_to_img",
    "img_to_array",
    "load_img",
    "model_to_dot",
    "plot_model",
    "save_img",
    "bounding_boxes",
    "experimental",
    "get_file",
    "image_dataset_from_directory",
    "normalize",
    "pad_sequences",
    "set_random_seed",
    "split_dataset",
    "text_dataset_from_directory",
    "timeseries_dataset_from_array",
    "to_categorical",
    "unpack_x_y_sample_weight",
    "pack_x_y_sample_weight",
    "Progbar",
    "clear_session",
    "get_source_inputs",
    "is_keras_tensor",
]

# Keras 3's keras.utils also offers these backend helpers; imported when first asked for (the
# backend package imports modules of this one).
_FROM_BACKEND = ("clear_session", "get_source_inputs", "is_keras_tensor", "standardize_dtype")
# Keras 2's keras.utils also offers the object (de)serializers of keras.saving (above this package)
_FROM_SAVING = ("serialize_keras_object", "deserialize_keras_object")


def __getattr__(name: str) -> Any:
    if name == "FeatureSpace":
        from unison.keras.layers.feature_space import FeatureSpace

        return FeatureSpace
    if name == "legacy":
        # tf_keras.utils.legacy: Keras 2's object (de)serializers, kept with the saving code
        from unison.keras.saving import legacy_serialization

        return legacy_serialization
    if name in _FROM_SAVING:
        from unison.keras.saving import object_io

        return getattr(object_io, name)
    if name in _FROM_BACKEND:
        from unison.keras.backend import common

        return getattr(common, name)
    raise AttributeError(f"module 'unison.keras.utils' has no attribute {name!r}")
