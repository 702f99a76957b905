"""``tf.experimental.DynamicRaggedShape``: the shape of a RaggedTensor, as ``tf.shape(rt)`` gives it.

A shape is a list of lengths, outermost first: an ``int`` for a uniform dimension, a tuple of row
lengths for a ragged one (``[4, (1, 3, 0, 2)]`` is four rows of 1, 3, 0 and 2 items). The
dimensions up to the last ragged one are row partitions (``num_row_partitions``); the rest, with
the number of values they partition, is the dense ``inner_shape``. Indexing a uniform dimension
gives its size; a ragged one is a ``ValueError`` (TF's "Index 1 is not uniform"). ``tf.reshape``,
``tf.zeros``, ``tf.ones`` and ``tf.fill`` take one and build a RaggedTensor of that shape.

Example:
    >>> import unison as tf
    >>> s = tf.shape(tf.ragged.constant([[1], [2, 3, 4], [], [5, 6]]))
    >>> s
    <DynamicRaggedShape lengths=[4, (1, 3, 0, 2)] num_row_partitions=1>
    >>> tf.zeros(s, tf.int32).to_list()
    [[0], [0, 0, 0], [], [0, 0]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from unison.ops.dtypes import as_dtype

Length = int | tuple[int, ...]

# the RaggedTensor class, registered by ragged_tensor.py (which imports this module: no import circle)
_RAGGED: list[Any] = []


def register_ragged(cls: type) -> None:
    """Tell the shapes which class builds ragged values (``RaggedTensor``)."""
    _RAGGED[:] = [cls]


class DynamicRaggedShape:
    """``tf.experimental.DynamicRaggedShape``: uniform sizes and ragged row lengths, outermost first."""

    def __init__(
        self, row_partitions: Sequence[Any], inner_shape: Any, dtype: Any = None, validate: bool = True
    ) -> None:
        inner = [int(d) for d in np.asarray(inner_shape).reshape(-1).tolist()]
        if not inner:
            raise ValueError("DynamicRaggedShape: inner_shape must have at least one dimension.")
        lengths: list[Length] = []
        for i, part in enumerate(row_partitions):
            rows = [int(v) for v in part.row_lengths().tolist()]
            if i == 0:
                lengths.append(len(rows))
            lengths.append(rows[0] if part.is_uniform() and rows else tuple(rows))
        if row_partitions and validate:
            nvals = int(row_partitions[-1].nvals())
            if nvals != inner[0]:
                raise ValueError(
                    f"DynamicRaggedShape: the last row partition holds {nvals} values, but inner_shape[0] is "
                    f"{inner[0]}. They must agree."
                )
        lengths += inner[1:] if row_partitions else inner
        self._init(lengths, len(row_partitions), dtype)

    def _init(self, lengths: list[Length], num_row_partitions: int, dtype: Any) -> None:
        self._lengths = lengths
        self._nrp = num_row_partitions
        self._dtype = as_dtype(dtype) if dtype is not None else torch.int64

    @classmethod
    def _make(cls, lengths: list[Length], num_row_partitions: int, dtype: Any) -> DynamicRaggedShape:
        out = cls.__new__(cls)
        out._init(lengths, num_row_partitions, dtype)
        return out

    @classmethod
    def from_lengths(
        cls, lengths: Sequence[Any], num_row_partitions: int | None = None, dtype: Any = torch.int64
    ) -> DynamicRaggedShape:
        """A shape from sizes (ints) and row lengths (tuples), outermost first."""
        items: list[Length] = [tuple(int(v) for v in x) if isinstance(x, (tuple, list)) else int(x) for x in lengths]
        ragged = [i for i, x in enumerate(items) if isinstance(x, tuple)]
        if ragged and ragged[0] == 0:
            raise ValueError("DynamicRaggedShape.from_lengths: the first length must be an int (the number of rows).")
        size = items[0] if items else 1
        for i, x in enumerate(items[1:], start=1):  # each tuple has one length per row of the level above
            if isinstance(x, tuple):
                if len(x) != size:
                    raise ValueError(
                        f"DynamicRaggedShape.from_lengths: lengths[{i}] has {len(x)} row lengths for {size} rows."
                    )
                size = sum(x)
            else:
                size = size * int(x)
        nrp = ragged[-1] if ragged else 0
        return cls._make(items, nrp if num_row_partitions is None else max(nrp, int(num_row_partitions)), dtype)

    @classmethod
    def from_tensor(cls, t: Any, dtype: Any = None) -> DynamicRaggedShape:
        """The shape of a RaggedTensor (or a dense tensor)."""
        if hasattr(t, "nested_row_splits"):
            lengths: list[Length] = [t.nrows_int()]
            for splits in t.nested_row_splits:
                lengths.append(tuple(int(v) for v in (splits[1:] - splits[:-1]).tolist()))
            lengths += [int(d) for d in t.flat_values.shape[1:]]
            return cls._make(lengths, t.ragged_rank, dtype)
        return cls._make([int(d) for d in t.shape], 0, dtype)

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def rank(self) -> int:
        return len(self._lengths)

    @property
    def num_row_partitions(self) -> int:
        return self._nrp

    @property
    def inner_shape(self) -> torch.Tensor:
        """The dense shape under the row partitions: the number of values, then the uniform sizes."""
        return torch.tensor([self._sizes()[self._nrp]] + self._lengths[self._nrp + 1 :], dtype=self._dtype)

    def _sizes(self) -> list[int]:
        """How many items each level holds (level 0: the number of rows)."""
        sizes = [int(self._lengths[0])] if self._lengths else [1]  # type: ignore[arg-type]
        for x in self._lengths[1:]:
            sizes.append(sum(x) if isinstance(x, tuple) else sizes[-1] * x)
        return sizes

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(self.rank)
            if start != 0 or step != 1:
                raise ValueError(f"DynamicRaggedShape: only prefixes [:k] are sliced in unison. Received: {key}")
            items = self._lengths[:stop]
            return DynamicRaggedShape.from_lengths(items, dtype=self._dtype)
        i = int(key)
        if not -self.rank <= i < self.rank:
            raise IndexError(f"DynamicRaggedShape: index {i} is out of range for rank {self.rank}.")
        x = self._lengths[i % self.rank]
        if isinstance(x, tuple):
            raise ValueError(f"Index {i} is not uniform")
        return torch.tensor(x, dtype=self._dtype)

    def _build(self, flat: Callable[[list[int]], Any]) -> Any:
        """A RaggedTensor of this shape over ``flat(inner_shape)`` values."""
        RaggedTensor = _RAGGED[0]  # noqa: N806 - the class, registered by ragged_tensor.py
        if self._nrp == 0:
            return flat([int(x) for x in self._lengths])  # type: ignore[arg-type]
        values = flat([int(v) for v in self.inner_shape.tolist()])
        for x in reversed(self._lengths[1 : self._nrp + 1]):
            if isinstance(x, tuple):
                values = RaggedTensor.from_row_lengths(values, list(x))
            else:
                values = RaggedTensor.from_uniform_row_length(values, x)
        return values

    def __repr__(self) -> str:
        return f"<DynamicRaggedShape lengths={list(self._lengths)} num_row_partitions={self._nrp}>"


__all__ = ["DynamicRaggedShape"]
