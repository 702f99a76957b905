"""``tf.sparse`` functions on :class:`~unison.ops.sparse_tensor.SparseTensor`, with torch kernels.

Every function works on the three tensors (``indices``, ``values``, ``dense_shape``) with
vectorised index arithmetic: positions become row-major linear ids (``_linear``), so sorting,
merging and grouping are ``torch.sort``/``torch.unique``/``scatter_reduce`` calls. Outputs keep
TF's canonical order (indices sorted row-major) where TF's kernels produce it.

Example:
    >>> import unison as tf
    >>> st = tf.sparse.from_dense(tf.constant([[0, 3], [4, 0]]))
    >>> st.indices.tolist(), tf.sparse.reduce_sum(st, axis=1).tolist()
    ([[0, 1], [1, 0]], [3, 4])
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor
from unison.ops.sparse_tensor import SparseTensor, to_dense


def _check(sp: Any, op: str, arg: str = "sp_input") -> SparseTensor:
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"tf.sparse.{op} takes a tf.SparseTensor as `{arg}`. Received: {type(sp).__name__}")
    return sp


def _strides(shape: torch.Tensor) -> torch.Tensor:
    rank = len(shape)
    if rank == 0:
        return torch.zeros(0, dtype=torch.int64)
    rev = torch.cumprod(torch.cat([torch.ones(1, dtype=torch.int64), shape.flip(0)[:-1]]), 0)
    return rev.flip(0)


def _linear(indices: torch.Tensor, shape: torch.Tensor) -> torch.Tensor:
    """Row-major linear position of each index row (the order TF calls canonical)."""
    return (indices * _strides(shape)).sum(dim=1) if indices.shape[1] else torch.zeros(len(indices), dtype=torch.int64)


def _unlinear(ids: torch.Tensor, shape: torch.Tensor) -> torch.Tensor:
    strides = _strides(shape)
    return (ids.unsqueeze(1) // strides.clamp(min=1)) % shape.clamp(min=1)


def _take(values: Any, order: torch.Tensor) -> Any:
    return values[order.numpy()] if isinstance(values, np.ndarray) else values[order]


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """``tf.sparse.from_dense``: the non-zero (non-empty for strings) entries of a dense tensor."""
    t = to_tensor(tensor)
    if isinstance(t, np.ndarray):
        arr = np.asarray(t, dtype=object)
        keep = np.vectorize(lambda s: len(s) > 0, otypes=[bool])(arr) if arr.size else np.zeros(arr.shape, bool)
        idx = np.argwhere(keep).astype(np.int64)
        return SparseTensor(idx, arr[keep], list(arr.shape))
    where = torch.nonzero(t != 0)
    return SparseTensor(where, t[tuple(where.T)] if t.dim() else t.reshape(-1)[where.reshape(-1)], list(t.shape))


def reorder(sp_input: SparseTensor, name: str | None = None) -> SparseTensor:
    """``tf.sparse.reorder``: the same tensor with its indices sorted in row-major order."""
    sp = _check(sp_input, "reorder")
    order = torch.sort(_linear(sp.indices, sp.dense_shape), stable=True).indices
    return SparseTensor(sp.indices[order], _take(sp.values, order), sp.dense_shape)


def _as_shape(shape: Any) -> torch.Tensor:
    return torch.as_tensor(np.asarray(to_tensor(shape)), dtype=torch.int64).reshape(-1)


def reshape(sp_input: SparseTensor, shape: Any, name: str | None = None) -> SparseTensor:
    """``tf.sparse.reshape``: a new dense shape of the same size (one ``-1`` is inferred)."""
    sp = _check(sp_input, "reshape")
    new = _as_shape(shape).clone()
    total = int(torch.prod(sp.dense_shape)) if len(sp.dense_shape) else 1
    unknown = (new == -1).nonzero().reshape(-1)
    if len(unknown) > 1:
        raise InvalidArgumentError(
            None, None, f"tf.sparse.reshape: at most one -1 in `shape`. Received: {new.tolist()}"
        )
    if len(unknown):
        known = int(torch.prod(new[new != -1])) if len(new) > 1 else 1
        new[unknown[0]] = total // known if known else 0
    if (int(torch.prod(new)) if len(new) else 1) != total:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.sparse.reshape: `shape` {new.tolist()} has a different number of elements than the input's "
            f"dense shape {sp.dense_shape.tolist()} ({total}).",
        )
    ids = _linear(sp.indices, sp.dense_shape)
    return SparseTensor(_unlinear(ids, new), sp.values, new)


def slice(sp_input: SparseTensor, start: Any, size: Any, name: str | None = None) -> SparseTensor:  # noqa: A001
    """``tf.sparse.slice``: the entries in ``[start, start + size)``, re-indexed from ``start``."""
    sp = _check(sp_input, "slice")
    lo, sz = _as_shape(start), _as_shape(size)
    if len(lo) != len(sp.dense_shape) or len(sz) != len(sp.dense_shape):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.sparse.slice: `start` and `size` need one entry per dimension ({len(sp.dense_shape)}). "
            f"Received: start={lo.tolist()}, size={sz.tolist()}",
        )
    hi = torch.minimum(lo + sz, sp.dense_shape)
    keep = ((sp.indices >= lo) & (sp.indices < hi)).all(dim=1)
    kept = keep.nonzero().reshape(-1)
    return SparseTensor(sp.indices[kept] - lo, _take(sp.values, kept), (hi - lo).clamp(min=0))


def _cat_values(parts: Sequence[Any]) -> Any:
    if parts and isinstance(parts[0], np.ndarray):
        return np.concatenate([np.asarray(p, dtype=object) for p in parts])
    return torch.cat(list(parts))


def concat(
    axis: int, sp_inputs: Sequence[SparseTensor], expand_nonconcat_dims: bool = False, name: str | None = None
) -> SparseTensor:
    """``tf.sparse.concat``: SparseTensors joined along ``axis`` (other dimensions must agree,
    or, with ``expand_nonconcat_dims``, grow to the largest)."""
    sps = [_check(s, "concat", "sp_inputs") for s in sp_inputs]
    rank = len(sps[0].dense_shape)
    ax = int(axis) % rank
    shapes = torch.stack([s.dense_shape for s in sps])
    other = [d for d in range(rank) if d != ax]
    if not expand_nonconcat_dims and bool((shapes[:, other] != shapes[0, other]).any()):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.sparse.concat: the inputs' dense shapes {shapes.tolist()} differ outside axis {axis}; pass "
            "expand_nonconcat_dims=True to grow them.",
        )
    out_shape = shapes.max(dim=0).values.clone()
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), shapes[:, ax].cumsum(0)])
    out_shape[ax] = offsets[-1]
    idx = []
    for k, s in enumerate(sps):
        shifted = s.indices.clone()
        shifted[:, ax] += offsets[k]
        idx.append(shifted)
    return reorder(SparseTensor(torch.cat(idx), _cat_values([s.values for s in sps]), out_shape))


def _merge(a: SparseTensor, b: SparseTensor, op: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Any, Any]:
    """The union of two index sets: (ids, in_a, in_b, a's values there, b's values there)."""
    if a.dense_shape.tolist() != b.dense_shape.tolist():
        raise InvalidArgumentError(
            None,
            None,
            f"tf.sparse.{op}: the operands' dense shapes differ: {a.dense_shape.tolist()} and "
            f"{b.dense_shape.tolist()}.",
        )
    la, lb = _linear(a.indices, a.dense_shape), _linear(b.indices, b.dense_shape)
    ids, inverse = torch.unique(torch.cat([la, lb]), sorted=True, return_inverse=True)
    dtype = torch.promote_types(a.values.dtype, b.values.dtype)
    va = torch.zeros(len(ids), dtype=dtype).index_put((inverse[: len(la)],), a.values.to(dtype))
    vb = torch.zeros(len(ids), dtype=dtype).index_put((inverse[len(la) :],), b.values.to(dtype))
    in_a = torch.zeros(len(ids), dtype=torch.bool).index_fill(0, inverse[: len(la)], True)
    in_b = torch.zeros(len(ids), dtype=torch.bool).index_fill(0, inverse[len(la) :], True)
    return ids, in_a, in_b, va, vb


def add(a: Any, b: Any, threshold: Any = 0, name: str | None = None) -> Any:
    """``tf.sparse.add``: sparse + sparse (a SparseTensor; a sum present in both whose magnitude is
    below ``threshold`` is dropped) or sparse + dense (a dense tensor)."""
    if not isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        raise TypeError("tf.sparse.add needs at least one tf.SparseTensor among `a` and `b`.")
    if not isinstance(a, SparseTensor) or not isinstance(b, SparseTensor):
        sp, dense = (a, b) if isinstance(a, SparseTensor) else (b, a)
        d = to_tensor(dense)
        return d + to_dense(sp).to(d.dtype)
    ids, in_a, in_b, va, vb = _merge(a, b, "add")
    total = va + vb
    keep = ~(in_a & in_b) | (total.abs() >= float(to_tensor(threshold)))
    return SparseTensor(_unlinear(ids[keep], a.dense_shape), total[keep], a.dense_shape)


def maximum(sp_a: SparseTensor, sp_b: SparseTensor, name: str | None = None) -> SparseTensor:
    """``tf.sparse.maximum``: element-wise max over the union of positions (absent counts as 0)."""
    ids, _, _, va, vb = _merge(_check(sp_a, "maximum", "sp_a"), _check(sp_b, "maximum", "sp_b"), "maximum")
    return SparseTensor(_unlinear(ids, sp_a.dense_shape), torch.maximum(va, vb), sp_a.dense_shape)


def minimum(sp_a: SparseTensor, sp_b: SparseTensor, name: str | None = None) -> SparseTensor:
    """``tf.sparse.minimum``: element-wise min over the union of positions (absent counts as 0)."""
    ids, _, _, va, vb = _merge(_check(sp_a, "minimum", "sp_a"), _check(sp_b, "minimum", "sp_b"), "minimum")
    return SparseTensor(_unlinear(ids, sp_a.dense_shape), torch.minimum(va, vb), sp_a.dense_shape)


def sparse_dense_matmul(
    sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.sparse.sparse_dense_matmul``: a rank-2 SparseTensor times a dense matrix (or the other way)."""
    if not isinstance(sp_a, SparseTensor):  # dense @ sparse: (B^T A^T)^T
        return sparse_dense_matmul(b, sp_a, adjoint_a=not adjoint_b, adjoint_b=not adjoint_a).transpose(0, 1)
    dense = to_tensor(b)
    dense = dense.conj().transpose(0, 1) if adjoint_b else dense
    rows, cols = sp_a.indices[:, 0], sp_a.indices[:, 1]
    n_rows = int(sp_a.dense_shape[0])
    vals = sp_a.values
    if adjoint_a:
        rows, cols, n_rows, vals = cols, rows, int(sp_a.dense_shape[1]), vals.conj()
    inner = int(sp_a.dense_shape[0] if adjoint_a else sp_a.dense_shape[1])
    if dense.dim() != 2 or dense.shape[0] != inner:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.sparse.sparse_dense_matmul: the sparse operand has {inner} columns but `b` has shape "
            f"{list(dense.shape)}; the inner dimensions must match.",
        )
    out = torch.zeros((n_rows, dense.shape[1]), dtype=dense.dtype)
    return out.index_add(0, rows, vals.to(dense.dtype).unsqueeze(1) * dense[cols])


