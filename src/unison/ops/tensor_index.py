"""Negative slice steps on tensors, as TF's strided slicing takes them: ``x[::-1]``, ``x[5:1:-2]``.

TF's guides reverse a tensor with ``rank_1_tensor[::-1]``; torch's indexing refuses any negative
step ("step must be greater than zero"). Importing unison makes ``torch.Tensor.__getitem__`` try
torch's indexing first (so every ordinary index runs as before, at the cost of one Python call)
and, only when the key holds a negative step, gather those axes' elements in TF's order
(``index_select`` over ``range(*slice.indices(size))``, so autograd flows) before the rest of the
key is applied.

Example:
    >>> import unison as tf
    >>> tf.constant([0, 1, 2, 3, 4])[::-2].numpy()
    array([4, 2, 0], dtype=int32)
    >>> tf.constant([[1, 2], [3, 4]])[::-1, 1].numpy()
    array([4, 2], dtype=int32)
"""

from __future__ import annotations

from typing import Any

import torch

_TORCH_GETITEM = torch.Tensor.__getitem__


def _has_negative_step(key: tuple[Any, ...]) -> bool:
    return any(isinstance(k, slice) and k.step is not None and _as_int(k.step) < 0 for k in key)


def _as_int(value: Any) -> int:
    return int(value.item()) if isinstance(value, torch.Tensor) else int(value)


def _consumed(k: Any) -> int:
    """How many input axes one entry of an index key uses up."""
    if k is None:
        return 0
    if isinstance(k, torch.Tensor) and k.dtype == torch.bool:
        return max(k.dim(), 1)
    return 1


def _reverse_axes(tensor: torch.Tensor, key: tuple[Any, ...]) -> tuple[torch.Tensor, tuple[Any, ...]]:
    """Gathers the negative-step slices' elements; returns the tensor and the key left to apply."""
    ellipsis_axes = tensor.dim() - sum(_consumed(k) for k in key if k is not Ellipsis)
    axis, rest = 0, []
    for k in key:
        if k is Ellipsis:
            axis += ellipsis_axes
        elif isinstance(k, slice) and k.step is not None and _as_int(k.step) < 0:
            bounds = [None if v is None else _as_int(v) for v in (k.start, k.stop, k.step)]
            kept = range(*slice(*bounds).indices(tensor.shape[axis]))
            index = torch.tensor(list(kept), dtype=torch.long, device=tensor.device)
            tensor = tensor.index_select(axis, index)
            k = slice(None)
            axis += 1
        else:
            axis += _consumed(k)
        rest.append(k)
    return tensor, tuple(rest)


def _getitem(self: torch.Tensor, key: Any) -> Any:
    try:
        return _TORCH_GETITEM(self, key)
    except ValueError:
        parts = key if isinstance(key, tuple) else (key,)
        if not _has_negative_step(parts):
            raise
        tensor, rest = _reverse_axes(self, parts)
        return _TORCH_GETITEM(tensor, rest)


def install() -> None:
    """Let tensors take negative slice steps (idempotent)."""
    if getattr(torch.Tensor.__getitem__, "__module__", None) != __name__:
        torch.Tensor.__getitem__ = _getitem  # type: ignore[method-assign,assignment]
