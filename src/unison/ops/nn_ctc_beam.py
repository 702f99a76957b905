"""``tf.nn.ctc_beam_search_decoder``: TF's prefix beam search over CTC logits.

Each time step's logits are normalized to log-probabilities (as TF's decoder does); a beam is a
label prefix with the log-probabilities of its alignments ending in blank and in its last label.
Per step every beam first extends itself (a blank, or a repeat of its last label; a new copy of
the last label only after a blank), then grows one child per non-blank label, and the
``beam_width`` most probable prefixes are kept. The last class is the blank; repeated labels are
not merged beyond CTC's own rule (TF 2's ``merge_repeated=False``). The ``top_paths`` best
prefixes come back as ``SparseTensor`` s with their log-probabilities. With a beam wide enough to
keep every prefix the result is the exact most probable labelings, as TF's.

Example:
    >>> import unison as tf
    >>> logits = tf.math.log([[[0.1, 0.2, 0.7]], [[0.8, 0.1, 0.1]]])
    >>> decoded, log_probs = tf.nn.ctc_beam_search_decoder(logits, [2], beam_width=10)
    >>> decoded[0].values.tolist()
    [0]
"""

from __future__ import annotations

import math
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor
from unison.ops.sparse_tensor import SparseTensor

__all__ = ["ctc_beam_search_decoder"]

_ZERO = -math.inf


def _lse(a: float, b: float) -> float:
    if a == _ZERO:
        return b
    if b == _ZERO:
        return a
    hi, lo = (a, b) if a > b else (b, a)
    return hi + math.log1p(math.exp(lo - hi))


def _decode_one(logp: list[list[float]], beam_width: int, top_paths: int) -> list[tuple[tuple[int, ...], float]]:
    blank = len(logp[0]) - 1 if logp else 0
    # prefix -> [p_blank, p_label]
    beams: dict[tuple[int, ...], list[float]] = {(): [0.0, _ZERO]}
    for row in logp:
        new: dict[tuple[int, ...], list[float]] = {}
        for prefix, (pb, pl) in beams.items():
            total = _lse(pb, pl)
            entry = new.setdefault(prefix, [_ZERO, _ZERO])
            entry[0] = _lse(entry[0], total + row[blank])  # a blank keeps the prefix
            if prefix:  # the last label repeated collapses into the prefix
                entry[1] = _lse(entry[1], pl + row[prefix[-1]])
            for label in range(blank):
                child = prefix + (label,)
                # a label equal to the last one starts a new copy only after a blank
                previous = pb if prefix and label == prefix[-1] else total
                c = new.setdefault(child, [_ZERO, _ZERO])
                c[1] = _lse(c[1], previous + row[label])
        ranked = sorted(new.items(), key=lambda kv: -_lse(*kv[1]))
        beams = dict(ranked[:beam_width])
    ranked = sorted(beams.items(), key=lambda kv: -_lse(*kv[1]))
    if len(ranked) < top_paths:
        raise InvalidArgumentError(
            None, None, f"Less leaves in the beam search than requested: {len(ranked)} < top_paths={top_paths}."
        )
    return [(prefix, _lse(*p)) for prefix, p in ranked[:top_paths]]


def ctc_beam_search_decoder(
    inputs: Any, sequence_length: Any, beam_width: int = 100, top_paths: int = 1
) -> tuple[list[SparseTensor], torch.Tensor]:
    """``tf.nn.ctc_beam_search_decoder``: the ``top_paths`` best labelings of ``inputs`` [time, batch, classes].

    Returns ``(decoded, log_probabilities)``: ``decoded[k]`` a ``SparseTensor`` [batch, longest] of
    int64 labels (the k-th best path of each batch entry), ``log_probabilities`` [batch, top_paths].

    Example:
        >>> import torch
        >>> _, lp = ctc_beam_search_decoder(torch.zeros(1, 1, 2), [1], beam_width=2)
        >>> lp.shape
        torch.Size([1, 1])
    """
    z = to_tensor(inputs)
    if z.dim() != 3:
        raise InvalidArgumentError(
            None, None, f"inputs is not a 3-Tensor [max_time, batch, num_classes]: shape {list(z.shape)}."
        )
    lengths = [int(v) for v in to_tensor(sequence_length).reshape(-1).tolist()]
    max_time, batch, _ = z.shape
    if len(lengths) != batch:
        raise InvalidArgumentError(None, None, f"len(sequence_length) != batch_size. {len(lengths)} vs. {batch}")
    if any(n > max_time for n in lengths):
        raise InvalidArgumentError(None, None, f"sequence_length(b) <= time: every length must be <= {max_time}.")
    if int(beam_width) < 1 or not 1 <= int(top_paths) <= int(beam_width):
        raise InvalidArgumentError(
            None,
            None,
            f"top_paths must be in [1, beam_width]. Received top_paths={top_paths}, beam_width={beam_width}.",
        )
    logp = torch.log_softmax(z.detach().to(torch.float64), dim=-1)
    paths: list[list[tuple[tuple[int, ...], float]]] = []
    for b in range(batch):
        paths.append(_decode_one(logp[: lengths[b], b].tolist(), int(beam_width), int(top_paths)))
    decoded = []
    for k in range(int(top_paths)):
        indices, values, longest = [], [], 0
        for b in range(batch):
            labels = paths[b][k][0] if k < len(paths[b]) else ()
            longest = max(longest, len(labels))
            for t, label in enumerate(labels):
                indices.append([b, t])
                values.append(label)
        decoded.append(
            SparseTensor(
                torch.tensor(indices, dtype=torch.int64).reshape(-1, 2),
                torch.tensor(values, dtype=torch.int64),
                torch.tensor([batch, longest], dtype=torch.int64),
            )
        )
    scores = [[paths[b][k][1] if k < len(paths[b]) else _ZERO for k in range(int(top_paths))] for b in range(batch)]
    return decoded, torch.tensor(scores, dtype=z.dtype).reshape(batch, int(top_paths))