def _reduce(sp: SparseTensor, axis: Any, keepdims: bool, output_is_sparse: bool, how: str, op: str) -> Any:
    rank = len(sp.dense_shape)
    axes = list(range(rank)) if axis is None else [int(a) % rank for a in np.atleast_1d(np.asarray(axis))]
    keep_dims = [d for d in range(rank) if d not in axes]
    out_shape = sp.dense_shape[keep_dims]
    ids = _linear(sp.indices[:, keep_dims], out_shape)
    size = int(torch.prod(out_shape)) if keep_dims else 1
    vals = sp.values
    if how == "sum":
        flat = torch.zeros(size, dtype=vals.dtype).index_add(0, ids, vals)
    else:
        fill = float("-inf") if vals.is_floating_point() else torch.iinfo(vals.dtype).min
        flat = torch.full((size,), fill, dtype=vals.dtype).scatter_reduce(0, ids, vals, "amax")
    present = torch.zeros(size, dtype=torch.bool).index_fill(0, ids, True)
    flat = torch.where(present, flat, torch.zeros((), dtype=flat.dtype))
    full_shape = [1 if d in axes else int(sp.dense_shape[d]) for d in range(rank)] if keepdims else out_shape.tolist()
    if output_is_sparse:
        where = present.nonzero().reshape(-1)
        shape_t = torch.as_tensor(full_shape, dtype=torch.int64)
        return SparseTensor(_unlinear(where, shape_t), flat[where], shape_t)
    return flat.reshape(full_shape)


