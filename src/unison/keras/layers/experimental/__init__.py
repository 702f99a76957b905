"""``keras.layers.experimental``: Keras 2's experimental layer namespace: its ``preprocessing`` path,
``EinsumDense``, ``RandomFourierFeatures`` and ``SyncBatchNormalization`` (the same classes as
unison's ``keras.layers`` where Keras 3 has them).

Example:
    >>> from unison.keras.layers import experimental
    >>> experimental.preprocessing.PreprocessingLayer.__name__
    'PreprocessingLayer'
    >>> experimental.EinsumDense("ab,bc->ac", output_shape=3).equation
    'ab,bc->ac'
"""

from unison.keras.layers.einsum_dense import EinsumDense
from unison.keras.layers.experimental import preprocessing
from unison.keras.layers.kernelized import RandomFourierFeatures
from unison.keras.layers.normalization import SyncBatchNormalization

__all__ = ["EinsumDense", "RandomFourierFeatures", "SyncBatchNormalization", "preprocessing"]


def __getattr__(name: str) -> object:
    if name in ("DynamicEmbedding", "DynamicLookup"):
        raise AttributeError(
            f"unison does not implement keras.layers.experimental.{name} (tf_keras's vocabulary that changes "
            "during training). Use a fixed keras.layers.Embedding / StringLookup over a vocabulary built "
            "beforehand (StringLookup.adapt)."
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
