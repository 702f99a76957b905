"""More of TF's top-level array functions: slicing, partitioning, sequences, casts and shapes.

TF 2.21's semantics, compared with TensorFlow by ``tests/conformance/test_vs_tf_array.py``:
``strided_slice`` with every mask, ``dynamic_partition``/``dynamic_stitch``, ``reverse_sequence``,
``sequence_mask``, ``unique_with_counts`` in order of first occurrence, C-style ``truncatediv``,
``saturate_cast`` clamping before the cast, ``bitcast`` adding or removing the last axis.

Example:
    >>> import unison as tf
    >>> tf.sequence_mask([1, 3], 4).tolist()
    [[True, False, False, False], [True, True, True, False]]
    >>> tf.strided_slice(tf.range(10), [1], [8], [3]).tolist()
    [1, 4, 7]
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from unison.errors import InternalError, InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor


def _ints(value: Any) -> list[int]:
    if isinstance(value, torch.Tensor):
        return [int(v) for v in value.reshape(-1).tolist()]
    if isinstance(value, (list, tuple, np.ndarray)):
        return [int(v) for v in value]
    return [int(value)]


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> torch.Tensor:  # noqa: A001 - TF's name
    """``tf.slice``: ``size[i]`` entries from ``begin[i]`` along each axis (``-1``: to the end)."""
    t = to_tensor(input_)
    starts, sizes = _ints(begin), _ints(size)
    if len(starts) != t.dim() or len(sizes) != t.dim():
        raise InvalidArgumentError(
            f"tf.slice: `begin` and `size` need one entry per axis of the input ({t.dim()}). "
            f"Received: begin={starts}, size={sizes}"
        )
    index = []
    for axis, (start, length) in enumerate(zip(starts, sizes)):
        stop = t.shape[axis] if length == -1 else start + length
        if start < 0 or stop > t.shape[axis] or stop < start:
            raise InvalidArgumentError(
                f"tf.slice: axis {axis} of size {t.shape[axis]} cannot give begin={start}, size={length}."
            )
        index.append(builtins.slice(start, stop))
    return t[tuple(index)]


def strided_slice(
    input_: Any, begin: Any, end: Any, strides: Any = None, begin_mask: int = 0, end_mask: int = 0,
    ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0, var: Any = None,
    name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.strided_slice``: Python's ``t[b0:e0:s0, ...]`` spelt with TF's bit masks.

    Bit ``i`` of ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]``; of ``ellipsis_mask``
    makes entry ``i`` an ``...``; of ``new_axis_mask`` a ``tf.newaxis``; of ``shrink_axis_mask`` an
    integer index (the axis is removed).
    """
    t = to_tensor(input_)
    starts, stops = _ints(begin), _ints(end)
    steps = _ints(strides) if strides is not None else [1] * len(starts)
    index: list[Any] = []
    for i, (b, e, s) in enumerate(zip(starts, stops, steps)):
        if ellipsis_mask >> i & 1:
            index.append(Ellipsis)
        elif new_axis_mask >> i & 1:
            index.append(None)
        elif shrink_axis_mask >> i & 1:
            index.append(b)
        else:
            if s == 0:
                raise InvalidArgumentError("tf.strided_slice: strides must be non-zero. Received a 0 stride.")
            index.append((None if begin_mask >> i & 1 else b, None if end_mask >> i & 1 else e, s))
    # negative steps are flipped positive slices (ops/tensor_slicing.py), with their gradient
    return t[tuple(builtins.slice(*x) if isinstance(x, tuple) else x for x in index)]


