"""``tf.train.experimental``'s checkpoint sharding: ``ShardingCallback``, its two policies, ``ShardableTensor``.

``tf.train.CheckpointOptions(experimental_sharding_callback=policy)`` makes ``Checkpoint.write``
(and ``save``, and ``CheckpointManager.save``) hand every saved value to ``policy`` as a
``ShardableTensor`` (checkpoint key, value, dtype, shape, device and slice spec), in TF's order:
the object graph breadth first, then ``_CHECKPOINTABLE_OBJECT_GRAPH``. The policy answers with a
list of shards, each ``{checkpoint_key: {slice_spec: tensor}}``; a value may be cut into slices
(the slice spec ``"4 6 0,2:0,6"`` is TF's ``SaveSliceInfo`` spec: full shape, then offset,length
per axis). The answer is checked as TF checks it (no value lost, added, reshaped, retyped, or
moved to another task: a ``RuntimeError`` saying which) and each shard becomes one file,
``<prefix>.data-<i>-of-<n>.unison`` (TF writes ``<prefix>.data-<i>-of-<n>``) next to
``<prefix>.unison`` (:mod:`unison.train.sharded_files` writes and reads them).

``ShardByTaskPolicy`` keeps one shard per task (one, since unison's chief writes every value);
``MaxShardSizePolicy(max_shard_size)`` fills shards up to that many bytes, cutting tensors along
the axis that fills the current shard best, exactly as TF cuts them.

Example:
    >>> import os, tempfile, unison as tf
    >>> d = tempfile.mkdtemp()
    >>> ckpt = tf.train.Checkpoint(w=tf.Variable(tf.ones([10, 4])))
    >>> policy = tf.train.experimental.MaxShardSizePolicy(max_shard_size=64)
    >>> path = ckpt.write(d + "/c", options=tf.train.CheckpointOptions(experimental_sharding_callback=policy))
    >>> sorted(f for f in os.listdir(d) if ".data-" in f)
    ['c.data-00000-of-00003.unison', 'c.data-00001-of-00003.unison', 'c.data-00002-of-00003.unison']
    >>> float(tf.reduce_sum(tf.train.load_variable(path, "w")))
    40.0
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import math
from collections.abc import Hashable, MutableMapping, Sequence
from typing import Any

import torch

from unison.train.object_graph import GRAPH_KEY

__all__ = ["MaxShardSizePolicy", "ShardByTaskPolicy", "ShardableTensor", "ShardingCallback"]

Shard = MutableMapping[str, MutableMapping[str, Any]]  # checkpoint key -> slice spec -> tensor


@dataclasses.dataclass(frozen=True)
class ShardableTensor:
    """``tf.train.experimental.ShardableTensor``: one saved value, as a sharding callback sees it.

    ``tensor`` is the value, ``checkpoint_key`` its key, ``slice_spec`` ``""`` for a whole value
    (else the part of the full value it is), ``device`` a ``tf.DeviceSpec``. ``trackable`` is
    None in unison (its file records values by path, not by object).
    """

    _tensor_save_spec: Any
    tensor: Any
    dtype: Any
    device: Any
    name: str
    shape: Any
    slice_spec: str
    checkpoint_key: str
    trackable: Any

    def __hash__(self) -> int:
        return hash((self.name, self.dtype, str(self.device), self.checkpoint_key))

    def __repr__(self) -> str:
        fields = ("_tensor_save_spec", "tensor", "dtype", "device", "name", "shape", "slice_spec", "checkpoint_key")
        lines = [f"  {f}={getattr(self, f)!r}" for f in fields] + [f"  trackable={self.trackable!r}"]
        return f"\n{type(self).__name__}:\n" + "\n".join(lines)


class ShardingCallback(abc.ABC):
    """``tf.train.experimental.ShardingCallback``: decides which values go into which checkpoint file.

    Subclasses give a ``description`` and ``__call__(shardable_tensors) -> [shard, ...]``, each
    shard ``{checkpoint_key: {slice_spec: tensor}}``. Values must not be dropped, added, reshaped
    or retyped (checked after the call).
    """

    @property
    @abc.abstractmethod
    def description(self) -> str:
        """A text description of the policy (it names the policy in errors)."""

    @abc.abstractmethod
    def __call__(self, shardable_tensors: Sequence[ShardableTensor]) -> Sequence[Shard]:
        """The shards for ``shardable_tensors``."""

    def __hash__(self) -> int:
        value = hash(self.description)
        for attr, item in vars(self).items():
            if not (inspect.ismethod(item) or inspect.isfunction(item)):
                value ^= hash(attr)
                if isinstance(item, Hashable):
                    value ^= hash(item)
        return value


class ShardByTaskPolicy(ShardingCallback):
    """``tf.train.experimental.ShardByTaskPolicy``: one shard per device task (TF's default)."""

    @property
    def description(self) -> str:
        return "Split tensors into shards based on their device spec task."

    def __call__(self, shardable_tensors: Sequence[ShardableTensor]) -> Sequence[Shard]:
        shard: Shard = {}
        for item in shardable_tensors:
            shard.setdefault(item.checkpoint_key, {})[item.slice_spec] = item.tensor
        return [shard]


def _dims(shape: Any) -> list[int]:
    return [int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else shape)]


