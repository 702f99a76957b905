"""More of ``tf.nn``: normalisation, statistics, space/depth rearrangements and a few losses.

Each follows TF 2.21's documented formula (compared with TensorFlow by
``tests/conformance/test_vs_tf_nn.py``); ``depth_to_space`` and ``space_to_depth`` use TF's
``DCR`` channel order, which differs from torch's ``pixel_shuffle``.

Example:
    >>> import unison as tf
    >>> x = tf.reshape(tf.range(8, dtype=tf.float32), [1, 1, 2, 4])
    >>> tf.nn.depth_to_space(x, 2).shape
    torch.Size([1, 2, 4, 1])
    >>> tf.nn.crelu(tf.constant([-1.0, 2.0])).tolist()
    [0.0, 2.0, 1.0, 0.0]
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor


def _axes(axes: Any, rank: int) -> tuple[int, ...]:
    values = axes if isinstance(axes, (list, tuple)) else [axes]
    return tuple(int(a) % rank if rank else int(a) for a in values)


def batch_normalization(
    x: Any, mean: Any, variance: Any, offset: Any, scale: Any, variance_epsilon: float, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.batch_normalization``: ``(x - mean) / sqrt(variance + eps) * scale + offset`` (None: 1 and 0)."""
    t = to_tensor(x)
    inv = torch.rsqrt(to_tensor(variance).to(t.dtype) + variance_epsilon)
    if scale is not None:
        inv = inv * to_tensor(scale).to(t.dtype)
    out = (t - to_tensor(mean).to(t.dtype)) * inv
    return out + to_tensor(offset).to(t.dtype) if offset is not None else out


