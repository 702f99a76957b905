"""Keras's hinge metrics (labels in {-1, 1} or {0, 1}), averaged per sample.

Example:
    >>> import torch
    >>> m = Hinge()
    >>> m.update_state(torch.tensor([[1.0]]), torch.tensor([[2.0]]))
    >>> float(m.result())
    0.0
"""

from __future__ import annotations

from unison.keras import losses
from unison.keras.metrics.metric import MeanMetricWrapper

__all__ = ["CategoricalHinge", "Hinge", "SquaredHinge"]


class Hinge(MeanMetricWrapper):
    """Mean hinge loss; labels in {-1, 1} ({0, 1} are converted)."""

    def __init__(self, name: str = "hinge") -> None:
        super().__init__(losses.hinge, name=name)


class SquaredHinge(MeanMetricWrapper):
    """Mean squared hinge loss; labels in {-1, 1} ({0, 1} are converted)."""

    def __init__(self, name: str = "squared_hinge") -> None:
        super().__init__(losses.squared_hinge, name=name)


class CategoricalHinge(MeanMetricWrapper):
    """Mean categorical hinge loss; one-hot labels."""

    def __init__(self, name: str = "categorical_hinge") -> None:
        super().__init__(losses.categorical_hinge, name=name)
