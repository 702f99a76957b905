"""``tf.distribute.experimental.coordinator``: the same names as ``tf.distribute.coordinator``."""

from unison.distribute.coordinator import *  # noqa: F403 - TF's older path to the same names
from unison.distribute.coordinator import __all__ as __all__