def slice_spec(full_shape: Sequence[int], offset: Sequence[int], shape: Sequence[int]) -> str:
    """TF's ``SaveSliceInfo.spec``: ``"4 6 0,2:0,6"``."""
    return (
        " ".join(str(int(d)) for d in full_shape) + " " + ":".join(f"{o},{s}" for o, s in zip(offset, shape))
    ).strip()


def parse_slice_spec(spec: str) -> tuple[list[int], list[int], list[int]]:
    """``(full_shape, offset, shape)`` of a slice spec."""
    *full, slices = spec.strip().split(" ")
    pairs = [p.split(",") for p in slices.split(":")]
    return [int(d) for d in full], [int(o) for o, _ in pairs], [int(s) for _, s in pairs]


def _cut(tensor: Any, begin: Sequence[int], size: Sequence[int]) -> Any:
    return tensor[tuple(slice(b, b + s) for b, s in zip(begin, size))]


def _is_string(dtype: Any) -> bool:
    return getattr(dtype, "name", None) == "string"


def _item_size(dtype: Any) -> int:
    from unison.ops.dtypes import as_dtype

    return int(torch.empty(0, dtype=as_dtype(dtype)).element_size())


class MaxShardSizePolicy(ShardingCallback):
    """``tf.train.experimental.MaxShardSizePolicy(max_shard_size)``: shards of at most that many bytes.

    A value larger than the room left is cut along the axis whose slices fill the shard best; a
    scalar (or a slice) larger than ``max_shard_size`` gets a shard of its own, as in TF.
    """

    def __init__(self, max_shard_size: int) -> None:
        self.max_shard_size = max_shard_size

    @property
    def description(self) -> str:
        return "Split tensors into shards with a max shard size."

    def __call__(self, shardable_tensors: Sequence[ShardableTensor]) -> Sequence[Shard]:
        return _Partitioner(int(self.max_shard_size)).shards(shardable_tensors)


