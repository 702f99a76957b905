"""Which adapter reads what the user passed to ``fit``/``evaluate``/``predict``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from unison.data import Dataset as TfDataset
from unison.distribute.input import (
    DistributedDataset,
    InputContext,
    InputPlacement,
    PerReplicaDataset,
)
from unison.keras.trainers.data_adapters.array_adapter import ArrayAdapter, MapDatasetAdapter
from unison.keras.trainers.data_adapters.batch import is_structure
from unison.keras.trainers.data_adapters.iterable_adapter import IterableAdapter
from unison.keras.trainers.data_adapters.py_dataset_adapter import PyDatasetAdapter
from unison.keras.utils.experimental import DatasetCreator


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
    from unison.ops.sparse_tensor import SparseTensor

    # a SparseTensor batch (keras.Input(sparse=True)): its dense form, as for sparse datasets below
    x, y = (v.to_dense() if isinstance(v, SparseTensor) else v for v in (x, y))
    if isinstance(x, DatasetCreator):
        # TF's fit on other strategies than parameter servers: distribute_datasets_from_function,
        # one input pipeline per replica (one process each), per-replica batches
        context = InputContext(
            num_input_pipelines=num_replicas, input_pipeline_id=replica_id, num_replicas_in_sync=num_replicas
        )
        x = PerReplicaDataset(x(context), device or torch.device("cpu"), seed, replica_id)
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
    if _is_nested_numbers(x):
        raise ValueError(
            f"Unrecognized data type: x={_short(x)} (of type list). A list of lists of numbers is not "
            "an array: Keras takes a list of arrays as the inputs of a multi-input model. Pass "
            "np.array(x) (one input of shape (samples, features))."
        )
    if isinstance(x, (np.ndarray, torch.Tensor, list)) and not _is_batch_list(x) or is_structure(x):
        return ArrayAdapter(x, y, sample_weight, batch_size, shuffle, seed, num_replicas, replica_id, device)
    if not hasattr(x, "__iter__") and not isinstance(x, Dataset):
        raise ValueError(
            f"Unrecognized data type: x={_short(x)} (of type {type(x).__name__}). fit/evaluate/predict "
            "accept numpy arrays or tensors (x, y), a tf.data Dataset, a keras.utils.PyDataset, a torch "
            "Dataset or DataLoader, or an iterable of (x, y) batches."
        )
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
    raise ValueError(
        f"Unrecognized data type: x={_short(x)} (of type {type(x).__name__}). fit/evaluate/predict accept "
        "numpy arrays or tensors (x, y), a torch Dataset or DataLoader, or an iterable of (x, y) batches."
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


def warn_if_batch_size_ignored(x: Any, batch_size: int | None, where: str) -> None:
    """``batch_size`` given with data that yields its own batches: Keras 3 ignores it silently
    (its docs say not to pass it); unison ignores it too, but says so once."""
    if batch_size is None:
        return
    from torch.utils.data import DataLoader

    from unison.keras.utils.py_dataset import PyDataset  # here: keras.utils imports the trainer's modules

    batched = (TfDataset, DistributedDataset, PerReplicaDataset, PyDataset, DataLoader)
    if isinstance(x, batched) or hasattr(x, "__next__"):
        kind = "tf.data Dataset" if isinstance(x, (TfDataset, DistributedDataset)) else type(x).__name__
        warnings.warn(
            f"{where}: `batch_size={batch_size}` is ignored because x is a {kind}, which "
            "yields its own batches. Batch the data itself (e.g. dataset.batch(n)) and leave "
            "batch_size out.",
            UserWarning,
            stacklevel=3,
        )


def _is_batch_list(x: Any) -> bool:
    return isinstance(x, list) and bool(x) and isinstance(x[0], (tuple, list, dict))


def _is_nested_numbers(x: Any) -> bool:
    """A Python list of lists (or tuples) of numbers: raw rows, not arrays or batches (Keras refuses it)."""
    if not isinstance(x, list) or not x or not isinstance(x[0], list):
        return False
    return all(isinstance(row, list) and all(_is_number(v) for v in row) for row in x)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, complex, np.number, np.bool_)) or (
        isinstance(v, list) and all(map(_is_number, v))
    )


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


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
