"""Input distribution: global batches become per-replica batches (TF semantics).

``batch_size`` is the global batch (DESIGN section 3); replica ``r`` takes its contiguous share
of each global batch, split as evenly as possible (the first ``n % R`` replicas take one row
more). A replica may get zero rows and still takes part in every collective.

Example:
    >>> [shard_bounds(5, 2, r) for r in range(2)]
    [(0, 3), (3, 5)]
    >>> InputContext(num_replicas_in_sync=4).get_per_replica_batch_size(64)
    16
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import numpy as np
import torch


def shard_bounds(n: int, num_replicas: int, replica_id: int) -> tuple[int, int]:
    """Rows ``[start, stop)`` of an ``n``-row global batch that replica ``replica_id`` owns."""
    base, extra = divmod(n, num_replicas)
    start = replica_id * base + min(replica_id, extra)
    return start, start + base + (1 if replica_id < extra else 0)


def map_structure(fn: Callable[[Any], Any], obj: Any) -> Any:
    """Apply ``fn`` to every leaf (tensor or array) of nested tuples, lists and dicts."""
    if isinstance(obj, (torch.Tensor, np.ndarray)):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: map_structure(fn, v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(map_structure(fn, v) for v in obj)
    return obj


def first_leaf(obj: Any) -> Any:
    """The first tensor or array in a nested structure (its length is the batch size)."""
    if isinstance(obj, (torch.Tensor, np.ndarray)):
        return obj
    values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (tuple, list)) else ()
    for v in values:
        leaf = first_leaf(v)
        if leaf is not None:
            return leaf
    return None


def to_tensor(x: Any, device: torch.device) -> Any:
    """numpy arrays and tensors in a structure -> tensors on ``device`` (no copy on CPU)."""
    def convert(leaf: Any) -> torch.Tensor:
        t = torch.from_numpy(np.ascontiguousarray(leaf)) if isinstance(leaf, np.ndarray) else leaf
        return t.to(device, non_blocking=True) if t.device != device else t
    return map_structure(convert, x)


class InputContext:
    """What an input function needs to know to build this pipeline's part of the input.

    Args:
        num_input_pipelines: how many input pipelines (processes) feed the replicas.
        input_pipeline_id: this pipeline's index in ``[0, num_input_pipelines)``.
        num_replicas_in_sync: replicas that train in lockstep.
    """

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0,
                 num_replicas_in_sync: int = 1) -> None:
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """The batch each replica gets: ``global_batch_size / num_replicas_in_sync``."""
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError(
                f"The global batch size ({global_batch_size}) must be divisible by "
                f"num_replicas_in_sync ({self.num_replicas_in_sync}). Choose a multiple of "
                f"{self.num_replicas_in_sync}."
            )
        return global_batch_size // self.num_replicas_in_sync

    def __repr__(self) -> str:
        return (f"InputContext(num_input_pipelines={self.num_input_pipelines}, input_pipeline_id="
                f"{self.input_pipeline_id}, num_replicas_in_sync={self.num_replicas_in_sync})")


class DistributedDataset:
    """An iterable of global batches seen by one replica as its own shard of each batch.

    Iterating yields this replica's rows of every global batch, as tensors on its device. A
    ``fit()`` that receives it also knows each batch's global size (for exact loss scaling).
    """

    def __init__(self, dataset: Iterable[Any], num_replicas: int, replica_id: int,
                 device: torch.device) -> None:
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.replica_id = replica_id
        self.device = device

    def shard(self, batch: Any) -> tuple[Any, int]:
        """This replica's rows of one global batch, and the global batch's size."""
        n = len(first_leaf(batch))
        start, stop = shard_bounds(n, self.num_replicas, self.replica_id)
        return to_tensor(map_structure(lambda t: t[start:stop], batch), self.device), n

    def __iter__(self) -> Iterator[Any]:
        for batch in self.dataset:
            yield self.shard(batch)[0]


class PerReplicaDataset:
    """The datasets built by ``distribute_datasets_from_function``: already per replica."""

    def __init__(self, dataset: Iterable[Any], device: torch.device) -> None:
        self.dataset = dataset
        self.device = device

    def __iter__(self) -> Iterator[Any]:
        for batch in self.dataset:
            yield to_tensor(batch, self.device)
