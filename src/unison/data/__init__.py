"""``unison.data``: TF's ``tf.data`` input pipelines on torch tensors (``import unison as tf; tf.data``).

Owns ``Dataset`` (:mod:`~unison.data.dataset`), its sources and transformations, TFRecord files
and the worker threads and processes of a pipeline. Below ``keras`` and ``distribute`` in the
layering, it knows nothing of strategies: it may import ``core`` (``atomic_io``), ``ops`` and
``errors`` only. Inside, ``dataset.py`` is the base every transformation module imports; it imports
none of them (they register their classes with it), so the package has no import circle. Elements are
torch tensors nested in tuples and dicts; strings stay numpy arrays. See docs/data.md for the
supported API and the few differences from TF.

Example:
    >>> import numpy as np
    >>> import unison as tf
    >>> ds = tf.data.Dataset.from_tensor_slices((np.arange(8.0), np.arange(8))).shuffle(8, seed=1).batch(4)
    >>> [tuple(x.shape) for x, y in ds]
    [(4,), (4,)]
"""

# Each transformation module registers its Dataset subclasses with dataset.py when it loads
# (dataset.py imports none of them, so there is no dataset <-> transformation circle): load them all.
from unison.data import batching, cache, combine, experimental, resampling, sources, stateful, transforms  # noqa: F401
from unison.data.dataset import Dataset, Iterator, Optional
from unison.data.experimental_more import DatasetSpec, FixedLengthRecordDataset, IteratorSpec, NumpyIterator
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
    "DatasetSpec",
    "FixedLengthRecordDataset",
    "IteratorSpec",
    "NumpyIterator",
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
