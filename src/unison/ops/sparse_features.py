"""``tf.sparse``'s feature functions: ``bincount``, ``cross``/``cross_hashed``, the segment
reductions, ``to_indicator``, ``eye``, ``map_values`` and ``sampled_addmm``.

``cross_hashed`` is TF's: each feature's hash (``Fingerprint64`` of a string, the value of an
integer) is folded into the key with ``FingerprintCat64``, so the buckets equal TF's.

Example:
    >>> import unison as tf
    >>> a = tf.sparse.from_dense(tf.constant([["x", "y"]]))
    >>> tf.sparse.cross([a, tf.constant([["p"]])]).values.tolist()
    [b'x_X_p', b'y_X_p']
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.farmhash import fingerprint64
from unison.ops.sparse_ops import _check, _linear, reorder
from unison.ops.sparse_tensor import SparseTensor

_M64 = (1 << 64) - 1
_KMUL = 0xC6A4A7935BD1E995
DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's default hash_key of cross_hashed


def bincount(
    values: Any,
    weights: Any = None,
    axis: int | None = 0,
    minlength: int | None = None,
    maxlength: int | None = None,
    binary_output: bool = False,
    name: str | None = None,
) -> SparseTensor:
    """``tf.sparse.bincount``: counts (or summed ``weights``) of each value, as a SparseTensor:
    over everything (``axis=0``) or per row of a 2-D input (``axis=-1``)."""
    if isinstance(values, SparseTensor):
        vals, rows, n_rows = values.values.long(), values.indices[:, 0], int(values.dense_shape[0])
        w = weights.values if isinstance(weights, SparseTensor) else weights
    else:
        t = to_tensor(values)
        vals = t.reshape(-1).long()
        rows = torch.arange(t.shape[0]).repeat_interleave(t.shape[-1]) if t.dim() == 2 else torch.zeros_like(vals)
        n_rows = t.shape[0] if t.dim() == 2 else 1
        w = weights
    out_dtype = (
        to_tensor(w).dtype if w is not None else (values.values if isinstance(values, SparseTensor) else t).dtype
    )
    wv = to_tensor(w).reshape(-1).to(out_dtype) if w is not None else torch.ones(len(vals), dtype=out_dtype)
    keep = vals >= 0
    if maxlength is not None:
        keep &= vals < int(maxlength)
    vals, rows, wv = vals[keep], rows[keep], wv[keep]
    width = int(vals.max()) + 1 if len(vals) else 0
    width = builtins.max(width, int(minlength or 0))
    if maxlength is not None:
        width = builtins.min(width, int(maxlength))
    per_row = axis is not None and int(axis) in (-1, 1)
    r = rows if per_row else torch.zeros_like(rows)
    n = n_rows if per_row else 1
    ids = r * width + vals
    counts = torch.zeros(n * width, dtype=out_dtype).index_add(0, ids, wv)
    present = torch.zeros(n * width, dtype=torch.bool).index_fill(0, ids, True)
    where = present.nonzero().reshape(-1)
    got = counts[where]
    if binary_output:
        got = torch.ones_like(got)
    if per_row:
        return SparseTensor(torch.stack([where // width, where % width], 1), got, [n, width])
    return SparseTensor(where.unsqueeze(1), got, [width])


def _crossed(inputs: Sequence[Any], join: Any, start: Any) -> tuple[np.ndarray, list[Any], int, int]:
    """Per row, every combination of one feature of each input (the last varying fastest), folded
    with ``join`` from ``start``: (index rows, crossed values, rows, widest row)."""
    columns = [_rows_of(x) for x in inputs]
    n = len(columns[0])
    idx: list[list[int]] = []
    out: list[Any] = []
    width = 0
    for r in range(n):  # strings: Python per row (numpy has no string product kernel)
        combos: list[Any] = [start]
        for k, col in enumerate(columns):
            combos = [join(c, f, k) for c in combos for f in col[r]]
        idx.extend([r, j] for j in range(len(combos)))
        out.extend(combos)
        width = builtins.max(width, len(combos))
    return np.asarray(idx, np.int64).reshape(-1, 2), out, n, width


def cross(inputs: Sequence[Any], name: str | None = None, separator: str | None = None) -> SparseTensor:
    """``tf.sparse.cross``: per row, every combination of one feature from each input, joined by
    ``separator`` (``"_X_"``), in the order of the inputs (the last varying fastest)."""
    sep = ("_X_" if separator is None else separator).encode()

    def join(acc: bytes, feature: Any, k: int) -> bytes:
        return acc + (sep if k else b"") + _text(feature)

    idx, out, n, width = _crossed(inputs, join, b"")
    return SparseTensor(idx, np.asarray(out, dtype=object), [n, width])


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's ``FingerprintCat64``: two 64-bit fingerprints combined (tensorflow/core/platform/fingerprint.h)."""
    result = fp1 ^ _KMUL
    result ^= (_shift_mix((fp2 * _KMUL) & _M64) * _KMUL) & _M64
    result = (result * _KMUL) & _M64
    result = (_shift_mix(result) * _KMUL) & _M64
    return _shift_mix(result)


