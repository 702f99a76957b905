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

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset, default_collate

from unison.data import Dataset as TfDataset
from unison.data.context import IterContext
from unison.data.iterator_state import PipelinePosition, counters, replica_seed, set_counters
from unison.data.options import INFINITE_CARDINALITY
from unison.distribute.input import (
    DistributedDataset,
    InputPlacement,
    PerReplicaDataset,
    first_leaf,
    map_structure,
    shard_bounds,
    split_batch,
    to_tensor,
)
from unison.ops.dtypes import from_numpy


@dataclass
class Batch:
    """This replica's rows of one global batch (``global_size=None``: sum it across replicas)."""

    x: Any
    y: Any
    sample_weight: torch.Tensor | None
    global_size: int | None


def _as_tensor(a: Any, name: str) -> torch.Tensor:
    if isinstance(a, torch.Tensor):
        t = a.detach()
    elif isinstance(a, np.ndarray) or isinstance(a, (list, tuple)):
        arr = np.asarray(a)
        if arr.dtype.kind in "OUS":  # text (predict(tf.constant([...])) of a TextVectorization model)
            return arr.astype(object)  # type: ignore[return-value]
        t = from_numpy(arr)
    else:
        raise TypeError(
            f"{name} must be a numpy array, a torch tensor, a torch Dataset/DataLoader or an "
            f"iterable of (x, y) batches. Received: {type(a).__name__}"
        )
    # Keras computes in float32 (floatx); labels keep their integer type.
    return t.float() if t.dtype == torch.float64 else t


def is_structure(a: Any) -> bool:
    """A list or dict of arrays (the inputs or targets of a multi-input/-output model)."""
    values: list[Any] = list(a.values()) if isinstance(a, dict) else a if isinstance(a, list) else []
    return bool(values) and all(isinstance(v, (np.ndarray, torch.Tensor)) or is_structure(v) for v in values)


def _as_tensors(a: Any, name: str) -> Any:
    if is_structure(a):
        return map_structure(lambda leaf: _as_tensor(leaf, name), a)
    return _as_tensor(a, name)


