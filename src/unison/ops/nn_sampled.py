"""``tf.nn``'s sparse and sampled helpers: ``embedding_lookup_sparse``, ``safe_embedding_lookup_sparse``,
``compute_accidental_hits`` and the candidate samplers (the same functions as ``tf.random``'s).

The lookups combine each row's embeddings with ``index_add`` segment sums (``sum``, ``mean``:
weighted mean, ``sqrtn``: divided by the root of the summed squared weights), as TF does;
a list of parameter shards is TF 2's ``div`` partition, that is their concatenation.

Example:
    >>> import unison as tf
    >>> params = tf.constant([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    >>> ids = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([0, 2, 1], tf.int64), [2, 2])
    >>> tf.nn.embedding_lookup_sparse(params, ids, None, combiner="sum").tolist()
    [[3.0, 2.0], [0.0, 1.0]]
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor
from unison.ops.random_sampling import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
)
from unison.ops.sparse_tensor import SparseTensor


def _params(params: Any) -> torch.Tensor:
    if isinstance(params, (list, tuple)):
        return torch.cat([to_tensor(p) for p in params]) if len(params) > 1 else to_tensor(params[0])
    return to_tensor(params)


def _combine(
    table: torch.Tensor,
    rows: torch.Tensor,
    ids: torch.Tensor,
    weights: torch.Tensor | None,
    n_rows: int,
    combiner: str,
    max_norm: Any,
    op: str,
) -> torch.Tensor:
    if combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError(f"tf.nn.{op}: combiner must be one of 'mean', 'sqrtn' or 'sum'. Received: {combiner!r}")
    if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= table.shape[0]):
        raise InvalidArgumentError(None, None, f"tf.nn.{op}: an id is outside [0, {table.shape[0]}).")
    emb = table[ids]
    if max_norm is not None:
        norms = emb.norm(dim=-1, keepdim=True)
        emb = emb * torch.clamp(float(max_norm) / norms.clamp(min=1e-30), max=1.0)
    w = torch.ones(len(ids), dtype=table.dtype) if weights is None else weights.to(table.dtype)
    shape = (n_rows,) + tuple(table.shape[1:])
    total = torch.zeros(shape, dtype=table.dtype).index_add(0, rows, emb * w.reshape((-1,) + (1,) * (emb.dim() - 1)))
    if combiner == "sum":
        return total
    denom = torch.zeros(n_rows, dtype=table.dtype).index_add(0, rows, w if combiner == "mean" else w * w)
    denom = denom if combiner == "mean" else denom.sqrt()
    denom = torch.where(denom > 0, denom, torch.ones_like(denom))
    return total / denom.reshape((-1,) + (1,) * (total.dim() - 1))


def embedding_lookup_sparse(
    params: Any,
    sp_ids: SparseTensor,
    sp_weights: SparseTensor | None,
    combiner: str | None = None,
    max_norm: Any = None,
    name: Any = None,
    allow_fast_lookup: bool = False,
) -> torch.Tensor:
    """``tf.nn.embedding_lookup_sparse``: per row of ``sp_ids``, its embeddings combined (``mean`` by
    default, weighted by ``sp_weights``); a row without ids gives zeros."""
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(
            f"tf.nn.embedding_lookup_sparse takes a SparseTensor as sp_ids. Received: {type(sp_ids).__name__}"
        )
    weights = None if sp_weights is None else sp_weights.values
    table = _params(params)
    return _combine(
        table, sp_ids.indices[:, 0], sp_ids.values.long(), weights, int(sp_ids.dense_shape[0]),
        combiner or "mean", max_norm, "embedding_lookup_sparse",
    )  # fmt: skip


def safe_embedding_lookup_sparse(
    embedding_weights: Any,
    sparse_ids: SparseTensor,
    sparse_weights: SparseTensor | None = None,
    combiner: str = "mean",
    default_id: Any = None,
    max_norm: Any = None,
    name: Any = None,
    allow_fast_lookup: bool = False,
) -> torch.Tensor:
    """``tf.nn.safe_embedding_lookup_sparse``: as ``embedding_lookup_sparse`` after dropping negative
    ids and non-positive weights; an empty row gives ``default_id``'s embedding (or zeros); ids of
    any rank (the last dimension is the ids of a position)."""
    table = _params(embedding_weights)
    outer = sparse_ids.dense_shape[:-1]
    n = int(torch.prod(outer)) if len(outer) else 1
    strides = torch.cumprod(torch.cat([torch.ones(1, dtype=torch.int64), outer.flip(0)[:-1]]), 0).flip(0)
    rows = (sparse_ids.indices[:, :-1] * strides).sum(dim=1)
    ids = sparse_ids.values.long()
    keep = ids >= 0
    weights = None
    if sparse_weights is not None:
        weights = sparse_weights.values
        keep &= weights > 0
        weights = weights[keep]
    rows, ids = rows[keep], ids[keep]
    out = _combine(table, rows, ids, weights, n, combiner, max_norm, "safe_embedding_lookup_sparse")
    if default_id is not None:
        empty = torch.bincount(rows, minlength=n)[:n] == 0
        fill = _combine(
            table,
            torch.zeros(1, dtype=torch.int64),
            torch.tensor([int(default_id)]),
            None,
            1,
            "sum",
            max_norm,
            "safe_embedding_lookup_sparse",
        )[0]
        out = torch.where(empty.reshape((-1,) + (1,) * (out.dim() - 1)), fill, out)
    return out.reshape(outer.tolist() + list(table.shape[1:]))


def compute_accidental_hits(
    true_classes: Any, sampled_candidates: Any, num_true: int, seed: Any = None, name: Any = None
) -> Any:
    """``tf.nn.compute_accidental_hits``: where a sampled candidate is one of a row's true classes:
    ``(row indices, candidate positions, weights of -FLT_MAX)``, row by row, in the order of the
    row's true classes."""
    classes = to_tensor(true_classes).long()
    sampled = to_tensor(sampled_candidates).long().reshape(-1)
    # [batch, num_true, num_sampled]: TF lists, row by row, each true class's hits in order
    hit = classes.unsqueeze(2) == sampled.reshape(1, 1, -1)
    rows, _, cols = hit.nonzero(as_tuple=True)
    weights = torch.full((len(rows),), -torch.finfo(torch.float32).max, dtype=torch.float32)
    return _Hits(rows.to(torch.int32), cols.to(torch.int64), weights)


