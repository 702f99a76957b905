"""Keras's accuracy metrics: the per-sample functions and their mean metrics.

Example:
    >>> import torch
    >>> m = SparseCategoricalAccuracy()
    >>> m.update_state(torch.tensor([0, 1]), torch.tensor([[0.9, 0.1], [0.8, 0.2]]))
    >>> float(m.result())
    0.5
"""

from __future__ import annotations

import torch

from unison.keras.losses.loss import _align_ranks
from unison.keras.metrics.metric import MeanMetricWrapper, TensorLike, _as_tensors

__all__ = [
    "binary_accuracy",
    "BinaryAccuracy",
    "categorical_accuracy",
    "CategoricalAccuracy",
    "sparse_categorical_accuracy",
    "sparse_top_k_categorical_accuracy",
    "SparseCategoricalAccuracy",
    "SparseTopKCategoricalAccuracy",
    "top_k_categorical_accuracy",
    "TopKCategoricalAccuracy",
]


def _squeeze_sparse(y_true: torch.Tensor, y_pred: torch.Tensor) -> torch.Tensor:
    if y_true.dim() == y_pred.dim() and y_true.shape[-1] == 1:
        return y_true.squeeze(-1)
    return y_true


def sparse_categorical_accuracy(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """1.0 where the arg-max of ``y_pred`` equals the integer label, else 0.0.

    Example:
        >>> sparse_categorical_accuracy(torch.tensor([[1], [0]]), torch.eye(2)).tolist()
        [0.0, 0.0]
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_true = _squeeze_sparse(y_true, y_pred)
    predicted = y_pred.argmax(dim=-1)
    if y_true.is_floating_point():
        return (predicted.to(y_true.dtype) == y_true).float()
    return (predicted == y_true.long()).float()


def categorical_accuracy(y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
    """1.0 where the arg-max of ``y_pred`` equals the arg-max of the one-hot ``y_true``.

    Example:
        >>> categorical_accuracy(torch.eye(2), torch.tensor([[0.9, 0.1], [0.8, 0.2]])).tolist()
        [1.0, 0.0]
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    return (y_true.argmax(dim=-1) == y_pred.argmax(dim=-1)).float()


def binary_accuracy(y_true: TensorLike, y_pred: TensorLike, threshold: float = 0.5) -> torch.Tensor:
    """Fraction of outputs where ``y_pred > threshold`` matches ``y_true`` (mean over last axis).

    Example:
        >>> binary_accuracy(torch.tensor([1.0, 0.0]), torch.tensor([[0.7], [0.6]])).tolist()
        [1.0, 0.0]
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_true, y_pred = _align_ranks(y_true.float(), y_pred)
    return ((y_pred > threshold).float() == y_true).float().mean(dim=-1)


def sparse_top_k_categorical_accuracy(y_true: TensorLike, y_pred: TensorLike, k: int = 5) -> torch.Tensor:
    """1.0 where the label is among the ``k`` highest predictions (ties count, as in TF).

    Example:
        >>> y_pred = torch.tensor([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2]])
        >>> sparse_top_k_categorical_accuracy(torch.tensor([1, 2]), y_pred, k=2).tolist()
        [1.0, 0.0]
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_true = _squeeze_sparse(y_true, y_pred).long()
    kth_best = y_pred.topk(min(k, y_pred.shape[-1]), dim=-1).values[..., -1]
    return (y_pred.gather(-1, y_true.unsqueeze(-1)).squeeze(-1) >= kth_best).float()


def top_k_categorical_accuracy(y_true: TensorLike, y_pred: TensorLike, k: int = 5) -> torch.Tensor:
    """1.0 where the one-hot label's class is among the ``k`` highest predictions.

    Example:
        >>> top_k_categorical_accuracy(torch.eye(2), torch.eye(2), k=1).tolist()
        [1.0, 1.0]
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    return sparse_top_k_categorical_accuracy(y_true.argmax(dim=-1), y_pred, k)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """Accuracy for integer labels against per-class scores."""

    def __init__(self, name: str = "sparse_categorical_accuracy") -> None:
        super().__init__(sparse_categorical_accuracy, name=name)


class CategoricalAccuracy(MeanMetricWrapper):
    """Accuracy for one-hot labels against per-class scores."""

    def __init__(self, name: str = "categorical_accuracy") -> None:
        super().__init__(categorical_accuracy, name=name)


class BinaryAccuracy(MeanMetricWrapper):
    """Accuracy for labels in {0, 1} against probabilities thresholded at ``threshold``."""

    def __init__(self, name: str = "binary_accuracy", threshold: float = 0.5) -> None:
        super().__init__(binary_accuracy, name=name, threshold=threshold)


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"Argument `k` must be a positive integer. Received: k={k!r}")
    return k


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label's class is among the ``k`` highest predictions."""

    def __init__(self, k: int = 5, name: str = "top_k_categorical_accuracy") -> None:
        super().__init__(top_k_categorical_accuracy, name=name, k=_check_k(k))


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the ``k`` highest predictions."""

    def __init__(self, k: int = 5, name: str = "sparse_top_k_categorical_accuracy") -> None:
        super().__init__(sparse_top_k_categorical_accuracy, name=name, k=_check_k(k))