def _feature_hash(feature: Any) -> int:
    if isinstance(feature, (bytes, str)):
        return fingerprint64(_text(feature))
    return int(feature) & _M64


def cross_hashed(
    inputs: Sequence[Any], num_buckets: int = 0, hash_key: int | None = None, name: str | None = None
) -> SparseTensor:
    """``tf.sparse.cross_hashed``: the crosses of ``cross`` as int64 buckets (TF's hashing:
    ``FingerprintCat64`` over the features' hashes from ``hash_key``, modulo ``num_buckets``)."""
    key = DEFAULT_HASH_KEY if hash_key is None else int(hash_key) & _M64

    def join(acc: int, feature: Any, k: int) -> int:
        return fingerprint_cat64(acc, _feature_hash(feature))

    idx, out, n, width = _crossed(inputs, join, key)
    modulus = int(num_buckets) if int(num_buckets) > 0 else (1 << 63) - 1
    values = torch.tensor([h % modulus for h in out], dtype=torch.int64)
    return SparseTensor(idx, values, [n, width])


def _text(v: Any) -> bytes:
    return v if isinstance(v, bytes) else (v.encode() if isinstance(v, str) else str(int(v)).encode())


def _rows_of(x: Any) -> list[list[Any]]:
    """Each row's features: bytes for strings, Python ints for integers (cross_hashed hashes them apart)."""

    def text(v: Any) -> Any:
        return v.encode() if isinstance(v, str) else (v if isinstance(v, bytes) else int(v))

    if isinstance(x, SparseTensor):
        n = int(x.dense_shape[0])
        vals = np.asarray(x.values if isinstance(x.values, np.ndarray) else x.values.numpy(), dtype=object)
        rows: list[list[bytes]] = [[] for _ in range(n)]
        for (r, _), v in zip(reorder(x).indices.tolist(), vals[np.argsort(_linear(x.indices, x.dense_shape))]):
            rows[r].append(text(v))
        return rows
    if hasattr(x, "row_splits") and hasattr(x, "to_list"):  # a RaggedTensor
        return [[text(v) for v in row] for row in x.to_list()]
    arr = np.asarray(x if not isinstance(x, torch.Tensor) else x.numpy(), dtype=object)
    return [[text(v) for v in row] for row in arr]


def sampled_addmm(
    indices: Any,
    values: Any,
    dense_shape: Any,
    mat1: Any,
    mat2: Any,
    beta: Any = 1.0,
    alpha: Any = 1.0,
    output_type: Any = torch.float32,
) -> tuple[Any, torch.Tensor, Any]:
    """``tf.sparse.sampled_addmm``: ``alpha * (mat1 @ mat2)`` read at ``indices`` plus ``beta * values``
    (batched over leading dimensions); returns ``(indices, values, dense_shape)``."""
    idx, vals = to_tensor(indices), to_tensor(values)
    a, b = to_tensor(mat1), to_tensor(mat2)
    if a.shape[-1] != b.shape[-2]:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.sparse.sampled_addmm: mat1 {list(a.shape)} and mat2 {list(b.shape)} cannot be multiplied "
            "(the inner dimensions differ).",
        )
    rows = torch.gather(a, -2, idx[..., 0:1].long().expand(*idx.shape[:-1], a.shape[-1]))
    cols = torch.gather(b.transpose(-1, -2), -2, idx[..., 1:2].long().expand(*idx.shape[:-1], b.shape[-2]))
    product = (rows * cols).sum(-1)
    return indices if isinstance(indices, torch.Tensor) else idx, alpha * product + beta * vals, to_tensor(dense_shape)


