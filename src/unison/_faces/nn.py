"""``tf.nn``: activations and losses (:mod:`unison.ops.nn`) and the strategy-aware loss helpers.

Example:
    >>> import torch
    >>> compute_average_loss(torch.tensor([1.0, 3.0]), global_batch_size=4).item()
    1.0
"""

from __future__ import annotations

import torch

from unison.distribute.strategy import get_replica_context
from unison.ops.math import approx_max_k, approx_min_k, in_top_k, top_k, zero_fraction
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
    log_sigmoid,  # not in TF's tf.nn (tf.math.log_sigmoid); kept, earlier unison programs use it
    log_softmax,
    max_pool2d,
    moments,
    relu,
    relu6,
    selu,
    sigmoid,
    sigmoid_cross_entropy_with_logits,
    silu,
    softmax,
    softmax_cross_entropy_with_logits,
    softplus,
    softsign,
    sparse_softmax_cross_entropy_with_logits,
    swish,
    tanh,
)
from unison.ops.nn_backprop import (
    atrous_conv2d_transpose,
    depthwise_conv2d_backprop_filter,
    depthwise_conv2d_backprop_input,
)
from unison.ops.nn_conv import (
    atrous_conv2d,
    avg_pool,
    avg_pool1d,
    avg_pool3d,
    conv1d,
    conv1d_transpose,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
    conv_transpose,
    convolution,
    depthwise_conv2d,
    max_pool,
    max_pool1d,
    max_pool3d,
    pool,
    separable_conv2d,
)
from unison.ops.nn_ctc import collapse_repeated, ctc_greedy_decoder, ctc_loss, ctc_unique_labels
from unison.ops.nn_ctc_beam import ctc_beam_search_decoder
from unison.ops.nn_dropout import experimental
from unison.ops.nn_extras import fractional_avg_pool, fractional_max_pool, isotonic_regression, with_space_to_batch
from unison.ops.nn_more import (
    batch_norm_with_global_normalization,
    batch_normalization,
    crelu,
    depth_to_space,
    local_response_normalization,
    log_poisson_loss,
    lrn,
    normalize_moments,
    space_to_depth,
    sufficient_statistics,
    weighted_cross_entropy_with_logits,
    weighted_moments,
)
from unison.ops.nn_sampled import (
    all_candidate_sampler,
    compute_accidental_hits,
    embedding_lookup_sparse,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    nce_loss,
    safe_embedding_lookup_sparse,
    sampled_softmax_loss,
)
from unison.ops.nn_spatial import dilation2d, erosion2d, max_pool_with_argmax
from unison.ops.nn_spatial import space_to_batch_nd as space_to_batch


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
        from unison.optim.agreement import note

        note("global batch (compute_average_loss's global_batch_size)", int(global_batch_size))
    if global_batch_size < 0:
        raise ValueError(f"global_batch_size must be >= 0. Received: global_batch_size={global_batch_size}")
    if global_batch_size == 0:
        return per_example_loss.sum() * 0.0  # TF's div_no_nan: a zero loss that keeps the graph
    return per_example_loss.sum() / global_batch_size


def scale_regularization_loss(regularization_loss: torch.Tensor) -> torch.Tensor:
    """Sum a regularisation loss (or a list of them) and divide by the number of replicas (it is added on
    every replica), as TF's ``tf.nn.scale_regularization_loss``."""
    if isinstance(regularization_loss, (list, tuple)):
        total = torch.stack([torch.as_tensor(v) for v in regularization_loss]).sum()
    else:
        total = torch.as_tensor(regularization_loss).sum()
    return total / _replicas_in_sync()


__all__ = [
    "atrous_conv2d_transpose",
    "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "ctc_beam_search_decoder",
    "fractional_avg_pool",
    "fractional_max_pool",
    "isotonic_regression",
    "with_space_to_batch",
    "experimental",
    "collapse_repeated",
    "ctc_greedy_decoder",
    "ctc_loss",
    "ctc_unique_labels",
    "dilation2d",
    "erosion2d",
    "max_pool_with_argmax",
    "space_to_batch",
    "approx_max_k",
    "approx_min_k",
    "all_candidate_sampler",
    "compute_accidental_hits",
    "embedding_lookup_sparse",
    "fixed_unigram_candidate_sampler",
    "learned_unigram_candidate_sampler",
    "nce_loss",
    "safe_embedding_lookup_sparse",
    "sampled_softmax_loss",
    "atrous_conv2d",
    "avg_pool",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm_with_global_normalization",
    "batch_normalization",
    "bias_add",
    "compute_average_loss",
    "conv1d",
    "conv1d_transpose",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "conv3d_transpose",
    "conv_transpose",
    "convolution",
    "crelu",
    "depth_to_space",
    "depthwise_conv2d",
    "dropout",
    "elu",
    "embedding_lookup",
    "gelu",
    "in_top_k",
    "l2_loss",
    "l2_normalize",
    "leaky_relu",
    "log_sigmoid",
    "local_response_normalization",
    "log_poisson_loss",
    "log_softmax",
    "lrn",
    "max_pool",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "moments",
    "normalize_moments",
    "pool",
    "relu",
    "relu6",
    "scale_regularization_loss",
    "selu",
    "separable_conv2d",
    "sigmoid",
    "sigmoid_cross_entropy_with_logits",
    "silu",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softplus",
    "softsign",
    "space_to_depth",
    "sparse_softmax_cross_entropy_with_logits",
    "sufficient_statistics",
    "swish",
    "tanh",
    "top_k",
    "weighted_cross_entropy_with_logits",
    "weighted_moments",
    "zero_fraction",
]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.nn", name)