def batch_norm_with_global_normalization(
    input: Any, mean: Any, variance: Any, beta: Any, gamma: Any, variance_epsilon: float,
    scale_after_normalization: bool, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.batch_norm_with_global_normalization``: the same with ``gamma`` only if asked."""
    return batch_normalization(
        input, mean, variance, beta, gamma if scale_after_normalization else None, variance_epsilon
    )


def sufficient_statistics(
    x: Any, axes: Any, shift: Any = None, keepdims: bool = False, name: str | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Any]:
    """``tf.nn.sufficient_statistics``: (count, sum of ``x - shift``, sum of squares, shift)."""
    t = to_tensor(x)
    dims = _axes(axes, t.dim())
    count = torch.tensor(float(math.prod(t.shape[d] for d in dims)), dtype=t.dtype)
    shifted = t - to_tensor(shift).to(t.dtype) if shift is not None else t
    mean_ss = shifted.sum(dim=dims, keepdim=keepdims)
    var_ss = (shifted * shifted).sum(dim=dims, keepdim=keepdims)
    return count, mean_ss, var_ss, (to_tensor(shift) if shift is not None else None)


def normalize_moments(
    counts: Any, mean_ss: Any, variance_ss: Any, shift: Any, name: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.nn.normalize_moments``: (mean, variance) from sufficient statistics."""
    divisor = 1 / to_tensor(counts)
    shifted_mean = to_tensor(mean_ss) * divisor
    mean = shifted_mean + to_tensor(shift) if shift is not None else shifted_mean
    variance = to_tensor(variance_ss) * divisor - shifted_mean * shifted_mean
    return mean, variance


def weighted_moments(
    x: Any, axes: Any, frequency_weights: Any, keepdims: bool = False, name: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.nn.weighted_moments``: the weighted mean and variance over ``axes`` (0 where all weights are 0)."""
    t = to_tensor(x)
    w = to_tensor(frequency_weights).to(t.dtype)
    dims = _axes(axes, t.dim())
    w_full = torch.broadcast_to(w, torch.broadcast_shapes(w.shape, t.shape))
    total = w_full.sum(dim=dims, keepdim=True)
    safe = torch.where(total == 0, torch.ones_like(total), total)
    mean = torch.where(total == 0, torch.zeros_like(total), (w * t).sum(dim=dims, keepdim=True) / safe)
    var = (w * (t - mean) ** 2).sum(dim=dims, keepdim=True)
    var = torch.where(total == 0, torch.zeros_like(total), var / safe)
    if not keepdims:
        mean, var = mean.squeeze(dims), var.squeeze(dims)
    return mean, var


def _nhwc(x: torch.Tensor, data_format: str, fn: str) -> torch.Tensor:
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{fn}: data_format must be 'NHWC' or 'NCHW'. Received: data_format={data_format!r}")
    if x.dim() != 4:
        raise ValueError(f"{fn} takes a 4-D input. Received shape {list(x.shape)}.")
    return x.permute(0, 2, 3, 1) if data_format == "NCHW" else x


def depth_to_space(input: Any, block_size: int, data_format: str = "NHWC", name: str | None = None) -> torch.Tensor:
    """``tf.nn.depth_to_space``: move channel blocks into ``block_size`` x ``block_size`` spatial tiles."""
    fn, bs = "tf.nn.depth_to_space", int(block_size)
    x = _nhwc(to_tensor(input), data_format, fn)
    b, h, w, c = x.shape
    if bs < 2 or c % (bs * bs):
        raise InvalidArgumentError(
            f"{fn}: the channels ({c}) must be divisible by block_size**2 with block_size >= 2. Received: block_size={bs}"
        )
    out = x.reshape(b, h, w, bs, bs, c // (bs * bs)).permute(0, 1, 3, 2, 4, 5).reshape(b, h * bs, w * bs, -1)
    return out.permute(0, 3, 1, 2) if data_format == "NCHW" else out


def space_to_depth(input: Any, block_size: int, data_format: str = "NHWC", name: str | None = None) -> torch.Tensor:
    """``tf.nn.space_to_depth``: move ``block_size`` x ``block_size`` spatial tiles into channels."""
    fn, bs = "tf.nn.space_to_depth", int(block_size)
    x = _nhwc(to_tensor(input), data_format, fn)
    b, h, w, c = x.shape
    if bs < 2 or h % bs or w % bs:
        raise InvalidArgumentError(
            f"{fn}: height ({h}) and width ({w}) must be divisible by block_size >= 2. Received: block_size={bs}"
        )
    out = x.reshape(b, h // bs, bs, w // bs, bs, c).permute(0, 1, 3, 2, 4, 5).reshape(b, h // bs, w // bs, -1)
    return out.permute(0, 3, 1, 2) if data_format == "NCHW" else out


def crelu(features: Any, axis: int = -1, name: str | None = None) -> torch.Tensor:
    """``tf.nn.crelu``: ``concat([relu(x), relu(-x)], axis)``."""
    t = to_tensor(features)
    return torch.cat([F.relu(t), F.relu(-t)], dim=axis)


def local_response_normalization(
    input: Any, depth_radius: int = 5, bias: float = 1.0, alpha: float = 1.0, beta: float = 0.5, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.local_response_normalization`` (``lrn``): ``x / (bias + alpha * sum of squares)**beta``.

    The sum runs over the ``2 * depth_radius + 1`` neighbouring channels of the last axis (4-D input).
    """
    t = to_tensor(input)
    if t.dim() != 4:
        raise InvalidArgumentError(f"tf.nn.local_response_normalization takes a 4-D input. Received {list(t.shape)}.")
    r = int(depth_radius)
    squares = (t * t).reshape(-1, 1, t.shape[-1])
    window = torch.ones((1, 1, 2 * r + 1), dtype=t.dtype)
    sums = F.conv1d(F.pad(squares, (r, r)), window).reshape(t.shape)
    return t / (bias + alpha * sums) ** beta


lrn = local_response_normalization


def log_poisson_loss(
    targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.log_poisson_loss``: ``exp(log_input) - log_input * targets`` (+ Stirling's term if full)."""
    z, c = to_tensor(targets), to_tensor(log_input)
    loss = torch.exp(c) - c * z
    if compute_full_loss:
        stirling = z * torch.log(z) - z + 0.5 * torch.log(2 * math.pi * z)
        loss = loss + torch.where((z >= 0) & (z <= 1), torch.zeros_like(z), stirling)
    return loss


def weighted_cross_entropy_with_logits(
    labels: Any, logits: Any, pos_weight: Any, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.weighted_cross_entropy_with_logits``: sigmoid cross-entropy with positives weighted by ``pos_weight``."""
    z, x = to_tensor(labels), to_tensor(logits)
    q = to_tensor(pos_weight)
    log_weight = 1 + (q - 1) * z
    return (1 - z) * x + log_weight * (torch.log1p(torch.exp(-x.abs())) + F.relu(-x))


__all__ = [
    "batch_norm_with_global_normalization",
    "batch_normalization",
    "crelu",
    "depth_to_space",
    "local_response_normalization",
    "log_poisson_loss",
    "lrn",
    "normalize_moments",
    "space_to_depth",
    "sufficient_statistics",
    "weighted_cross_entropy_with_logits",
    "weighted_moments",
]
