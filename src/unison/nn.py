"""``tf.nn`` helpers for custom training loops under a strategy.

Example:
    >>> import torch
    >>> compute_average_loss(torch.tensor([1.0, 3.0]), global_batch_size=4).item()
    1.0
"""

from __future__ import annotations

import torch

from unison.distribute.strategy import get_strategy


def compute_average_loss(per_example_loss: torch.Tensor, sample_weight: torch.Tensor | None = None,
                         global_batch_size: int | None = None) -> torch.Tensor:
    """Sum of per-example losses divided by the *global* batch size (TF's contract).

    With gradients SUM-reduced across replicas (what ``strategy.run`` does), this makes N
    replicas compute exactly the gradient of one device on the global batch.

    Args:
        per_example_loss: this replica's per-example losses, shape ``(batch, ...)``.
        sample_weight: optional per-example weights.
        global_batch_size: rows in the global batch; default: this replica's rows times
            ``num_replicas_in_sync`` (exact only when every replica has the same rows).
    """
    if sample_weight is not None:
        per_example_loss = per_example_loss * sample_weight
    if global_batch_size is None:
        global_batch_size = per_example_loss.shape[0] * get_strategy().num_replicas_in_sync
    if global_batch_size < 1:
        raise ValueError(f"global_batch_size must be >= 1. Received: global_batch_size={global_batch_size}")
    return per_example_loss.sum() / global_batch_size


def scale_regularization_loss(regularization_loss: torch.Tensor) -> torch.Tensor:
    """Divide a regularisation loss by the number of replicas (it is added on every replica)."""
    return regularization_loss / get_strategy().num_replicas_in_sync
