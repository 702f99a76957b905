"""``tf.keras.utils``: the parts unison provides (``experimental.DatasetCreator``)."""

from unison.keras.utils import experimental

__all__ = ["experimental"]
