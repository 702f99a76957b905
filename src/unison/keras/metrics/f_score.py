"""Keras's F-scores: ``FBetaScore`` and ``F1Score`` over additive true/false positive counts.

Example:
    >>> import torch
    >>> m = F1Score(threshold=0.5)
    >>> m.update_state(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.9, 0.2]]))
    >>> [round(v, 4) for v in m.result().tolist()]
    [1.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.metrics.iou import _EPS
from unison.keras.metrics.metric import Metric, TensorLike, _as_tensors
from unison.ops.dtypes import as_torch

__all__ = ["F1Score", "FBetaScore"]


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
                w = as_torch(sample_weight, device=pred.device).to(torch.float64).reshape(-1, 1)
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
