"""Iterables of global batches: DataLoaders, tf.data pipelines (distributed), per-replica datasets."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import torch

from unison.data import Dataset as TfDataset
from unison.data.context import IterContext
from unison.data.iterator_state import PipelinePosition, counters, replica_seed, set_counters
from unison.data.options import INFINITE_CARDINALITY
from unison.distribute.input import (
    DistributedDataset,
    first_leaf,
    map_tensors,
    split_batch,
)
from unison.keras.trainers.data_adapters.batch import Batch, _floatx, _unpack, is_structure, ran_out_of_data
from unison.ops.dtypes import from_numpy


class IterableAdapter:
    """An iterable of global batches (``DataLoader``, list of batches, distributed dataset).

    A ``tf.data`` pipeline arrives wrapped in a :class:`DistributedDataset`, which cuts its
    global batches (or, on several workers, applies its ``AutoShardPolicy``).
    """

    def __init__(
        self,
        source: Iterable[Any],
        num_replicas: int,
        replica_id: int,
        device: torch.device | None,
        per_replica: bool = False,
        seed: int | None = None,
    ) -> None:
        self.source = source
        self.num_replicas, self.replica_id = num_replicas, replica_id
        self.device = device or torch.device("cpu")
        self.per_replica = per_replica
        self.infinite = False
        if isinstance(source, DistributedDataset):
            steps = source.steps()
            self.infinite = steps == -1
            self.steps_per_epoch = None if steps == -1 else steps
        else:
            self.steps_per_epoch = _length(source)
            self.infinite = isinstance(source, TfDataset) and int(source.cardinality()) == INFINITE_CARDINALITY
        if self.steps_per_epoch == 0:
            raise ValueError(
                "The dataset is empty: it has no batch. Check the data source (a filter, "
                "take(0) or drop_remainder=True on fewer rows than one batch)."
            )
        self._iterator: Iterator[tuple[Any, int | None]] | None = None
        # The exact data position (a tf.data pipeline's seed, shuffle counters and offset), so a
        # restored backup replays the interrupted pass instead of drawing a new order.
        self.epoch_origin: dict[str, Any] | None = None
        self._seed_base = seed if seed is not None else getattr(source, "seed_base", None)
        if self._seed_base is None and self._pipeline() is not None:
            self._seed_base = IterContext().seed_base  # a fresh random one, fixed for this fit (and recorded)
        self._pass_start: list[int] | None = None
        self._pass_drawn = 0
        self._resume_offset = 0
        self._peek = self._first()
        if self._peek is None:
            raise ValueError("The dataset is empty: it yielded no batch. Check the data source.")

    def _first(self) -> Any:
        dataset = self._pipeline()
        if dataset is not None:  # a peek: it starts no iteration of the pipeline's shuffles
            return next(dataset._iterate(IterContext(seed_base=0, options=dataset.options(), peek=True)), None)
        return next(iter(self.source), None)

    def _pipeline(self) -> TfDataset | None:
        """The tf.data pipeline this adapter iterates, if any (its position can be recorded)."""
        if isinstance(self.source, DistributedDataset):
            dataset = self.source.dataset
            return dataset if isinstance(dataset, TfDataset) else None
        return self.source if self.per_replica and isinstance(self.source, TfDataset) else None

    def _stream(self) -> Iterator[tuple[Any, int | None]]:
        """(this replica's rows, the global batch size or None) for each step of one pass."""
        if isinstance(self.source, DistributedDataset):
            if self._pipeline() is not None:
                self.source.seed_base = self._seed_base
            return self.source.local_batches()
        if self.per_replica:
            dataset = self._pipeline()
            if dataset is not None and self._seed_base is not None:
                # Each replica's own pipeline: its unseeded shuffles get a seed of its own, fixed by
                # fit's shared seed, so a restored job replays it.
                ctx = IterContext(seed_base=replica_seed(self._seed_base, self.replica_id), options=dataset.options())
                return ((batch, None) for batch in dataset._iterate(ctx))
            return ((batch, None) for batch in self.source)
        return (split_batch(batch, self.num_replicas, self.replica_id) for batch in self.source)

    # --- the exact position (BackupAndRestore) ------------------------------------------------
    def _counters(self) -> list[int] | None:
        """The pass counters of the data (None: an iterable whose position cannot be recorded)."""
        dataset = self._pipeline()
        return None if dataset is None else counters(dataset)

    def _set_counters(self, values: list[int], seed_base: int) -> None:
        dataset = self._pipeline()
        if dataset is None:
            raise ValueError(
                "BackupAndRestore: the backup records a tf.data pipeline's position, but fit() was given "
                f"{type(self.source).__name__}. Resume with the same training data that was backed up."
            )
        set_counters(dataset, values, where="BackupAndRestore")
        self._seed_base = seed_base

    def _new_pass(self) -> Iterator[tuple[Any, int | None]]:
        """A fresh pass over the data that counts what it yields (the pass's position)."""
        self._pass_start = self._counters()
        self._pass_drawn = 0
        stream = self._stream()

        def counted() -> Iterator[tuple[Any, int | None]]:
            for part in stream:
                self._pass_drawn += 1
                yield part

        out = counted()
        offset, self._resume_offset = self._resume_offset, 0
        for _ in range(offset):  # a restored position: replay the pass up to where it was
            if next(out, _END) is _END:
                break
        return out

    def _position(self, start: list[int] | None, offset: int) -> dict[str, Any] | None:
        if start is None or self._seed_base is None:
            return None
        return PipelinePosition(int(self._seed_base), tuple(start), offset).as_dict()

    @property
    def example_shape(self) -> tuple[int, ...]:
        return tuple(first_leaf(_unpack(self._peek, None).x).shape[1:])

    @property
    def example(self) -> Any:
        return map_tensors(lambda t: t[:1], _unpack(self._peek, None).x)

    @property
    def y_shape(self) -> Any:
        y = _unpack(self._peek, None).y
        if isinstance(y, (dict, list)) or (isinstance(y, tuple) and is_structure(list(y))):
            return map_tensors(lambda t: tuple(t.shape[1:]), y)
        return tuple(first_leaf(y).shape[1:]) if y is not None else ()

    def _local(self, part: tuple[Any, int | None]) -> Batch:
        local, n = part
        if type(local) is tuple and all(isinstance(v, torch.Tensor) for v in local):
            return _unpack(tuple(map(self._convert, local)), n)  # (x, y[, w]) tensors: the common step
        return _unpack(map_tensors(self._convert, local), n)

    def _convert(self, leaf: Any) -> Any:
        """One leaf as a tensor on this replica's device, float64 as float32 (one pass per leaf)."""
        if isinstance(leaf, np.ndarray):
            if leaf.dtype.kind in "USO":
                return leaf  # strings stay numpy
            leaf = from_numpy(leaf)
        if leaf.device != self.device:
            leaf = leaf.to(self.device, non_blocking=True)
        return _floatx(leaf)

    def epoch(self, epoch: int, steps: int | None = None, skip: int = 0) -> Iterator[Batch]:
        """This replica's batches; ``skip`` drops the epoch's first batches (a resumed backup).

        An iterable has no position to restore: the skipped batches are drawn and dropped, so
        the order matches an uninterrupted run only if the iterable yields the same sequence.
        """
        if steps is None:
            if self.infinite:
                raise ValueError(
                    "The dataset is infinite (it repeats forever), so an epoch never ends. Pass "
                    "steps_per_epoch= to fit() (and steps=/validation_steps= to evaluate()/validation), or "
                    "repeat() it a finite number of times."
                )
            stream = self._new_pass()
            self.epoch_origin = self._position(self._pass_start, self._pass_drawn)
            for part in itertools.islice(stream, skip, None):
                yield self._local(part)
            return
        # With steps_per_epoch, epochs continue where the previous one stopped; an epoch ends where
        # the data does, with Keras 3's warning, and the next one starts a new pass (its EpochIterator).
        if self._iterator is None:
            self._iterator = self._new_pass()
        self.epoch_origin = self._position(self._pass_start, self._pass_drawn)
        for i in range(steps):
            batch: Any = next(self._iterator, _END)
            if batch is _END and i == 0:  # the previous epoch ended exactly with the data
                self._iterator = self._new_pass()
                self.epoch_origin = self._position(self._pass_start, self._pass_drawn)
                batch = next(self._iterator, _END)
                if batch is _END:
                    raise ValueError(
                        "The dataset yielded no batch in a whole pass; it cannot fill "
                        f"steps_per_epoch={steps}. Check the data source."
                    ) from None
            if batch is _END:
                ran_out_of_data(self.replica_id)
                self._iterator = None
                return
            if i >= skip:
                yield self._local(batch)

    @property
    def position(self) -> dict[str, Any] | None:
        """Where the next epoch starts (None for an iterable whose position cannot be recorded)."""
        if self._iterator is not None:  # steps_per_epoch: the next epoch continues this pass
            return self._position(self._pass_start, self._pass_drawn)
        return self._position(self._counters(), 0)

    def seek(self, epoch_origin: Any) -> None:
        """Start the next epoch at a recorded position (a restored backup).

        A tf.data pipeline (or a ``PyDataset``) is replayed: the pass that was running is started
        again with the saved seed and shuffle counters and the batches already consumed are
        drawn again and dropped, so the next batch is exactly the one the interrupted run would
        have trained on. Other iterables cannot be positioned: a resumed epoch skips batches.
        """
        position = PipelinePosition.from_dict(epoch_origin, where="BackupAndRestore")
        if position is None:
            return
        self._set_counters(list(position.counters), position.seed_base)
        self._iterator = None
        self._resume_offset = position.offset

    def blocks(self, batch_size: int) -> Iterator[Batch]:
        return self.epoch(0)

    def eval_steps(self, batch_size: int) -> int | None:
        return self.steps_per_epoch


_END = object()


def _length(source: Any) -> int | None:
    try:
        return len(source) if hasattr(source, "__len__") else None
    except TypeError:  # an infinite or unknown-length dataset
        return None
