"""``keras.utils.PyDataset``: each item a global batch, in a seeded order every replica shares."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from unison.data.iterator_state import PipelinePosition
from unison.distribute.input import (
    split_batch,
)
from unison.keras.trainers.data_adapters.batch import is_structure
from unison.keras.trainers.data_adapters.iterable_adapter import IterableAdapter


class PyDatasetAdapter(IterableAdapter):
    """A ``keras.utils.PyDataset``: item ``i`` is global batch ``i``; ``shuffle`` permutes the item order.

    Every replica draws the same permutation (a seed shared by all replicas, a new one each pass)
    and keeps its rows of each item, so N replicas train on the batches one process would.
    ``on_epoch_begin()`` runs before and ``on_epoch_end()`` after each complete pass.
    """

    def __init__(
        self,
        dataset: Any,
        shuffle: bool,
        seed: int,
        num_replicas: int,
        replica_id: int,
        device: torch.device | None,
    ) -> None:
        self.dataset = dataset
        self.shuffle = shuffle
        self.seed = seed
        self._passes = 0
        num_batches = dataset.num_batches
        if num_batches is not None and (isinstance(num_batches, bool) or not isinstance(num_batches, int)):
            raise TypeError(
                f"{type(dataset).__name__}.__len__/num_batches must return an int (or None for an endless "
                f"dataset). Received: {num_batches!r}."
            )
        self._num_batches: int | None = num_batches
        super().__init__(dataset, num_replicas, replica_id, device)
        self.steps_per_epoch = num_batches
        self.infinite = num_batches is None

    def _first(self) -> Any:
        if self._num_batches == 0:
            return None
        return self.dataset[0]

    def _counters(self) -> list[int] | None:
        return [self._passes]

    def _set_counters(self, values: list[int], seed_base: int) -> None:
        if len(values) != 1:
            raise ValueError(
                "BackupAndRestore: the backup records the position of a tf.data pipeline, but fit() was "
                "given a PyDataset. Resume with the same training data that was backed up."
            )
        self._passes, self.seed = int(values[0]), int(seed_base)

    def _position(self, start: list[int] | None, offset: int) -> dict[str, Any] | None:
        return None if start is None else PipelinePosition(int(self.seed), tuple(start), offset).as_dict()

    def _order(self) -> Iterator[int]:
        if self._num_batches is None:
            return itertools.count()
        if not self.shuffle:
            return iter(range(self._num_batches))
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + self._passes)
        return iter(torch.randperm(self._num_batches, generator=gen).tolist())

    def _items(self, order: Iterator[int]) -> Iterator[Any]:
        workers = self.dataset.workers
        if workers <= 1:
            for i in order:
                yield self.dataset[i]
            return
        # Read ahead with threads, keeping the order (Keras's OrderedEnqueuer).
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="PyDataset")
        pending: list[Future[Any]] = []
        try:
            for i in order:
                pending.append(pool.submit(self.dataset.__getitem__, i))
                if len(pending) >= max(self.dataset.max_queue_size, workers):
                    yield pending.pop(0).result()
            while pending:
                yield pending.pop(0).result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _stream(self) -> Iterator[tuple[Any, int | None]]:
        order = self._order()
        self._passes += 1
        self.dataset.on_epoch_begin()
        for item in self._items(order):
            if isinstance(item, list) and 1 <= len(item) <= 3 and not is_structure(item):
                item = tuple(item)
            yield split_batch(_as_arrays(item), self.num_replicas, self.replica_id)
        self.dataset.on_epoch_end()


def _as_arrays(item: Any) -> Any:
    """Python lists and scalars inside an item become numpy arrays (the leaves split_batch cuts)."""
    if isinstance(item, tuple):
        return tuple(_as_arrays(v) for v in item)
    if isinstance(item, dict):
        return {k: _as_arrays(v) for k, v in item.items()}
    if item is None or isinstance(item, (torch.Tensor, np.ndarray)):
        return item
    if isinstance(item, list) and item and all(isinstance(v, (torch.Tensor, np.ndarray)) for v in item):
        return item  # the inputs of a multi-input model
    return np.asarray(item)
