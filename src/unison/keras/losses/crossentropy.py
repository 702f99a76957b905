"""Keras's cross-entropy loss classes, with the whole-label checks ``fit`` runs before training.

``SparseCategoricalCrossentropy`` (``ignore_class``), ``CategoricalCrossentropy`` and
``BinaryCrossentropy`` wrap the functions of ``loss.py`` (``BinaryFocalCrossentropy`` is here too); each ``check_targets`` turns a label
mistake (one-hot labels for a sparse loss, labels out of range) into a message that says the fix.

Example:
    >>> import torch
    >>> from unison.keras import losses
    >>> loss = losses.SparseCategoricalCrossentropy(ignore_class=-1)
    >>> round(float(loss(torch.tensor([0, -1]), torch.tensor([[0.5, 0.5], [0.9, 0.1]]))), 4)
    0.6931
"""

from __future__ import annotations

import numpy as np
import torch

from unison.keras.losses.loss import (
    _DEFAULT,
    EPSILON,
    LabelArray,
    LossFunctionWrapper,
    TensorLike,
    _pair,
    binary_crossentropy,
    categorical_crossentropy,
    masked_examples,
    output_mask,
    sparse_categorical_crossentropy,
)
from unison.ops.dtypes import as_torch

__all__ = [
    "binary_focal_crossentropy",
    "BinaryCrossentropy",
    "BinaryFocalCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
]