_Hits = namedtuple("_Hits", ["indices", "ids", "weights"])


def _sampled_logits(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int,
    sampled_values: Any,
    remove_accidental_hits: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """TF's ``_compute_sampled_logits``: the logits of the true and the sampled classes (each less
    the log of its expected count) and their target probabilities."""
    from unison.ops.random_sampling import log_uniform_candidate_sampler

    lab = to_tensor(labels).long().reshape(-1, int(num_true))
    x = to_tensor(inputs)
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(lab, num_true, num_sampled, True, num_classes)
    sampled, true_count, sampled_count = (to_tensor(v) for v in sampled_values)
    sampled = sampled.long()
    w, b = _params(weights), _params(biases)
    true_w = w[lab]  # [batch, num_true, dim]
    true_logits = (x.unsqueeze(1) * true_w).sum(-1) + b[lab]
    sampled_logits = x @ w[sampled].T + b[sampled]
    if remove_accidental_hits:
        rows, cols, hit_weights = compute_accidental_hits(lab, sampled, num_true)
        sampled_logits = sampled_logits.index_put((rows.long(), cols), hit_weights.to(x.dtype), accumulate=True)
    true_logits = true_logits - torch.log(true_count.to(x.dtype))
    sampled_logits = sampled_logits - torch.log(sampled_count.to(x.dtype))
    logits = torch.cat([true_logits, sampled_logits], 1)
    targets = torch.cat([torch.full_like(true_logits, 1.0 / int(num_true)), torch.zeros_like(sampled_logits)], 1)
    return logits, targets


def nce_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = False,
    name: str = "nce_loss",
) -> torch.Tensor:
    """``tf.nn.nce_loss``: noise-contrastive estimation, one loss per example (a sigmoid
    cross-entropy over the true and sampled classes; candidates from the log-uniform sampler
    unless ``sampled_values`` gives them)."""
    logits, targets = _sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values, remove_accidental_hits
    )
    losses = torch.clamp(logits, min=0) - logits * targets + torch.log1p(torch.exp(-logits.abs()))
    return losses.sum(1)


def sampled_softmax_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = True,
    seed: Any = None,
    name: str = "sampled_softmax_loss",
) -> torch.Tensor:
    """``tf.nn.sampled_softmax_loss``: the softmax cross-entropy over the true and sampled classes,
    one loss per example (accidental hits removed by default)."""
    logits, targets = _sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values, remove_accidental_hits
    )
    return -(targets * torch.log_softmax(logits, dim=1)).sum(1)


__all__ = [
    "all_candidate_sampler",
    "compute_accidental_hits",
    "embedding_lookup_sparse",
    "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler",
    "nce_loss",
    "safe_embedding_lookup_sparse",
    "sampled_softmax_loss",
]
