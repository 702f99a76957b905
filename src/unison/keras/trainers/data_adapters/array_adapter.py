"""Arrays, tensors (or lists/dicts of them) and map-style torch Datasets held by every replica."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset, default_collate

from unison.distribute.input import (
    first_leaf,
    map_tensors,
    shard_bounds,
    to_tensor,
)
from unison.keras.trainers.data_adapters.batch import Batch, _unpack, is_structure, ran_out_of_data
from unison.ops import tree
from unison.ops.dtypes import from_numpy


def _as_tensor(a: Any, name: str) -> torch.Tensor:
    if isinstance(a, torch.Tensor):
        if a.is_meta:
            raise ValueError(
                f"{name} is a tensor on the meta device: it has a shape {tuple(a.shape)} but no values to "
                f"train on. Materialize it first (e.g. torch.empty_like({name}, device='cpu') filled with "
                "data, or load the real data) and pass that."
            )
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


def _as_tensors(a: Any, name: str) -> Any:
    if is_structure(a):
        return map_tensors(lambda leaf: _as_tensor(leaf, name), a)
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
            else map_tensors(lambda t: t.float(), _as_tensors(sample_weight, "sample_weight"))
        )
        sizes = {"x": len(first_leaf(self.x))}
        if self.y is not None:
            sizes["y"] = len(first_leaf(self.y))
        if self.sw is not None:
            sizes["sample_weight"] = len(first_leaf(self.sw))
        for what, value in (("x", self.x), ("y", self.y)):
            lengths = {len(leaf) for leaf in tree.flatten(value, sort_keys=False, only=(torch.Tensor, np.ndarray))}
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
        return map_tensors(lambda t: t[:1], self.x)

    @property
    def y_shape(self) -> Any:
        if self.y is None:
            return ()
        return map_tensors(lambda t: tuple(t.shape[1:]), self.y) if is_structure(self.y) else tuple(self.y.shape[1:])

    def _take(self, rows: slice | torch.Tensor) -> Batch:
        def leaf(t: Any) -> Any:
            if isinstance(t, np.ndarray):  # strings stay numpy
                return t[rows] if isinstance(rows, slice) else t[rows.numpy()]
            part = t[rows] if isinstance(rows, slice) else t.index_select(0, rows)
            return part.to(self.device, non_blocking=True) if part.device != self.device else part

        def take(t: Any) -> Any:
            if t is None:
                return None
            return leaf(t) if isinstance(t, (torch.Tensor, np.ndarray)) else map_tensors(leaf, t)

        return Batch(take(self.x), take(self.y), take(self.sw), None)

    def _order(self, pass_index: int) -> torch.Tensor | None:
        if not self.shuffle:
            return None
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + pass_index)
        return torch.randperm(self.n, generator=gen)

    def epoch(self, epoch: int, steps: int | None = None, skip: int = 0) -> Iterator[Batch]:
        """This replica's batches of one epoch (``steps`` may cut it short).

        With ``steps`` (``steps_per_epoch``) epochs continue where the previous one stopped; an
        epoch never runs past the end of the data: as in Keras 3 it stops there with
        :func:`ran_out_of_data`'s warning, and the next epoch starts a new pass.
        ``skip``: the first batches of the epoch were already trained on (a resumed backup);
        the rest come in the same order as in an uninterrupted run.
        """
        total = self.steps_per_epoch or 0
        if steps is None:
            pass_index, step = epoch, 0
            todo = total
        else:
            pass_index, step = self._cursor
            if step >= total:  # the previous epoch ended exactly with the data
                pass_index, step = pass_index + 1, 0
            todo = steps
        self.epoch_origin = pass_index * total + step  # where this epoch starts (for backups)
        step += skip  # an epoch stays within one pass
        todo -= skip
        order = self._order(pass_index)
        for _ in range(todo):
            if step >= total:
                ran_out_of_data(self.replica_id)
                break
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
        return map_tensors(lambda t: t[:1], self._first[0])

    @property
    def y_shape(self) -> tuple[int, ...]:
        return tuple(first_leaf(self._first[1]).shape[1:]) if len(self._first) > 1 else ()

    def _take(self, rows: slice | torch.Tensor) -> Batch:
        ids = range(self.n)[rows] if isinstance(rows, slice) else rows.tolist()
        items = [self.dataset[i] for i in ids]
        if not items:
            empty = map_tensors(lambda t: t[:0], self._first)
            return _unpack(to_tensor(empty, self.device), None)
        return _unpack(to_tensor(default_collate(items), self.device), None)
