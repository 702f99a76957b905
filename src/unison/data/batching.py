"""Batching: ``batch``, ``padded_batch``, ``unbatch`` and ``rebatch``.

``batch`` on an index-backed input gathers each batch with one ``index_select`` per component
(no Python loop per element). A ``map`` after ``batch`` runs once per batch, vectorised, as in TF.

Example:
    >>> from unison.data.sources import Range
    >>> [b.tolist() for b in Range(5).batch(2, drop_remainder=True)]
    [[0, 1], [2, 3]]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from unison.data import nest, processes
from unison.data.context import IterContext
from unison.data.dataset import Dataset, check_count, transformation
from unison.data.map_batch import FILL_MIN_BYTES, dense_parts, map_into_batches
from unison.data.options import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from unison.data.specs import DataRaggedTensorSpec, TensorSpec
from unison.data.transforms import Map
from unison.ops import tree


def group_indices(chunks: Iterator[np.ndarray], size: int, drop_remainder: bool) -> Iterator[np.ndarray]:
    """Cut a stream of index chunks into index arrays of ``size`` (the last may be short).

    Whole batches inside a chunk are plain slices of it (no copy); only a batch that straddles
    two chunks is concatenated.
    """
    pending: list[np.ndarray] = []
    have = 0
    for chunk in chunks:
        start, n = 0, len(chunk)
        if have:  # complete the batch begun in the previous chunk
            take = min(size - have, n)
            pending.append(chunk[:take])
            start, have = take, have + take
            if have < size:
                continue
            yield np.concatenate(pending)
            pending, have = [], 0
        full = start + (n - start) // size * size
        for i in range(start, full, size):
            yield chunk[i : i + size]
        if full < n:
            pending, have = [chunk[full:]], n - full
    if have and not drop_remainder:
        yield np.concatenate(pending)


def _batch_cardinality(n: int, size: int, drop: bool) -> int:
    if n < 0:
        return n
    return n // size if drop else -(-n // size)


# After a sequential map, elements of at least FILL_MIN_BYTES are copied into their batch as they
# come, in the consuming thread (after a parallel map the workers do it: unison.data.map_batch): the
# element is still in the cache when it is copied, and its memory goes back to the allocator at once,
# warm for the next element (one thread resizing 320 photos in batches of 32, stack vs this: 0.48 vs
# 0.41 CPU ms per image). Copying them in the consuming thread after a *parallel* map measured slower
# (its elements come from other cores' caches: the image pipeline with AUTOTUNE, 1.63 and 1.46 vs
# 1.44 and 1.33 CPU ms per image, load 3.8-4.5).


class _Filling:
    """One batch of same-shaped dense tensors (an element that is a tensor or a flat tuple of
    them), each element copied into the batch's buffers when it arrives."""

    def __init__(self, first: Any, parts: tuple[torch.Tensor, ...], size: int) -> None:
        self.tuple = type(first) is tuple
        self.buffers = [torch.empty((size, *p.shape), dtype=p.dtype, device=p.device) for p in parts]
        self.count = 0
        self.add(first)

    @staticmethod
    def parts(element: Any) -> tuple[torch.Tensor, ...] | None:
        return dense_parts(element)

    @classmethod
    def start(cls, element: Any, size: int) -> _Filling | None:
        """A batch begun with ``element``, or None where it is not large dense tensors."""
        parts = cls.parts(element)
        if not parts or sum(p.nelement() * p.element_size() for p in parts) < FILL_MIN_BYTES:
            return None
        return cls(element, parts, size)

    def add(self, element: Any) -> bool:
        """Copy ``element`` in; False (nothing copied) where it has another structure, shape or dtype."""
        parts = self.parts(element)
        if parts is None or len(parts) != len(self.buffers) or (type(element) is tuple) != self.tuple:
            return False
        for p, b in zip(parts, self.buffers):
            if p.shape != b.shape[1:] or p.dtype != b.dtype or p.device != b.device:
                return False
        for p, b in zip(parts, self.buffers):
            b[self.count].copy_(p)
        self.count += 1
        return True

    def batch(self) -> Any:
        out = [b if self.count == len(b) else b[: self.count] for b in self.buffers]
        return tuple(out) if self.tuple else out[0]

    def rows(self) -> list[Any]:
        """The elements copied so far, as rows of the buffers (for stacking after a misfit)."""
        rows = [b[: self.count].unbind(0) for b in self.buffers]
        return list(zip(*rows)) if self.tuple else list(rows[0])


