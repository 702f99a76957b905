"""``tf.nn``: activations and losses (:mod:`unison.ops.nn`) and the strategy-aware loss helpers.

Example:
    >>> import torch
    >>> compute_average_loss(torch.tensor([1.0, 3.0]), global_batch_size=4).item()
    1.0
"""

from __future__ import annotations

import torch

from unison.distribute.strategy import get_replica_context
from unison.ops.nn import (
    avg_pool2d,
    bias_add,
    conv2d,
    dropout,
    elu,
    embedding_lookup,
    gelu,
    l2_loss,
    l2_normalize,
    leaky_relu,
    log_softmax,
    max_pool2d,
    moments,
    relu,
    relu6,
    selu,
    sigmoid,
    sigmoid_cross_entropy_with_logits,
    softmax,
    softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
    tanh,
)


def _replicas_in_sync() -> int:
    context = get_replica_context()
    if context is None:
        raise RuntimeError(
            "compute_average_loss was called in cross-replica context (inside strategy.scope() but "
            "outside strategy.run) without global_batch_size. Call it inside the function given to "
            "strategy.run, or pass global_batch_size=."
        )
    return context.num_replicas_in_sync


def compute_average_loss(
    per_example_loss: torch.Tensor, sample_weight: torch.Tensor | None = None, global_batch_size: int | None = None
) -> torch.Tensor:
    """Sum of per-example losses divided by the *global* batch size (TF's contract).

    With gradients SUM-reduced across replicas (what ``strategy.run`` does), this makes N
    replicas compute exactly the gradient of one device on the global batch.

    Args:
        per_example_loss: this replica's per-example losses, shape ``(batch, ...)``.
        sample_weight: optional per-example weights.
        global_batch_size: rows in the global batch; default, as in TF 2.13+: this replica's
            rows times the ``num_replicas_in_sync`` of the current replica context (exact when
            every replica has the same rows). A global batch size of 0 gives a loss of 0.
    """
    per_example_loss = torch.as_tensor(per_example_loss)
    if sample_weight is not None:
        per_example_loss = per_example_loss * torch.as_tensor(sample_weight, dtype=per_example_loss.dtype)
    if global_batch_size is None:
        rows = per_example_loss.shape[0] if per_example_loss.dim() else 1
        global_batch_size = rows * _replicas_in_sync()
    else:
        from unison.distribute.agreement import note

        note("global batch (compute_average_loss's global_batch_size)", int(global_batch_size))
    if global_batch_size < 0:
        raise ValueError(f"global_batch_size must be >= 0. Received: global_batch_size={global_batch_size}")
    if global_batch_size == 0:
        return per_example_loss.sum() * 0.0  # TF's div_no_nan: a zero loss that keeps the graph
    return per_example_loss.sum() / global_batch_size


def scale_regularization_loss(regularization_loss: torch.Tensor) -> torch.Tensor:
    """Divide a regularisation loss by the number of replicas (it is added on every replica)."""
    return torch.as_tensor(regularization_loss) / _replicas_in_sync()


__all__ = [
    "avg_pool2d",
    "bias_add",
    "compute_average_loss",
    "conv2d",
    "dropout",
    "elu",
    "embedding_lookup",
    "gelu",
    "l2_loss",
    "l2_normalize",
    "leaky_relu",
    "log_softmax",
    "max_pool2d",
    "moments",
    "relu",
    "relu6",
    "scale_regularization_loss",
    "selu",
    "sigmoid",
    "sigmoid_cross_entropy_with_logits",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "sparse_softmax_cross_entropy_with_logits",
    "tanh",
]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.nn", name)
