"""The base of the convolutions beyond ``Conv2D`` (Keras 3's ``layers/convolutional/base_conv.py``).

Kernels are in Keras's layout (``Conv1D``: ``(k, in / groups, filters)``; ``Conv2DTranspose``:
``(kh, kw, filters, in)``; ``depthwise_kernel``: ``(kh, kw, in, depth_multiplier)``;
``pointwise_kernel``: ``(1, 1, in * depth_multiplier, filters)``) and viewed in torch's layout
(a permute, no copy) for the convolution. ``"same"`` padding is TF's: ``ceil(size / stride)``
outputs, with the odd padding pixel after. Resampling and pooling: :mod:`.resampling`.

Example:
    >>> single_int((3,), "kernel_size")
    3
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras import activations
from unison.keras.dtype_policies import DTypePolicyMixin
from unison.keras.layers.base import Layer
from unison.keras.layers.data_format import use_data_format

__all__ = ["check_rank", "keep_channels_last_storage", "single_int"]


def keep_channels_last_storage(kernel: torch.Tensor) -> None:
    """Lay a 4-D Keras kernel's memory out so its torch view is channels-last contiguous.

    A 2-D kernel has Keras's shape ``(kh, kw, a, b)`` and the convolution reads it as
    ``kernel.permute(3, 2, 0, 1)``, i.e. ``(b, a, kh, kw)``. oneDNN (and cuDNN) convolve
    channels-last inputs with channels-last weights, so a kernel stored in Keras's own memory
    order is copied into that layout twice per step (forward and backward; ResNet-50: 106 copies
    of 23M floats). Storing its elements in the order ``(b, kh, kw, a)`` makes the permuted view
    already channels-last: the shape (and every value, ``get_weights``, ``assign``, checkpoints)
    stays Keras's, only the strides change, and the gradient comes back in the same strides.
    Called once in ``build``; ``assign``/``set_weights`` copy into this storage and keep it.
    """
    with torch.no_grad():
        kernel.data = kernel.data.permute(3, 0, 1, 2).contiguous().permute(1, 2, 3, 0)


def single_int(value: Any, what: str) -> int:
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive int or a tuple of 1 int. Received: {what}={value!r}")
    return int(value)


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer. Received: {what}={value!r}")
    return value


def check_rank(x: torch.Tensor, rank: int, layer: Layer, axes: str) -> None:
    if x.dim() != rank:
        raise ValueError(
            f"Input 0 of layer '{layer.name}' is incompatible with the layer: expected ndim={rank} ({axes}), "
            f"found ndim={x.dim()}. Full shape received: {tuple(x.shape)}"
        )


def _channels(layer: Layer, x: torch.Tensor, expected: int) -> None:
    if x.shape[-1] != expected:
        raise ValueError(
            f"Input 0 of layer '{layer.name}' is incompatible with the layer: expected axis -1 of input shape to "
            f"have value {expected}, but received input with shape {tuple(x.shape)}."
        )


class _Conv(DTypePolicyMixin, Layer):
    """Arguments and bias shared by the convolutions."""

    _config_extras = ("activity_regularizer",)  # Keras lists it for convolutions

    def __init__(
        self,
        data_format: str | None,
        activation: Any,
        use_bias: bool,
        bias_initializer: Any,
        bias_regularizer: Any,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self._bias_args = (bias_initializer, bias_regularizer)

    def _add_bias(self, size: int) -> None:
        init, reg = self._bias_args
        self.bias = (
            self.add_weight(name="bias", shape=(size,), initializer=init, regularizer=reg) if self.use_bias else None
        )
