"""Keras's regression losses: the mean errors (MSE, MAE, MAPE, MSLE), Huber, LogCosh, CosineSimilarity.

Each function returns one value per example (Keras reduces over the last axis, ``y_pred.shape[:-1]``),
so the trainer owns the batch reduction as for every unison loss. The formulas are Keras 3's
(``keras/src/losses/losses.py``), including its clipping constants.

Example:
    >>> import torch
    >>> from unison.keras import losses
    >>> losses.huber(torch.tensor([[0.0, 0.0]]), torch.tensor([[0.5, 2.0]])).tolist()
    [0.8125]
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from unison.keras.losses.loss import (
    _DEFAULT,
    EPSILON,
    LossFunctionWrapper,
    TensorLike,
    _align_ranks,
    _as_tensors,
    _float_like,
    _pair,
)

__all__ = [
    "cosine_similarity",
    "CosineSimilarity",
    "huber",
    "Huber",
    "log_cosh",
    "LogCosh",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "mean_squared_logarithmic_error",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
]


def huber(y_true: TensorLike, y_pred: TensorLike, delta: float = 1.0) -> torch.Tensor:
    """Huber loss averaged over the last axis: ``0.5 x**2`` for ``|x| <= delta``, else
    ``delta * |x| - 0.5 * delta**2``, with ``x = y_pred - y_true``.

    Example:
        >>> import torch
        >>> huber(torch.tensor([[0.0, 0.0]]), torch.tensor([[0.5, 2.0]])).tolist()
        [0.8125]
    """
    y_true, y_pred = _pair(y_true, y_pred)
    error = y_pred - y_true
    abs_error = error.abs()
    quadratic = 0.5 * error.square()
    linear = delta * abs_error - 0.5 * delta * delta
    return torch.where(abs_error <= delta, quadratic, linear).mean(dim=-1)


def log_cosh(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """``log(cosh(y_pred - y_true))`` averaged over the last axis, computed without overflow
    as Keras does: ``x + softplus(-2x) - log(2)``.

    Example:
        >>> import torch, math
        >>> round(log_cosh(torch.tensor([[0.0]]), torch.tensor([[1.0]])).item(), 6) == round(math.log(math.cosh(1)), 6)
        True
    """
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return (x + F.softplus(-2.0 * x) - math.log(2.0)).mean(dim=-1)


def _l2_normalize(x: torch.Tensor, axis: int) -> torch.Tensor:
    # Keras's ops.normalize / tf.math.l2_normalize: x / sqrt(max(sum(x**2), 1e-12)).
    return x * torch.rsqrt(x.square().sum(dim=axis, keepdim=True).clamp(min=1e-12))


def cosine_similarity(y_true: TensorLike, y_pred: TensorLike, axis: int = -1) -> torch.Tensor:
    """The NEGATIVE cosine similarity along ``axis`` (a loss: -1 for identical directions, as Keras).

    Example:
        >>> import torch
        >>> cosine_similarity(torch.tensor([[0.0, 1.0]]), torch.tensor([[0.0, 3.0]])).tolist()
        [-1.0]
    """
    y_true, y_pred = _pair(y_true, y_pred)
    return -(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis)).sum(dim=axis)


class Huber(LossFunctionWrapper):
    """Keras ``Huber(delta=1.0)``: quadratic for small errors, linear for large ones."""

    def __init__(self, delta: float = 1.0, reduction: str | None = _DEFAULT, name: str = "huber_loss") -> None:
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or delta <= 0:
            raise ValueError(f"Argument `delta` must be a positive number. Received: delta={delta!r}")
        super().__init__(huber, name=name, reduction=reduction, delta=float(delta))
        self.delta = float(delta)


class LogCosh(LossFunctionWrapper):
    """Keras ``LogCosh``: ``log(cosh(y_pred - y_true))`` averaged over the last axis."""

    def __init__(self, reduction: str | None = _DEFAULT, name: str = "log_cosh") -> None:
        super().__init__(log_cosh, name=name, reduction=reduction)


class CosineSimilarity(LossFunctionWrapper):
    """Keras ``CosineSimilarity(axis=-1)``: the negative cosine similarity (minimised at -1)."""

    def __init__(self, axis: int = -1, reduction: str | None = _DEFAULT, name: str = "cosine_similarity") -> None:
        super().__init__(cosine_similarity, name=name, reduction=reduction, axis=axis)
        self.axis = axis


def mean_squared_error(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """Squared error averaged over the last axis; returns ``y_pred.shape[:-1]``.

    Example:
        >>> import torch
        >>> mean_squared_error(torch.tensor([[1.0, 2.0]]), torch.tensor([[0.0, 0.0]])).tolist()
        [2.5]
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_true, y_pred = _align_ranks(_float_like(y_true, y_pred), y_pred)
    return (y_pred - y_true).square().mean(dim=-1)