def _labels_numpy(y_true: LabelArray, loss_name: str) -> np.ndarray:
    """Return the labels as numpy, after checking they are finite numbers."""
    if isinstance(y_true, torch.Tensor):
        y_true = y_true.detach().cpu()
        labels = (y_true.double() if y_true.is_floating_point() else y_true).numpy()
    else:
        labels = np.asarray(y_true)
    if labels.dtype.kind not in "biuf":
        raise ValueError(f"Loss {loss_name!r} needs numeric labels. Received: y_true.dtype={labels.dtype}")
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ValueError(f"Loss {loss_name!r} received labels that contain NaN or infinity.")
    return labels


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Keras ``SparseCategoricalCrossentropy``: integer labels, one probability per class.

    ``ignore_class``: label value whose positions do not count (e.g. padding of sequence
    labels ``(N, T)`` against outputs ``(N, T, C)``). As in Keras 3 the loss is then the mean
    over the positions that count; in ``fit`` the denominator is their number in the whole
    global batch (``example_weights``), so N replicas still compute one device's loss.
    """

    def __init__(
        self,
        from_logits: bool = False,
        ignore_class: int | None = None,
        reduction: str | None = "sum_over_batch_size",
        name: str = "sparse_categorical_crossentropy",
    ) -> None:
        super().__init__(sparse_categorical_crossentropy, name=name, reduction=reduction, from_logits=from_logits)
        if ignore_class is not None and (isinstance(ignore_class, bool) or not isinstance(ignore_class, int)):
            raise ValueError(f"`ignore_class` must be an integer or None. Received: ignore_class={ignore_class!r}")
        self.from_logits, self.ignore_class = from_logits, ignore_class

    def _valid(self, y_true: TensorLike, y_pred: TensorLike, ignore_class: int) -> tuple[torch.Tensor, torch.Tensor]:
        labels = as_torch(y_true, device=y_pred.device if isinstance(y_pred, torch.Tensor) else None)
        if labels.dim() == len(np.shape(y_pred)) and labels.dim() > 0 and labels.shape[-1] == 1:
            labels = labels.squeeze(-1)
        valid = torch.ne(labels, ignore_class)
        return torch.where(valid, labels, torch.zeros_like(labels)), valid

    def per_example(self, y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
        if self.ignore_class is None:
            return super().per_example(y_true, y_pred)
        labels, valid = self._valid(y_true, y_pred, self.ignore_class)
        values = sparse_categorical_crossentropy(labels, y_pred, self.from_logits) * valid
        return values.reshape(values.shape[0], -1).mean(dim=1)  # sum over valid steps / steps

    def element_losses(self, y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
        if self.ignore_class is None:
            return super().element_losses(y_true, y_pred)
        labels, valid = self._valid(y_true, y_pred, self.ignore_class)
        return sparse_categorical_crossentropy(labels, y_pred, self.from_logits) * valid  # ignored: 0, as Keras

    def masked_per_example(
        self, y_true: TensorLike, y_pred: TensorLike, mask: torch.Tensor | None, weights: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.ignore_class is None:
            return super().masked_per_example(y_true, y_pred, mask, weights)
        # the positions that count: those the mask keeps and whose label is not ignore_class
        labels, valid = self._valid(y_true, y_pred, self.ignore_class)
        values = sparse_categorical_crossentropy(labels, y_pred, self.from_logits)
        keep = valid
        if mask is not None and mask.shape == valid.shape:
            keep = valid & mask.to(device=valid.device, dtype=torch.bool)
        return masked_examples(values, keep, weights)

    def example_weights(self, y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor | None:
        """Fraction of each example's positions that count (``None`` without ``ignore_class``)."""
        if self.ignore_class is None:
            return None
        _, valid = self._valid(y_true, y_pred, self.ignore_class)
        return valid.reshape(valid.shape[0], -1).float().mean(dim=1)

    def __call__(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> torch.Tensor:
        # Standalone use is not the training hot path, so checking here is affordable and
        # turns torch's index error into a message about the labels.
        num_classes = int(np.shape(y_pred)[-1])
        self.check_targets(as_torch(y_true), num_classes)
        if self.ignore_class is None or output_mask(y_pred) is not None or self.reduction in ("none", "sum"):
            return super().__call__(y_true, y_pred, sample_weight)
        values = self.per_example(y_true, y_pred)
        if sample_weight is not None:
            values = values * as_torch(sample_weight, dtype=values.dtype, device=values.device).reshape(-1)
        _, valid = self._valid(y_true, y_pred, self.ignore_class)
        counted = valid.reshape(valid.shape[0], -1).float().mean(dim=1).sum()
        return values.sum() / (counted + EPSILON)

    def check_targets(self, y_true: LabelArray, num_outputs: int | None) -> None:
        labels = _labels_numpy(y_true, self.name)
        if self.ignore_class is not None:
            labels = labels[labels != self.ignore_class]
        if labels.size == 0:
            return
        n = num_outputs
        one_hot_shaped = n is not None and n > 1 and labels.ndim >= 2 and labels.shape[-1] == n
        if one_hot_shaped and np.isin(labels, (0, 1)).all() and (labels.sum(-1) == 1).all():
            raise ValueError(
                f"Loss {self.name!r} expects integer class indices, but the labels look one-hot "
                f"encoded (shape {labels.shape}). Use loss='categorical_crossentropy' for "
                "one-hot labels."
            )
        fractional = labels[labels != np.round(labels)] if labels.dtype.kind == "f" else []
        if len(fractional):
            raise ValueError(
                f"Received a label value of {fractional[0]!r}, which is not an integer. Label "
                f"values must be integers in [0, num_classes) for loss {self.name!r}."
            )
        low, high = int(labels.min()), int(labels.max())
        if low >= 0 and (n is None or high < n):
            return
        bad = low if low < 0 else high
        message = (
            f"Received a label value of {bad} which is outside the valid range of "
            f"[0, {n if n is not None else 'num_classes'}). Label values must be integers in "
            f"[0, num_classes) for loss {self.name!r}"
        )
        if bad < 0:
            message += "; negative labels are not class indices, so fix the labels."
        else:
            message += (
                f"; the model has {n} output{'s' if n != 1 else ''}, so fix the labels or use a "
                f"model with more outputs (a largest label of {bad} needs {bad + 1} units in the "
                "last layer)."
            )
            if n == 1:
                message += " For two classes and a sigmoid output use loss='binary_crossentropy'."
        raise ValueError(message)


class CategoricalCrossentropy(LossFunctionWrapper):
    """Keras ``CategoricalCrossentropy``: one-hot (or soft) labels."""

    def __init__(
        self,
        from_logits: bool = False,
        label_smoothing: float = 0.0,
        name: str = "categorical_crossentropy",
        reduction: str | None = "sum_over_batch_size",
    ) -> None:
        _check_label_smoothing(label_smoothing)
        super().__init__(
            categorical_crossentropy,
            name=name,
            reduction=reduction,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
        )
        self.from_logits, self.label_smoothing = from_logits, label_smoothing

    def check_targets(self, y_true: LabelArray, num_outputs: int | None) -> None:
        labels = _labels_numpy(y_true, self.name)
        if num_outputs is None or (labels.ndim >= 2 and labels.shape[-1] == num_outputs):
            return
        hint = ""
        if labels.ndim < 2 or labels.shape[-1] == 1:
            hint = (
                " These look like integer class labels: use "
                "loss='sparse_categorical_crossentropy' for them, or one-hot encode them."
            )
        raise ValueError(
            f"Loss {self.name!r} expects one-hot labels whose last dimension equals the "
            f"model's {num_outputs} outputs. Received: y_true.shape={labels.shape}.{hint}"
        )


class BinaryCrossentropy(LossFunctionWrapper):
    """Keras ``BinaryCrossentropy``: labels in ``[0, 1]``, one probability per output."""

    def __init__(
        self,
        from_logits: bool = False,
        label_smoothing: float = 0.0,
        name: str = "binary_crossentropy",
        reduction: str | None = "sum_over_batch_size",
    ) -> None:
        _check_label_smoothing(label_smoothing)
        super().__init__(
            binary_crossentropy,
            name=name,
            reduction=reduction,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
        )
        self.from_logits, self.label_smoothing = from_logits, label_smoothing

    def check_targets(self, y_true: LabelArray, num_outputs: int | None) -> None:
        labels = _labels_numpy(y_true, self.name)
        if labels.size == 0 or (labels.min() >= 0 and labels.max() <= 1):
            return
        bad = labels.min() if labels.min() < 0 else labels.max()
        raise ValueError(
            f"Received a label value of {bad.item()!r} which is outside the valid range of "
            f"[0, 1]. Label values must be in [0, 1] for loss {self.name!r}. For integer class "
            "labels of more than two classes use loss='sparse_categorical_crossentropy' and a "
            "softmax output."
        )


def _check_label_smoothing(value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"Argument `label_smoothing` must be in [0, 1]. Received: label_smoothing={value}")


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
