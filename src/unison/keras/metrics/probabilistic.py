"""Keras's probabilistic metrics: Poisson, KL divergence and the cross-entropies, averaged per sample.

Example:
    >>> import torch
    >>> m = KLDivergence()
    >>> m.update_state(torch.tensor([[0.5, 0.5]]), torch.tensor([[0.5, 0.5]]))
    >>> float(m.result())
    0.0
"""

from __future__ import annotations

from unison.keras import losses
from unison.keras.metrics.metric import MeanMetricWrapper

__all__ = ["BinaryCrossentropy", "CategoricalCrossentropy", "KLDivergence", "Poisson", "SparseCategoricalCrossentropy"]


class Poisson(MeanMetricWrapper):
    """Mean Poisson loss ``y_pred - y_true * log(y_pred + eps)``."""

    def __init__(self, name: str = "poisson") -> None:
        super().__init__(losses.poisson, name=name)


class KLDivergence(MeanMetricWrapper):
    """Mean Kullback-Leibler divergence ``sum(y_true * log(y_true / y_pred))``."""

    def __init__(self, name: str = "kl_divergence") -> None:
        super().__init__(losses.kl_divergence, name=name)


class BinaryCrossentropy(MeanMetricWrapper):
    """Mean binary cross-entropy (Keras's metric class; ``from_logits``, ``label_smoothing``)."""

    def __init__(
        self, name: str = "binary_crossentropy", from_logits: bool = False, label_smoothing: float = 0.0
    ) -> None:
        super().__init__(
            losses.binary_crossentropy, name=name, from_logits=from_logits, label_smoothing=label_smoothing
        )


class CategoricalCrossentropy(MeanMetricWrapper):
    """Mean categorical cross-entropy (Keras's metric class)."""

    def __init__(
        self,
        name: str = "categorical_crossentropy",
        from_logits: bool = False,
        label_smoothing: float = 0.0,
        axis: int = -1,
    ) -> None:
        super().__init__(
            losses.categorical_crossentropy,
            name=name,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """Mean sparse categorical cross-entropy (Keras's metric class)."""

    def __init__(
        self, name: str = "sparse_categorical_crossentropy", from_logits: bool = False, axis: int = -1
    ) -> None:
        super().__init__(losses.sparse_categorical_crossentropy, name=name, from_logits=from_logits, axis=axis)
