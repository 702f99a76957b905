"""Keras 3's losses over structured outputs: ``CTC`` (label sequences) and ``Circle`` (embeddings).

``ctc(y_true, y_pred)``: ``y_true`` ``(batch, max_length)`` integer labels padded with 0, which is
also the blank class; ``y_pred`` ``(batch, time, classes)`` logits (not softmax-ed); each label
sequence's length is its count of non-zero entries and every sequence uses all ``time`` steps.
The per-sequence negative log-likelihood is torch's ``ctc_loss`` (``keras.ops.ctc_loss``).

``circle(y_true, y_pred)``: ``y_pred`` L2-normalised embeddings, ``y_true`` integer classes. With
``d`` the pairwise cosine distances (``1 - y_pred @ ref.T``, at least 0), positives (same class,
the diagonal removed) and negatives are weighted ``gamma * max(margin + d, 0)`` and
``gamma * max(1 + margin - d, 0)``; the loss is
``softplus(logsumexp_pos(-w (margin - d)) + logsumexp_neg(w (1 - margin - d)))``. Keras marks the
zero losses as masked: the mean reductions divide by the number of non-zero losses.

Example:
    >>> import torch
    >>> float(ctc(torch.tensor([[1]]), torch.zeros(1, 1, 2)))   # one step, one label: -log(1/2)
    0.6931471824645996
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.losses.loss import LossFunctionWrapper, Reduction
from unison.keras.ops._convert import float_of, tensor
from unison.keras.ops._nn_more import ctc_loss

__all__ = ["CTC", "Circle", "circle", "ctc"]


def ctc(y_true: Any, y_pred: Any) -> torch.Tensor:
    """Keras's ``losses.ctc``: the CTC loss of each sequence (blank and padding index 0).

    Raises:
        ValueError: ``y_true`` not 2-D or ``y_pred`` not 3-D.
    """
    labels, logits = tensor(y_true), tensor(y_pred)
    if labels.dim() != 2:
        raise ValueError(
            "Targets `y_true` are expected to be a tensor of shape `(batch_size, max_length)` in integer "
            f"format. Received: y_true.shape={tuple(labels.shape)}"
        )
    if logits.dim() != 3:
        raise ValueError(
            "Logits `y_pred` are expected to be a tensor of shape `(batch_size, max_length, num_classes)`. "
            f"Received: y_pred.shape={tuple(logits.shape)}"
        )
    label_length = (labels != 0).sum(dim=-1)
    input_length = torch.full((logits.shape[0],), logits.shape[1], dtype=torch.long)
    return ctc_loss(labels, logits, label_length, input_length, mask_index=0)


class CTC(LossFunctionWrapper):
    """Keras ``CTC(reduction="sum_over_batch_size", name="ctc")``; see :func:`ctc`.

    Example:
        >>> CTC().get_config()
        {'name': 'ctc', 'reduction': 'sum_over_batch_size'}
    """

    def __init__(self, reduction: str | None = "sum_over_batch_size", name: str = "ctc", dtype: Any = None) -> None:
        super().__init__(ctc, name=name, reduction=reduction)


def circle(
    y_true: Any,
    y_pred: Any,
    ref_labels: Any = None,
    ref_embeddings: Any = None,
    remove_diagonal: bool = True,
    gamma: float = 80,
    margin: float = 0.4,
) -> torch.Tensor:
    """Keras's ``losses.circle``: the Circle loss of each embedding against the references
    (by default the batch itself).

    Example:
        >>> emb = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]]), dim=1)
        >>> [round(float(v), 3) for v in circle(torch.tensor([0, 0, 1]), emb, gamma=1.0)]   # the last has no positive
        [0.546, 0.55, 0.0]
    """
    emb = float_of(tensor(y_pred))
    labels = tensor(y_true).long().reshape(-1, 1)
    ref = emb if ref_embeddings is None else float_of(tensor(ref_embeddings)).to(emb.dtype)
    ref_ids = labels if ref_labels is None else tensor(ref_labels).long().reshape(-1, 1)
    distances = (1 - emb @ ref.T).clamp(min=0.0)
    positive = labels == ref_ids.T
    negative = ~positive
    if remove_diagonal:
        positive = positive & ~torch.eye(labels.numel(), ref_ids.numel(), dtype=torch.bool, device=emb.device)
    pos_weights = ((margin + distances) * positive).clamp(min=0.0)
    neg_weights = ((1 + margin - distances) * negative).clamp(min=0.0)
    pos = -gamma * pos_weights * (margin - distances)
    neg = gamma * neg_weights * (1 - margin - distances)
    minus_inf = torch.tensor(float("-inf"), dtype=emb.dtype, device=emb.device)
    p_loss = torch.logsumexp(torch.where(positive, pos, minus_inf), dim=1)
    n_loss = torch.logsumexp(torch.where(negative, neg, minus_inf), dim=1)
    return F.softplus(p_loss + n_loss)


class Circle(LossFunctionWrapper):
    """Keras ``Circle(gamma=80.0, margin=0.4, remove_diagonal=True, reduction="sum_over_batch_size")``.

    Called on a batch, the ``"sum_over_batch_size"``/``"mean"`` reductions average over the
    examples whose loss is not zero (Keras masks the zeros); ``fit`` divides the sum by the
    global batch size, as for every loss.

    Example:
        >>> Circle(gamma=10.0).get_config()["gamma"]
        10.0
    """

    def __init__(
        self,
        gamma: float = 80.0,
        margin: float = 0.4,
        remove_diagonal: bool = True,
        reduction: str | None = "sum_over_batch_size",
        name: str = "circle",
        dtype: Any = None,
    ) -> None:
        super().__init__(
            circle, name=name, reduction=reduction, gamma=gamma, margin=margin, remove_diagonal=remove_diagonal
        )
        self.gamma, self.margin, self.remove_diagonal = gamma, margin, remove_diagonal

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> torch.Tensor:
        if self.reduction not in (Reduction.SUM_OVER_BATCH_SIZE, Reduction.AUTO, "mean"):
            return super().__call__(y_true, y_pred, sample_weight)
        raw = self.per_example(y_true, y_pred)
        valid = (raw > 0).sum()
        values = raw if sample_weight is None else raw * tensor(sample_weight).to(raw.dtype).reshape(-1)
        # Keras's masked mean: the sum over the non-zero losses, 0 when there is none
        return values.sum() / valid if bool(valid > 0) else values.sum() * 0
