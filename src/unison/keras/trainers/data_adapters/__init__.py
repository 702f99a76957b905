"""What ``fit``/``evaluate``/``predict`` accept, turned into this replica's batches.

Every adapter yields :class:`Batch` objects holding *this replica's* rows of a global batch and
the global batch's size (each replica divides its summed loss by it, docs/semantics.md#loss):

* arrays / tensors (``x, y``): indices of each global batch, shuffled per epoch with a seed all
  replicas share, then split across replicas;
* a map-style ``torch.utils.data.Dataset``: the same, fetching items by index;
* any iterable of global batches (a ``DataLoader``, ``strategy.experimental_distribute_dataset``):
  each batch split across replicas;
* ``strategy.distribute_datasets_from_function``: already per replica; the global size is summed;
* a ``keras.utils.PyDataset`` (``Sequence``): each item is a global batch, read by every replica in
  the same (seeded, optionally shuffled) order and split across replicas like an iterable's.

For evaluation and prediction each replica takes a contiguous block of the data, so every sample
is counted exactly once and nothing is padded.

Example:
    >>> import numpy as np
    >>> a = ArrayAdapter(np.zeros((5, 2), "float32"), np.arange(5), None, batch_size=2,
    ...                  shuffle=False, seed=0, num_replicas=1, replica_id=0, device=None)
    >>> [b.global_size for b in a.epoch(0)]
    [2, 2, 1]
"""

from unison.keras.trainers.data_adapters.array_adapter import ArrayAdapter, MapDatasetAdapter
from unison.keras.trainers.data_adapters.batch import Batch, _unpack, as_batch, is_structure
from unison.keras.trainers.data_adapters.dispatch import from_pandas, make_adapter, warn_if_batch_size_ignored
from unison.keras.trainers.data_adapters.iterable_adapter import IterableAdapter
from unison.keras.trainers.data_adapters.py_dataset_adapter import PyDatasetAdapter

__all__ = [
    "ArrayAdapter",
    "Batch",
    "IterableAdapter",
    "MapDatasetAdapter",
    "PyDatasetAdapter",
    "_unpack",
    "as_batch",
    "from_pandas",
    "is_structure",
    "make_adapter",
    "warn_if_batch_size_ignored",
]