def reduce_sum(
    sp_input: SparseTensor, axis: Any = None, keepdims: Any = None, output_is_sparse: bool = False, name: Any = None
) -> Any:
    """``tf.sparse.reduce_sum``: the sum of the values over ``axis`` (all axes by default)."""
    return _reduce(_check(sp_input, "reduce_sum"), axis, bool(keepdims), output_is_sparse, "sum", "reduce_sum")


def reduce_max(
    sp_input: SparseTensor, axis: Any = None, keepdims: Any = None, output_is_sparse: bool = False, name: Any = None
) -> Any:
    """``tf.sparse.reduce_max``: the max of the present values over ``axis`` (0 where none is present)."""
    return _reduce(_check(sp_input, "reduce_max"), axis, bool(keepdims), output_is_sparse, "max", "reduce_max")


def retain(sp_input: SparseTensor, to_retain: Any) -> SparseTensor:
    """``tf.sparse.retain``: the entries whose ``to_retain`` flag (one bool per value) is set."""
    sp = _check(sp_input, "retain")
    mask = to_tensor(to_retain).to(torch.bool).reshape(-1)
    if len(mask) != len(sp.indices):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.sparse.retain: `to_retain` needs one flag per value ({len(sp.indices)}). Received {len(mask)}.",
        )
    kept = mask.nonzero().reshape(-1)
    return SparseTensor(sp.indices[kept], _take(sp.values, kept), sp.dense_shape)


