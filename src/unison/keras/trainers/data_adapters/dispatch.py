"""Which adapter reads what the user passed to ``fit``/``evaluate``/``predict``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from unison.data import Dataset as TfDataset
from unison.distribute.input import (
    DistributedDataset,
    InputPlacement,
    PerReplicaDataset,
)
from unison.keras.trainers.data_adapters.array_adapter import ArrayAdapter, MapDatasetAdapter
from unison.keras.trainers.data_adapters.batch import is_structure
from unison.keras.trainers.data_adapters.iterable_adapter import IterableAdapter
from unison.keras.trainers.data_adapters.py_dataset_adapter import PyDatasetAdapter


def make_adapter(
    x: Any,
    y: Any,
    sample_weight: Any,
    batch_size: int,
    shuffle: bool,
    seed: int,
    num_replicas: int,
    replica_id: int,
    device: torch.device,
    placement: InputPlacement | None = None,
) -> ArrayAdapter | IterableAdapter:
    """Pick the adapter for what the user passed to ``fit``/``evaluate``/``predict``."""
    if x is None:
        raise ValueError(
            "No input data: x is None. Pass numpy arrays or tensors (x, y), a tf.data "
            "Dataset, a torch Dataset/DataLoader, or an iterable of (x, y) batches."
        )
    # Keras takes pandas frames and series as the arrays they hold (its data adapters do the same).
    x, y, sample_weight = from_pandas((x, y, sample_weight))
    if isinstance(x, TfDataset):
        if y is not None:
            raise ValueError(
                "`y` must not be given when `x` is a tf.data Dataset (its elements carry the labels: "
                f"(x, y) or (x, y, sample_weight)). Received: y of type {type(y).__name__}."
            )
        x = DistributedDataset(
            _densify_sparse(x),
            num_replicas,
            replica_id,
            device or torch.device("cpu"),
            placement or InputPlacement(num_replicas, replica_id),
            seed_base=seed,
        )
    if isinstance(x, DistributedDataset):
        return IterableAdapter(x, num_replicas, replica_id, device)
    if isinstance(x, PerReplicaDataset):
        return IterableAdapter(x.dataset, num_replicas, replica_id, device, per_replica=True, seed=seed)
    if isinstance(x, (np.ndarray, torch.Tensor, list)) and not _is_batch_list(x) or is_structure(x):
        return ArrayAdapter(x, y, sample_weight, batch_size, shuffle, seed, num_replicas, replica_id, device)
    if y is not None:
        raise ValueError(
            f"`y` must not be given when `x` is a dataset or an iterable of batches (it yields the "
            f"labels itself). Received: x of type {type(x).__name__} and y of type {type(y).__name__}."
        )
    from unison.keras.utils.py_dataset import PyDataset  # here: keras.utils imports the trainer's modules

    if isinstance(x, PyDataset):
        return PyDatasetAdapter(x, shuffle, seed, num_replicas, replica_id, device)
    if isinstance(x, Dataset) and hasattr(x, "__getitem__") and hasattr(x, "__len__"):
        return MapDatasetAdapter(x, batch_size, shuffle, seed, num_replicas, replica_id, device)
    if hasattr(x, "__iter__"):
        return IterableAdapter(x, num_replicas, replica_id, device)
    raise TypeError(
        "fit/evaluate/predict accept numpy arrays or tensors (x, y), a torch Dataset or DataLoader, "
        f"or an iterable of (x, y) batches. Received: x of type {type(x).__name__}"
    )


def _densify_sparse(dataset: TfDataset) -> TfDataset:
    """A dataset whose SparseTensor components are dense, as the model receives them.

    Keras on TF feeds a SparseTensor to the model and its Dense layers multiply it as sparse; the
    values are those of the dense product, so unison densifies each batch before the step (the
    torch layers take dense tensors). Datasets without sparse components are returned as they are.
    """
    from unison.ops.composite_specs import SparseTensorSpec
    from unison.ops.sparse_tensor import SparseTensor, to_dense
    from unison.ops.tree import flatten, map_structure

    try:
        specs = flatten(dataset.element_spec, lists=False)
    except Exception:  # noqa: BLE001 - an empty or failing pipeline: the adapter's peek names the problem
        return dataset
    if not any(isinstance(s, SparseTensorSpec) for s in specs):
        return dataset
    return dataset.map(
        lambda *e: map_structure(
            lambda v: to_dense(v) if isinstance(v, SparseTensor) else v, e[0] if len(e) == 1 else e, lists=False
        )
    )


def _is_batch_list(x: Any) -> bool:
    return isinstance(x, list) and bool(x) and isinstance(x[0], (tuple, list, dict))


def from_pandas(data: Any) -> Any:
    """pandas ``DataFrame``/``Series`` (also inside a list, tuple or dict) as numpy arrays.

    Keras takes pandas objects wherever it takes arrays (TF's regression tutorial fits on a
    ``DataFrame`` and a ``Series``, with ``validation_split``); their values are what count, the
    index is dropped. pandas is not imported: an object counts as pandas by its type's module.

    Example:
        >>> class Series:  # stands in for pandas.Series
        ...     __module__ = "pandas.core.series"
        ...     def to_numpy(self, copy=False):
        ...         return np.array([1.0, 2.0])
        >>> from_pandas({"a": Series()})
        {'a': array([1., 2.])}
    """
    if type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "to_numpy"):
        array = data.to_numpy(copy=True)  # pandas 3 hands out read-only views, which torch warns about
        # get_dummies/bool columns mixed with floats give object arrays: numbers, as Keras converts them
        return array.astype(np.float32) if array.dtype == object else array
    if isinstance(data, dict):
        return {k: from_pandas(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)) and not hasattr(data, "_fields"):
        return type(data)(from_pandas(v) for v in data)
    return data
