"""Keras 2's ``K.ctc_batch_cost``, ``K.ctc_decode`` and ``K.ctc_label_dense_to_sparse`` (``tf_keras.backend``).

Keras 2's conventions, which differ from Keras 3's ``keras.losses.ctc``: ``y_pred`` holds softmax
*probabilities* ``(samples, time, classes)`` (Keras 2 takes ``log(y_pred + epsilon)`` as the logits),
the blank is the *last* class, lengths come as ``(samples, 1)`` columns, and the decoded sequences
are dense ``(samples, time)`` tensors padded with ``-1``.

Example:
    >>> import torch
    >>> y_pred = torch.full((1, 2, 3), 1 / 3)
    >>> cost = ctc_batch_cost(torch.tensor([[0]]), y_pred, torch.tensor([[2]]), torch.tensor([[1]]))
    >>> round(float(cost), 4)   # -log(3 paths of probability 1/9): a0, 0a, 00
    1.0986
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.keras.backend.config import epsilon
from unison.keras.ops._convert import float_of, tensor
from unison.ops.nn_ctc import ctc_greedy_decoder
from unison.ops.nn_ctc_beam import ctc_beam_search_decoder
from unison.ops.sparse_tensor import SparseTensor

__all__ = ["ctc_batch_cost", "ctc_decode", "ctc_label_dense_to_sparse"]


def ctc_label_dense_to_sparse(labels: Any, label_lengths: Any) -> SparseTensor:
    """The first ``label_lengths[i]`` labels of each row of ``labels`` as a ``SparseTensor``
    (dense shape: ``labels``'s).

    Example:
        >>> sp = ctc_label_dense_to_sparse(torch.tensor([[3, 1, 0], [2, 0, 0]]), torch.tensor([2, 1]))
        >>> sp.values.tolist(), sp.indices.tolist()
        ([3, 1, 2], [[0, 0], [0, 1], [1, 0]])
    """
    dense = tensor(labels)
    lengths = tensor(label_lengths).reshape(-1).to(torch.int64)
    if dense.dim() != 2 or lengths.numel() != dense.shape[0]:
        raise ValueError(
            "ctc_label_dense_to_sparse expects labels of shape (samples, max_label_length) and one length "
            f"per sample. Received: labels.shape={tuple(dense.shape)}, label_lengths.shape={tuple(lengths.shape)}"
        )
    keep = torch.arange(dense.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    indices = keep.nonzero().to(torch.int64)
    return SparseTensor(indices, dense[keep], [int(dense.shape[0]), int(dense.shape[1])])


def _log_time_major(y_pred: Any) -> torch.Tensor:
    probs = float_of(tensor(y_pred))
    if probs.dim() != 3:
        raise ValueError(f"y_pred must be (samples, time, classes) probabilities. Received: shape={tuple(probs.shape)}")
    return torch.log(probs.transpose(0, 1) + epsilon())


def _column(x: Any, name: str) -> torch.Tensor:
    t = tensor(x).to(torch.int64)
    if t.dim() == 2 and t.shape[-1] == 1:
        return t.reshape(-1)
    raise ValueError(f"`{name}` must have shape (samples, 1). Received: {name}.shape={tuple(t.shape)}")


def ctc_batch_cost(y_true: Any, y_pred: Any, input_length: Any, label_length: Any) -> torch.Tensor:
    """The CTC loss of each sample, shape ``(samples, 1)`` (blank: the last class).

    Raises:
        ValueError: a length that is not a ``(samples, 1)`` column, or ``y_pred`` not 3-D.
        InvalidArgumentError: a sample whose ``label_length`` is 0 (as TF's kernel).
    """
    logits = _log_time_major(y_pred)
    inputs, lengths = _column(input_length, "input_length"), _column(label_length, "label_length")
    labels = tensor(y_true).to(torch.int64)
    empty = (lengths == 0).nonzero().reshape(-1)
    if empty.numel():
        # TF's CTCLoss kernel refuses these (torch would return the all-blank path's loss)
        raise InvalidArgumentError(
            None,
            None,
            f"ctc_batch_cost: labels length is zero in batch {int(empty[0])}. Every sample needs at least one "
            "label; drop samples without labels or give them a label_length >= 1.",
        )
    # TF's v1 ctc_loss takes log(y_pred + eps) as logits: it log-softmaxes them again
    loss = F.ctc_loss(
        F.log_softmax(logits, dim=-1),
        labels,
        inputs,
        lengths,
        blank=logits.shape[-1] - 1,
        reduction="none",
        zero_infinity=False,
    )
    return loss.to(logits.dtype).unsqueeze(1)


def _dense(sparse: SparseTensor, samples: int, steps: int) -> torch.Tensor:
    out = torch.full((samples, steps), -1, dtype=torch.int64)
    idx = sparse.indices
    if idx.numel():
        out[idx[:, 0], idx[:, 1]] = sparse.values.to(torch.int64)
    return out


def _merge_repeats(sparse: SparseTensor, samples: int) -> SparseTensor:
    """TF's v1 beam decoder (``merge_repeated=True``) merges equal neighbours of each decoded path."""
    rows: list[list[int]] = [[] for _ in range(samples)]
    for (b, _), v in zip(sparse.indices.tolist(), sparse.values.tolist(), strict=True):
        if not rows[b] or rows[b][-1] != v:
            rows[b].append(v)
    indices = [[b, i] for b, row in enumerate(rows) for i in range(len(row))]
    values = [v for row in rows for v in row]
    width = max((len(r) for r in rows), default=0)
    return SparseTensor(
        torch.tensor(indices, dtype=torch.int64).reshape(-1, 2),
        torch.tensor(values, dtype=torch.int64),
        [samples, width],
    )


def ctc_decode(
    y_pred: Any, input_length: Any, greedy: bool = True, beam_width: int = 100, top_paths: int = 1
) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Keras 2's decoder: ``([decoded ...], log_prob)``, each decoded ``(samples, time)`` padded with -1.

    ``greedy`` takes the best class per step (``log_prob`` ``(samples, 1)``: minus the sum of the
    steps' best log-probabilities); otherwise a beam search of ``beam_width`` returning the
    ``top_paths`` best labelings (``log_prob`` ``(samples, top_paths)``).

    Raises:
        ValueError: ``top_paths`` outside ``[1, beam_width]``.
    """
    logits = _log_time_major(y_pred)
    steps, samples = int(logits.shape[0]), int(logits.shape[1])
    lengths = tensor(input_length).to(torch.int64).reshape(-1)
    if greedy:
        decoded, log_prob = ctc_greedy_decoder(logits, lengths)
    else:
        if not 1 <= int(top_paths) <= int(beam_width):
            raise ValueError(
                f"top_paths must be in [1, beam_width]. Received: top_paths={top_paths}, beam_width={beam_width}"
            )
        decoded, log_prob = ctc_beam_search_decoder(logits, lengths, beam_width=beam_width, top_paths=top_paths)
        decoded = [_merge_repeats(sp, samples) for sp in decoded]
    return [_dense(sp, samples, steps) for sp in decoded], log_prob
