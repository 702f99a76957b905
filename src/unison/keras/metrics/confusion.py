"""Metrics whose states are confusion counts: ``Accuracy``, ``Precision``, ``Recall``, ``AUC``,
``TruePositives`` & co., and the constrained-threshold metrics (``PrecisionAtRecall``,
``RecallAtPrecision``, ``SensitivityAtSpecificity``, ``SpecificityAtSensitivity``).

Like every unison metric their state is additive (true/false positives and negatives, per
threshold for ``AUC``), so replicas combine them with one SUM all-reduce and the result covers
every sample exactly once.

Example:
    >>> import torch
    >>> from unison.keras import metrics
    >>> p = metrics.Precision()
    >>> p.update_state(torch.tensor([1, 0, 1, 1]), torch.tensor([0.9, 0.8, 0.2, 0.7]))
    >>> round(float(p.result()), 4)
    0.6667
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.metrics.metric import MeanMetricWrapper, Metric, TensorLike, _as_tensors
from unison.ops.dtypes import as_torch

__all__ = [
    "Accuracy",
    "AUC",
    "FalseNegatives",
    "FalsePositives",
    "Precision",
    "PrecisionAtRecall",
    "Recall",
    "RecallAtPrecision",
    "SensitivityAtSpecificity",
    "SpecificityAtSensitivity",
    "TrueNegatives",
    "TruePositives",
]


def accuracy(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """1.0 where ``y_pred`` equals ``y_true`` element-wise (Keras's ``Accuracy``), else 0.0."""
    y_true, y_pred = _as_tensors(y_true, y_pred)
    if y_true.dim() == y_pred.dim() + 1 and y_true.shape[-1] == 1:
        y_true = y_true.squeeze(-1)
    elif y_pred.dim() == y_true.dim() + 1 and y_pred.shape[-1] == 1:
        y_pred = y_pred.squeeze(-1)
    return (y_true == y_pred).to(torch.float32)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels exactly (compare class ids, not scores)."""

    def __init__(self, name: str = "accuracy") -> None:
        super().__init__(accuracy, name=name)


def _flat(y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None) -> tuple[torch.Tensor, ...]:
    y_true, y_pred = _as_tensors(y_true, y_pred)
    labels = y_true.reshape(-1).to(torch.float64)
    scores = y_pred.reshape(-1).to(torch.float64)
    if labels.shape != scores.shape:
        raise ValueError(
            f"labels and predictions must have the same number of values. Received: "
            f"y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
        )
    if sample_weight is None:
        weight = torch.ones_like(scores)
    else:
        weight = as_torch(sample_weight, device=scores.device).to(torch.float64)
        weight = weight.reshape(weight.shape + (1,) * (y_pred.dim() - weight.dim())).expand(y_pred.shape).reshape(-1)
    return labels, scores, weight


class _Thresholded(Metric):
    """State ``[tp, fp, fn]`` (``[tp, fp, fn, tn]`` with ``num_state = 4``) at one threshold (``thresholds=0.5``)."""

    num_state = 3

    def __init__(self, thresholds: float | None = None, name: str | None = None) -> None:
        self.threshold = 0.5 if thresholds is None else float(thresholds)
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"thresholds must be in [0, 1]. Received: thresholds={thresholds!r}")
        super().__init__(name or type(self).__name__.lower())

    def update_state(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            labels, scores, weight = _flat(y_true, y_pred, sample_weight)
            positive, predicted = labels > 0.5, scores > self.threshold
            cells = (positive & predicted, ~positive & predicted, positive & ~predicted, ~positive & ~predicted)
            self._accumulate(*((weight * cell).sum() for cell in cells[: self.num_state]))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "thresholds": self.threshold}


class Precision(_Thresholded):
    """``tp / (tp + fp)`` for predictions above ``thresholds`` (0.5)."""

    def result_from_state(self, state: torch.Tensor) -> float:
        tp, fp, _ = state.tolist()
        return tp / (tp + fp) if tp + fp else 0.0


class Recall(_Thresholded):
    """``tp / (tp + fn)`` for predictions above ``thresholds`` (0.5)."""

    def result_from_state(self, state: torch.Tensor) -> float:
        tp, _, fn = state.tolist()
        return tp / (tp + fn) if tp + fn else 0.0


class AUC(Metric):
    """Area under the ROC (or PR) curve, from confusion counts at ``num_thresholds`` thresholds.

    As Keras: thresholds evenly spaced in [0, 1] (with -eps and 1+eps at the ends), the ROC
    area by the trapezoidal rule (``summation_method="interpolation"``).
    """

    def __init__(
        self, num_thresholds: int = 200, curve: str = "ROC", name: str = "auc", from_logits: bool = False
    ) -> None:
        if num_thresholds < 2:
            raise ValueError(f"num_thresholds must be > 1. Received: num_thresholds={num_thresholds}")
        if curve.upper() not in ("ROC", "PR"):
            raise ValueError(f"curve must be 'ROC' or 'PR'. Received: curve={curve!r}")
        self.num_thresholds, self.curve, self.from_logits = num_thresholds, curve.upper(), from_logits
        eps = 1e-7
        inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.thresholds = torch.tensor([-eps, *inner, 1.0 + eps], dtype=torch.float64)
        self.num_state = 4 * num_thresholds  # tp, fp, tn, fn at each threshold
        super().__init__(name)

    def update_state(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            labels, scores, weight = _flat(y_true, y_pred, sample_weight)
            if self.from_logits:
                scores = torch.sigmoid(scores)
            predicted = scores.unsqueeze(0) > self.thresholds.to(scores.device).unsqueeze(1)  # (T, n)
            positive = (labels > 0.5).unsqueeze(0)
            w = weight.unsqueeze(0)
            counts = torch.cat(
                [
                    (w * (predicted & positive)).sum(1),
                    (w * (predicted & ~positive)).sum(1),
                    (w * (~predicted & ~positive)).sum(1),
                    (w * (~predicted & positive)).sum(1),
                ]
            )
            self._accumulate_vector(counts)

    def _accumulate_vector(self, counts: torch.Tensor) -> None:
        if counts.device != self._state.device:
            self.load_state(self.state().to(counts.device))
        self._state.add_(counts)

    def result_from_state(self, state: torch.Tensor) -> float:
        tp, fp, tn, fn = state.reshape(4, self.num_thresholds)
        if self.curve == "ROC":
            tpr = tp / (tp + fn).clamp(min=1e-12)
            fpr = fp / (fp + tn).clamp(min=1e-12)
            return float(((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2).sum())
        precision = tp / (tp + fp).clamp(min=1e-12)
        recall = tp / (tp + fn).clamp(min=1e-12)
        return float(((recall[:-1] - recall[1:]) * (precision[:-1] + precision[1:]) / 2).sum())

    def get_config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "from_logits": self.from_logits,
        }


class _Count(_Thresholded):
    """One confusion count at one threshold (``thresholds=0.5``); state ``[tp, fp, fn]`` plus ``tn``."""

    num_state = 4
    _INDEX = 0

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


def _rate(which: str, tp: torch.Tensor, fp: torch.Tensor, tn: torch.Tensor, fn: torch.Tensor) -> torch.Tensor:
    """Sensitivity (= recall) ``tp / (tp + fn)``, specificity ``tn / (tn + fp)`` or precision ``tp / (tp + fp)``."""
    hits, misses = {"sensitivity": (tp, fn), "recall": (tp, fn), "specificity": (tn, fp), "precision": (tp, fp)}[which]
    return _ratio(hits, hits + misses)


class _AtConstraint(AUC):
    """The best ``_DEPENDENT`` rate among thresholds whose ``_ARG`` rate is >= ``value`` (Keras)."""

    _ARG = "value"
    _DEPENDENT = "sensitivity"

    def __init__(self, value: float, num_thresholds: int = 200, name: str | None = None) -> None:
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"Argument `{self._ARG}` must be in the range [0, 1]. Received: {self._ARG}={value!r}")
        self.value = float(value)
        super().__init__(num_thresholds=num_thresholds, name=name or _snake(type(self).__name__))

    def result_from_state(self, state: torch.Tensor) -> float:
        counts = state.reshape(4, self.num_thresholds)
        constrained, dependent = _rate(self._ARG, *counts), _rate(self._DEPENDENT, *counts)
        feasible = constrained >= self.value
        return float(dependent[feasible].max()) if bool(feasible.any()) else 0.0

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, self._ARG: self.value, "num_thresholds": self.num_thresholds}


class SensitivityAtSpecificity(_AtConstraint):
    """Best sensitivity (recall) at a specificity of at least ``specificity``."""

    _ARG, _DEPENDENT = "specificity", "sensitivity"

    def __init__(self, specificity: float, num_thresholds: int = 200, name: str | None = None) -> None:
        super().__init__(specificity, num_thresholds, name)


class SpecificityAtSensitivity(_AtConstraint):
    """Best specificity at a sensitivity (recall) of at least ``sensitivity``."""

    _ARG, _DEPENDENT = "sensitivity", "specificity"

    def __init__(self, sensitivity: float, num_thresholds: int = 200, name: str | None = None) -> None:
        super().__init__(sensitivity, num_thresholds, name)


class PrecisionAtRecall(_AtConstraint):
    """Best precision at a recall of at least ``recall``."""

    _ARG, _DEPENDENT = "recall", "precision"

    def __init__(self, recall: float, num_thresholds: int = 200, name: str | None = None) -> None:
        super().__init__(recall, num_thresholds, name)


class RecallAtPrecision(_AtConstraint):
    """Best recall at a precision of at least ``precision``."""

    _ARG, _DEPENDENT = "precision", "recall"

    def __init__(self, precision: float, num_thresholds: int = 200, name: str | None = None) -> None:
        super().__init__(precision, num_thresholds, name)


def _snake(name: str) -> str:
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
