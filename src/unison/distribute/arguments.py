"""Checking the arguments of ``Strategy`` methods before any collective runs.

A value that is not a tensor, or an axis the value does not have, ended in a bare ``TypeError``
from ``torch.as_tensor`` or an ``IndexError`` from ``shape[axis]``; here each is named with what
was received and what was expected.

Example:
    >>> reduce_value(3.0, None).item()
    3.0
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["reduce_value"]


def reduce_value(value: Any, axis: Any) -> torch.Tensor:
    """``value`` as the tensor ``strategy.reduce`` combines, after checking it and ``axis``.

    Raises:
        TypeError: ``value`` is not a tensor, number, bool or nested list of numbers (a string,
            an object); ``axis`` is not an integer.
        ValueError: ``axis`` is outside the value's dimensions.
    """
    if isinstance(value, (str, bytes)):
        raise TypeError(
            f"strategy.reduce combines tensors or numbers across replicas; a string cannot be summed or "
            f"averaged. Received: value={value!r:.80}. Fix: pass a tensor (e.g. a per-replica loss)."
        )
    try:
        t = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(
            "strategy.reduce combines tensors or numbers across replicas. Received: value of type "
            f"{type(value).__name__} ({value!r:.80}), which is not convertible to a tensor ({exc}). "
            "Fix: pass a tensor, a number or a list of numbers."
        ) from exc
    if axis is None:
        return t
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"strategy.reduce: axis must be an integer or None. Received: axis={axis!r}")
    if not -t.dim() <= axis < max(t.dim(), 1) or t.dim() == 0:
        raise ValueError(
            f"strategy.reduce: axis={axis} is out of range for a value of shape {tuple(t.shape)} "
            f"(rank {t.dim()}); expected an axis in [{-t.dim()}, {t.dim() - 1}] or None."
            if t.dim()
            else f"strategy.reduce: axis={axis} was given for a scalar value, which has no axis; pass axis=None."
        )
    return t
