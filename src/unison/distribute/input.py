"""Input distribution: global batches become per-replica batches (TF semantics).

``batch_size`` is the global batch, as in TF (docs/semantics.md#global-batch); replica ``r`` takes its contiguous share
of each global batch, split as evenly as possible (the first ``n % R`` replicas take one row
more). A replica may get zero rows and still takes part in every collective.

Example:
    >>> [shard_bounds(5, 2, r) for r in range(2)]
    [(0, 3), (3, 5)]
    >>> InputContext(num_replicas_in_sync=4).get_per_replica_batch_size(64)
    16
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import torch

from unison.distribute.iterator_state import DistributedIterator, PipelineIterator
from unison.ops import tree

if TYPE_CHECKING:  # unison.data is imported when a tf.data pipeline is used, not before
    from unison.data import Dataset


def shard_bounds(n: int, num_replicas: int, replica_id: int) -> tuple[int, int]:
    """Rows ``[start, stop)`` of an ``n``-row global batch that replica ``replica_id`` owns."""
    base, extra = divmod(n, num_replicas)
    start = replica_id * base + min(replica_id, extra)
    return start, start + base + (1 if replica_id < extra else 0)


_TENSORS = (torch.Tensor, np.ndarray)


def map_tensors(fn: Callable[[Any], Any], obj: Any) -> Any:
    """Apply ``fn`` to every tensor or array of a structure; other leaves (``None``, numbers) stay as they are."""
    if type(obj) is torch.Tensor:
        return fn(obj)  # a lone tensor: the common batch, no walk
    return tree.map_structure(fn, obj, only=_TENSORS, sort_keys=False)


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
    """numpy arrays and tensors in a structure -> tensors on ``device`` (no copy on CPU); strings stay numpy."""

    def convert(leaf: Any) -> Any:
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind in "USO":
            return leaf  # strings stay numpy arrays (torch has no string tensors)
        t = torch.from_numpy(np.ascontiguousarray(leaf)) if isinstance(leaf, np.ndarray) else leaf
        return t.to(device, non_blocking=True) if t.device != device else t

    return map_tensors(convert, x)


class InputContext:
    """What an input function needs to know to build this pipeline's part of the input.

    Args:
        num_input_pipelines: how many input pipelines (processes) feed the replicas.
        input_pipeline_id: this pipeline's index in ``[0, num_input_pipelines)``.
        num_replicas_in_sync: replicas that train in lockstep.
    """

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0, num_replicas_in_sync: int = 1) -> None:
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
        return (
            f"InputContext(num_input_pipelines={self.num_input_pipelines}, input_pipeline_id="
            f"{self.input_pipeline_id}, num_replicas_in_sync={self.num_replicas_in_sync})"
        )


@dataclass(frozen=True)
class InputPlacement:
    """Where this process's replica sits: which worker, which of that worker's replicas.

    Replicas are ranked worker by worker (chief first), each worker holding ``num_replicas //
    num_workers`` consecutive ranks (the order of ``cluster.plan``: chief first, then workers).
    """

    num_replicas: int = 1
    replica_id: int = 0
    num_workers: int = 1
    worker_index: int = 0

    @property
    def local_replicas(self) -> int:
        return max(1, self.num_replicas // max(1, self.num_workers))

    @property
    def local_index(self) -> int:
        return self.replica_id % self.local_replicas


def split_batch(batch: Any, num_replicas: int, replica_id: int) -> tuple[Any, int]:
    """Replica ``replica_id``'s rows of one global batch, and the global batch's size.

    The one function that cuts global batches into replica shards (arrays, iterables, datasets).
    """
    n = int(first_leaf(batch).shape[0])  # shape[0]: a tensor's len() is a slower Python call
    if num_replicas == 1:
        return batch, n  # the whole batch: no slicing
    start, stop = shard_bounds(n, num_replicas, replica_id)
    return map_tensors(lambda t: t[start:stop], batch), n


def _is_tf_data(dataset: Any) -> TypeGuard[Dataset]:
    from unison.data import Dataset

    return isinstance(dataset, Dataset)


def _file_sources(dataset: Any) -> list[Any]:
    """The file-reading sources of a unison.data pipeline (TextLineDataset, list_files)."""
    from unison.data.sources import TensorSlices, TextLineDataset

    found, todo = [], [dataset]
    while todo:
        node = todo.pop()
        if isinstance(node, TextLineDataset) or (isinstance(node, TensorSlices) and node.file_names):
            found.append(node)
        todo.extend(getattr(node, "_inputs", ()))
    return found


def resolve_shard_policy(dataset: Any, placement: InputPlacement) -> Any:
    """TF's auto-shard decision for ``dataset`` on ``placement`` (DATA for a single worker)."""
    from unison.data.options import AutoShardPolicy

    if not _is_tf_data(dataset) or placement.num_workers <= 1:
        return AutoShardPolicy.DATA
    policy = dataset.options().experimental_distribute.auto_shard_policy
    if policy in (AutoShardPolicy.OFF, AutoShardPolicy.DATA):
        return policy
    sources = _file_sources(dataset)
    counts = [len(s.filenames) if hasattr(s, "filenames") else int(s._cardinality()) for s in sources]
    enough = bool(sources) and min(counts) >= placement.num_workers
    if policy == AutoShardPolicy.FILE:
        if not enough:
            raise ValueError(
                f"AutoShardPolicy.FILE needs a file-based source with at least one file per worker "
                f"({placement.num_workers} workers); the dataset has "
                f"{'no file source' if not sources else f'{min(counts)} file(s)'}. Use AutoShardPolicy.DATA, "
                "or split the data into more files."
            )
        return policy
    if not enough:  # AUTO (or HINT) falls back to DATA, with the warning TF logs
        reason = (
            "no file-based source was found"
            if not sources
            else f"it has {min(counts)} file(s) for {placement.num_workers} workers"
        )
        warnings.warn(
            f"AUTO sharding policy will apply DATA sharding policy as it failed to apply FILE sharding "
            f"policy because {reason}. Every worker reads the whole dataset and keeps its share of each "
            "batch. Set options.experimental_distribute.auto_shard_policy = AutoShardPolicy.DATA to "
            "silence this.",
            stacklevel=3,
        )
        return AutoShardPolicy.DATA
    return AutoShardPolicy.FILE


