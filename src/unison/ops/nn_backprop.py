"""The gradients of TF's convolutions as functions: ``tf.nn.depthwise_conv2d_backprop_filter`` /
``_input`` and ``tf.nn.atrous_conv2d_transpose``. (``tf.conv2d_backprop_*_v2`` are left out: TF 2.21
has no CPU kernel for them.)

Each is the vector-Jacobian product of the forward convolution (``tf.nn.depthwise_conv2d``,
``tf.nn.atrous_conv2d``) with ``out_backprop``, computed by torch's
autograd on that same forward function, so padding, strides and dilations follow TF's rules.

Example:
    >>> import unison as tf
    >>> dx = tf.nn.depthwise_conv2d_backprop_input([1, 3, 3, 1], tf.ones([2, 2, 1, 1]), tf.ones([1, 2, 2, 1]), [1, 1, 1, 1], "VALID")
    >>> dx[0, :, :, 0].tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from unison.ops.dtypes import to_tensor
from unison.ops.nn_conv import atrous_conv2d, depthwise_conv2d

__all__ = [
    "atrous_conv2d_transpose",
    "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input",
]


def _sizes(sizes: Any) -> list[int]:
    return [int(v) for v in (sizes.tolist() if isinstance(sizes, torch.Tensor) else sizes)]


def _vjp(forward: Callable[[torch.Tensor], torch.Tensor], at: torch.Tensor, out_backprop: Any) -> torch.Tensor:
    at = at.detach().requires_grad_(True)
    with torch.enable_grad():
        y = forward(at)
    dy = to_tensor(out_backprop).to(y.dtype)
    if tuple(dy.shape) != tuple(y.shape):
        raise ValueError(
            f"out_backprop has shape {list(dy.shape)} but the convolution's output has shape {list(y.shape)}. "
            "Check input_sizes/filter_sizes, strides and padding."
        )
    (grad,) = torch.autograd.grad(y, at, dy)
    return grad


def depthwise_conv2d_backprop_input(
    input_sizes: Any, filter: Any, out_backprop: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
    dilations: Any = None, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.depthwise_conv2d_backprop_input``: the gradient of ``depthwise_conv2d`` with respect to its input."""
    w = to_tensor(filter)
    x = torch.zeros(_sizes(input_sizes), dtype=w.dtype)
    return _vjp(lambda t: depthwise_conv2d(t, w, strides, padding, data_format, dilations), x, out_backprop)


def depthwise_conv2d_backprop_filter(
    input: Any, filter_sizes: Any, out_backprop: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
    dilations: Any = None, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.depthwise_conv2d_backprop_filter``: the gradient of ``depthwise_conv2d`` with respect to its filter."""
    x = to_tensor(input)
    w = torch.zeros(_sizes(filter_sizes), dtype=x.dtype)
    return _vjp(lambda t: depthwise_conv2d(x, t, strides, padding, data_format, dilations), w, out_backprop)


def atrous_conv2d_transpose(
    value: Any, filters: Any, output_shape: Any, rate: int, padding: Any, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.atrous_conv2d_transpose``: the gradient of ``atrous_conv2d`` with respect to an input of ``output_shape``.

    ``filters`` are ``[height, width, out_channels, in_channels]``, as for ``conv2d_transpose``.
    """
    if int(rate) < 1:
        raise ValueError(f"tf.nn.atrous_conv2d_transpose: rate must be >= 1. Received: rate={rate}")
    w = to_tensor(filters)
    x = torch.zeros(_sizes(output_shape), dtype=w.dtype)
    return _vjp(lambda t: atrous_conv2d(t, w, int(rate), padding), x, value)