def reset_shape(sp_input: SparseTensor, new_shape: Any = None) -> SparseTensor:
    """``tf.sparse.reset_shape``: the tightest dense shape (``new_shape=None``) or a larger one."""
    sp = _check(sp_input, "reset_shape")
    if new_shape is None:
        tight = sp.indices.max(dim=0).values + 1 if len(sp.indices) else torch.zeros_like(sp.dense_shape)
        return SparseTensor(sp.indices, sp.values, tight)
    shape = _as_shape(new_shape)
    if len(shape) != len(sp.dense_shape) or bool((shape < sp.dense_shape).any()):
        raise ValueError(
            f"tf.sparse.reset_shape: `new_shape` {shape.tolist()} must have the same rank as and be at least "
            f"the current dense shape {sp.dense_shape.tolist()}."
        )
    return SparseTensor(sp.indices, sp.values, shape)


def fill_empty_rows(sp_input: SparseTensor, default_value: Any, name: str | None = None) -> tuple[SparseTensor, Any]:
    """``tf.sparse.fill_empty_rows``: ``default_value`` at ``[row, 0, ...]`` of each row without
    values; returns the filled tensor and the bool indicator of the rows that were empty."""
    sp = _check(sp_input, "fill_empty_rows")
    n_rows = int(sp.dense_shape[0])
    has = torch.zeros(n_rows, dtype=torch.bool).index_fill(0, sp.indices[:, 0], True)
    empty = (~has).nonzero().reshape(-1)
    new_idx = torch.zeros((len(empty), len(sp.dense_shape)), dtype=torch.int64)
    new_idx[:, 0] = empty
    if isinstance(sp.values, np.ndarray):
        fill: Any = np.full(len(empty), default_value, dtype=object)
    else:
        fill = torch.full((len(empty),), to_tensor(default_value).item(), dtype=sp.values.dtype)
    out = reorder(SparseTensor(torch.cat([sp.indices, new_idx]), _cat_values([sp.values, fill]), sp.dense_shape))
    return out, ~has