class ArrayAdapter:
    """Arrays or tensors held in memory by every replica (or lists/dicts of them)."""

    def __init__(
        self,
        x: Any,
        y: Any,
        sample_weight: Any,
        batch_size: int,
        shuffle: bool,
        seed: int,
        num_replicas: int,
        replica_id: int,
        device: torch.device | None,
    ) -> None:
        self.x = _as_tensors(x, "x")
        self.y = None if y is None else _as_tensors(y, "y")
        self.sw = (
            None
            if sample_weight is None
            else map_structure(lambda t: t.float(), _as_tensors(sample_weight, "sample_weight"))
        )
        sizes = {"x": len(first_leaf(self.x))}
        if self.y is not None:
            sizes["y"] = len(first_leaf(self.y))
        if self.sw is not None:
            sizes["sample_weight"] = len(first_leaf(self.sw))
        for what, value in (("x", self.x), ("y", self.y)):
            lengths = {len(leaf) for leaf in _leaves(value)}
            if len(lengths) > 1:
                raise ValueError(
                    f"Data cardinality is ambiguous: the arrays of {what} have {sorted(lengths)} "
                    "samples. Make sure all arrays contain the same number of samples."
                )
        if len(set(sizes.values())) > 1:
            detail = ", ".join(f"{k} sizes: {v}" for k, v in sizes.items())
            raise ValueError(
                f"Data cardinality is ambiguous: {detail}. Make sure all arrays contain the same number of samples."
            )
        self.n = sizes["x"]
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.num_replicas, self.replica_id = num_replicas, replica_id
        self.device = device or torch.device("cpu")
        self.steps_per_epoch: int | None = math.ceil(self.n / batch_size) if self.n else 0
        self._cursor: tuple[int, int] = (0, 0)  # (pass, step) for steps_per_epoch across epochs
        self.epoch_origin: int | None = 0  # batch index (over all passes) where the epoch began

    @property
    def example_shape(self) -> tuple[int, ...]:
        return tuple(first_leaf(self.x).shape[1:])

    @property
    def example(self) -> Any:
        """One row of ``x`` (a structure for a multi-input model)."""
        return map_structure(lambda t: t[:1], self.x)

    @property
    def y_shape(self) -> Any:
        if self.y is None:
            return ()
        return map_structure(lambda t: tuple(t.shape[1:]), self.y) if is_structure(self.y) else tuple(self.y.shape[1:])

    def _take(self, rows: slice | torch.Tensor) -> Batch:
        def leaf(t: Any) -> Any:
            if isinstance(t, np.ndarray):  # strings stay numpy
                return t[rows] if isinstance(rows, slice) else t[rows.numpy()]
            part = t[rows] if isinstance(rows, slice) else t.index_select(0, rows)
            return part.to(self.device, non_blocking=True) if part.device != self.device else part

        def take(t: Any) -> Any:
            if t is None:
                return None
            return leaf(t) if isinstance(t, (torch.Tensor, np.ndarray)) else map_structure(leaf, t)

        return Batch(take(self.x), take(self.y), take(self.sw), None)

    def _order(self, pass_index: int) -> torch.Tensor | None:
        if not self.shuffle:
            return None
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + pass_index)
        return torch.randperm(self.n, generator=gen)

    def epoch(self, epoch: int, steps: int | None = None, skip: int = 0) -> Iterator[Batch]:
        """This replica's batches of one epoch (``steps`` may cut it short or wrap around).

        ``skip``: the first batches of the epoch were already trained on (a resumed backup);
        the rest come in the same order as in an uninterrupted run.
        """
        total = self.steps_per_epoch or 0
        if steps is None:
            pass_index, step = epoch, 0
            todo = total
        else:
            pass_index, step = self._cursor
            todo = steps
        self.epoch_origin = pass_index * total + step  # where this epoch starts (for backups)
        if skip and total:
            pass_index, step = divmod(self.epoch_origin + skip, total)
            todo -= skip
        order = self._order(pass_index)
        for _ in range(todo):
            if step >= total:
                pass_index, step = pass_index + 1, 0
                order = self._order(pass_index)
            g0 = step * self.batch_size
            g1 = min(g0 + self.batch_size, self.n)
            a, b = shard_bounds(g1 - g0, self.num_replicas, self.replica_id)
            rows: slice | torch.Tensor = slice(g0 + a, g0 + b) if order is None else order[g0 + a : g0 + b]
            batch = self._take(rows)
            batch.global_size = g1 - g0
            step += 1
            yield batch
        self._cursor = (pass_index, step)

    @property
    def position(self) -> int:
        """The batch index (over all passes) the next epoch with ``steps_per_epoch`` starts at."""
        pass_index, step = self._cursor
        return pass_index * (self.steps_per_epoch or 0) + step

    def seek(self, epoch_origin: int | None) -> None:
        """Start the next ``steps_per_epoch`` epoch at batch ``epoch_origin`` (a restored backup)."""
        total = self.steps_per_epoch or 0
        if epoch_origin is not None and total:
            self._cursor = divmod(epoch_origin, total)

    def blocks(self, batch_size: int) -> Iterator[Batch]:
        """This replica's contiguous block of the data, in local batches (evaluation order)."""
        a, b = shard_bounds(self.n, self.num_replicas, self.replica_id)
        local = max(1, math.ceil(batch_size / self.num_replicas))
        for i in range(a, b, local):
            yield self._take(slice(i, min(i + local, b)))

    def eval_steps(self, batch_size: int) -> int:
        a, b = shard_bounds(self.n, self.num_replicas, self.replica_id)
        return math.ceil((b - a) / max(1, math.ceil(batch_size / self.num_replicas)))