def refuse_array_dataset(dataset: Any) -> None:
    """Refuse an array or tensor where an iterable of global batches is expected.

    Iterating one yields its rows, each of which would be taken as a whole global batch and split
    across the replicas: a model trained on single rows, without a word (TF takes a tf.data Dataset).

    Raises:
        TypeError: ``dataset`` is a numpy array or a torch tensor (its shape is named).
    """
    if isinstance(dataset, (np.ndarray, torch.Tensor)):
        raise TypeError(
            f"experimental_distribute_dataset expects a tf.data Dataset (or another iterable of global batches), "
            f"not a {type(dataset).__name__}: iterating it would give its rows one by one, each taken as a global "
            f"batch. Received: {type(dataset).__name__} of shape {tuple(dataset.shape)}. Fix: "
            "tf.data.Dataset.from_tensor_slices(array).batch(global_batch_size)."
        )


class DistributedDataset:
    """An iterable of global batches seen by one replica as its own shard of each batch.

    Iterating yields this replica's rows of every global batch, as tensors on its device. A
    ``fit()`` that receives it also knows each batch's global size (for exact loss scaling).

    For a ``unison.data`` pipeline on several workers, the ``AutoShardPolicy`` decides (TF's
    meaning): ``DATA`` every worker runs the whole pipeline and each replica keeps its rows of
    each global batch; ``FILE`` each worker reads its share of the files and its batches are cut
    into per-replica pieces; ``OFF`` every worker runs the whole pipeline and its replicas take
    turns over its per-replica pieces (each worker sees every element).
    """

    def __init__(
        self,
        dataset: Iterable[Any],
        num_replicas: int,
        replica_id: int,
        device: torch.device,
        placement: InputPlacement | None = None,
        seed_base: int | None = None,
    ) -> None:
        refuse_array_dataset(dataset)
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.replica_id = replica_id
        self.device = device
        self.placement = placement or InputPlacement(num_replicas, replica_id)
        self.seed_base = seed_base
        self.policy = resolve_shard_policy(dataset, self.placement)

    def shard(self, batch: Any) -> tuple[Any, int]:
        """This replica's rows of one global batch, and the global batch's size."""
        local, n = split_batch(batch, self.num_replicas, self.replica_id)
        return to_tensor(local, self.device), n

    def _source(self, seed_base: int | None = None) -> Iterator[Any]:
        dataset = self.dataset
        if not _is_tf_data(dataset):
            return iter(dataset)
        from unison.data.context import IterContext
        from unison.data.options import AutoShardPolicy

        p = self.placement
        shard = (p.num_workers, p.worker_index) if self.policy == AutoShardPolicy.FILE else None
        seed = self.seed_base if seed_base is None else seed_base
        ctx = IterContext(seed_base=seed, file_shard=shard, options=dataset.options())
        return dataset._iterate(ctx)

    def local_batches(self, seed_base: int | None = None) -> Iterator[tuple[Any, int | None]]:
        """This replica's part of each step, with the step's global size (``None``: sum it).

        ``seed_base``: the seed base of a ``tf.data`` pipeline's unseeded shuffles (default: the
        one every replica shares).
        """
        from unison.data.options import AutoShardPolicy

        source = self._source(seed_base)
        if self.policy == AutoShardPolicy.DATA:
            for batch in source:
                yield split_batch(batch, self.num_replicas, self.replica_id)
            return
        # FILE / OFF: this worker's own batches, cut into per-replica pieces taken in turn.
        p, k = self.placement, 0
        for batch in source:
            for piece in range(self.num_replicas):
                if k % p.local_replicas == p.local_index:
                    yield split_batch(batch, self.num_replicas, piece)[0], None
                k += 1

    def steps(self) -> int | None:
        """Steps per epoch (``-1``: infinite, ``None``: unknown)."""
        from unison.data.options import INFINITE_CARDINALITY, AutoShardPolicy

        if _is_tf_data(self.dataset):
            n = int(self.dataset._cardinality())
            if n == INFINITE_CARDINALITY:
                return -1
            if n < 0 or self.policy == AutoShardPolicy.FILE:
                return None
            if self.policy == AutoShardPolicy.OFF:
                pieces = n * self.num_replicas
                lr, li = self.placement.local_replicas, self.placement.local_index
                return pieces // lr + (1 if li < pieces % lr else 0)
            return n
        return len(self.dataset) if hasattr(self.dataset, "__len__") else None  # type: ignore[arg-type]

    @property
    def element_spec(self) -> Any:
        """The per-replica element spec of a ``tf.data`` pipeline (batch dimension unknown)."""
        if not _is_tf_data(self.dataset):
            raise AttributeError(
                f"element_spec is only known for a tf.data Dataset. Received: {type(self.dataset).__name__}"
            )
        from unison.data.specs import TensorSpec

        return tree.map_structure(
            lambda s: TensorSpec(None if s.shape is None else (None, *s.shape[1:]), s.dtype, s.name),
            self.dataset.element_spec,
            lists=False,
        )

    def __iter__(self) -> DistributedIterator:
        if not _is_tf_data(self.dataset):
            return DistributedIterator(to_tensor(local, self.device) for local, _ in self.local_batches())

        # A tf.data pipeline's iterator is checkpointable (tf.train.Checkpoint(iterator=...)).
        if self.seed_base is None:
            from unison.data.context import IterContext

            self.seed_base = IterContext().seed_base  # fixed now, so a restore can replay it

        def make(seed_base: int) -> Iterator[Any]:
            return (to_tensor(local, self.device) for local, _ in self.local_batches(seed_base))

        return PipelineIterator(make, self.dataset, self.seed_base, self.element_spec)