def mean_absolute_error(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """Absolute error averaged over the last axis; returns ``y_pred.shape[:-1]``.

    Example:
        >>> import torch
        >>> mean_absolute_error(torch.tensor([[1.0, -2.0]]), torch.tensor([[0.0, 0.0]])).tolist()
        [1.5]
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_true, y_pred = _align_ranks(_float_like(y_true, y_pred), y_pred)
    return (y_pred - y_true).abs().mean(dim=-1)


def mean_absolute_percentage_error(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """``100 * |y_true - y_pred| / max(|y_true|, epsilon)`` averaged over the last axis (Keras).

    Example:
        >>> import torch
        >>> mean_absolute_percentage_error(torch.tensor([[2.0, 4.0]]), torch.tensor([[1.0, 5.0]])).tolist()
        [37.5]
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_true, y_pred = _align_ranks(_float_like(y_true, y_pred), y_pred)
    return 100.0 * ((y_true - y_pred).abs() / y_true.abs().clamp(min=EPSILON)).mean(dim=-1)


def mean_squared_logarithmic_error(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """``(log(y_pred + 1) - log(y_true + 1))**2`` averaged over the last axis (values below epsilon clipped, Keras).

    Example:
        >>> import torch, math
        >>> round(mean_squared_logarithmic_error(torch.tensor([[0.0]]), torch.tensor([[math.e - 1]])).item(), 4)
        1.0
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_true, y_pred = _align_ranks(_float_like(y_true, y_pred), y_pred)
    first = torch.log1p(y_pred.clamp(min=EPSILON))
    second = torch.log1p(y_true.clamp(min=EPSILON))
    return (first - second).square().mean(dim=-1)


class MeanSquaredError(LossFunctionWrapper):
    """Keras ``MeanSquaredError`` (per example: mean over the last axis)."""

    def __init__(self, name: str = "mean_squared_error", reduction: str | None = "sum_over_batch_size") -> None:
        super().__init__(mean_squared_error, name=name, reduction=reduction)


class MeanAbsoluteError(LossFunctionWrapper):
    """Keras ``MeanAbsoluteError`` (per example: mean over the last axis)."""

    def __init__(self, name: str = "mean_absolute_error", reduction: str | None = "sum_over_batch_size") -> None:
        super().__init__(mean_absolute_error, name=name, reduction=reduction)


class MeanAbsolutePercentageError(LossFunctionWrapper):
    """Keras ``MeanAbsolutePercentageError`` (per example: mean over the last axis)."""

    def __init__(
        self, name: str = "mean_absolute_percentage_error", reduction: str | None = "sum_over_batch_size"
    ) -> None:
        super().__init__(mean_absolute_percentage_error, name=name, reduction=reduction)


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    """Keras ``MeanSquaredLogarithmicError`` (per example: mean over the last axis)."""

    def __init__(
        self, name: str = "mean_squared_logarithmic_error", reduction: str | None = "sum_over_batch_size"
    ) -> None:
        super().__init__(mean_squared_logarithmic_error, name=name, reduction=reduction)