@transformation
class Batch(Dataset):
    def __init__(self, input_dataset: Dataset, batch_size: int, drop_remainder: bool) -> None:
        self._inputs = (input_dataset,)
        self._size = check_count("batch_size", batch_size, 1, "elements per batch")
        self._drop = bool(drop_remainder)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        source = self._inputs[0]
        procs = source.process_workers(ctx, fused=True) if isinstance(source, Map) else 0
        if procs:
            # map + batch fused in worker processes: each worker makes whole batches (as DataLoader does)
            inner = source._inputs[0]
            tasks = (g.tolist() for g in group_indices(inner._index_chunks(ctx), self._size, self._drop))
            yield from processes.process_map(
                inner._columns(), tasks, source.element_fn(), procs, stack=True, deterministic=source.deterministic(ctx)
            )
            return
        direct = getattr(source, "_record_batches", None)  # a reader that cuts whole batches (TFRecordDataset)
        if direct is not None:
            yield from direct(ctx, self._size, self._drop)
            return
        columns = source._columns()
        if columns is not None:
            # one index operation per component and batch; the structure is resolved once
            leaves, pack = nest.flatten(columns), nest.packer(columns)
            for index in group_indices(source._index_chunks(ctx), self._size, self._drop):
                yield pack(nest.gather_all(leaves, index))
            return
        threaded = source.threaded_map(ctx) if isinstance(source, Map) and self._size > 1 else None
        if threaded is not None:
            # a parallel, deterministic map: its workers copy their elements into the batch
            ragged: list[frozenset[int]] = []
            elements, fn, workers, intra_op = threaded
            yield from map_into_batches(
                elements, fn, workers, self._size, self._drop, lambda rows: self._stack(rows, ragged), intra_op
            )
            return
        # elements a sequential map makes in this thread are copied into the batch as they come
        yield from self._batches(source._iter(ctx), fill=isinstance(source, Map) and source.sequential())

    def _batches(self, elements: Iterator[Any], fill: bool) -> Iterator[Any]:
        """Batches of ``elements``: with ``fill``, large tensor elements are copied into the batch
        as they come (see :class:`_Filling`); the others are stacked once a batch's worth is there."""
        pending: list[Any] = []
        ragged: list[frozenset[int]] = []  # found on the first batch that needs it
        filling: _Filling | None = None
        # fill stays on until an element does not fit the batch begun: then stacking, as before
        for element in elements:
            if filling is not None:
                if filling.add(element):
                    if filling.count == self._size:
                        yield filling.batch()
                        filling = None
                    continue
                pending, filling, fill = filling.rows(), None, False
            elif fill and not pending:
                filling = _Filling.start(element, self._size)
                if filling is not None:
                    if self._size == 1:
                        yield filling.batch()
                        filling = None
                    continue
            pending.append(element)
            if len(pending) == self._size:
                yield self._stack(pending, ragged)
                pending = []
        if filling is not None and not self._drop:
            yield filling.batch()
        if pending and not self._drop:
            yield self._stack(pending, ragged)

    def _stack(self, pending: list[Any], ragged: list[frozenset[int]]) -> Any:
        """One batch; rows of a ragged tensor (a RaggedTensorSpec component holding plain tensors)
        batch into a RaggedTensor, as in TF, which knows it from the spec: asked only when plain
        stacking fails."""
        try:
            return nest.stack(pending, ragged[0] if ragged else frozenset())
        except ValueError:
            if ragged:
                raise
            specs = nest.flatten(self._inputs[0]._spec())
            found = frozenset(k for k, s in enumerate(specs) if isinstance(s, DataRaggedTensorSpec))
            if not found:
                raise
            ragged.append(found)
            return nest.stack(pending, found)

    def _cardinality(self) -> int:
        return _batch_cardinality(self._inputs[0]._cardinality(), self._size, self._drop)

    def _spec(self) -> Any:
        lead = self._size if self._drop else None
        return tree.map_structure(lambda s: s.with_leading(lead), self._inputs[0]._spec(), lists=False)


