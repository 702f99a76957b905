"""``tf.keras.utils``: ``to_categorical``, ``set_random_seed``, ``experimental.DatasetCreator``."""

from unison.keras.utils import experimental
from unison.keras.utils.numerical import set_random_seed, to_categorical

__all__ = ["experimental", "set_random_seed", "to_categorical"]