def repeat(input: Any, repeats: Any, axis: int | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.repeat``: each element repeated ``repeats`` times along ``axis`` (the flattened input if None)."""
    t = to_tensor(input)
    counts = to_tensor(repeats)
    if axis is None:
        t = t.reshape(-1)
        axis = 0
    return torch.repeat_interleave(t, counts.long() if counts.dim() else int(counts), dim=int(axis))


def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = torch.bool, name: str | None = None) -> torch.Tensor:
    """``tf.sequence_mask``: ``mask[..., j] = j < lengths[...]`` over ``maxlen`` (default the longest)."""
    n = to_tensor(lengths)
    width = int(n.max()) if maxlen is None and n.numel() else int(maxlen or 0)
    mask = torch.arange(width, dtype=n.dtype) < n.unsqueeze(-1)
    return mask.to(as_dtype(dtype))


def reverse_sequence(
    input: Any, seq_lengths: Any, seq_axis: int | None = None, batch_axis: int | None = None, name: str | None = None
) -> torch.Tensor:
    """``tf.reverse_sequence``: reverse the first ``seq_lengths[b]`` entries of each batch row along ``seq_axis``."""
    t, lengths = to_tensor(input), to_tensor(seq_lengths).long()
    if seq_axis is None:
        raise ValueError("tf.reverse_sequence needs seq_axis: the axis along which each row is reversed.")
    seq_axis = int(seq_axis) % t.dim()
    batch_axis = int(batch_axis or 0) % t.dim()
    n = t.shape[seq_axis]
    if (
        lengths.numel() != t.shape[batch_axis]
        or builtins.bool((lengths > n).any())
        or builtins.bool((lengths < 0).any())
    ):
        raise InvalidArgumentError(
            f"tf.reverse_sequence: seq_lengths needs one length in [0, {n}] per batch row "
            f"({t.shape[batch_axis]}). Received: {lengths.tolist()}"
        )
    pos = torch.arange(n).unsqueeze(0)  # [1, n]
    length = lengths.unsqueeze(1)  # [B, 1]
    source = torch.where(pos < length, length - 1 - pos, pos)  # [B, n]
    shape = [1] * t.dim()
    shape[batch_axis], shape[seq_axis] = t.shape[batch_axis], n
    if batch_axis > seq_axis:
        source = source.t()
    return torch.gather(t, seq_axis, source.reshape(shape).expand(t.shape))


class UniqueWithCounts(NamedTuple):
    """``(y, idx, count)`` of ``tf.unique_with_counts``."""

    y: torch.Tensor
    idx: torch.Tensor
    count: torch.Tensor  # type: ignore[assignment]  # TF's field name (shadows tuple.count)


def unique_with_counts(x: Any, out_idx: Any = torch.int32, name: str | None = None) -> UniqueWithCounts:
    """``tf.unique_with_counts``: the values in order of first occurrence, where each went, and how often."""
    from unison.ops.indexing import unique

    y, idx = unique(x, out_idx=out_idx)
    count = torch.bincount(idx.long(), minlength=y.shape[0]).to(as_dtype(out_idx))
    return UniqueWithCounts(y, idx, count)


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> torch.Tensor:
    """``tf.unravel_index``: flat indices to coordinates in an array of shape ``dims`` ([len(dims), ...])."""
    flat, shape = to_tensor(indices), _ints(dims)
    total = int(np.prod(shape))
    if builtins.bool(((flat < 0) | (flat >= total)).any()):
        raise InvalidArgumentError(f"tf.unravel_index: indices must be in [0, {total}) for dims {shape}.")
    coords = torch.stack(torch.unravel_index(flat.long(), tuple(shape)))
    return coords.to(flat.dtype)


def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: str | None = None) -> list[torch.Tensor]:
    """``tf.dynamic_partition``: ``data``'s rows split into ``num_partitions`` lists by ``partitions``."""
    t, p = to_tensor(data), to_tensor(partitions).long()
    if builtins.bool(((p < 0) | (p >= int(num_partitions))).any()):
        raise InvalidArgumentError(f"tf.dynamic_partition: partitions must be in [0, {num_partitions}).")
    rows = t.reshape(-1, *t.shape[p.dim() :])
    flat = p.reshape(-1)
    return [rows[flat == k] for k in range(int(num_partitions))]


def dynamic_stitch(indices: Sequence[Any], data: Sequence[Any], name: str | None = None) -> torch.Tensor:
    """``tf.dynamic_stitch``: ``merged[indices[m][i]] = data[m][i]`` (later ones win)."""
    idx = [to_tensor(i).long().reshape(-1) for i in indices]
    values = [to_tensor(d) for d in data]
    inner = values[0].shape[to_tensor(indices[0]).dim() :]
    rows = torch.cat([v.reshape(-1, *inner) for v in values])
    where = torch.cat(idx)
    out = torch.zeros((int(where.max()) + 1 if where.numel() else 0, *inner), dtype=rows.dtype)
    out[where] = rows
    return out


def _scatter_reduce(tensor: Any, indices: Any, updates: Any, reduce: str, fn: str) -> torch.Tensor:
    t, idx, upd = to_tensor(tensor).clone(), to_tensor(indices).long(), to_tensor(updates)
    depth = idx.shape[-1]
    flat = idx.reshape(-1, depth)
    strides = torch.tensor([int(np.prod(t.shape[i + 1 : depth])) for i in range(depth)])
    rows = (flat * strides).sum(-1)
    view = t.reshape(-1, *t.shape[depth:])
    src = upd.reshape(-1, *t.shape[depth:]).to(t.dtype)
    if reduce == "sub":
        view.index_add_(0, rows, -src)
    else:
        view.index_reduce_(0, rows, src, reduce, include_self=True)
    return view.reshape(t.shape)


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> torch.Tensor:
    """``tf.tensor_scatter_nd_max``: ``tensor`` with ``max(tensor[idx], update)`` at each index."""
    return _scatter_reduce(tensor, indices, updates, "amax", "tf.tensor_scatter_nd_max")


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> torch.Tensor:
    """``tf.tensor_scatter_nd_min``: ``tensor`` with ``min(tensor[idx], update)`` at each index."""
    return _scatter_reduce(tensor, indices, updates, "amin", "tf.tensor_scatter_nd_min")


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> torch.Tensor:
    """``tf.tensor_scatter_nd_sub``: ``tensor`` with ``updates`` subtracted at each index."""
    return _scatter_reduce(tensor, indices, updates, "sub", "tf.tensor_scatter_nd_sub")


def _int_pair(x: Any, y: Any, fn: str) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = to_tensor(x), to_tensor(y)
    if not isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        a = a.to(b.dtype)
    elif not isinstance(y, torch.Tensor) and isinstance(x, torch.Tensor):
        b = b.to(a.dtype)
    if not (a.is_floating_point() or b.is_floating_point()) and builtins.bool((b == 0).any()):
        # TF's kernel reports this as an InternalError; the same class here, with what to do
        raise InternalError(f"{fn}: Integer division by zero (a divisor `y` is 0). Check the divisors first.")
    return a, b


def truncatediv(x: Any, y: Any, name: str | None = None) -> torch.Tensor:
    """``tf.truncatediv``: division rounding toward zero (C's ``/`` on integers)."""
    a, b = _int_pair(x, y, "tf.truncatediv")
    return torch.div(a, b, rounding_mode="trunc")


def truncatemod(x: Any, y: Any, name: str | None = None) -> torch.Tensor:
    """``tf.truncatemod``: the remainder of ``truncatediv`` (the sign of ``x``, as C's ``%``)."""
    a, b = _int_pair(x, y, "tf.truncatemod")
    return torch.fmod(a, b)


def realdiv(x: Any, y: Any, name: str | None = None) -> torch.Tensor:
    """``tf.realdiv``: ``x / y`` for real (floating) tensors."""
    a, b = to_tensor(x), to_tensor(y)
    return a / b.to(a.dtype) if a.is_floating_point() else a / b


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> torch.Tensor:
    """``tf.saturate_cast``: cast, clamping first to the target's range (no wrap-around)."""
    t, target = to_tensor(value), as_dtype(dtype)
    if target.is_floating_point or target.is_complex or target == torch.bool:
        return t.to(target)
    info = torch.iinfo(target)
    if t.is_floating_point():
        # the bounds as t's float type can hold them without passing the integer range (TF's rule:
        # float32(2**31 - 1) rounds up to 2**31, so the largest float32 below it is used)
        lo, hi = torch.tensor(float(info.min), dtype=t.dtype), torch.tensor(float(info.max), dtype=t.dtype)
        if hi.double() > info.max:
            hi = torch.nextafter(hi, torch.zeros((), dtype=t.dtype))
        if lo.double() < info.min:
            lo = torch.nextafter(lo, torch.zeros((), dtype=t.dtype))
        t = torch.nan_to_num(t, nan=0.0)
        return torch.minimum(torch.maximum(t, lo), hi).to(target)
    return torch.clamp(t.long(), info.min, info.max).to(target)


def bitcast(input: Any, type: Any, name: str | None = None) -> torch.Tensor:  # noqa: A002 - TF's name
    """``tf.bitcast``: the same bytes seen as ``type`` (a wider type consumes the last axis, a narrower adds one)."""
    t, target = to_tensor(input), as_dtype(type)
    src, dst = t.element_size(), torch.empty((), dtype=target).element_size()
    if src == dst:
        return t.view(target)
    if src > dst:
        return t.reshape(*t.shape, 1).view(target).reshape(*t.shape, src // dst)
    if t.dim() == 0 or t.shape[-1] != dst // src:
        raise InvalidArgumentError(
            f"tf.bitcast: casting {t.dtype} to {target} needs a last axis of {dst // src}. Received shape {list(t.shape)}."
        )
    return t.contiguous().view(target).reshape(t.shape[:-1])


def complex(real: Any, imag: Any, name: str | None = None) -> torch.Tensor:  # noqa: A001 - TF's name
    """``tf.complex``: ``real + imag * 1j`` (float32 parts give complex64, float64 complex128)."""
    a, b = to_tensor(real), to_tensor(imag)
    if a.dtype != b.dtype or not a.is_floating_point():
        raise InvalidArgumentError(
            f"tf.complex: real and imag must both be float32 or both float64. Received: {a.dtype} and {b.dtype}"
        )
    a, b = torch.broadcast_tensors(a, b)
    return torch.complex(a, b)


def shape_n(input: Sequence[Any], out_type: Any = torch.int32, name: str | None = None) -> list[torch.Tensor]:
    """``tf.shape_n``: the shape of each tensor, as int32 (or ``out_type``) vectors."""
    return [torch.tensor(list(to_tensor(t).shape), dtype=as_dtype(out_type)) for t in input]


def identity_n(input: Sequence[Any], name: str | None = None) -> list[torch.Tensor]:
    """``tf.identity_n``: each tensor, unchanged."""
    return [to_tensor(t) for t in input]


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> torch.Tensor:
    """``tf.ensure_shape``: ``x`` if its shape matches ``shape`` (``None`` matches anything), else an error."""
    t = to_tensor(x)
    expected = list(shape.as_list() if hasattr(shape, "as_list") else shape) if shape is not None else None
    if expected is not None and (
        len(expected) != t.dim() or any(e is not None and int(e) != d for e, d in zip(expected, t.shape))
    ):
        raise InvalidArgumentError(
            f"tf.ensure_shape: Shape of tensor {list(t.shape)} is not compatible with expected shape {expected}."
        )
    return t


def get_static_value(tensor: Any, partial: builtins.bool = False) -> Any:
    """``tf.get_static_value``: the value as a NumPy array (every eager tensor's value is known)."""
    if tensor is None:
        return None
    return np.asarray(to_tensor(tensor).detach().numpy())


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> torch.Tensor:
    """``tf.broadcast_dynamic_shape``: the broadcast shape of two shape vectors."""
    a, b = to_tensor(shape_x), to_tensor(shape_y)
    try:
        out = torch.broadcast_shapes(tuple(_ints(a)), tuple(_ints(b)))
    except RuntimeError as exc:
        raise InvalidArgumentError(f"Incompatible shapes: {_ints(a)} vs. {_ints(b)}") from exc
    return torch.tensor(list(out), dtype=a.dtype)


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> Any:
    """``tf.broadcast_static_shape``: the broadcast ``TensorShape`` of two ``TensorShape``s."""
    from unison.ops.control_flow import TensorShape

    x, y = TensorShape(shape_x).as_list(), TensorShape(shape_y).as_list()
    out: list[int | None] = []
    for i in range(1, max(len(x), len(y)) + 1):
        a = x[-i] if i <= len(x) else 1
        b = y[-i] if i <= len(y) else 1
        if a == 1 or a is None and b not in (None, 1):
            out.append(b if a == 1 else None)
        elif b == 1 or a == b:
            out.append(a)
        elif b is None:
            out.append(None)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting. Two shapes are not compatible: {x} and {y}")
    return TensorShape(list(reversed(out)))


def histogram_fixed_width_bins(
    values: Any, value_range: Any, nbins: int = 100, dtype: Any = torch.int32, name: str | None = None
) -> torch.Tensor:
    """``tf.histogram_fixed_width_bins``: the bin of each value (values outside go to the end bins)."""
    v = to_tensor(values)
    lo, hi = (float(x) for x in to_tensor(value_range).tolist())
    scaled = (v.double() - lo) / (hi - lo)
    return torch.clamp(torch.floor(scaled * int(nbins)), 0, int(nbins) - 1).to(as_dtype(dtype))


def histogram_fixed_width(
    values: Any, value_range: Any, nbins: int = 100, dtype: Any = torch.int32, name: str | None = None
) -> torch.Tensor:
    """``tf.histogram_fixed_width``: counts in ``nbins`` equal bins over ``value_range``."""
    bins = histogram_fixed_width_bins(values, value_range, nbins, torch.int64).reshape(-1)
    return torch.bincount(bins, minlength=int(nbins)).to(as_dtype(dtype))


__all__ = [
    "bitcast",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "complex",
    "dynamic_partition",
    "dynamic_stitch",
    "ensure_shape",
    "get_static_value",
    "histogram_fixed_width",
    "histogram_fixed_width_bins",
    "identity_n",
    "realdiv",
    "repeat",
    "reverse_sequence",
    "saturate_cast",
    "sequence_mask",
    "shape_n",
    "slice",
    "strided_slice",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub",
    "truncatediv",
    "truncatemod",
    "unique_with_counts",
    "unravel_index",
]
