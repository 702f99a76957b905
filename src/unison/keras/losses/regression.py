"""Keras's regression, probabilistic and hinge losses: Huber, LogCosh, KLDivergence, Poisson,
CosineSimilarity, Hinge, SquaredHinge, CategoricalHinge.

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
    EPSILON,
    LossFunctionWrapper,
    TensorLike,
    _align_ranks,
    _as_tensors,
    _float_like,
    _upcast,
)

__all__ = [
    "BinaryFocalCrossentropy",
    "CategoricalHinge",
    "CosineSimilarity",
    "Hinge",
    "Huber",
    "KLDivergence",
    "LogCosh",
    "Poisson",
    "SquaredHinge",
    "binary_focal_crossentropy",
    "categorical_hinge",
    "cosine_similarity",
    "hinge",
    "huber",
    "kl_divergence",
    "log_cosh",
    "poisson",
    "squared_hinge",
]


def _pair(y_true: TensorLike, y_pred: TensorLike) -> tuple[torch.Tensor, torch.Tensor]:
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_pred = _upcast(y_pred)
    return _align_ranks(_float_like(y_true, y_pred), y_pred)


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


def binary_focal_crossentropy(
    y_true: TensorLike,
    y_pred: TensorLike,
    apply_class_balancing: bool = False,
    alpha: float = 0.25,
    gamma: float = 2.0,
    from_logits: bool = False,
    label_smoothing: float = 0.0,
    axis: int = -1,
) -> torch.Tensor:
    """Binary cross-entropy scaled by ``(1 - p_t)**gamma`` (Lin et al.), averaged over ``axis``, as Keras 3.

    ``p_t`` is the probability given to the true label; with ``apply_class_balancing`` each element
    is also weighted by ``alpha`` (positives) or ``1 - alpha`` (negatives).

    Example:
        >>> import torch
        >>> loss = binary_focal_crossentropy(torch.tensor([[0.0, 1.0], [0.0, 0.0]]), torch.tensor([[0.6, 0.4], [0.4, 0.6]]))
        >>> [round(v, 3) for v in loss.tolist()]
        [0.33, 0.206]
    """
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = torch.sigmoid(y_pred)
    clipped = y_pred.clamp(EPSILON, 1.0 - EPSILON)
    bce = -(y_true * torch.log(clipped) + (1.0 - y_true) * torch.log(1.0 - clipped))
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = (1.0 - p_t).pow(gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return focal.mean(dim=axis)


_DEFAULT = "sum_over_batch_size"


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


class KLDivergence(LossFunctionWrapper):
    """Keras ``KLDivergence``: ``sum(y_true * log(y_true / y_pred))`` over the last axis."""

    def __init__(self, reduction: str | None = _DEFAULT, name: str = "kl_divergence") -> None:
        super().__init__(kl_divergence, name=name, reduction=reduction)


class Poisson(LossFunctionWrapper):
    """Keras ``Poisson``: ``y_pred - y_true * log(y_pred + eps)`` averaged over the last axis."""

    def __init__(self, reduction: str | None = _DEFAULT, name: str = "poisson") -> None:
        super().__init__(poisson, name=name, reduction=reduction)


class CosineSimilarity(LossFunctionWrapper):
    """Keras ``CosineSimilarity(axis=-1)``: the negative cosine similarity (minimised at -1)."""

    def __init__(self, axis: int = -1, reduction: str | None = _DEFAULT, name: str = "cosine_similarity") -> None:
        super().__init__(cosine_similarity, name=name, reduction=reduction, axis=axis)
        self.axis = axis


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


class BinaryFocalCrossentropy(LossFunctionWrapper):
    """Keras ``BinaryFocalCrossentropy``: cross-entropy that down-weights well-classified examples."""

    def __init__(
        self,
        apply_class_balancing: bool = False,
        alpha: float = 0.25,
        gamma: float = 2.0,
        from_logits: bool = False,
        label_smoothing: float = 0.0,
        axis: int = -1,
        reduction: str | None = _DEFAULT,
        name: str = "binary_focal_crossentropy",
    ) -> None:
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(
                f"Argument `label_smoothing` must be in [0, 1]. Received: label_smoothing={label_smoothing}"
            )
        super().__init__(
            binary_focal_crossentropy,
            name=name,
            reduction=reduction,
            apply_class_balancing=apply_class_balancing,
            alpha=alpha,
            gamma=gamma,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits, self.label_smoothing = from_logits, label_smoothing
