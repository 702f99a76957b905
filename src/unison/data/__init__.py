"""``unison.data``: TF's ``tf.data`` input pipelines on torch tensors (``import unison as tf; tf.data``).

Below ``keras`` and ``distribute`` in the layering: it knows nothing of strategies. Elements are
torch tensors nested in tuples and dicts; strings stay numpy arrays. See docs/data.md for the
supported API and the few differences from TF.

Example:
    >>> import numpy as np
    >>> import unison as tf
    >>> ds = tf.data.Dataset.from_tensor_slices((np.arange(8.0), np.arange(8))).shuffle(8, seed=1).batch(4)
    >>> [tuple(x.shape) for x, y in ds]
    [(4,), (4,)]
"""

from unison.data import experimental
from unison.data.dataset import Dataset, Iterator, Optional
from unison.data.options import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    DistributeOptions,
    Options,
    ThreadingOptions,
)
from unison.data.sources import TextLineDataset
from unison.data.specs import TensorSpec
from unison.data.tfrecord import TFRecordDataset

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "DistributeOptions",
    "Iterator",
    "Optional",
    "Options",
    "TFRecordDataset",
    "TensorSpec",
    "TextLineDataset",
    "ThreadingOptions",
    "experimental",
]
