"""Keras's hinge losses (labels in {-1, 1}, or {0, 1} mapped to them), per example.

Example:
    >>> import torch
    >>> hinge(torch.tensor([[1.0, -1.0]]), torch.tensor([[0.5, -2.0]])).tolist()
    [0.25]
"""

from __future__ import annotations

import torch

from unison.keras.losses.loss import (
    _DEFAULT,
    LossFunctionWrapper,
    TensorLike,
    _pair,
)

__all__ = ["categorical_hinge", "CategoricalHinge", "hinge", "Hinge", "squared_hinge", "SquaredHinge"]


def _hinge_labels(y_true: torch.Tensor) -> torch.Tensor:
    """Keras converts labels given as {0, 1} to {-1, 1}; labels already in {-1, 1} stay."""
    is_binary = ((y_true == 0) | (y_true == 1)).all()
    return torch.where(is_binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """``max(1 - y_true * y_pred, 0)`` averaged over the last axis; labels in {-1, 1} (or {0, 1}).

    Example:
        >>> import torch
        >>> hinge(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.5, 0.5]])).tolist()
        [1.0]
    """
    y_true, y_pred = _pair(y_true, y_pred)
    return (1.0 - _hinge_labels(y_true) * y_pred).clamp(min=0.0).mean(dim=-1)


def squared_hinge(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """``max(1 - y_true * y_pred, 0) ** 2`` averaged over the last axis; labels as for ``hinge``.

    Example:
        >>> import torch
        >>> squared_hinge(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.5, 0.5]])).tolist()
        [1.25]
    """
    y_true, y_pred = _pair(y_true, y_pred)
    return (1.0 - _hinge_labels(y_true) * y_pred).clamp(min=0.0).square().mean(dim=-1)


def categorical_hinge(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """``max(neg - pos + 1, 0)`` with ``pos = sum(y_true * y_pred)``, ``neg = max((1 - y_true) * y_pred)``
    over the last axis; one-hot labels.

    Example:
        >>> import torch
        >>> categorical_hinge(torch.tensor([[0.0, 1.0]]), torch.tensor([[0.6, 0.4]])).tolist()
        [1.2000000476837158]
    """
    y_true, y_pred = _pair(y_true, y_pred)
    pos = (y_true * y_pred).sum(dim=-1)
    neg = ((1.0 - y_true) * y_pred).amax(dim=-1)
    return (neg - pos + 1.0).clamp(min=0.0)


class Hinge(LossFunctionWrapper):
    """Keras ``Hinge``: labels in {-1, 1} ({0, 1} are converted)."""

    def __init__(self, reduction: str | None = _DEFAULT, name: str = "hinge") -> None:
        super().__init__(hinge, name=name, reduction=reduction)


class SquaredHinge(LossFunctionWrapper):
    """Keras ``SquaredHinge``: labels in {-1, 1} ({0, 1} are converted)."""

    def __init__(self, reduction: str | None = _DEFAULT, name: str = "squared_hinge") -> None:
        super().__init__(squared_hinge, name=name, reduction=reduction)


class CategoricalHinge(LossFunctionWrapper):
    """Keras ``CategoricalHinge``: one-hot labels."""

    def __init__(self, reduction: str | None = _DEFAULT, name: str = "categorical_hinge") -> None:
        super().__init__(categorical_hinge, name=name, reduction=reduction)
