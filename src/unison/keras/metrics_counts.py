"""Keras metrics whose states are counts: IoU (``IoU``, ``MeanIoU``, ``BinaryIoU``, one-hot
variants), ``F1Score``/``FBetaScore``, ``TruePositives`` & co., and the constrained-threshold
metrics (``PrecisionAtRecall``, ``RecallAtPrecision``, ``SensitivityAtSpecificity``,
``SpecificityAtSensitivity``).

The counts are additive, so replicas combine them with one SUM all-reduce, as every unison metric.

Example:
    >>> import torch
    >>> from unison.keras import metrics
    >>> m = metrics.MeanIoU(num_classes=2)
    >>> m.update_state(torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 0, 1]))
    >>> round(float(m.result()), 4)
    0.3333
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from unison.keras.confusion_metrics import AUC, _flat, _Thresholded
from unison.keras.metrics import Metric, TensorLike, _as_tensors

__all__ = [
    "BinaryIoU",
    "F1Score",
    "FBetaScore",
    "FalseNegatives",
    "FalsePositives",
    "IoU",
    "MeanIoU",
    "OneHotIoU",
    "OneHotMeanIoU",
    "PrecisionAtRecall",
    "RecallAtPrecision",
    "SensitivityAtSpecificity",
    "SpecificityAtSensitivity",
    "TrueNegatives",
    "TruePositives",
]

_EPS = 1e-7  # Keras's backend.epsilon() in the IoU and F-beta divisions


def _check_num_classes(num_classes: int) -> int:
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(f"Argument `num_classes` must be a positive integer. Received: num_classes={num_classes!r}")
    return num_classes


class IoU(Metric):
    """Intersection-over-union of the classes in ``target_class_ids``, averaged (Keras 3).

    State: the ``num_classes x num_classes`` confusion matrix (rows: labels, columns:
    predictions). Labels and predictions are class ids (``sparse_y_true``/``sparse_y_pred``) or,
    when those are ``False``, scores whose arg-max along ``axis`` is taken. ``ignore_class``
    positions do not count.

    Example:
        >>> m = IoU(num_classes=2, target_class_ids=[0])
        >>> m.update_state(torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 0, 1]))
        >>> round(float(m.result()), 4)
        0.3333
    """

    def __init__(
        self,
        num_classes: int,
        target_class_ids: Sequence[int],
        name: str | None = None,
        ignore_class: int | None = None,
        sparse_y_true: bool = True,
        sparse_y_pred: bool = True,
        axis: int = -1,
    ) -> None:
        self.num_classes = _check_num_classes(num_classes)
        ids = [int(i) for i in target_class_ids]
        bad = [i for i in ids if not 0 <= i < num_classes]
        if not ids or bad:
            raise ValueError(
                f"Argument `target_class_ids` must be a non-empty list of class ids in [0, {num_classes}). "
                f"Received: target_class_ids={list(target_class_ids)!r}"
            )
        self.target_class_ids = ids
        self.ignore_class, self.sparse_y_true, self.sparse_y_pred, self.axis = (
            ignore_class,
            sparse_y_true,
            sparse_y_pred,
            axis,
        )
        self.num_state = num_classes * num_classes
        super().__init__(name)

    def _ids(self, y_true: torch.Tensor, y_pred: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.sparse_y_pred:
            y_pred = y_pred.argmax(dim=self.axis)
        if not self.sparse_y_true:
            y_true = y_true.argmax(dim=self.axis)
        return y_true, y_pred

    def update_state(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            y_true, y_pred = _as_tensors(y_true, y_pred)
            y_true, y_pred = self._ids(y_true, y_pred)
            labels, preds = y_true.reshape(-1).long(), y_pred.reshape(-1).long()  # Keras casts to int
            if labels.shape != preds.shape:
                raise ValueError(
                    "IoU: labels and predictions must hold the same number of class ids. Received: "
                    f"y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
                )
            weight = torch.ones(labels.shape, dtype=torch.float64, device=labels.device)
            if sample_weight is not None:
                w = torch.as_tensor(sample_weight, device=labels.device).to(torch.float64)
                weight = w.reshape(w.shape + (1,) * max(y_true.dim() - w.dim(), 0)).expand(y_true.shape).reshape(-1)
            if self.ignore_class is not None:
                keep = labels != self.ignore_class
                labels, preds, weight = labels[keep], preds[keep], weight[keep]
            n = self.num_classes
            cm = torch.zeros(n * n, dtype=torch.float64, device=labels.device)
            cm.index_add_(0, labels * n + preds, weight)
            if cm.device != self._state.device:
                self.load_state(self.state().to(cm.device))
            self._state.add_(cm)

    def result_from_state(self, state: torch.Tensor) -> float:
        cm = state.reshape(self.num_classes, self.num_classes)
        predicted, actual, tp = cm.sum(0), cm.sum(1), cm.diagonal()
        ids = torch.tensor(self.target_class_ids, device=cm.device)
        denominator = (predicted + actual - tp)[ids]
        valid = float((denominator != 0).sum())
        iou = tp[ids] / (denominator + _EPS)
        return float(iou.sum() / (valid + _EPS))

    def get_config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "num_classes": self.num_classes,
            "target_class_ids": self.target_class_ids,
            "ignore_class": self.ignore_class,
            "sparse_y_true": self.sparse_y_true,
            "sparse_y_pred": self.sparse_y_pred,
            "axis": self.axis,
        }


class MeanIoU(IoU):
    """IoU averaged over every class (the classes that occur; Keras's ``MeanIoU``).

    ``y_pred`` holds class ids by default (``sparse_y_pred=True``): pass ``sparse_y_pred=False``
    to give per-class scores, whose arg-max is taken, as in Keras.
    """

    def __init__(
        self,
        num_classes: int,
        name: str | None = None,
        ignore_class: int | None = None,
        sparse_y_true: bool = True,
        sparse_y_pred: bool = True,
        axis: int = -1,
    ) -> None:
        n = _check_num_classes(num_classes)
        super().__init__(n, list(range(n)), name, ignore_class, sparse_y_true, sparse_y_pred, axis)


class BinaryIoU(IoU):
    """IoU of the binary classes in ``target_class_ids`` after ``y_pred > threshold``.

    Example:
        >>> m = BinaryIoU(target_class_ids=[1], threshold=0.5)
        >>> m.update_state(torch.tensor([0, 1, 1]), torch.tensor([0.9, 0.8, 0.1]))
        >>> round(float(m.result()), 4)
        0.3333
    """

    def __init__(
        self, target_class_ids: Sequence[int] = (0, 1), threshold: float = 0.5, name: str | None = None
    ) -> None:
        self.threshold = float(threshold)
        super().__init__(2, target_class_ids, name)

    def update_state(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> None:
        y_true, y_pred = _as_tensors(y_true, y_pred)
        super().update_state(y_true, (y_pred > self.threshold).long(), sample_weight)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "target_class_ids": self.target_class_ids, "threshold": self.threshold}


class OneHotIoU(IoU):
    """``IoU`` for one-hot labels and per-class scores (arg-max of both)."""

    def __init__(
        self,
        num_classes: int,
        target_class_ids: Sequence[int],
        name: str | None = None,
        ignore_class: int | None = None,
        sparse_y_pred: bool = False,
        axis: int = -1,
    ) -> None:
        super().__init__(num_classes, target_class_ids, name, ignore_class, False, sparse_y_pred, axis)


class OneHotMeanIoU(MeanIoU):
    """``MeanIoU`` for one-hot labels and per-class scores (arg-max of both)."""

    def __init__(
        self,
        num_classes: int,
        name: str | None = None,
        ignore_class: int | None = None,
        sparse_y_pred: bool = False,
        axis: int = -1,
    ) -> None:
        super().__init__(num_classes, name, ignore_class, False, sparse_y_pred, axis)


_AVERAGES = (None, "micro", "macro", "weighted")


class FBetaScore(Metric):
    """F-beta score (Keras 3): ``(1 + b**2) P R / (b**2 P + R)`` from per-class counts.

    ``y_pred`` of shape ``(batch, num_classes)``: with ``threshold=None`` the highest score of
    each row counts as predicted, else scores above ``threshold``. ``average``: ``"micro"``
    (counts pooled), ``"macro"`` (mean of the per-class scores), ``"weighted"`` (weighted by
    each class's label count) or ``None`` (the per-class scores: ``result()`` is a vector).

    Example:
        >>> m = FBetaScore(average="macro", threshold=0.5)
        >>> m.update_state(torch.tensor([[1, 0], [0, 1]]), torch.tensor([[0.9, 0.2], [0.8, 0.3]]))
        >>> round(float(m.result()), 4)
        0.3333
    """

    def __init__(
        self, average: str | None = None, beta: float = 1.0, threshold: float | None = None, name: str = "fbeta_score"
    ) -> None:
        if average not in _AVERAGES:
            raise ValueError(
                f"Invalid `average` argument value. Expected one of: {list(_AVERAGES)}. Received: average={average!r}"
            )
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or beta <= 0:
            raise ValueError(f"`beta` should be a float greater than 0. Received: beta={beta!r}")
        if threshold is not None and not 0.0 < float(threshold) <= 1.0:
            raise ValueError(f"`threshold` should be a float in the range (0, 1]. Received: threshold={threshold!r}")
        self.average, self.beta, self.threshold = average, float(beta), threshold
        self.num_classes: int | None = None
        self.num_state = 4  # resized to 4 * num_classes at the first update
        super().__init__(name)

    def update_state(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            y_true, y_pred = _as_tensors(y_true, y_pred)
            if y_pred.dim() != 2 or y_true.shape != y_pred.shape:
                raise ValueError(
                    f"{type(self).__name__} expects y_true and y_pred of the same shape (batch, num_classes). "
                    f"Received: y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
                )
            y_pred = y_pred.to(torch.float64)
            if self.threshold is None:
                # The top score of each row (ties all count); an all-zero row predicts nothing.
                predicted = (y_pred >= y_pred.amax(dim=-1, keepdim=True)) & (y_pred.abs() > 1e-9)
            else:
                predicted = y_pred > self.threshold
            pred, true = predicted.to(torch.float64), y_true.to(torch.float64)
            if sample_weight is not None:
                w = torch.as_tensor(sample_weight, device=pred.device).to(torch.float64).reshape(-1, 1)
            else:
                w = torch.ones((1, 1), dtype=torch.float64, device=pred.device)
            counts = torch.cat(
                [
                    (w * pred * true).sum(0),
                    (w * pred * (1 - true)).sum(0),
                    (w * (1 - pred) * true).sum(0),
                    (w * true).sum(0),
                ]
            )
            k = int(y_pred.shape[1])
            if self.num_classes != k:
                if self.num_classes is not None and bool(self.state().any()):
                    raise ValueError(
                        f"{type(self).__name__} received {k} classes after updates with {self.num_classes}."
                    )
                self.num_classes, self.num_state = k, 4 * k
                self.load_state(torch.zeros(4 * k, dtype=torch.float64, device=pred.device))
            if counts.device != self._state.device:
                self.load_state(self.state().to(counts.device))
            self._state.add_(counts)

    def _scores(self, state: torch.Tensor) -> torch.Tensor:
        tp, fp, fn, support = state.reshape(4, -1)
        if self.average == "micro":
            tp, fp, fn = tp.sum(), fp.sum(), fn.sum()
        precision = tp / (tp + fp + _EPS)
        recall = tp / (tp + fn + _EPS)
        b2 = self.beta**2
        f = (1 + b2) * precision * recall / (b2 * precision + recall + _EPS)
        if self.average == "weighted":
            return (f * support / support.sum()).sum()
        if self.average is not None:
            return f.mean()
        return f

    def result(self) -> torch.Tensor:
        """The score (a vector of per-class scores with ``average=None``)."""
        if self.average is not None:
            return super().result()
        return self._scores(self.state()).to(torch.float32)

    def result_from_state(self, state: torch.Tensor) -> Any:
        # average=None: one score per class; fit logs the vector (a float32 array) as Keras 3 does.
        if self.average is None:
            return self._scores(state).to(torch.float32).numpy()
        return float(self._scores(state))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "average": self.average, "beta": self.beta, "threshold": self.threshold}


class F1Score(FBetaScore):
    """F1 score: ``FBetaScore`` with ``beta=1``.

    Example:
        >>> m = F1Score(average="micro", threshold=0.5)
        >>> m.update_state(torch.tensor([[1, 0], [0, 1]]), torch.tensor([[0.9, 0.2], [0.8, 0.3]]))
        >>> round(float(m.result()), 4)
        0.5
    """

    def __init__(self, average: str | None = None, threshold: float | None = None, name: str = "f1_score") -> None:
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "average": self.average, "threshold": self.threshold}


class _Count(_Thresholded):
    """One confusion count at one threshold (``thresholds=0.5``); state ``[tp, fp, fn]`` plus ``tn``."""

    num_state = 4
    _INDEX = 0

    def update_state(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            labels, scores, weight = _flat(y_true, y_pred, sample_weight)
            positive, predicted = labels > 0.5, scores > self.threshold
            self._accumulate(
                (weight * (positive & predicted)).sum(),
                (weight * (~positive & predicted)).sum(),
                (weight * (positive & ~predicted)).sum(),
                (weight * (~positive & ~predicted)).sum(),
            )

    def result_from_state(self, state: torch.Tensor) -> float:
        return float(state[self._INDEX])


class TruePositives(_Count):
    """Weighted count of positive labels predicted above ``thresholds``."""

    _INDEX = 0

    def __init__(self, thresholds: float | None = None, name: str = "true_positives") -> None:
        super().__init__(thresholds, name)


class FalsePositives(_Count):
    """Weighted count of negative labels predicted above ``thresholds``."""

    _INDEX = 1

    def __init__(self, thresholds: float | None = None, name: str = "false_positives") -> None:
        super().__init__(thresholds, name)


class FalseNegatives(_Count):
    """Weighted count of positive labels predicted at or below ``thresholds``."""

    _INDEX = 2

    def __init__(self, thresholds: float | None = None, name: str = "false_negatives") -> None:
        super().__init__(thresholds, name)


class TrueNegatives(_Count):
    """Weighted count of negative labels predicted at or below ``thresholds``."""

    _INDEX = 3

    def __init__(self, thresholds: float | None = None, name: str = "true_negatives") -> None:
        super().__init__(thresholds, name)


def _ratio(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # Keras's divide_no_nan: 0 where the denominator is 0.
    return torch.where(b > 0, a / b.clamp(min=1e-300), torch.zeros_like(a))


class _AtConstraint(AUC):
    """The best ``dependent`` rate among thresholds whose ``constrained`` rate is >= ``value`` (Keras)."""

    _ARG = "value"

    def __init__(self, value: float, num_thresholds: int = 200, name: str | None = None) -> None:
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"Argument `{self._ARG}` must be in the range [0, 1]. Received: {self._ARG}={value!r}")
        self.value = float(value)
        super().__init__(num_thresholds=num_thresholds, name=name or _snake(type(self).__name__))

    def _rates(self, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def result_from_state(self, state: torch.Tensor) -> float:
        constrained, dependent = self._rates(state.reshape(4, self.num_thresholds))
        feasible = constrained >= self.value
        return float(dependent[feasible].max()) if bool(feasible.any()) else 0.0

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, self._ARG: self.value, "num_thresholds": self.num_thresholds}


def _snake(name: str) -> str:
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class SensitivityAtSpecificity(_AtConstraint):
    """Best sensitivity (recall) at a specificity of at least ``specificity``."""

    _ARG = "specificity"

    def __init__(self, specificity: float, num_thresholds: int = 200, name: str | None = None) -> None:
        super().__init__(specificity, num_thresholds, name)

    def _rates(self, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        tp, fp, tn, fn = state
        return _ratio(tn, tn + fp), _ratio(tp, tp + fn)


class SpecificityAtSensitivity(_AtConstraint):
    """Best specificity at a sensitivity (recall) of at least ``sensitivity``."""

    _ARG = "sensitivity"

    def __init__(self, sensitivity: float, num_thresholds: int = 200, name: str | None = None) -> None:
        super().__init__(sensitivity, num_thresholds, name)

    def _rates(self, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        tp, fp, tn, fn = state
        return _ratio(tp, tp + fn), _ratio(tn, tn + fp)


class PrecisionAtRecall(_AtConstraint):
    """Best precision at a recall of at least ``recall``."""

    _ARG = "recall"

    def __init__(self, recall: float, num_thresholds: int = 200, name: str | None = None) -> None:
        super().__init__(recall, num_thresholds, name)

    def _rates(self, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        tp, fp, _, fn = state
        return _ratio(tp, tp + fn), _ratio(tp, tp + fp)


class RecallAtPrecision(_AtConstraint):
    """Best recall at a precision of at least ``precision``."""

    _ARG = "precision"

    def __init__(self, precision: float, num_thresholds: int = 200, name: str | None = None) -> None:
        super().__init__(precision, num_thresholds, name)

    def _rates(self, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        tp, fp, _, fn = state
        return _ratio(tp, tp + fp), _ratio(tp, tp + fn)