def transpose(sp_input: SparseTensor, perm: Any = None, name: str | None = None) -> SparseTensor:
    """``tf.sparse.transpose``: dimensions permuted by ``perm`` (reversed by default), reordered."""
    sp = _check(sp_input, "transpose")
    rank = len(sp.dense_shape)
    p = list(range(rank))[::-1] if perm is None else [int(i) for i in np.asarray(to_tensor(perm)).reshape(-1)]
    if sorted(p) != list(range(rank)):
        raise InvalidArgumentError(
            None, None, f"tf.sparse.transpose: `perm` {p} is not a permutation of 0..{rank - 1}."
        )
    return reorder(SparseTensor(sp.indices[:, p], sp.values, sp.dense_shape[p]))


def expand_dims(sp_input: SparseTensor, axis: Any = None, name: str | None = None) -> SparseTensor:
    """``tf.sparse.expand_dims``: a size-1 dimension inserted at ``axis`` (negative counts from the end)."""
    sp = _check(sp_input, "expand_dims")
    rank = len(sp.dense_shape)
    ax = int(to_tensor(axis if axis is not None else 0))
    if not -rank - 1 <= ax <= rank:
        raise InvalidArgumentError(
            None, None, f"tf.sparse.expand_dims: `axis` must be in [{-rank - 1}, {rank}]. Received: axis={ax}"
        )
    ax = ax % (rank + 1)
    idx = torch.cat([sp.indices[:, :ax], torch.zeros((len(sp.indices), 1), dtype=torch.int64), sp.indices[:, ax:]], 1)
    shape = torch.cat([sp.dense_shape[:ax], torch.ones(1, dtype=torch.int64), sp.dense_shape[ax:]])
    return SparseTensor(idx, sp.values, shape)


def split(sp_input: Any = None, num_split: Any = None, axis: Any = None, name: str | None = None) -> list[SparseTensor]:
    """``tf.sparse.split``: ``num_split`` slices along ``axis`` (the first ``size % num_split`` one larger)."""
    sp = _check(sp_input, "split")
    if num_split is None or axis is None:
        raise ValueError("tf.sparse.split needs `num_split` and `axis`.")
    n, ax = int(num_split), int(axis) % len(sp.dense_shape)
    dim = int(sp.dense_shape[ax])
    if n < 1 or n > builtins.max(dim, 1):
        raise InvalidArgumentError(
            None, None, f"tf.sparse.split: `num_split` must be in [1, {dim}] (the size of axis {axis}). Received {n}."
        )
    sizes = [dim // n + (1 if k < dim % n else 0) for k in range(n)]
    out, start = [], 0
    for s in sizes:
        lo = torch.zeros_like(sp.dense_shape)
        lo[ax] = start
        size = sp.dense_shape.clone()
        size[ax] = s
        out.append(slice(sp, lo, size))
        start += s
    return out


def softmax(sp_input: SparseTensor, name: str | None = None) -> SparseTensor:
    """``tf.sparse.softmax``: softmax over the present values of each innermost row."""
    sp = _check(sp_input, "softmax")
    if len(sp.dense_shape) < 2:
        raise InvalidArgumentError(None, None, f"tf.sparse.softmax needs rank >= 2. Received shape {sp.shape}")
    rows = _linear(sp.indices[:, :-1], sp.dense_shape[:-1])
    size = int(torch.prod(sp.dense_shape[:-1]))
    v = sp.values
    top = torch.full((size,), float("-inf"), dtype=v.dtype).scatter_reduce(0, rows, v, "amax")
    e = torch.exp(v - top[rows])
    total = torch.zeros(size, dtype=v.dtype).index_add(0, rows, e)
    return SparseTensor(sp.indices, e / total[rows], sp.dense_shape)


__all__ = [
    "add",
    "concat",
    "expand_dims",
    "fill_empty_rows",
    "from_dense",
    "maximum",
    "minimum",
    "reduce_max",
    "reduce_sum",
    "reorder",
    "reset_shape",
    "reshape",
    "retain",
    "slice",
    "softmax",
    "sparse_dense_matmul",
    "split",
    "transpose",
]