def _segment(data: Any, indices: Any, segment_ids: Any, num_segments: Any, how: str, op: str) -> torch.Tensor:
    d, idx, seg = to_tensor(data), to_tensor(indices).long(), to_tensor(segment_ids).long()
    if len(idx) != len(seg):
        raise InvalidArgumentError(
            None, None, f"tf.sparse.{op}: `indices` ({len(idx)}) and `segment_ids` ({len(seg)}) differ in length."
        )
    if len(idx) and (int(idx.min()) < 0 or int(idx.max()) >= len(d)):
        raise InvalidArgumentError(None, None, f"tf.sparse.{op}: `indices` out of range [0, {len(d)}).")
    n = int(num_segments) if num_segments is not None else (int(seg.max()) + 1 if len(seg) else 0)
    rows = d[idx]
    out = torch.zeros((n,) + tuple(d.shape[1:]), dtype=d.dtype).index_add(0, seg, rows)
    if how == "sum":
        return out
    count = torch.zeros(n, dtype=d.dtype).index_add(0, seg, torch.ones(len(seg), dtype=d.dtype))
    denom = count if how == "mean" else count.sqrt()
    denom = torch.where(count > 0, denom, torch.ones_like(denom))
    return out / denom.reshape((n,) + (1,) * (d.dim() - 1))