@transformation
class PaddedBatch(Batch):
    def __init__(
        self, input_dataset: Dataset, batch_size: int, padded_shapes: Any, padding_values: Any, drop_remainder: bool
    ) -> None:
        super().__init__(input_dataset, batch_size, drop_remainder)
        self._shapes, self._values = padded_shapes, padding_values

    def _pad(self, elements: list[Any]) -> Any:
        first = elements[0]
        columns = list(zip(*(nest.flatten(e) for e in elements)))
        shapes = nest.flatten(self._shapes) if self._shapes is not None else [None] * len(columns)
        values = nest.flatten(self._values) if self._values is not None else [None] * len(columns)
        if len(shapes) != len(columns) or len(values) != len(columns):
            raise ValueError(
                f"padded_shapes/padding_values must match the element's structure "
                f"{nest.structure_of(first)}. Received: padded_shapes={self._shapes!r}, "
                f"padding_values={self._values!r}"
            )
        out = []
        for col, shape, value in zip(columns, shapes, values):
            rank = col[0].ndim
            top = [max(int(c.shape[d]) for c in col) for d in range(rank)]
            if isinstance(shape, TensorSpec):
                shape = shape.shape  # None: no constraint
            if shape is not None:
                want = list(shape)
                if len(want) != rank:
                    raise ValueError(
                        f"padded_shapes {tuple(want)} has rank {len(want)}, the component has rank "
                        f"{rank}. Received: padded_shapes={self._shapes!r}"
                    )
                for d, w in enumerate(want):
                    if w is not None and w != -1:
                        if int(w) < top[d]:
                            raise ValueError(
                                f"A component of size {top[d]} in dimension {d} does not fit "
                                f"padded_shapes {tuple(want)}. Enlarge padded_shapes."
                            )
                        top[d] = int(w)
            out.append(_pad_stack(list(col), top, value))
        return nest.pack_as(first, out)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        specs = nest.flatten(self._inputs[0]._spec())
        composite = next((s for s in specs if not isinstance(s, TensorSpec)), None)
        if composite is not None:  # TF decides by the spec: rows of a ragged tensor are refused too
            raise TypeError(
                "`padded_batch` is only supported for datasets that produce tensor elements (as in TF); this "
                f"one has a component of spec {composite!r}. Use batch() (sparse and ragged tensors batch "
                "without padding), or convert it first with tf.sparse.to_dense / RaggedTensor.to_tensor in a map()."
            )
        pending: list[Any] = []
        for element in self._inputs[0]._iter(ctx):
            pending.append(element)
            if len(pending) == self._size:
                yield self._pad(pending)
                pending = []
        if pending and not self._drop:
            yield self._pad(pending)

    def _spec(self) -> Any:
        return Dataset._spec(self)


def _pad_stack(col: list[Any], shape: list[int], value: Any) -> Any:
    if isinstance(col[0], torch.Tensor):
        fill = 0 if value is None else (value.item() if isinstance(value, torch.Tensor) else value)
        out = torch.full((len(col), *shape), fill, dtype=col[0].dtype)
        for i, c in enumerate(col):
            region: tuple[int | slice, ...] = (i, *[slice(0, int(s)) for s in c.shape])
            out[region] = c
        return out
    fill = (b"" if col[0].dtype.kind == "S" else "") if value is None else value
    out_np = np.full((len(col), *shape), fill, dtype=object if col[0].dtype.kind == "O" else col[0].dtype)
    for i, c in enumerate(col):
        region = (i, *[slice(0, int(s)) for s in c.shape])
        out_np[region] = c
    return out_np


@transformation
class Unbatch(Dataset):
    def __init__(self, input_dataset: Dataset) -> None:
        self._inputs = (input_dataset,)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        for batch in self._inputs[0]._iter(ctx):
            leaves = nest.flatten(batch)
            n = nest.leaf_rows(leaves[0])
            for i in range(n):
                yield nest.pack_as(batch, [nest.row(leaf, i) for leaf in leaves])

    def _cardinality(self) -> int:
        n = self._inputs[0]._cardinality()
        return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else (0 if n == 0 else UNKNOWN_CARDINALITY)

    def _spec(self) -> Any:
        return tree.map_structure(lambda s: s.without_leading(), self._inputs[0]._spec(), lists=False)


@transformation
class Rebatch(Dataset):
    """Re-cut batches into ``batch_size`` rows (a list of sizes is used in turn), copying only at seams."""

    def __init__(self, input_dataset: Dataset, batch_size: int | Sequence[int], drop_remainder: bool) -> None:
        self._inputs = (input_dataset,)
        sizes = [batch_size] if isinstance(batch_size, int) else list(batch_size)
        self._sizes = [check_count("batch_size", s, 0 if len(sizes) > 1 else 1, "rows per batch") for s in sizes]
        if not any(self._sizes):
            raise ValueError(f"rebatch needs a positive batch size. Received: batch_size={batch_size!r}")
        self._drop = bool(drop_remainder)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        pieces: list[Any] = []
        have = 0
        turn = 0
        structure = None
        for batch in self._inputs[0]._iter(ctx):
            structure = batch
            leaves = nest.flatten(batch)
            n, start = nest.leaf_rows(leaves[0]), 0
            while start < n or (self._sizes[turn % len(self._sizes)] == 0):
                want = self._sizes[turn % len(self._sizes)]
                take = min(want - have, n - start)
                if take:
                    pieces.append([leaf[start : start + take] for leaf in leaves])
                    start, have = start + take, have + take
                if have == want:
                    yield _join(batch, pieces, leaves)
                    pieces, have, turn = [], 0, turn + 1
                else:
                    break
        if have and not self._drop and structure is not None:
            yield _join(structure, pieces, nest.flatten(structure))

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY


def _join(structure: Any, pieces: list[list[Any]], leaves: list[Any]) -> Any:
    if not pieces:
        return nest.pack_as(structure, [leaf[:0] for leaf in leaves])
    cols = [p[0] if len(pieces) == 1 else nest.concat(list(p)) for p in zip(*pieces)]
    return nest.pack_as(structure, cols)
