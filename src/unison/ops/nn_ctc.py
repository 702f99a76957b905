"""``tf.nn``'s CTC functions: ``ctc_loss`` (torch's CTC), ``ctc_greedy_decoder``,
``collapse_repeated`` and ``ctc_unique_labels``.

Each follows TF 2.21's documented semantics, compared with TensorFlow by
``tests/conformance/test_vs_tf_nn_ctc.py``.

Example:
    >>> import unison as tf
    >>> labels, lengths = tf.nn.collapse_repeated(tf.constant([[1, 1, 2, 2, 2, 3]]), tf.constant([6]))
    >>> labels.tolist(), lengths.tolist()
    ([[1, 2, 3]], [3])
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor
from unison.ops.sparse_tensor import SparseTensor

__all__ = ["collapse_repeated", "ctc_greedy_decoder", "ctc_loss", "ctc_unique_labels"]


def ctc_loss(
    labels: Any,
    logits: Any,
    label_length: Any,
    logit_length: Any,
    logits_time_major: bool = True,
    unique: Any = None,
    blank_index: int | None = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.nn.ctc_loss``: the negative log-likelihood of each label sequence under the logits, ``[batch]``.

    ``labels`` are dense ``[batch, max_label_length]`` (padded after ``label_length``) or a
    ``SparseTensor``; ``logits`` are ``[time, batch, classes]`` (``logits_time_major``) or batch-major,
    unnormalized. ``blank_index`` defaults to 0 for dense labels and ``classes - 1`` for sparse ones,
    as in TF; a negative one counts from ``classes``.
    """
    z = to_tensor(logits)
    if not z.is_floating_point():
        raise InvalidArgumentError(None, None, f"tf.nn.ctc_loss: logits must be floats. Received dtype {z.dtype}.")
    if not logits_time_major:
        z = z.transpose(0, 1)
    classes = z.shape[-1]
    sparse = isinstance(labels, SparseTensor)
    blank = (classes - 1 if sparse else 0) if blank_index is None else int(blank_index)
    if blank < 0:
        blank += classes
    if sparse:
        dense = torch.zeros([int(d) for d in labels.dense_shape.tolist()], dtype=torch.int64)
        dense[labels.indices[:, 0], labels.indices[:, 1]] = labels.values.to(torch.int64)
        lengths = torch.bincount(labels.indices[:, 0], minlength=dense.shape[0])
    else:
        dense = to_tensor(labels).to(torch.int64)
        lengths = to_tensor(label_length).to(torch.int64)
    inputs = to_tensor(logit_length).to(torch.int64)
    log_probs = F.log_softmax(z.float() if z.dtype in (torch.float16, torch.bfloat16) else z, dim=-1)
    loss = F.ctc_loss(log_probs, dense, inputs, lengths, blank=blank, reduction="none", zero_infinity=False)
    return loss.to(z.dtype)


def ctc_greedy_decoder(
    inputs: Any, sequence_length: Any, merge_repeated: bool = True, blank_index: int | None = None
) -> tuple[list[SparseTensor], torch.Tensor]:
    """``tf.nn.ctc_greedy_decoder``: the best path of each sequence, blanks removed.

    Returns ``([decoded], neg_sum_logits)``: ``decoded`` a ``SparseTensor`` ``[batch, longest]`` of
    int64 labels, ``neg_sum_logits`` ``[batch, 1]``, minus the sum of each step's largest logit.
    ``blank_index`` defaults to ``classes - 1``.
    """
    z = to_tensor(inputs)
    steps, batch, classes = z.shape
    blank = classes - 1 if blank_index is None else int(blank_index) % classes
    lengths = to_tensor(sequence_length).to(torch.int64).tolist()
    best, where = z.max(dim=-1)
    rows: list[list[int]] = []
    scores = []
    for b in range(batch):
        n = int(lengths[b])
        scores.append(-best[:n, b].sum())
        path = where[:n, b].tolist()
        out, previous = [], None
        for label in path:
            if label != blank and not (merge_repeated and label == previous):
                out.append(label)
            previous = label
        rows.append(out)
    indices = [[b, i] for b, row in enumerate(rows) for i in range(len(row))]
    values = [v for row in rows for v in row]
    decoded = SparseTensor(
        torch.tensor(indices, dtype=torch.int64).reshape(-1, 2),
        torch.tensor(values, dtype=torch.int64),
        [batch, max((len(r) for r in rows), default=0)],
    )
    return [decoded], torch.stack(scores).reshape(batch, 1).to(z.dtype) if scores else torch.zeros(0, 1, dtype=z.dtype)


def collapse_repeated(labels: Any, seq_length: Any, name: str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.nn.collapse_repeated``: each row with runs of one label merged, padded with 0 to the longest; and
    the new lengths."""
    x = to_tensor(labels)
    lengths = to_tensor(seq_length)
    rows = []
    for b in range(x.shape[0]):
        row = x[b, : int(lengths[b])].tolist()
        rows.append([v for i, v in enumerate(row) if i == 0 or v != row[i - 1]])
    out = torch.zeros(x.shape[0], max((len(r) for r in rows), default=0), dtype=x.dtype)  # TF: as wide as the longest
    for b, row in enumerate(rows):
        out[b, : len(row)] = torch.tensor(row, dtype=x.dtype)
    return out, torch.tensor([len(r) for r in rows], dtype=lengths.dtype)


def ctc_unique_labels(labels: Any, name: str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.nn.ctc_unique_labels``: each row's distinct labels in order of first use (padded with 0), and
    for every label its position among them."""
    x = to_tensor(labels)
    unique = torch.zeros(x.shape, dtype=torch.int64)  # TF's dtypes whatever the labels': int64 and int32
    index = torch.zeros(x.shape, dtype=torch.int32)
    for b in range(x.shape[0]):
        seen: dict[int, int] = {}
        for i, v in enumerate(x[b].tolist()):
            index[b, i] = seen.setdefault(v, len(seen))
        unique[b, : len(seen)] = torch.tensor(list(seen), dtype=torch.int64)
    return unique, index
