"""Negative slice steps on tensors, as TF's and numpy's: ``t[::-1]``, ``image[..., ::-1]``.

torch's indexing takes positive steps only (``ValueError: step must be greater than zero``), so
a TF program reversing a sequence or swapping RGB to BGR with a slice stopped there. Importing
unison wraps ``torch.Tensor.__getitem__``: torch's own indexing runs first, unchanged and at its
speed; only where it refuses a negative step is the index rewritten. Each negative-step slice
becomes the positive-step slice of the same elements, those axes are flipped, and the rest of
the index (integers, ``None``, ``...``, tensors) is applied to that. Like TF's strided slice the
result is a new tensor (torch has no negative strides) and gradients flow through it.

Example:
    >>> import unison as tf
    >>> t = tf.constant([[1, 2, 3], [4, 5, 6]])
    >>> t[:, ::-1].numpy().tolist()
    [[3, 2, 1], [6, 5, 4]]
    >>> t[::-1, 2:0:-2].numpy().tolist()
    [[6], [3]]
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

__all__ = ["install", "negative_step_index"]

_TORCH_REFUSES = "step must be greater than zero"
_ORIGINAL: Callable[[torch.Tensor, Any], torch.Tensor] = torch.Tensor.__getitem__


def _axes_taken(entry: Any) -> int:
    """How many input axes one index entry consumes (``None`` adds one and takes none)."""
    if entry is None:
        return 0
    if isinstance(entry, torch.Tensor | np.ndarray) and entry.dtype in (torch.bool, np.bool_):
        return max(entry.ndim, 1)  # a boolean mask selects over as many axes as it has
    return 1


def _negative(entry: Any) -> bool:
    return isinstance(entry, slice) and entry.step is not None and operator.index(entry.step) < 0


def negative_step_index(
    t: torch.Tensor, index: Any, getitem: Callable[[torch.Tensor, Any], torch.Tensor] = _ORIGINAL
) -> torch.Tensor:
    """``t[index]`` where ``index`` may hold slices with negative steps (numpy's semantics).

    Example:
        >>> negative_step_index(torch.arange(6), slice(None, None, -2)).tolist()
        [5, 3, 1]
    """
    entries = index if isinstance(index, tuple) else (index,)
    ellipses = sum(1 for e in entries if e is Ellipsis)
    if ellipses > 1:
        raise IndexError(f"An index can only have a single ellipsis ('...'). Received: {index!r}")
    explicit = sum(_axes_taken(e) for e in entries if e is not Ellipsis)
    if explicit > t.dim():
        raise IndexError(
            f"Too many indices for a tensor of rank {t.dim()} (shape {tuple(t.shape)}): the index {index!r} "
            f"addresses {explicit} axes."
        )
    positive: list[Any] = [slice(None)] * t.dim()  # first pass: every axis kept, steps made positive
    rest: list[Any] = []  # second pass: the index with its negative slices replaced by ':'
    flips: list[int] = []
    axis = 0
    for entry in entries:
        if entry is Ellipsis:
            axis += t.dim() - explicit
            rest.append(entry)
            continue
        if _negative(entry):
            start, stop, step = entry.indices(t.shape[axis])
            count = len(range(start, stop, step))
            if count:
                last = start + (count - 1) * step
                positive[axis] = slice(last, start + 1, -step)
                flips.append(axis)
            else:
                positive[axis] = slice(0, 0)
            rest.append(slice(None))
        else:
            rest.append(entry)
        axis += _axes_taken(entry)
    out = getitem(t, tuple(positive))
    if flips:
        out = out.flip(flips)
    return getitem(out, tuple(rest))


def _getitem(self: torch.Tensor, index: Any) -> Any:
    try:
        return _ORIGINAL(self, index)
    except ValueError as exc:
        entries = index if isinstance(index, tuple) else (index,)
        if _TORCH_REFUSES not in str(exc) or not any(_negative(e) for e in entries):
            raise
        return negative_step_index(self, index)


def install() -> None:
    """Let tensors take negative slice steps (idempotent)."""
    if torch.Tensor.__getitem__ is not _getitem:
        torch.Tensor.__getitem__ = _getitem  # type: ignore[method-assign,assignment]
