"""Keras's IoU metrics (``IoU``, ``MeanIoU``, ``BinaryIoU``, one-hot variants) over a confusion matrix.

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

from unison.keras.metrics.metric import Metric, TensorLike, _as_tensors
from unison.ops.dtypes import as_torch

__all__ = [
    "BinaryIoU",
    "IoU",
    "MeanIoU",
    "OneHotIoU",
    "OneHotMeanIoU",
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
                w = as_torch(sample_weight, device=labels.device).to(torch.float64)
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
