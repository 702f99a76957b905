"""Keras's probabilistic losses: KL divergence and Poisson, per example.

Example:
    >>> import torch
    >>> [round(v, 4) for v in poisson(torch.tensor([[1.0]]), torch.tensor([[1.0]])).tolist()]
    [1.0]
"""

from __future__ import annotations

import torch

from unison.keras.losses.loss import (
    _DEFAULT,
    EPSILON,
    LossFunctionWrapper,
    TensorLike,
    _pair,
)

__all__ = ["kl_divergence", "KLDivergence", "poisson", "Poisson"]


def kl_divergence(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """``sum(y_true * log(y_true / y_pred))`` over the last axis, both clipped to ``[1e-7, 1]``.

    Example:
        >>> import torch
        >>> round(kl_divergence(torch.tensor([[0.5, 0.5]]), torch.tensor([[0.25, 0.75]])).item(), 4)
        0.1438
    """
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = y_true.clamp(EPSILON, 1.0)
    y_pred = y_pred.clamp(EPSILON, 1.0)
    return (y_true * torch.log(y_true / y_pred)).sum(dim=-1)


def poisson(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """``y_pred - y_true * log(y_pred + 1e-7)`` averaged over the last axis.

    Example:
        >>> import torch
        >>> round(poisson(torch.tensor([[1.0]]), torch.tensor([[2.0]])).item(), 4)
        1.3069
    """
    y_true, y_pred = _pair(y_true, y_pred)
    return (y_pred - y_true * torch.log(y_pred + EPSILON)).mean(dim=-1)


class KLDivergence(LossFunctionWrapper):
    """Keras ``KLDivergence``: ``sum(y_true * log(y_true / y_pred))`` over the last axis."""

    def __init__(self, reduction: str | None = _DEFAULT, name: str = "kl_divergence") -> None:
        super().__init__(kl_divergence, name=name, reduction=reduction)


class Poisson(LossFunctionWrapper):
    """Keras ``Poisson``: ``y_pred - y_true * log(y_pred + eps)`` averaged over the last axis."""

    def __init__(self, reduction: str | None = _DEFAULT, name: str = "poisson") -> None:
        super().__init__(poisson, name=name, reduction=reduction)
