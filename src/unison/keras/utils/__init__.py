"""``tf.keras.utils``: ``to_categorical``, ``set_random_seed``, ``unpack_x_y_sample_weight``,
``experimental.DatasetCreator``."""

from unison.keras.model_steps import unpack_x_y_sample_weight
from unison.keras.utils import experimental
from unison.keras.utils.file_utils import get_file
from unison.keras.utils.numerical import set_random_seed, to_categorical
from unison.keras.utils.sequence_utils import normalize, pad_sequences

__all__ = [
    "experimental",
    "get_file",
    "normalize",
    "pad_sequences",
    "set_random_seed",
    "to_categorical",
    "unpack_x_y_sample_weight",
]