class _Partitioner:
    """The state of one ``MaxShardSizePolicy`` call: the shards so far and the room left."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.filled: list[Shard] = [{}]
        self.oversized: list[Shard] = []
        self.room = max_size

    def _new_shard(self) -> None:
        self.filled.append({})
        self.room = self.max_size

    def shards(self, shardable_tensors: Sequence[ShardableTensor]) -> list[Shard]:
        for item in shardable_tensors:
            self._place(item)
        return (self.filled if self.filled[0] else []) + self.oversized

    def _place(self, item: ShardableTensor) -> None:
        key, spec, value = item.checkpoint_key, item.slice_spec, item.tensor
        if spec:
            full, root_offset, root_shape = parse_slice_spec(spec)
        else:
            full = root_shape = _dims(item.shape)
            root_offset = [0] * len(root_shape)
        if key == GRAPH_KEY or getattr(item.dtype, "name", None) == "variant":
            total = item_size = 0  # TF cannot size these when saving; they go where there is room
        elif _is_string(item.dtype):
            strings = [value.numpy()] if not root_shape else list(value.numpy().reshape(-1))
            sizes = [len(s) for s in strings] or [0]
            total, item_size = sum(sizes), max(sizes)
        else:
            item_size = _item_size(item.dtype)
            total = math.prod(root_shape) * item_size
        if not root_shape:
            if total > self.max_size:
                self.oversized.append({key: {spec: value}})
                return
            if total > self.room:
                self._new_shard()
            self.filled[-1].setdefault(key, {})[spec] = value
            self.room -= total
            return
        cut = _Cut(self, key, value, full, root_offset, root_shape, item_size)
        working = total
        while working > self.room:
            axis, part = cut.next_partition()
            if part == 0:
                self._new_shard()  # not even one slice fits in the room left: start the next shard
            else:
                cut.add_partition(axis, part)
                working = math.prod(cut.shape) * item_size
        if math.prod(cut.shape) > 0:
            rest = _cut(value, [w - r for w, r in zip(cut.offset, root_offset)], cut.shape)
            self.filled[-1].setdefault(key, {})[slice_spec(full, cut.offset, cut.shape)] = rest
        self.room -= working


class _Cut:
    """One value being cut into slices: the offset and shape of the part not placed yet."""

    def __init__(
        self,
        owner: _Partitioner,
        key: str,
        value: Any,
        full: list[int],
        root_offset: list[int],
        root_shape: list[int],
        item_size: int,
    ) -> None:
        self.owner, self.key, self.value, self.full = owner, key, value, full
        self.root_offset, self.root_shape, self.item_size = root_offset, root_shape, item_size
        self.offset = list(root_offset)
        self.shape = list(root_shape)

    def next_partition(self) -> tuple[int, int]:
        """The axis to cut along and the slice length whose size is closest to the room left."""
        room = self.owner.room
        elements = math.prod(self.shape)

        def parts(axis: int) -> float:
            per_slice = elements // self.shape[axis] * self.item_size
            slices_per_shard = room // per_slice
            return math.inf if slices_per_shard == 0 else math.ceil(self.shape[axis] / slices_per_shard)

        best_axis, best_parts = 0, parts(0)
        for axis in range(1, len(self.shape)):
            count = parts(axis)
            if count < best_parts and elements * self.item_size / count <= room:
                best_axis, best_parts = axis, count
        return best_axis, math.ceil(self.shape[best_axis] / best_parts)

    def add_partition(self, axis: int, part: int) -> None:
        """Place the next ``part`` rows along ``axis`` (their own shard when too large for any)."""
        owner = self.owner
        relative = [w - r for w, r in zip(self.offset, self.root_offset)]
        size = [s - r for s, r in zip(self.root_shape, relative)]
        size[axis] = part
        nbytes = math.prod(size) * self.item_size
        piece = _cut(self.value, relative, size)
        spec = slice_spec(self.full, self.offset, size)
        if nbytes > owner.max_size:
            owner.oversized.append({self.key: {spec: piece}})
        elif nbytes > owner.room:
            raise RuntimeError(
                f"Slice size ({nbytes} bytes) is larger than the remaining shard size ({owner.room} bytes). "
                "This should have been caught in MaxShardSizePolicy._add_partition()."
            )
        else:
            owner.filled[-1].setdefault(self.key, {})[spec] = piece
            owner.room -= nbytes
            if owner.room == 0:
                owner._new_shard()
        self.offset[axis] += part
        relative[axis] += part
        self.shape = [s - r for s, r in zip(self.root_shape, relative)]
