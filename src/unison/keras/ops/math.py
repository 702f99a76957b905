"""``keras.ops.math``: segment reductions, ``top_k``/``in_top_k``, ``logsumexp``, ``erf`` and friends.

Example:
    >>> from unison.keras import ops
    >>> values, indices = ops.top_k([1.0, 5.0, 3.0], k=2)
    >>> values.tolist(), indices.tolist()
    ([5.0, 3.0], [1, 2])
    >>> ops.segment_sum([1.0, 2.0, 3.0], [0, 0, 1]).tolist()
    [3.0, 3.0]
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple

import torch

from unison.keras.ops._convert import float_of, tensor
from unison.keras.ops._math_more import MATH_NAMES as _more_names
from unison.keras.ops._math_more import (  # noqa: F401
    cdist,
    erfc,
    fft,
    fft2,
    ifft2,
    irfft,
    istft,
    rfft,
    segment_min,
    segment_prod,
    stft,
    view_as_complex,
    view_as_real,
)
from unison.keras.ops._numpy_math import logsumexp, rsqrt
from unison.ops._dispatch import wrap_namespace
from unison.ops.math import top_k as _tf_top_k
from unison.ops.math import unsorted_segment_sum as _tf_unsorted_segment_sum

Tensor = torch.Tensor


def _segments(data: Any, segment_ids: Any, num_segments: int | None, fn: str) -> tuple[Tensor, Tensor, int]:
    d, ids = tensor(data), tensor(segment_ids)
    if ids.is_floating_point() or ids.dim() != 1 or (d.dim() and ids.shape[0] != d.shape[0]):
        raise ValueError(
            f"keras.ops.{fn}: segment_ids must be a 1-D integer tensor with one id per row of data. "
            f"Received segment_ids of shape {tuple(ids.shape)} ({ids.dtype}) for data of shape {tuple(d.shape)}."
        )
    n = int(num_segments) if num_segments is not None else (int(ids.max()) + 1 if ids.numel() else 0)
    return d, ids.long().to(d.device), n


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None, sorted: builtins.bool = False) -> Tensor:
    """``keras.ops.segment_sum(data, segment_ids, num_segments=None, sorted=False)``: sums of rows per id.

    Without ``num_segments`` there are ``max(segment_ids) + 1`` segments; ids at or past it are dropped.
    """
    d, ids, n = _segments(data, segment_ids, num_segments, "segment_sum")
    keep = ids < n
    return _tf_unsorted_segment_sum(d[keep], ids[keep], n)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None, sorted: builtins.bool = False) -> Tensor:
    """``keras.ops.segment_max(...)``: maxima of rows per id (empty segments hold the dtype's lowest value)."""
    d, ids, n = _segments(data, segment_ids, num_segments, "segment_max")
    keep = ids < n
    rows, values = ids[keep], d[keep]
    lowest = torch.finfo(d.dtype).min if d.is_floating_point() else torch.iinfo(d.dtype).min
    out = torch.full((n, *d.shape[1:]), lowest, dtype=d.dtype, device=d.device)
    index = rows.reshape(-1, *([1] * (d.dim() - 1))).expand_as(values)
    return out.scatter_reduce(0, index, values, reduce="amax", include_self=True)


class TopK(NamedTuple):
    """What ``top_k`` returns: a pair with named fields, as TF's ``TopKV2`` (``result.values``)."""

    values: Tensor
    indices: Tensor


def top_k(x: Any, k: int, sorted: builtins.bool = True) -> TopK:
    """``keras.ops.top_k(x, k, sorted=True)``: ``(values, int32 indices)`` of the ``k`` largest on the last axis."""
    t = tensor(x)
    if not 0 < int(k) <= t.shape[-1]:
        raise ValueError(f"keras.ops.top_k: k must be in [1, {t.shape[-1]}] (the last axis). Received: k={k!r}")
    values, indices = _tf_top_k(t, int(k), sorted=sorted)
    return TopK(values, indices)


def in_top_k(targets: Any, predictions: Any, k: int) -> Tensor:
    """``keras.ops.in_top_k(targets, predictions, k)``: per row, whether the target class is among the top ``k``.

    A target whose score ties the k-th largest counts as in (fewer than ``k`` scores beat it).
    """
    pred = tensor(predictions)
    ids = tensor(targets).long().reshape(-1).to(pred.device)
    if pred.dim() != 2 or ids.shape[0] != pred.shape[0]:
        raise ValueError(
            f"keras.ops.in_top_k: predictions must be (batch, classes) and targets (batch,). "
            f"Received predictions {tuple(pred.shape)} and targets {tuple(tensor(targets).shape)}."
        )
    score = pred.gather(1, ids[:, None])
    return (pred > score).sum(dim=1) < int(k)


def erf(x: Any) -> Tensor:
    """``keras.ops.erf(x)``: the error function."""
    return torch.erf(float_of(tensor(x)))


def erfinv(x: Any) -> Tensor:
    """``keras.ops.erfinv(x)``: the inverse error function."""
    return torch.erfinv(float_of(tensor(x)))


def logdet(x: Any) -> Tensor:
    """``keras.ops.logdet(x)``: ``log(det(x))`` of (batches of) positive-definite matrices."""
    return torch.logdet(float_of(tensor(x)))


def extract_sequences(x: Any, sequence_length: int, sequence_stride: int) -> Tensor:
    """``keras.ops.extract_sequences(x, sequence_length, sequence_stride)``: frames along the last axis."""
    return tensor(x).unfold(-1, int(sequence_length), int(sequence_stride))


__all__ = [
    "erf",
    "erfinv",
    "extract_sequences",
    "in_top_k",
    "logdet",
    "logsumexp",
    "rsqrt",
    "segment_max",
    "segment_sum",
    "top_k",
]


# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), __all__)
__all__ = sorted([*__all__, *_more_names])  # wrapped in their own module