def segment_sum(
    data: Any, indices: Any, segment_ids: Any, num_segments: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.sparse.segment_sum``: sums of ``data[indices]`` grouped by sorted ``segment_ids``."""
    return _segment(data, indices, segment_ids, num_segments, "sum", "segment_sum")


def segment_mean(
    data: Any, indices: Any, segment_ids: Any, num_segments: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.sparse.segment_mean``: means of ``data[indices]`` per segment (0 for an empty one)."""
    return _segment(data, indices, segment_ids, num_segments, "mean", "segment_mean")


def segment_sqrt_n(
    data: Any, indices: Any, segment_ids: Any, num_segments: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.sparse.segment_sqrt_n``: sums of ``data[indices]`` per segment divided by sqrt(count)."""
    return _segment(data, indices, segment_ids, num_segments, "sqrt_n", "segment_sqrt_n")


def eye(num_rows: int, num_columns: int | None = None, dtype: Any = torch.float32, name: Any = None) -> SparseTensor:
    """``tf.sparse.eye``: a sparse identity matrix of ``[num_rows, num_columns]``."""
    rows, cols = int(num_rows), int(num_rows if num_columns is None else num_columns)
    n = builtins.min(rows, cols)
    diag = torch.arange(n, dtype=torch.int64)
    return SparseTensor(torch.stack([diag, diag], 1), torch.ones(n, dtype=as_dtype(dtype)), [rows, cols])


def to_indicator(sp_input: SparseTensor, vocab_size: int, name: str | None = None) -> torch.Tensor:
    """``tf.sparse.to_indicator``: a dense bool ``[..., vocab_size]`` with True at each row's ids."""
    sp = _check(sp_input, "to_indicator")
    ids = sp.values.long()
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= int(vocab_size)):
        raise InvalidArgumentError(
            None, None, f"tf.sparse.to_indicator: a value is outside [0, vocab_size={vocab_size})."
        )
    out = torch.zeros(sp.dense_shape[:-1].tolist() + [int(vocab_size)], dtype=torch.bool)
    out[tuple(sp.indices[:, :-1].T) + (ids,)] = True
    return out


def map_values(op: Callable[..., Any], *args: Any, **kwargs: Any) -> SparseTensor:
    """``tf.sparse.map_values``: ``op`` applied to the values of the SparseTensor arguments (which
    must share their indices); other arguments pass through."""
    sparse = [a for a in list(args) + list(kwargs.values()) if isinstance(a, SparseTensor)]
    if not sparse:
        raise ValueError("tf.sparse.map_values needs at least one SparseTensor argument.")
    first = sparse[0]
    for other in sparse[1:]:
        if other.indices.shape != first.indices.shape or not bool((other.indices == first.indices).all()):
            raise InvalidArgumentError(None, None, "tf.sparse.map_values: the SparseTensors' indices differ.")

    def unwrap(a: Any) -> Any:
        return a.values if isinstance(a, SparseTensor) else a

    values = op(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    return SparseTensor(first.indices, values, first.dense_shape)


def _sequences(sp: SparseTensor, groups: torch.Tensor, ids: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each group's sequence (padded with -1) and its length, from a SparseTensor in row-major order."""
    order = torch.sort(_linear(sp.indices, sp.dense_shape), stable=True).indices
    g, v = groups[order], ids[order]
    lengths = torch.bincount(g, minlength=n)[:n]
    width = int(lengths.max()) if n and len(g) else 0
    pos = torch.arange(len(g)) - (lengths.cumsum(0) - lengths)[g]
    out = torch.full((n, width), -1, dtype=torch.int64)
    out[g, pos] = v
    return out, lengths


def edit_distance(
    hypothesis: SparseTensor, truth: SparseTensor, normalize: bool = True, name: Any = None
) -> torch.Tensor:
    """``tf.edit_distance``: the Levenshtein distance between the sequences (the last dimension) of
    two SparseTensors at each outer position, divided by the truth's length when ``normalize``
    (``inf`` for a non-empty hypothesis against an empty truth). The dynamic programme runs once
    for the whole batch, vectorised over positions."""
    hyp, tru = _check(hypothesis, "edit_distance", "hypothesis"), _check(truth, "edit_distance", "truth")
    if hyp.dtype != tru.dtype:
        raise InvalidArgumentError(
            None, None, f"tf.edit_distance: hypothesis is {hyp.dtype} but truth is {tru.dtype}; they must match."
        )
    outer = torch.maximum(hyp.dense_shape[:-1], tru.dense_shape[:-1])
    n = int(torch.prod(outer)) if len(outer) else 1
    # a shared integer id per distinct value (strings included), so comparisons are tensor ops
    both = [np.asarray(v if isinstance(v, np.ndarray) else v.numpy(), dtype=object) for v in (hyp.values, tru.values)]
    joined = np.concatenate(both)
    codes = np.unique(joined, return_inverse=True)[1] if joined.size else np.zeros(0, np.int64)
    ids = torch.as_tensor(np.asarray(codes, dtype=np.int64).reshape(-1))
    h_seq, h_len = _sequences(hyp, _linear(hyp.indices[:, :-1], outer), ids[: len(both[0])], n)
    t_seq, t_len = _sequences(tru, _linear(tru.indices[:, :-1], outer), ids[len(both[0]) :], n)
    width_t = t_seq.shape[1]
    prev = torch.arange(width_t + 1).expand(n, width_t + 1).clone()
    rows = [prev]
    for i in range(1, h_seq.shape[1] + 1):
        cur = torch.empty_like(prev)
        cur[:, 0] = i
        for j in range(1, width_t + 1):
            cost = (h_seq[:, i - 1] != t_seq[:, j - 1]).to(torch.int64)
            cur[:, j] = torch.minimum(torch.minimum(prev[:, j] + 1, cur[:, j - 1] + 1), prev[:, j - 1] + cost)
        rows.append(cur)
        prev = cur
    table = torch.stack(rows)  # [H + 1, n, T + 1]
    dist = table[h_len, torch.arange(n), t_len].to(torch.float32)
    if normalize:
        dist = torch.where(t_len > 0, dist / t_len.clamp(min=1), torch.where(dist > 0, torch.inf, 0.0))
    return dist.reshape(outer.tolist())


__all__ = [
    "bincount",
    "cross",
    "cross_hashed",
    "edit_distance",
    "eye",
    "fingerprint_cat64",
    "map_values",
    "sampled_addmm",
    "segment_mean",
    "segment_sqrt_n",
    "segment_sum",
    "to_indicator",
]
