"""Variable partitioners (TF's ``tf.distribute.experimental.partitioners``).

A partitioner decides into how many shards a variable is split along axis 0; the strategy then
places the shards on the parameter servers. ``partitioner(shape, dtype)`` returns TF's list of
partitions per axis, e.g. ``[3, 1]`` for a ``(10, 4)`` variable in three row shards. Shards hold
consecutive rows; the first ``rows % n`` shards hold one row more than the others (TF's split).

Example:
    >>> import torch
    >>> FixedShardsPartitioner(3)((10, 4), torch.float32)
    [3, 1]
    >>> MinSizePartitioner(min_shard_bytes=64, max_shards=4)((10, 4), torch.float32)
    [3, 1]
    >>> MaxSizePartitioner(max_shard_bytes=64)((10, 4), torch.float32)
    [3, 1]
    >>> shard_rows(10, 3)
    [4, 3, 3]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["FixedShardsPartitioner", "MaxSizePartitioner", "MinSizePartitioner", "Partitioner", "shard_rows"]


def _positive_int(name: str, value: Any, owner: str, allow_none: bool = False) -> None:
    if allow_none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{owner}: `{name}` must be an integer >= 1. Received: {name}={value!r}")


def _bytes_per_element(dtype: Any, bytes_per_string: int) -> int:
    if dtype is str or dtype == "string":
        return bytes_per_string
    return torch.empty((), dtype=dtype).element_size()


def shard_rows(rows: int, num_shards: int) -> list[int]:
    """Rows per shard when ``rows`` are split into ``num_shards`` consecutive shards."""
    base, extra = divmod(rows, num_shards)
    return [base + (1 if i < extra else 0) for i in range(num_shards)]


class Partitioner:
    """Base class: ``__call__(shape, dtype, axis=0)`` returns the number of partitions per axis."""

    def __call__(self, shape: Sequence[int], dtype: Any, axis: int = 0) -> list[int]:
        raise NotImplementedError

    @staticmethod
    def _along(shape: Sequence[int], axis: int, n: int) -> list[int]:
        partitions = [1] * len(shape)
        if shape:
            partitions[axis] = max(1, min(int(n), int(shape[axis])))
        return partitions


class FixedShardsPartitioner(Partitioner):
    """Split every variable into ``num_shards`` shards (fewer if it has fewer rows)."""

    def __init__(self, num_shards: int) -> None:
        _positive_int("num_shards", num_shards, "FixedShardsPartitioner")
        self.num_shards = num_shards

    def __call__(self, shape: Sequence[int], dtype: Any, axis: int = 0) -> list[int]:
        return self._along(shape, axis, self.num_shards)


class MinSizePartitioner(Partitioner):
    """As many shards as keep each at least ``min_shard_bytes``, at most ``max_shards``."""

    def __init__(self, min_shard_bytes: int = 256 << 10, max_shards: int = 1, bytes_per_string: int = 16) -> None:
        _positive_int("min_shard_bytes", min_shard_bytes, "MinSizePartitioner")
        _positive_int("max_shards", max_shards, "MinSizePartitioner")
        _positive_int("bytes_per_string", bytes_per_string, "MinSizePartitioner")
        self.min_shard_bytes, self.max_shards, self.bytes_per_string = min_shard_bytes, max_shards, bytes_per_string

    def __call__(self, shape: Sequence[int], dtype: Any, axis: int = 0) -> list[int]:
        total = math.prod(shape) * _bytes_per_element(dtype, self.bytes_per_string)
        return self._along(shape, axis, min(self.max_shards, math.ceil(total / self.min_shard_bytes)))


class MaxSizePartitioner(Partitioner):
    """As few shards as keep each at most ``max_shard_bytes`` (capped by ``max_shards``)."""

    def __init__(self, max_shard_bytes: int, max_shards: int | None = None, bytes_per_string: int = 16) -> None:
        _positive_int("max_shard_bytes", max_shard_bytes, "MaxSizePartitioner")
        _positive_int("max_shards", max_shards, "MaxSizePartitioner", allow_none=True)
        _positive_int("bytes_per_string", bytes_per_string, "MaxSizePartitioner")
        self.max_shard_bytes, self.max_shards, self.bytes_per_string = max_shard_bytes, max_shards, bytes_per_string

    def __call__(self, shape: Sequence[int], dtype: Any, axis: int = 0) -> list[int]:
        if not shape:
            return []
        row_bytes = math.prod(tuple(shape[:axis]) + tuple(shape[axis + 1 :])) * _bytes_per_element(
            dtype, self.bytes_per_string
        )
        rows_per_shard = max(1, self.max_shard_bytes // max(1, row_bytes))
        n = math.ceil(shape[axis] / rows_per_shard)
        if self.max_shards is not None:
            n = min(n, self.max_shards)
        return self._along(shape, axis, n)
