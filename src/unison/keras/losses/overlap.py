"""Keras 3's overlap losses for segmentation, ``Dice`` and ``Tversky`` (and their functions), and its
noise-robust ``CategoricalGeneralizedCrossEntropy``.

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

__all__ = [
    "CategoricalGeneralizedCrossEntropy",
    "Dice",
    "Tversky",
    "categorical_generalized_cross_entropy",
    "dice",
    "tversky",
]


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


def categorical_generalized_cross_entropy(y_true: Any, y_pred: Any, q: float) -> torch.Tensor:
    """Keras 3's generalized cross entropy (noise-robust): ``(1 - p_true ** q) / q`` per example.

    ``y_true`` holds integer class ids; ``y_pred`` probabilities over the last axis.

    Example:
        >>> round(categorical_generalized_cross_entropy(torch.tensor([1]), torch.tensor([[0.2, 0.8]]), 0.5).item(), 4)
        0.2111
    """
    p = float_of(tensor(y_pred))
    ids = tensor(y_true).long()
    one_hot = torch.nn.functional.one_hot(ids, num_classes=p.shape[-1]).to(p.dtype)
    prob = (p * one_hot).sum(dim=-1)
    return (1 - torch.pow(prob, q)) / q


class CategoricalGeneralizedCrossEntropy(LossFunctionWrapper):
    """Keras ``CategoricalGeneralizedCrossEntropy(q=0.5)``: between cross entropy (q -> 0) and MAE (q = 1).

    Raises:
        ValueError: ``q`` outside ``(0, 1)``.
    """

    def __init__(
        self,
        q: float = 0.5,
        reduction: str | None = "sum_over_batch_size",
        name: str = "categorical_generalized_cross_entropy",
        dtype: Any = None,
    ) -> None:
        if not 0 < q < 1:
            raise ValueError(f"q must be in the interval (0, 1). Received: q={q!r}")
        super().__init__(categorical_generalized_cross_entropy, name=name, reduction=reduction, q=q)
        self.q = q
