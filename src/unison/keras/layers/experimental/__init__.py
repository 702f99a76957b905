"""``keras.layers.experimental``: Keras 2's experimental layer namespace (its ``preprocessing`` path).

Example:
    >>> from unison.keras.layers import experimental
    >>> experimental.preprocessing.PreprocessingLayer.__name__
    'PreprocessingLayer'
"""

from unison.keras.layers.experimental import preprocessing

__all__ = ["preprocessing"]
