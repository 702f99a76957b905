"""TF's padding, sorting, masking and N-d indexing functions, and its constructors and
rearrangements (``tf.pad``, ``tf.sort``, ``tf.gather_nd``, ``tf.eye``, ``tf.roll``, ...) over torch.

Example:
    >>> import unison as tf
    >>> tf.gather_nd([[1, 2], [3, 4]], [[1, 0]]).tolist()
    [3]
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, NamedTuple

import torch

from unison.errors import IndexOutOfRangeError
from unison.ops import fastpath
from unison.ops._dispatch import wrap_namespace
from unison.ops.array import _axes, _shape
from unison.ops.dtypes import as_dtype, to_tensor

# --- padding, sorting, masks and N-d indexing ----------------------------------------------------


def _int_matrix(value: Any, what: str, fn: str) -> torch.Tensor:
    t = to_tensor(value)
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"{fn}: {what} must be integers. Received a {t.dtype} tensor: {value!r:.100}")
    return t.long()


def pad(
    tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0, name: str | None = None
) -> torch.Tensor:
    """``tf.pad``: ``paddings[i] = [before, after]`` elements added along axis ``i``.

    ``mode`` (any case): ``"CONSTANT"`` fills with ``constant_values``; ``"REFLECT"`` mirrors
    without the edge (``before``/``after`` at most size - 1); ``"SYMMETRIC"`` mirrors with the
    edge (at most size). Gradients flow to ``tensor``.

    Example:
        >>> import unison as tf
        >>> t = tf.constant([[1, 2, 3], [4, 5, 6]])
        >>> tf.pad(t, [[1, 1], [2, 2]], "REFLECT").tolist()[0]
        [6, 5, 4, 5, 6, 5, 4]
        >>> tf.pad(t, [[0, 0], [2, 1]], "symmetric").tolist()
        [[2, 1, 1, 2, 3, 3], [5, 4, 4, 5, 6, 6]]
    """
    t = to_tensor(tensor)
    pads = _int_matrix(paddings, "paddings", "tf.pad")
    if tuple(pads.shape) != (t.dim(), 2):
        raise ValueError(
            f"tf.pad: paddings must have shape [rank, 2] = [{t.dim()}, 2] (one [before, after] pair "
            f"per axis). Received paddings of shape {list(pads.shape)}: {pads.tolist()}"
        )
    if bool((pads < 0).any()):
        raise ValueError(f"tf.pad: paddings must be non-negative. Received: paddings={pads.tolist()}")
    kind = str(mode).upper()
    if kind not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(
            f"tf.pad: mode must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC' (any case). Received: mode={mode!r}"
        )
    pairs = [(int(a), int(b)) for a, b in pads.tolist()]
    if kind == "CONSTANT":
        flat = [p for before_after in reversed(pairs) for p in before_after]
        value = to_tensor(constant_values).item()
        return torch.nn.functional.pad(t, flat, value=value) if builtins.any(flat) else t.clone()
    out = t
    for axis, (before, after) in enumerate(pairs):
        if not before and not after:
            continue
        n = t.shape[axis]
        limit = n - 1 if kind == "REFLECT" else n
        if before > limit or after > limit:
            raise ValueError(
                f"tf.pad: in {kind} mode the paddings of axis {axis} must be at most {limit} "
                f"(its size {n}{' - 1' if kind == 'REFLECT' else ''}). Received: {[before, after]}"
            )
        idx = torch.arange(-before, n + after)
        if kind == "REFLECT":
            idx = torch.where(idx < 0, -idx, idx)
            idx = torch.where(idx > n - 1, 2 * (n - 1) - idx, idx)
        else:
            idx = torch.where(idx < 0, -idx - 1, idx)
            idx = torch.where(idx > n - 1, 2 * n - 1 - idx, idx)
        out = out.index_select(axis, idx.to(t.device))
    return out


def _descending(direction: str, fn: str) -> builtins.bool:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"{fn}: direction must be 'ASCENDING' or 'DESCENDING'. Received: direction={direction!r}")
    return direction == "DESCENDING"


def _sorted(t: torch.Tensor, axis: int, descending: builtins.bool) -> torch.return_types.sort:
    result = torch.sort(t, dim=axis, descending=descending, stable=True)
    if descending or not t.is_floating_point():
        return result
    nans = torch.isnan(t)
    if not builtins.bool(nans.any()):
        return result
    # TF sorts through top_k, where NaN is the largest value: NaNs come first in both directions
    # (torch puts them last when ascending), so each row is rotated by its count of NaNs
    n = t.shape[axis]
    shift = nans.sum(dim=axis, keepdim=True)
    positions = torch.arange(n).reshape([-1 if d == axis % t.dim() else 1 for d in builtins.range(t.dim())])
    index = (positions - shift) % n
    return torch.return_types.sort((result.values.gather(axis, index), result.indices.gather(axis, index)))


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> torch.Tensor:
    """``tf.sort``: the values sorted along ``axis`` (NaN first, as TF's sort puts it)."""
    t = to_tensor(values)
    return _sorted(t, int(axis), _descending(direction, "tf.sort")).values


def argsort(
    values: Any, axis: int = -1, direction: str = "ASCENDING", stable: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.argsort``: int32 indices that sort ``values`` along ``axis`` (always stable: ties keep order)."""
    t = to_tensor(values)
    return _sorted(t, int(axis), _descending(direction, "tf.argsort")).indices.to(torch.int32)


class Unique(NamedTuple):
    """``tf.unique``'s result: the unique values ``y`` and, per input element, its index ``idx`` in ``y``."""

    y: torch.Tensor
    idx: torch.Tensor


def unique(x: Any, out_idx: Any = torch.int32, name: str | None = None) -> Unique:
    """``tf.unique``: the values of a 1-D tensor in order of first occurrence, and where each went.

    Example:
        >>> import unison as tf
        >>> y, idx = tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
        >>> y.tolist(), idx.tolist()
        ([1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4])
    """
    t = to_tensor(x)
    if t.dim() != 1:
        raise ValueError(
            f"tf.unique takes a 1-D tensor. Received shape {list(t.shape)}. Flatten it first: "
            "tf.unique(tf.reshape(x, [-1]))."
        )
    if t.numel() == 0:
        return Unique(t.clone(), torch.zeros(0, dtype=as_dtype(out_idx)))
    values, inverse = torch.unique(t, sorted=True, return_inverse=True)
    positions = torch.arange(t.numel(), device=t.device)
    first = torch.full((values.numel(),), t.numel(), dtype=torch.long, device=t.device)
    first = first.scatter_reduce(0, inverse, positions, reduce="amin")
    order = torch.argsort(first)
    rank_of = torch.empty_like(order)
    rank_of[order] = torch.arange(order.numel(), device=t.device)
    return Unique(values[order], rank_of[inverse].to(as_dtype(out_idx)))


def boolean_mask(tensor: Any, mask: Any, axis: Any = None, name: str = "boolean_mask") -> torch.Tensor:
    """``tf.boolean_mask``: the entries of ``tensor`` where the K-D ``mask`` is true.

    ``mask`` matches ``tensor.shape[axis:axis + K]``; those K axes become one axis holding the
    selected entries. Gradients flow to ``tensor``.

    Example:
        >>> import unison as tf
        >>> tf.boolean_mask([[1, 2], [3, 4], [5, 6]], [True, False, True]).tolist()
        [[1, 2], [5, 6]]
    """
    t, m = to_tensor(tensor), to_tensor(mask)
    if m.dim() == 0:
        raise ValueError("tf.boolean_mask: mask cannot be a scalar. Received a 0-d mask; give it the shape to select.")
    ax = 0 if axis is None else int(axis)
    ax = ax + t.dim() if ax < 0 else ax
    k = m.dim()
    if ax + k > t.dim() or tuple(t.shape[ax : ax + k]) != tuple(m.shape):
        raise ValueError(
            f"tf.boolean_mask: the mask's shape {list(m.shape)} must equal the tensor's shape on axes "
            f"{ax}..{ax + k - 1}. Received tensor of shape {list(t.shape)} and axis={axis}."
        )
    merged = 1
    for d in m.shape:
        merged *= d
    flat = t.reshape((*t.shape[:ax], merged, *t.shape[ax + k :]))
    keep = torch.nonzero(m.reshape(-1).bool()).reshape(-1).to(t.device)
    return flat.index_select(ax, keep)


def _check_nd_indices(idx: torch.Tensor, dims: Sequence[int], fn: str) -> None:
    if idx.numel() == 0:
        return
    limits = torch.tensor(list(dims), dtype=idx.dtype, device=idx.device)
    bad = (idx < 0) | (idx >= limits)
    if bool(bad.any()):
        where_bad = torch.nonzero(bad.any(dim=-1))[0].tolist()
        raise IndexOutOfRangeError(
            f"{fn}: indices{where_bad} = {idx[tuple(where_bad)].tolist()} does not index into shape "
            f"{list(dims)}. Every index must be in [0, size) of its axis (negative indices are errors, as in TF)."
        )


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: str | None = None) -> torch.Tensor:
    """``tf.gather_nd``: slices of ``params`` at N-d ``indices`` (the last axis of ``indices`` is a coordinate).

    The result has shape ``indices.shape[:-1] + params.shape[indices.shape[-1]:]`` (after
    ``batch_dims`` leading axes shared by both). Gradients flow to ``params``.

    Example:
        >>> import unison as tf
        >>> tf.gather_nd([[0, 1], [2, 3]], [[1, 1], [0, 0]]).tolist()
        [3, 0]
        >>> tf.gather_nd([[0, 1], [2, 3]], [[1]]).tolist()
        [[2, 3]]
    """
    p = to_tensor(params)
    i = _int_matrix(indices, "indices", "tf.gather_nd").to(p.device)
    b = int(batch_dims)
    if i.dim() < 1 or b < 0 or b >= i.dim() or b > p.dim():
        raise ValueError(
            f"tf.gather_nd: needs indices of rank >= 1 and 0 <= batch_dims < rank(indices). Received "
            f"indices of shape {list(i.shape)}, params of shape {list(p.shape)}, batch_dims={batch_dims}."
        )
    if tuple(p.shape[:b]) != tuple(i.shape[:b]):
        raise ValueError(
            f"tf.gather_nd: the first batch_dims={b} axes of params {list(p.shape)} and indices "
            f"{list(i.shape)} must be equal."
        )
    k = i.shape[-1]
    if k > p.dim() - b:
        raise ValueError(
            f"tf.gather_nd: index length {k} (indices.shape[-1]) exceeds the rank {p.dim() - b} of params "
            f"after batch_dims={b}. Received params of shape {list(p.shape)}."
        )
    if not b:
        fast = fastpath.gather_nd(p, i)
        if fast is not None:
            return fast
    _check_nd_indices(i, list(p.shape[b : b + k]), "tf.gather_nd")
    batch = tuple(p.shape[:b])
    nb = 1
    for d in batch:
        nb *= d
    flat_p = p.reshape((nb, *p.shape[b:]))
    flat_i = i.reshape((nb, *i.shape[b:]))
    rows = torch.arange(nb, device=p.device).reshape((nb,) + (1,) * (flat_i.dim() - 2)).expand(flat_i.shape[:-1])
    coordinates = (rows,) + tuple(flat_i[..., j] for j in builtins.range(k))
    out = flat_p[coordinates]
    return out.reshape(batch + tuple(i.shape[b:-1]) + tuple(p.shape[b + k :]))


def _scatter(target: torch.Tensor, indices: Any, updates: Any, accumulate: builtins.bool, fn: str) -> torch.Tensor:
    i = _int_matrix(indices, "indices", fn).to(target.device)
    u = to_tensor(updates).to(target.dtype)
    if i.dim() < 1 or i.shape[-1] > target.dim():
        raise ValueError(
            f"{fn}: indices must have rank >= 1 and a last axis of at most rank(shape)={target.dim()}. "
            f"Received indices of shape {list(i.shape)}."
        )
    k = i.shape[-1]
    expected = tuple(i.shape[:-1]) + tuple(target.shape[k:])
    if tuple(u.shape) != expected:
        raise ValueError(
            f"{fn}: updates must have shape indices.shape[:-1] + shape[indices.shape[-1]:] = {list(expected)}. "
            f"Received updates of shape {list(u.shape)} for indices {list(i.shape)} and shape {list(target.shape)}."
        )
    _check_nd_indices(i, list(target.shape[:k]), fn)
    if k == 0:  # every index row addresses the whole tensor
        rows = u.reshape((-1, *target.shape))
        if rows.shape[0] == 0:
            return target.clone()
        return target + rows.sum(0) if accumulate else rows[-1].clone()
    return target.index_put(tuple(i[..., j] for j in builtins.range(k)), u, accumulate=accumulate)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> torch.Tensor:
    """``tf.scatter_nd``: a zero tensor of ``shape`` with ``updates`` added at ``indices`` (duplicates sum).

    Example:
        >>> import unison as tf
        >>> tf.scatter_nd([[4], [3], [1], [7]], [9, 10, 11, 12], [8]).tolist()
        [0, 11, 0, 10, 9, 0, 0, 12]
    """
    u = to_tensor(updates)
    return _scatter(torch.zeros(_shape(shape), dtype=u.dtype, device=u.device), indices, u, True, "tf.scatter_nd")


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> torch.Tensor:
    """``tf.tensor_scatter_nd_update``: a copy of ``tensor`` with ``updates`` written at ``indices``."""
    return _scatter(to_tensor(tensor), indices, updates, False, "tf.tensor_scatter_nd_update")


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> torch.Tensor:
    """``tf.tensor_scatter_nd_add``: a copy of ``tensor`` with ``updates`` added at ``indices``."""
    return _scatter(to_tensor(tensor), indices, updates, True, "tf.tensor_scatter_nd_add")


# --- constructors and rearrangements -------------------------------------------------------------


def eye(
    num_rows: int,
    num_columns: int | None = None,
    batch_shape: Any = None,
    dtype: Any = torch.float32,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.eye``: an identity matrix (``num_rows`` x ``num_columns``), optionally batched."""
    out = torch.eye(int(num_rows), int(num_rows if num_columns is None else num_columns), dtype=as_dtype(dtype))
    if batch_shape is not None:
        batch = _shape(batch_shape)
        out = out.expand(batch + tuple(out.shape)).clone()
    return out


def linspace(start: Any, stop: Any, num: Any, name: str | None = None, axis: int = 0) -> torch.Tensor:
    """``tf.linspace``: ``num`` evenly spaced values from ``start`` to exactly ``stop`` along ``axis``.

    ``start`` and ``stop`` may be tensors (broadcast together). As in TF, ``stop`` takes ``start``'s
    dtype (a float ``stop`` for an integer ``start`` is an error) and integers give float64
    (``tf.linspace(0, 1, 9)``, keras.io's conditional GAN).

    Example:
        >>> import unison as tf
        >>> tf.linspace(10.0, 12.0, 3).tolist()
        [10.0, 11.0, 12.0]
        >>> tf.linspace([0.0, 5.0], [10.0, 40.0], 5, axis=-1).tolist()[1]
        [5.0, 13.75, 22.5, 31.25, 40.0]
        >>> tf.linspace(0, 1, 3).dtype
        torch.float64
    """
    s = to_tensor(start)
    if isinstance(stop, torch.Tensor) and stop.dtype != s.dtype:
        raise ValueError(
            f"stop: Tensor conversion requested dtype {str(s.dtype).removeprefix('torch.')} for Tensor with dtype "
            f"{str(stop.dtype).removeprefix('torch.')}: tf.linspace takes start and stop of one dtype; cast one of them."
        )
    if isinstance(stop, float) and not s.is_floating_point():
        raise TypeError(
            f"Cannot convert {stop!r} to EagerTensor of dtype {str(s.dtype).removeprefix('torch.')}: tf.linspace converts "
            "stop to start's dtype; write start as a float (0.0) for a float range."
        )
    e = to_tensor(stop, dtype=s.dtype)
    if not s.is_floating_point():  # TF computes an integer range in float64
        s, e = s.to(torch.float64), e.to(torch.float64)
    n = int(to_tensor(num))
    if n <= 0:
        raise ValueError(f"tf.linspace: num must be positive. Received: num={n}")
    s, e = torch.broadcast_tensors(s, e)
    ax = int(axis) % (s.dim() + 1)
    if n == 1:
        return s.unsqueeze(ax).clone()
    steps = torch.arange(n, dtype=s.dtype, device=s.device).reshape((n,) + (1,) * s.dim())
    delta = (e - s) / (n - 1)
    out = s + steps * delta
    out = torch.cat([out[:-1], e.unsqueeze(0)])  # the last value is exactly stop, as in TF
    return out.movedim(0, ax)


def meshgrid(*args: Any, **kwargs: Any) -> list[torch.Tensor]:
    """``tf.meshgrid``: coordinate grids from 1-D tensors; ``indexing="xy"`` (default) or ``"ij"``."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"tf.meshgrid takes only indexing= and name= as keywords. Received: {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"tf.meshgrid: indexing must be 'xy' or 'ij'. Received: indexing={indexing!r}")
    tensors = [to_tensor(a).reshape(-1) for a in args]
    if not tensors:
        return []
    return [g.clone() for g in torch.meshgrid(*tensors, indexing=indexing)]


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> torch.Tensor:
    """``tf.roll``: elements shifted along ``axis`` (wrapping around); lists shift several axes."""
    shifts, axes = _axes(shift), _axes(axis)
    shifts = shifts if isinstance(shifts, tuple) else (shifts,)
    axes = axes if isinstance(axes, tuple) else (axes,)
    if len(shifts) != len(axes):
        raise ValueError(f"tf.roll: shift and axis must have the same length. Received: shift={shift!r}, axis={axis!r}")
    return torch.roll(to_tensor(input), shifts=shifts, dims=axes)


def reverse(tensor: Any, axis: Any, name: str | None = None) -> torch.Tensor:
    """``tf.reverse``: the tensor with the axes in ``axis`` (a list) reversed."""
    t = to_tensor(tensor)
    axes = _axes(axis)
    axes = axes if isinstance(axes, tuple) else (axes,)
    normalised = [a % t.dim() if t.dim() else a for a in axes]
    if len(set(normalised)) != len(normalised):
        raise ValueError(f"tf.reverse: an axis is given more than once. Received: axis={list(axes)}")
    return t.flip(axes) if axes else t.clone()


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> torch.Tensor:
    """``tf.broadcast_to``: ``input`` repeated (NumPy broadcasting rules) to ``shape``."""
    t, target = to_tensor(input), _shape(shape)
    try:
        return t.broadcast_to(target).clone()
    except RuntimeError:
        raise ValueError(
            f"tf.broadcast_to: cannot broadcast shape {list(t.shape)} to {list(target)}: each axis must be "
            "equal to the target's or 1, counted from the last."
        ) from None


def searchsorted(
    sorted_sequence: Any, values: Any, side: str = "left", out_type: Any = torch.int32, name: str | None = None
) -> torch.Tensor:
    """``tf.searchsorted``: where ``values`` would go in ``sorted_sequence`` (along the innermost axis)."""
    if side not in ("left", "right"):
        raise ValueError(f"tf.searchsorted: side must be 'left' or 'right'. Received: side={side!r}")
    seq = to_tensor(sorted_sequence)
    vals = to_tensor(values).to(seq.dtype)
    if seq.dim() > 1 and tuple(seq.shape[:-1]) != tuple(vals.shape[:-1]):
        raise ValueError(
            f"tf.searchsorted: sorted_sequence {list(seq.shape)} and values {list(vals.shape)} must have the "
            "same leading (all but the innermost) axes."
        )
    return torch.searchsorted(seq.contiguous(), vals.contiguous(), right=side == "right").to(as_dtype(out_type))


__all__ = [
    "argsort",
    "boolean_mask",
    "broadcast_to",
    "eye",
    "gather_nd",
    "linspace",
    "meshgrid",
    "pad",
    "reverse",
    "roll",
    "scatter_nd",
    "searchsorted",
    "sort",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_update",
    "unique",
]

wrap_namespace(globals(), __all__)