class DatasetCopy:
    """A ``tf.data`` dataset given where a dataset function is expected (parameter-server input).

    Each worker gets a copy and iterates all of it, as TF does with a dataset handed to
    ``create_per_worker_dataset``: shard or shuffle it differently per worker with a dataset
    function (``distribute_datasets_from_function``) instead.
    """

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __call__(self, *input_context: Any) -> Any:
        return self.dataset


def as_dataset_fn(obj: Any) -> Any:
    """``obj`` itself, or a :class:`DatasetCopy` of it when it is a ``tf.data`` dataset."""
    return DatasetCopy(obj) if _is_tf_data(obj) else obj


class PerReplicaDataset:
    """The datasets built by ``distribute_datasets_from_function``: already per replica.

    Iterating gives a :class:`DistributedIterator` (``next``, ``get_next``,
    ``get_next_as_optional``, ``element_spec``), as TF's distributed dataset does.
    """

    def __init__(
        self, dataset: Iterable[Any], device: torch.device, seed_base: int | None = None, replica_id: int = 0
    ) -> None:
        self.dataset = dataset
        self.device = device
        self.seed_base = seed_base  # shared by the replicas; each derives its pipeline's own from it
        self.replica_id = replica_id

    @property
    def element_spec(self) -> Any:
        """The spec of this replica's elements: the dataset function's own ``element_spec``."""
        if not _is_tf_data(self.dataset):
            raise AttributeError(
                "element_spec is only known when the dataset function returns a tf.data Dataset. "
                f"Received: {type(self.dataset).__name__}"
            )
        return self.dataset.element_spec

    def __iter__(self) -> DistributedIterator:
        dataset = self.dataset
        if not _is_tf_data(dataset):
            return DistributedIterator(to_tensor(batch, self.device) for batch in dataset)
        from unison.data.context import IterContext
        from unison.data.iterator_state import replica_seed

        if self.seed_base is None:
            self.seed_base = IterContext().seed_base

        def make(seed_base: int) -> Iterator[Any]:
            # This replica's pipeline: unseeded shuffles differ per replica, fixed by the shared seed.
            ctx = IterContext(seed_base=replica_seed(seed_base, self.replica_id), options=dataset.options())
            return (to_tensor(batch, self.device) for batch in dataset._iterate(ctx))

        return PipelineIterator(make, dataset, self.seed_base, dataset.element_spec)
