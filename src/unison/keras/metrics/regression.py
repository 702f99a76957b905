"""Keras regression metrics: mean errors, ``LogCoshError``, ``CosineSimilarity``, ``RootMeanSquaredError``, ``R2Score``.

All states are additive (sums), so replicas combine them with the one SUM all-reduce every
unison metric uses (see ``metric.py``).

Example:
    >>> import torch
    >>> from unison.keras import metrics
    >>> m = metrics.RootMeanSquaredError()
    >>> m.update_state(torch.tensor([[0.0], [0.0]]), torch.tensor([[3.0], [4.0]]))
    >>> round(float(m.result()), 4)
    3.5355
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

from unison.keras import losses
from unison.keras.metrics.metric import Mean, MeanMetricWrapper, Metric, TensorLike, _as_tensors, _MeanState
from unison.ops.dtypes import as_torch

__all__ = [
    "MeanRelativeError",
    "cosine_similarity",
    "CosineSimilarity",
    "LogCoshError",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
    "R2Score",
    "RootMeanSquaredError",
]


def cosine_similarity(y_true: TensorLike, y_pred: TensorLike, axis: int = -1) -> torch.Tensor:
    """The (positive) cosine similarity along ``axis``, as Keras's metric reports it.

    Example:
        >>> cosine_similarity(torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]])).tolist()
        [0.7071067690849304]
    """
    return -losses.cosine_similarity(y_true, y_pred, axis=axis)


class LogCoshError(MeanMetricWrapper):
    """Mean of ``log(cosh(y_pred - y_true))`` (Keras's ``LogCoshError``, name ``"logcosh"``)."""

    def __init__(self, name: str = "logcosh") -> None:
        super().__init__(losses.log_cosh, name=name)


class CosineSimilarity(MeanMetricWrapper):
    """Mean cosine similarity between labels and predictions along ``axis`` (positive, unlike the loss)."""

    def __init__(self, name: str = "cosine_similarity", axis: int = -1) -> None:
        super().__init__(cosine_similarity, name=name, axis=axis)


class RootMeanSquaredError(_MeanState):
    """``sqrt`` of the (weighted) mean squared error over everything seen.

    Example:
        >>> m = RootMeanSquaredError()
        >>> m.update_state(torch.tensor([1.0, 1.0]), torch.tensor([1.0, 3.0]))
        >>> round(float(m.result()), 4)
        1.4142
    """

    def __init__(self, name: str = "root_mean_squared_error") -> None:
        super().__init__(name)

    def update_state(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            labels, preds = _as_tensors(y_true, y_pred)
            aligned: tuple[torch.Tensor, torch.Tensor] = losses.squeeze_or_expand_to_same_rank(
                labels.to(preds.dtype), preds
            )
            self._add((aligned[1] - aligned[0]).square(), sample_weight)

    def result_from_state(self, state: torch.Tensor) -> float:
        return float(super().result_from_state(state) ** 0.5)


_AGGREGATIONS = ("uniform_average", "variance_weighted_average")


class R2Score(Metric):
    """The coefficient of determination, ``1 - SS_res / SS_tot`` per output, then aggregated (Keras 3).

    State per output ``k``: sums of ``w y``, ``w y**2``, ``w (y - p)**2`` and ``w``, plus the number
    of samples; sized to the outputs at the first update. ``num_regressors > 0`` gives the adjusted
    R2, ``1 - (1 - R2) (n - 1) / (n - p - 1)``.

    Example:
        >>> m = R2Score()
        >>> m.update_state(torch.tensor([[1.0], [2.0], [3.0]]), torch.tensor([[1.0], [2.0], [4.0]]))
        >>> float(m.result())
        0.5
    """

    def __init__(
        self, class_aggregation: str | None = "uniform_average", num_regressors: int = 0, name: str = "r2_score"
    ) -> None:
        if class_aggregation not in _AGGREGATIONS:
            raise ValueError(
                f"Invalid value for argument `class_aggregation`: expected one of {list(_AGGREGATIONS)} "
                "(unison logs one number per metric, so the per-output scores of class_aggregation=None are "
                f"not available). Received: class_aggregation={class_aggregation!r}"
            )
        if isinstance(num_regressors, bool) or not isinstance(num_regressors, int) or num_regressors < 0:
            raise ValueError(
                f"Argument `num_regressors` must be an integer >= 0. Received: num_regressors={num_regressors!r}"
            )
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        self.num_outputs = 1
        self.num_state = 5
        super().__init__(name)

    def _resize(self, num_outputs: int, device: torch.device) -> None:
        if num_outputs == self.num_outputs:
            return
        if bool(self.state().any()):
            raise ValueError(
                f"R2Score received y_pred with {num_outputs} outputs after updates with "
                f"{self.num_outputs}; use one R2Score per output shape (or reset_state() first)."
            )
        self.num_outputs, self.num_state = num_outputs, 4 * num_outputs + 1
        self.load_state(torch.zeros(self.num_state, dtype=torch.float64, device=device))

    def update_state(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            y_true, y_pred = _as_tensors(y_true, y_pred)
            y_true, y_pred = y_true.to(torch.float64), y_pred.to(torch.float64)
            if y_pred.dim() == 1:
                y_pred = y_pred.unsqueeze(1)
            if y_true.dim() == 1:
                y_true = y_true.unsqueeze(1)
            if y_true.dim() != 2 or y_true.shape != y_pred.shape:
                raise ValueError(
                    "R2Score expects y_true and y_pred of the same shape (num_samples, num_outputs) "
                    f"(or (num_samples,)). Received: y_true.shape={tuple(y_true.shape)}, "
                    f"y_pred.shape={tuple(y_pred.shape)}"
                )
            self._resize(int(y_pred.shape[1]), y_pred.device)
            weight = torch.ones((), dtype=torch.float64, device=y_pred.device)
            if sample_weight is not None:
                weight = as_torch(sample_weight, device=y_pred.device).to(torch.float64)
                if weight.dim() == 1:
                    weight = weight.unsqueeze(1)
            weight = weight.expand_as(y_true)
            weighted = y_true * weight
            parts = torch.cat(
                [
                    weighted.sum(0),
                    (y_true * weighted).sum(0),
                    ((y_true - y_pred).square() * weight).sum(0),
                    weight.sum(0),
                    torch.tensor([float(y_true.shape[0])], dtype=torch.float64, device=y_pred.device),
                ]
            )
            if parts.device != self._state.device:
                self.load_state(self.state().to(parts.device))
            self._state.add_(parts)

    def result_from_state(self, state: torch.Tensor) -> float:
        k = self.num_outputs
        total_sum, squared_sum, total_mse, count = state[: 4 * k].reshape(4, k)
        num_samples = float(state[4 * k])
        mean = total_sum / count
        total = squared_sum - total_sum * mean
        raw = 1.0 - total_mse / total
        raw = torch.where(torch.isinf(raw), torch.zeros_like(raw), raw)
        if self.class_aggregation == "uniform_average":
            r2 = float(raw.mean())
        else:
            r2 = float((total * raw).sum() / total.sum())
        if self.num_regressors:
            n, p = num_samples, self.num_regressors
            if p >= n - 1:
                warnings.warn(
                    f"R2Score: num_regressors={p} needs more than {p + 1} samples (got {int(n)}); "
                    "returning the unadjusted score.",
                    stacklevel=2,
                )
            else:
                r2 = 1.0 - (1.0 - r2) * (n - 1.0) / (n - p - 1.0)
        return r2

    def get_config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "class_aggregation": self.class_aggregation,
            "num_regressors": self.num_regressors,
        }


class MeanSquaredError(MeanMetricWrapper):
    """Mean squared error as a metric."""

    def __init__(self, name: str = "mean_squared_error") -> None:
        super().__init__(losses.mean_squared_error, name=name)


class MeanAbsoluteError(MeanMetricWrapper):
    """Mean absolute error as a metric."""

    def __init__(self, name: str = "mean_absolute_error") -> None:
        super().__init__(losses.mean_absolute_error, name=name)


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """Mean absolute percentage error as a metric."""

    def __init__(self, name: str = "mean_absolute_percentage_error") -> None:
        super().__init__(losses.mean_absolute_percentage_error, name=name)


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """Mean squared logarithmic error as a metric."""

    def __init__(self, name: str = "mean_squared_logarithmic_error") -> None:
        super().__init__(losses.mean_squared_logarithmic_error, name=name)


class MeanRelativeError(Mean):
    """Keras 2's ``MeanRelativeError(normalizer)``: the mean of ``|y_pred - y_true| / normalizer`` (0 where it is 0).

    Example:
        >>> m = MeanRelativeError(normalizer=[1.0, 2.0])
        >>> m.update_state(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 6.0]))
        >>> float(m.result())
        1.5
    """

    def __init__(self, normalizer: Any, name: str | None = None, dtype: Any = None) -> None:
        super().__init__(name or "mean_relative_error")
        self.normalizer = torch.as_tensor(np.asarray(normalizer), dtype=torch.float32)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:  # type: ignore[override]
        t = as_torch(y_true).to(torch.float32)
        p = as_torch(y_pred).to(torch.float32)
        norm = self.normalizer.to(p.device)
        error = (p - t).abs()
        relative = torch.where(
            norm == 0, torch.zeros_like(error), error / torch.where(norm == 0, torch.ones_like(norm), norm)
        )
        super().update_state(relative, sample_weight)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "normalizer": self.normalizer.tolist()}