class MapDatasetAdapter(ArrayAdapter):
    """A map-style ``torch.utils.data.Dataset`` yielding ``(x, y)`` items."""

    def __init__(
        self,
        dataset: Dataset[Any],
        batch_size: int,
        shuffle: bool,
        seed: int,
        num_replicas: int,
        replica_id: int,
        device: torch.device | None,
    ) -> None:
        self.dataset = dataset
        n = len(dataset)  # type: ignore[arg-type]
        first = dataset[0] if n else (torch.zeros(0), torch.zeros(0))
        super().__init__(torch.empty((n, 0)), None, None, batch_size, shuffle, seed, num_replicas, replica_id, device)
        self._first = default_collate([first])

    @property
    def example_shape(self) -> tuple[int, ...]:
        return tuple(first_leaf(self._first[0]).shape[1:])

    @property
    def example(self) -> Any:
        return map_structure(lambda t: t[:1], self._first[0])

    @property
    def y_shape(self) -> tuple[int, ...]:
        return tuple(first_leaf(self._first[1]).shape[1:]) if len(self._first) > 1 else ()

    def _take(self, rows: slice | torch.Tensor) -> Batch:
        ids = range(self.n)[rows] if isinstance(rows, slice) else rows.tolist()
        items = [self.dataset[i] for i in ids]
        if not items:
            empty = map_structure(lambda t: t[:0], self._first)
            return _unpack(to_tensor(empty, self.device), None)
        return _unpack(to_tensor(default_collate(items), self.device), None)


def as_batch(element: Any, device: torch.device | None = None) -> Batch:
    """One element of a dataset, ``x``, ``(x, y)``, ``(x, y, sample_weight)`` or a dict, as a Batch."""
    return _unpack(to_tensor(element, device or torch.device("cpu")), None)


def _unpack(batch: Any, global_size: int | None) -> Batch:
    if isinstance(batch, (tuple, list)):
        if len(batch) == 2:
            return Batch(batch[0], batch[1], None, global_size)
        if len(batch) == 3:
            return Batch(batch[0], batch[1], batch[2], global_size)
        if len(batch) == 1:
            return Batch(batch[0], None, None, global_size)
    if isinstance(batch, dict) and "x" in batch:
        return Batch(batch["x"], batch.get("y"), batch.get("sample_weight"), global_size)
    return Batch(batch, None, None, global_size)


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
        return map_structure(lambda t: t[:1], _unpack(self._peek, None).x)

    @property
    def y_shape(self) -> Any:
        y = _unpack(self._peek, None).y
        if isinstance(y, (dict, list)) or (isinstance(y, tuple) and is_structure(list(y))):
            return map_structure(lambda t: tuple(t.shape[1:]), y)
        return tuple(first_leaf(y).shape[1:]) if y is not None else ()

    def _local(self, part: tuple[Any, int | None]) -> Batch:
        local, n = part
        if type(local) is tuple and all(isinstance(v, torch.Tensor) for v in local):
            return _unpack(tuple(map(self._convert, local)), n)  # (x, y[, w]) tensors: the common step
        return _unpack(map_structure(self._convert, local), n)

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
        # With steps_per_epoch, epochs continue where the previous one stopped (Keras).
        if self._iterator is None:
            self._iterator = self._new_pass()
        self.epoch_origin = self._position(self._pass_start, self._pass_drawn)
        for i in range(steps):
            try:
                batch = next(self._iterator)
            except StopIteration:
                self._iterator = self._new_pass()
                again = next(self._iterator, None)
                if again is None:
                    raise ValueError(
                        "The dataset yielded no batch in a whole pass; it cannot fill "
                        f"steps_per_epoch={steps}. Check the data source."
                    ) from None
                batch = again
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


_END = object()


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


def _leaves(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return [value]
    items = value.values() if isinstance(value, dict) else value
    return [leaf for v in items for leaf in _leaves(v)]


def _length(source: Any) -> int | None:
    try:
        return len(source) if hasattr(source, "__len__") else None
    except TypeError:  # an infinite or unknown-length dataset
        return None


def _floatx(t: Any) -> Any:
    # Keras computes in float32 (floatx): float64 inputs (x / 255.0 in numpy) are cast, as for arrays.
    return t.float() if isinstance(t, torch.Tensor) and t.dtype == torch.float64 else t


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
            x,
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
