"""``tf.nn``'s activation and loss functions over torch (re-exported by :mod:`unison.nn`).

Example:
    >>> import unison as tf
    >>> logits = tf.constant([[2.0, 0.0], [0.0, 2.0]])
    >>> loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=logits)
    >>> [round(v, 4) for v in loss.tolist()]
    [0.1269, 0.1269]
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import to_tensor


def relu(features: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.relu``."""
    return F.relu(to_tensor(features))


def relu6(features: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.relu6``."""
    return F.relu6(to_tensor(features))


def elu(features: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.elu``."""
    return F.elu(to_tensor(features))


def selu(features: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.selu``."""
    return F.selu(to_tensor(features))


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> torch.Tensor:
    """``tf.nn.gelu``."""
    return F.gelu(to_tensor(features), approximate="tanh" if approximate else "none")


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> torch.Tensor:
    """``tf.nn.leaky_relu`` (TF's default slope 0.2)."""
    return F.leaky_relu(to_tensor(features), alpha)


def sigmoid(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.sigmoid``."""
    return torch.sigmoid(to_tensor(x))


def tanh(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.tanh``."""
    return torch.tanh(to_tensor(x))


def softmax(logits: Any, axis: int | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.nn.softmax`` along ``axis`` (default the last)."""
    return F.softmax(to_tensor(logits), dim=-1 if axis is None else axis)


def log_softmax(logits: Any, axis: int | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.nn.log_softmax`` along ``axis`` (default the last)."""
    return F.log_softmax(to_tensor(logits), dim=-1 if axis is None else axis)


def sparse_softmax_cross_entropy_with_logits(
    labels: Any = None, logits: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.sparse_softmax_cross_entropy_with_logits``: per-example losses, shape of ``labels``."""
    if labels is None or logits is None:
        raise ValueError(
            "sparse_softmax_cross_entropy_with_logits needs labels= and logits=. "
            f"Received: labels={labels!r:.40}, logits={logits!r:.40}"
        )
    x, y = to_tensor(logits), to_tensor(labels).long()
    if y.shape != x.shape[:-1]:
        raise ValueError(
            f"labels must have the shape of logits without its last axis: expected "
            f"{tuple(x.shape[:-1])}, received labels of shape {tuple(y.shape)}."
        )
    flat = F.cross_entropy(x.reshape(-1, x.shape[-1]), y.reshape(-1), reduction="none")
    return flat.reshape(y.shape)


def softmax_cross_entropy_with_logits(
    labels: Any = None, logits: Any = None, axis: int = -1, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.softmax_cross_entropy_with_logits``: labels are probabilities along ``axis``."""
    if labels is None or logits is None:
        raise ValueError("softmax_cross_entropy_with_logits needs labels= and logits=.")
    x = to_tensor(logits)
    y = to_tensor(labels).to(x.dtype)
    return -(y * F.log_softmax(x, dim=axis)).sum(dim=axis)


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None, name: str | None = None) -> torch.Tensor:
    """``tf.nn.sigmoid_cross_entropy_with_logits``: elementwise."""
    x = to_tensor(logits)
    return F.binary_cross_entropy_with_logits(x, to_tensor(labels).to(x.dtype), reduction="none")


def l2_loss(t: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.l2_loss``: ``sum(t ** 2) / 2``."""
    x = to_tensor(t)
    return (x * x).sum() / 2


def dropout(
    x: Any, rate: float, noise_shape: Any = None, seed: int | None = None, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.dropout``: zero elements with probability ``rate``, scale the rest by 1/(1-rate)."""
    if not 0 <= rate < 1:
        raise ValueError(f"rate must be in [0, 1). Received: rate={rate}")
    return F.dropout(to_tensor(x), p=float(rate), training=True)


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.nn.bias_add`` (channels last)."""
    return to_tensor(value) + to_tensor(bias)


def moments(
    x: Any, axes: Any, shift: Any = None, keepdims: bool = False, name: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.nn.moments``: ``(mean, variance)`` over ``axes``."""
    t = to_tensor(x)
    dims = tuple(int(a) for a in axes)
    return t.mean(dim=dims, keepdim=keepdims), t.var(dim=dims, keepdim=keepdims, correction=0)


__all__ = [
    "bias_add",
    "dropout",
    "elu",
    "gelu",
    "l2_loss",
    "leaky_relu",
    "log_softmax",
    "moments",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "sigmoid_cross_entropy_with_logits",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "sparse_softmax_cross_entropy_with_logits",
    "tanh",
]

wrap_namespace(globals(), __all__)
