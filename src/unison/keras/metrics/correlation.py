"""Keras 3's correlation metrics: ``PearsonCorrelation`` and ``ConcordanceCorrelation`` (and their functions).

Both compute one coefficient per sample along ``axis`` (Keras's formulas, population variance) and
the metric is their mean over everything seen.

Example:
    >>> import torch
    >>> round(pearson_correlation(torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[2.0, 4.0, 7.0]])).item(), 4)
    0.9934
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.metrics.metric import MeanMetricWrapper
from unison.keras.ops._config import epsilon
from unison.keras.ops._convert import float_of, tensor

__all__ = ["ConcordanceCorrelation", "PearsonCorrelation", "concordance_correlation", "pearson_correlation"]


def _pair(y_true: Any, y_pred: Any) -> tuple[torch.Tensor, torch.Tensor]:
    p = float_of(tensor(y_pred))
    t = tensor(y_true).to(p.dtype)
    if t.dim() == p.dim() + 1 and t.shape[-1] == 1:
        t = t.squeeze(-1)
    elif p.dim() == t.dim() + 1 and p.shape[-1] == 1:
        p = p.squeeze(-1)
    return t, p


def pearson_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> torch.Tensor:
    """Pearson's correlation of ``y_true`` and ``y_pred`` along ``axis``."""
    t, p = _pair(y_true, y_pred)
    t = t - t.mean(dim=axis, keepdim=True)
    p = p - p.mean(dim=axis, keepdim=True)
    t = t / t.std(dim=axis, keepdim=True, unbiased=False)
    p = p / p.std(dim=axis, keepdim=True, unbiased=False)
    return (t * p).mean(dim=axis)


def concordance_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> torch.Tensor:
    """Lin's concordance correlation along ``axis``, as Keras computes it."""
    t, p = _pair(y_true, y_pred)
    t_mean = t.mean(dim=axis, keepdim=True)
    p_mean = p.mean(dim=axis, keepdim=True)
    t_var = (t - t_mean).var(dim=axis, keepdim=True, unbiased=False)
    p_var = (p - p_mean).var(dim=axis, keepdim=True, unbiased=False)
    covar = (t - p_mean) * (p - p_mean)
    norm = t_var + p_var + (t_mean - p_mean).square()
    return (2 * covar / (norm + epsilon())).mean(dim=axis)


class PearsonCorrelation(MeanMetricWrapper):
    """Mean Pearson correlation per sample (Keras's ``PearsonCorrelation(name="pearson_correlation", axis=-1)``)."""

    def __init__(self, name: str = "pearson_correlation", dtype: Any = None, axis: int = -1) -> None:
        super().__init__(pearson_correlation, name=name, axis=axis)
        self.axis = axis


class ConcordanceCorrelation(MeanMetricWrapper):
    """Mean concordance correlation per sample (Keras's ``ConcordanceCorrelation``)."""

    def __init__(self, name: str = "concordance_correlation", dtype: Any = None, axis: int = -1) -> None:
        super().__init__(concordance_correlation, name=name, axis=axis)
        self.axis = axis
