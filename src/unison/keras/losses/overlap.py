"""Keras 3's overlap losses for segmentation: ``Dice`` and ``Tversky`` (and their functions).

``dice = 1 - 2 * sum(y * p) / (sum(y) + sum(p) + epsilon)``; ``tversky = 1 - TP / (TP + alpha * FP +
beta * FN + epsilon)`` with ``TP = sum(y * p)``, ``FP = sum((1 - p) * y)``, ``FN = sum(p * (1 - y))``
(Keras's own naming of the two error terms). ``axis=None`` sums over every axis (one value per batch);
the loss object then counts that value once per example, so ``reduction="sum"`` gives ``batch_size``
times Keras's number (the mean reductions agree).

Example:
    >>> import torch
    >>> round(dice(torch.tensor([1.0, 0.0]), torch.tensor([1.0, 0.0])).item(), 6)
    0.0
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.losses.loss import LossFunctionWrapper
from unison.keras.ops._config import epsilon
from unison.keras.ops._convert import float_of, tensor

__all__ = ["Dice", "Tversky", "dice", "tversky"]


def _sum(x: torch.Tensor, axis: Any) -> torch.Tensor:
    if axis is None:
        return x.sum()
    return x.sum(dim=tuple(axis) if isinstance(axis, (list, tuple)) else axis)


def _pair(y_true: Any, y_pred: Any) -> tuple[torch.Tensor, torch.Tensor]:
    p = float_of(tensor(y_pred))
    return tensor(y_true).to(p.dtype), p


def dice(y_true: Any, y_pred: Any, axis: Any = None) -> torch.Tensor:
    """The Dice loss ``1 - 2 |y ∩ p| / (|y| + |p|)`` summed over ``axis`` (``None``: everything)."""
    y, p = _pair(y_true, y_pred)
    inter = _sum(y * p, axis)
    return 1 - (2.0 * inter) / (_sum(y, axis) + _sum(p, axis) + epsilon())


def tversky(y_true: Any, y_pred: Any, alpha: float = 0.5, beta: float = 0.5, axis: Any = None) -> torch.Tensor:
    """The Tversky loss: Dice with the two error terms weighted by ``alpha`` and ``beta``."""
    y, p = _pair(y_true, y_pred)
    inter = _sum(y * p, axis)
    fp = _sum((1 - p) * y, axis)
    fn = _sum(p * (1 - y), axis)
    return 1 - inter / (inter + fp * alpha + fn * beta + epsilon())


class Dice(LossFunctionWrapper):
    """Keras ``Dice(reduction="sum_over_batch_size", name="dice", axis=None)``."""

    def __init__(
        self, reduction: str | None = "sum_over_batch_size", name: str = "dice", axis: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(dice, name=name, reduction=reduction, axis=axis)
        self.axis = axis


class Tversky(LossFunctionWrapper):
    """Keras ``Tversky(alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None)``."""

    def __init__(
        self,
        alpha: float = 0.5,
        beta: float = 0.5,
        reduction: str | None = "sum_over_batch_size",
        name: str = "tversky",
        axis: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(tversky, name=name, reduction=reduction, alpha=alpha, beta=beta, axis=axis)
        self.alpha, self.beta, self.axis = alpha, beta, axis
