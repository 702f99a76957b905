"""``fit(dataset, class_weight={...})``: per-batch sample weights from the labels, as Keras does.

With arrays, ``fit`` turns ``class_weight`` into one ``sample_weight`` array up front. A
``tf.data`` dataset yields its labels batch by batch, so here each batch ``(x, y)`` becomes
``(x, y, class_weight[y])`` and a batch ``(x, y, sample_weight)`` becomes
``(x, y, sample_weight * class_weight[y])`` (Keras 3's ``class_weight`` map over a dataset).
Labels are class ids (``(batch,)`` or ``(batch, 1)``) or one-hot rows (their argmax); a class
missing from the dict weighs 1.0, as with arrays.

Example:
    >>> import numpy as np, unison as tf
    >>> ds = tf.data.Dataset.from_tensor_slices((np.zeros((3, 2)), np.array([0, 1, 1]))).batch(3)
    >>> [w.tolist() for _, _, w in with_class_weight(ds, {1: 2.0})]
    [[1.0, 2.0, 2.0]]
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["ClassWeighting", "with_class_weight"]


def _check(class_weight: Any) -> dict[int, float]:
    if not isinstance(class_weight, dict):
        raise TypeError(
            f"class_weight must be a dict mapping class ids to weights, e.g. {{0: 1.0, 1: 2.0}}. "
            f"Received: {type(class_weight).__name__}"
        )
    return {int(k): float(v) for k, v in class_weight.items()}


class ClassWeighting:
    """The per-batch function: ``(x, y[, sample_weight]) -> (x, y, weights)`` (picklable, for
    datasets whose ``map`` runs in worker processes)."""

    def __init__(self, class_weight: dict[int, float]) -> None:
        self.class_weight = _check(class_weight)

    def __call__(self, x: Any, y: Any = None, sample_weight: Any = None) -> tuple[Any, Any, torch.Tensor]:
        if y is None or isinstance(y, (list, tuple, dict)):
            raise ValueError(
                "class_weight needs each batch of the dataset to be (x, y) or (x, y, sample_weight) with one "
                f"label tensor (a model with one output). Received a batch whose labels are {type(y).__name__}. "
                "For several outputs, yield per-sample weights as the third element instead."
            )
        labels = torch.as_tensor(y)
        if labels.dim() == 2 and labels.shape[1] > 1:
            ids = labels.argmax(dim=1)
        elif labels.dim() in (1, 2):
            ids = labels.reshape(labels.shape[0])
        else:
            raise ValueError(
                "class_weight supports labels of shape (batch,), (batch, 1) or one-hot (batch, classes). "
                f"Received labels of shape {tuple(labels.shape)}"
            )
        ids = torch.round(ids.double()).long() if ids.is_floating_point() else ids.long()
        top = max(max(self.class_weight, default=0), int(ids.max()) if ids.numel() else 0) + 1
        table = torch.ones(top, dtype=torch.float32)
        for c, w in self.class_weight.items():
            if 0 <= c < top:
                table[c] = w
        weights = table[ids.cpu()].to(labels.device if labels.device.type != "meta" else "cpu")
        if sample_weight is not None:
            weights = weights * torch.as_tensor(sample_weight, dtype=torch.float32).reshape(weights.shape)
        return x, y, weights


def with_class_weight(dataset: Any, class_weight: Any) -> Any:
    """``dataset`` (a ``tf.data.Dataset`` of batches) with per-sample weights from ``class_weight``."""
    return dataset.map(ClassWeighting(class_weight))
