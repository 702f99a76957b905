"""Keras 3's ``CategoricalFocalCrossentropy``: cross-entropy that down-weights easy examples.

Per example, with ``p`` the predicted probabilities (normalised to sum to 1 and clipped to
``[epsilon, 1 - epsilon]``, as Keras does) and ``y`` the (optionally smoothed) one-hot labels::

    loss = sum_c alpha * (1 - p_c) ** gamma * (-y_c * log(p_c))

(Lin et al., "Focal Loss for Dense Object Detection"; Keras's formula and defaults
``alpha=0.25``, ``gamma=2.0``.) With ``gamma=0`` and ``alpha=1`` it is the categorical
cross-entropy.

Example:
    >>> import torch
    >>> loss = categorical_focal_crossentropy(torch.tensor([[0.0, 1.0]]), torch.tensor([[0.5, 0.5]]))
    >>> round(loss.item(), 5)   # 0.25 * 0.5 ** 2 * log(2)
    0.04332
"""

from __future__ import annotations

import torch

from unison.keras.losses.loss import (
    EPSILON,
    LOGITS_ATTR,
    LossFunctionWrapper,
    TensorLike,
    _as_tensors,
    _class_axis_last,
    _float_like,
    _logits_of,
    _upcast,
)

__all__ = ["CategoricalFocalCrossentropy", "categorical_focal_crossentropy"]


def categorical_focal_crossentropy(
    y_true: TensorLike,
    y_pred: TensorLike,
    alpha: float = 0.25,
    gamma: float = 2.0,
    from_logits: bool = False,
    label_smoothing: float = 0.0,
    axis: int = -1,
) -> torch.Tensor:
    """The focal cross-entropy of one-hot (or soft) labels; returns shape ``y_pred.shape[:-1]``.

    Raises:
        ValueError: ``y_true`` and ``y_pred`` of different shapes.
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_pred, from_logits = _logits_of(y_pred, LOGITS_ATTR, from_logits, "categorical_focal_crossentropy", "Softmax")
    y_pred = _class_axis_last(_upcast(y_pred), axis)
    y_true = _class_axis_last(_float_like(y_true, y_pred), axis)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            "Arguments `y_true` and `y_pred` must have the same shape. Received: "
            f"y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
        )
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[-1]
    probs = torch.softmax(y_pred, dim=-1) if from_logits else y_pred
    probs = (probs / probs.sum(dim=-1, keepdim=True)).clamp(EPSILON, 1.0 - EPSILON)
    cross_entropy = -y_true * torch.log(probs)
    return (alpha * torch.pow(1.0 - probs, gamma) * cross_entropy).sum(dim=-1)


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    """Keras 3's ``CategoricalFocalCrossentropy`` (one-hot labels; see the module doc).

    Args:
        alpha: the weight of every class's term.
        gamma: the focusing exponent (0: plain cross-entropy times ``alpha``).
        from_logits: ``y_pred`` are logits (a softmax is applied first).
        label_smoothing: in ``[0, 1]``; labels become ``y * (1 - s) + s / classes``.
        axis: the class axis.
        reduction: as every Keras loss.
        name: the loss's name.
    """

    def __init__(
        self,
        alpha: float = 0.25,
        gamma: float = 2.0,
        from_logits: bool = False,
        label_smoothing: float = 0.0,
        axis: int = -1,
        reduction: str | None = "sum_over_batch_size",
        name: str = "categorical_focal_crossentropy",
    ) -> None:
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(
                f"Argument `label_smoothing` must be in [0, 1]. Received: label_smoothing={label_smoothing}"
            )
        if gamma < 0:
            raise ValueError(f"Argument `gamma` must be >= 0. Received: gamma={gamma}")
        super().__init__(
            categorical_focal_crossentropy,
            name=name,
            reduction=reduction,
            alpha=alpha,
            gamma=gamma,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits, self.label_smoothing = from_logits, label_smoothing
