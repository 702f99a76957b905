"""``tf.data.experimental``'s lookup tables from datasets: ``DatasetInitializer``, ``table_from_dataset``
and ``index_table_from_dataset`` (tf.lookup's tables, filled from a dataset's elements).

Example:
    >>> import unison as tf
    >>> keys = tf.data.Dataset.from_tensor_slices(["a", "b"])
    >>> tf.data.experimental.index_table_from_dataset(keys).lookup(tf.constant(["b", "z"])).tolist()
    [1, -1]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.data.dataset import Dataset
from unison.ops import lookup
from unison.ops.dtypes import string

__all__ = ["DatasetInitializer", "index_table_from_dataset", "table_from_dataset"]


def _stacked(items: list[Any], dtype: Any) -> Any:
    if dtype == "string":
        return np.asarray(items, dtype=object)
    return torch.stack(items) if items else torch.zeros(0, dtype=dtype)


class DatasetInitializer(lookup.KeyValueTensorInitializer):
    """``tf.data.experimental.DatasetInitializer(dataset)``: a table's contents from a dataset of (key, value)."""

    def __init__(self, dataset: Dataset) -> None:
        spec = dataset.element_spec
        if not isinstance(spec, tuple) or len(spec) != 2:
            raise ValueError(
                f"DatasetInitializer takes a dataset of (key, value) pairs. Received element_spec={spec!r}."
            )
        keys, values = [], []
        for key, value in dataset:
            keys.append(key.item() if isinstance(key, np.ndarray) else key)
            values.append(value.item() if isinstance(value, np.ndarray) else value)
        key_dtype = "string" if spec[0].dtype == "string" else spec[0].dtype
        value_dtype = "string" if spec[1].dtype == "string" else spec[1].dtype
        super().__init__(_stacked(keys, key_dtype), _stacked(values, value_dtype))


def table_from_dataset(
    dataset: Dataset | None = None,
    num_oov_buckets: int = 0,
    vocab_size: int | None = None,
    default_value: Any = None,
    hasher_spec: Any = None,
    key_dtype: Any = string,
    name: str | None = None,
) -> Any:
    """``tf.data.experimental.table_from_dataset``: a lookup table of a dataset's (key, value) pairs.

    With ``num_oov_buckets`` keys not in the table go to hash buckets after the values (a
    ``StaticVocabularyTable``); otherwise they get ``default_value`` (a ``StaticHashTable``).
    """
    if dataset is None:
        raise ValueError("table_from_dataset needs a dataset of (key, value) pairs.")
    if vocab_size is not None:
        dataset = dataset.take(vocab_size)
    initializer = DatasetInitializer(dataset)
    if num_oov_buckets:
        return lookup.StaticVocabularyTable(initializer, num_oov_buckets)
    if default_value is None:
        raise ValueError("table_from_dataset needs a default_value when num_oov_buckets is 0.")
    return lookup.StaticHashTable(initializer, default_value)


def index_table_from_dataset(
    dataset: Dataset | None = None,
    num_oov_buckets: int = 0,
    vocab_size: int | None = None,
    default_value: Any = -1,
    hasher_spec: Any = None,
    key_dtype: Any = string,
    name: str | None = None,
) -> Any:
    """``tf.data.experimental.index_table_from_dataset``: each key of a dataset mapped to its int64 position."""
    if dataset is None:
        raise ValueError("index_table_from_dataset needs a dataset of keys.")
    pairs = dataset.enumerate().map(lambda i, key: (key, i))
    return table_from_dataset(pairs, num_oov_buckets, vocab_size, default_value, hasher_spec, key_dtype, name)
