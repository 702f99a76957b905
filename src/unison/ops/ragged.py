"""``tf.ragged``: building and combining :class:`~unison.ops.ragged_tensor.RaggedTensor` values.

Example:
    >>> import unison as tf
    >>> tf.ragged.constant([[1, 2], [3]]).to_list()
    [[1, 2], [3]]
    >>> tf.ragged.range([0, 2], [3, 4]).to_list()
    [[0, 1, 2], [2, 3]]
"""

from __future__ import annotations

import builtins
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.ragged_tensor import RaggedTensor, _as_values


def map_flat_values(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``tf.ragged.map_flat_values``: ``op`` on the flat values of the RaggedTensor arguments
    (which must share their row splits); the result has their ragged structure."""
    ragged = [a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor)]
    if not ragged:
        return op(*args, **kwargs)
    first = ragged[0]
    for other in ragged[1:]:
        for a, b in zip(first.nested_row_splits, other.nested_row_splits):
            if a.shape != b.shape or not bool((a == b).all()):
                raise InvalidArgumentError(
                    None, None, "tf.ragged.map_flat_values: the RaggedTensor arguments' row splits differ."
                )

    def unwrap(a: Any) -> Any:
        return a.flat_values if isinstance(a, RaggedTensor) else a

    out = op(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    return first.with_flat_values(out)


def _scalar_depths(value: Any, level: int) -> set[int]:
    """The depths at which non-list items sit (TF needs one)."""
    if isinstance(value, (list, tuple)):
        out: set[int] = set()
        for v in value:
            out |= _scalar_depths(v, level + 1)
        return out
    return {level}


def _depth(value: Any) -> int:
    if isinstance(value, (list, tuple)):
        return 1 + builtins.max((_depth(v) for v in value), default=0)
    return 0


def constant(
    pylist: Any,
    dtype: Any = None,
    ragged_rank: int | None = None,
    inner_shape: Any = None,
    name: str | None = None,
    row_splits_dtype: Any = torch.int64,
) -> RaggedTensor:
    """``tf.ragged.constant``: a RaggedTensor from nested Python lists (ints -> int32, floats ->
    float32, strings -> string; empty lists -> float32, as in TF)."""
    depth = _depth(pylist)
    if depth < 2:
        raise ValueError(f"tf.ragged.constant needs a nested list of rank >= 2. Received: {pylist!r:.80}")
    if len(_scalar_depths(pylist, 0)) > 1:
        raise ValueError(
            "all scalar values must have the same nesting depth (tf.ragged.constant: every item sits at the "
            f"same depth of lists). Received: {pylist!r:.80}"
        )
    rank = depth - 1 if ragged_rank is None else int(ragged_rank)
    if not 1 <= rank < depth:
        raise ValueError(f"tf.ragged.constant: `ragged_rank` must be in [1, {depth - 1}]. Received: {ragged_rank}")
    levels: list[list[int]] = []
    items: list[Any] = list(pylist)
    for _ in builtins.range(rank):
        levels.append([len(r) for r in items])
        items = [x for r in items for x in r]
    if dtype is None and not items:
        dtype = torch.float32
    arr = np.asarray(items, dtype=object) if items and _is_text(items) else None
    scalars = [v for v in np.asarray(items, dtype=object).reshape(-1).tolist()] if items else []
    if len({isinstance(v, (str, bytes)) for v in scalars}) > 1:
        raise ValueError(
            "Can't convert Python sequence with mixed types to Tensor. (tf.ragged.constant: the items must be "
            f"all strings or all numbers.) Received: {pylist!r:.80}"
        )
    flat: Any
    if arr is not None:
        from unison.ops.string_tensor import StringTensor

        flat = StringTensor(arr)  # TF's rt.values is a string tf.Tensor
    elif dtype is not None:
        flat = to_tensor(np.asarray(items) if items else [], as_dtype(dtype))
        if not items:
            flat = flat.reshape((0,) + tuple(int(d) for d in (inner_shape or ())))
    else:
        flat = to_tensor(items)
    return RaggedTensor.from_nested_row_lengths(flat, levels)


def _is_text(items: list[Any]) -> bool:
    first = items[0]
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    return isinstance(first, (str, bytes))


def range(  # noqa: A001 - TF's name
    starts: Any,
    limits: Any = None,
    deltas: Any = 1,
    dtype: Any = None,
    name: str | None = None,
    row_splits_dtype: Any = torch.int64,
) -> RaggedTensor:
    """``tf.ragged.range``: row ``i`` is ``range(starts[i], limits[i], deltas[i])`` (broadcast)."""
    if limits is None:
        starts, limits = 0, starts
    s, lim, d = (to_tensor(x) for x in (starts, limits, deltas))
    common = (
        as_dtype(dtype) if dtype is not None else torch.promote_types(torch.promote_types(s.dtype, lim.dtype), d.dtype)
    )
    s, lim, d = torch.broadcast_tensors(*(x.to(common).reshape(-1) if x.dim() else x.to(common) for x in (s, lim, d)))
    s, lim, d = s.reshape(-1), lim.reshape(-1), d.reshape(-1)
    if bool((d == 0).any()):
        raise InvalidArgumentError(None, None, "tf.ragged.range: `deltas` must be non-zero.")
    lengths = torch.ceil((lim - s).double() / d.double()).clamp(min=0).to(torch.int64)
    rt = RaggedTensor.from_row_lengths(torch.zeros(int(lengths.sum()), dtype=common), lengths)
    rowids = rt.value_rowids()
    steps = (torch.arange(len(rowids)) - rt.row_splits[rowids]).to(common)
    return rt.with_values(s[rowids] + d[rowids] * steps)


def _as_ragged(value: Any) -> RaggedTensor:
    if isinstance(value, RaggedTensor):
        return value
    return RaggedTensor.from_tensor(to_tensor(value))


def _concat_rows(parts: Sequence[RaggedTensor]) -> RaggedTensor:
    values = [p.values for p in parts]
    if isinstance(values[0], RaggedTensor):
        joined: Any = _concat_rows(values)
    elif isinstance(values[0], np.ndarray):
        joined = _as_values(np.concatenate([np.asarray(v, dtype=object) for v in values]))
    else:
        joined = torch.cat(values)
    lengths = torch.cat([p.row_lengths() for p in parts])
    return RaggedTensor.from_row_lengths(joined, lengths)


def stack(values: Sequence[Any], axis: int = 0, name: str | None = None) -> RaggedTensor:
    """``tf.ragged.stack``: ``axis=0`` makes each input one row; ``axis=1`` pairs the inputs' rows."""
    parts = [_as_ragged(v) for v in values]
    if not parts:
        raise ValueError("tf.ragged.stack needs at least one tensor in `values`.")
    if axis == 0:
        return RaggedTensor.from_row_lengths(_concat_rows(parts), [p.nrows_int() for p in parts])
    if axis == 1:
        n = parts[0].nrows_int()
        if any(p.nrows_int() != n for p in parts):
            raise InvalidArgumentError(
                None, None, "tf.ragged.stack(axis=1): the inputs must have the same number of rows."
            )
        joined = _concat_rows(parts)
        order = torch.arange(n * len(parts)).reshape(len(parts), n).T.reshape(-1)
        rows = [joined._rows(int(i), int(i) + 1) for i in order]
        return RaggedTensor.from_row_lengths(_concat_rows(rows), [len(parts)] * n)
    raise ValueError(f"tf.ragged.stack: unison supports axis=0 and axis=1. Received: axis={axis}")


def boolean_mask(data: Any, mask: Any, name: str | None = None) -> Any:
    """``tf.ragged.boolean_mask``: the items where ``mask`` is True; a 2-D (or ragged) mask keeps
    the rows and makes them ragged."""
    if isinstance(mask, RaggedTensor):
        rt = _as_ragged(data)
        flat_mask = mask.values.to(torch.bool)
        if flat_mask.shape[0] != len(rt.values) or not bool((mask.row_splits == rt.row_splits).all()):
            raise InvalidArgumentError(None, None, "tf.ragged.boolean_mask: `mask`'s row splits differ from `data`'s.")
        kept = flat_mask.nonzero().reshape(-1)
        new_lengths = torch.bincount(rt.value_rowids()[kept], minlength=rt.nrows_int())
        return RaggedTensor.from_row_lengths(rt.values[kept], new_lengths)
    m = to_tensor(mask).to(torch.bool)
    if m.dim() == 1:
        if isinstance(data, RaggedTensor):
            kept = m.nonzero().reshape(-1)
            return _concat_rows([data._rows(int(i), int(i) + 1) for i in kept]) if len(kept) else data._rows(0, 0)
        return to_tensor(data)[m]
    d = to_tensor(data)
    if tuple(d.shape[: m.dim()]) != tuple(m.shape):
        raise ValueError(
            f"tf.ragged.boolean_mask: `mask` shape {list(m.shape)} must be a prefix of `data`'s shape "
            f"{list(d.shape)}; pass a mask with one flag per item."
        )
    return RaggedTensor.from_row_lengths(d[m], m.sum(dim=1).to(torch.int64))


def row_splits_to_segment_ids(splits: Any, name: str | None = None, out_type: Any = None) -> torch.Tensor:
    """``tf.ragged.row_splits_to_segment_ids``: the row of each value given the row splits."""
    s = to_tensor(splits).to(torch.int64)
    if s.dim() != 1 or len(s) < 1:
        raise ValueError(
            f"tf.ragged.row_splits_to_segment_ids: `splits` must be 1-D and non-empty. Received {s.tolist()}"
        )
    out = torch.repeat_interleave(torch.arange(len(s) - 1), s[1:] - s[:-1])
    return out if out_type is None else out.to(as_dtype(out_type))


def segment_ids_to_row_splits(
    segment_ids: Any, num_segments: Any = None, out_type: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.ragged.segment_ids_to_row_splits``: the row splits of sorted segment ids."""
    ids = to_tensor(segment_ids).to(torch.int64)
    n = int(num_segments) if num_segments is not None else (int(ids.max()) + 1 if len(ids) else 0)
    counts = torch.bincount(ids, minlength=n)[:n]
    out = torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)])
    return out if out_type is None else out.to(as_dtype(out_type))


def stack_dynamic_partitions(data: Any, partitions: Any, num_partitions: int, name: str | None = None) -> RaggedTensor:
    """``tf.ragged.stack_dynamic_partitions``: row ``p`` holds the items of ``data`` whose partition
    is ``p``, in their order."""
    d, parts = to_tensor(data), to_tensor(partitions)
    p = parts.to(torch.int64).reshape(-1)
    if len(p) and (int(p.min()) < 0 or int(p.max()) >= int(num_partitions)):
        raise InvalidArgumentError(
            None, None, f"tf.ragged.stack_dynamic_partitions: `partitions` must be in [0, {num_partitions})."
        )
    order = torch.sort(p, stable=True).indices
    flat = d.reshape((-1,) + tuple(d.shape[parts.dim() :]))[order]
    return RaggedTensor.from_row_lengths(flat, torch.bincount(p, minlength=int(num_partitions)))


def cross(inputs: Sequence[Any], name: str | None = None) -> RaggedTensor:
    """``tf.ragged.cross``: per row, every combination of one feature from each input, joined by ``"_X_"``."""
    from unison.ops.sparse_features import cross as sparse_cross

    st = sparse_cross(list(inputs))
    return RaggedTensor.from_value_rowids(st.values, st.indices[:, 0], nrows=int(st.dense_shape[0]))


def cross_hashed(
    inputs: Sequence[Any], num_buckets: int = 0, hash_key: int | None = None, name: str | None = None
) -> RaggedTensor:
    """``tf.ragged.cross_hashed``: the crosses of ``cross`` as TF's int64 hash buckets."""
    from unison.ops.sparse_features import cross_hashed as sparse_cross_hashed

    st = sparse_cross_hashed(list(inputs), num_buckets, hash_key)
    return RaggedTensor.from_value_rowids(st.values, st.indices[:, 0], nrows=int(st.dense_shape[0]))


def ragged_fill_empty_rows(
    value_rowids: Any, values: Any, nrows: Any, default_value: Any, name: str | None = None
) -> Any:
    """``tf.ragged_fill_empty_rows``: ``default_value`` added as the one value of each empty row.

    Returns ``(output_value_rowids, output_values, empty_row_indicator, reverse_index_map)``;
    ``reverse_index_map[i]`` is where input value ``i`` went.
    """
    ids, vals = to_tensor(value_rowids).to(torch.int64), to_tensor(values)
    n = int(to_tensor(nrows))
    counts = torch.bincount(ids, minlength=n)[:n]
    empty = counts == 0
    new_counts = counts + empty.to(torch.int64)
    starts = torch.cat([torch.zeros(1, dtype=torch.int64), new_counts.cumsum(0)[:-1]])
    old_starts = torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)[:-1]])
    reverse = starts[ids] + (torch.arange(len(ids)) - old_starts[ids])
    total = int(new_counts.sum())
    out_vals = torch.full((total,) + tuple(vals.shape[1:]), 0, dtype=vals.dtype)
    out_vals[...] = to_tensor(default_value).to(vals.dtype)
    out_vals[reverse] = vals
    out_ids = torch.repeat_interleave(torch.arange(n), new_counts)
    return _FillEmptyRows(out_ids, out_vals, empty, reverse)


def ragged_fill_empty_rows_grad(reverse_index_map: Any, grad_values: Any, name: str | None = None) -> Any:
    """``tf.ragged_fill_empty_rows_grad``: ``(d_values, d_default_value)`` of ``ragged_fill_empty_rows``."""
    reverse, grads = to_tensor(reverse_index_map).to(torch.int64), to_tensor(grad_values)
    d_values = grads[reverse]
    filled = torch.ones(len(grads), dtype=torch.bool)
    filled[reverse] = False
    return _FillEmptyRowsGrad(d_values, grads[filled].sum(dim=0))


_FillEmptyRows = namedtuple(
    "_FillEmptyRows", ["output_value_rowids", "output_values", "empty_row_indicator", "reverse_index_map"]
)
_FillEmptyRowsGrad = namedtuple("_FillEmptyRowsGrad", ["d_values", "d_default_value"])


__all__ = [
    "boolean_mask",
    "constant",
    "cross",
    "cross_hashed",
    "map_flat_values",
    "range",
    "row_splits_to_segment_ids",
    "segment_ids_to_row_splits",
    "stack",
    "stack_dynamic_partitions",
]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.ragged", name)
