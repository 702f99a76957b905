"""``Conv2DTranspose``: Keras's transposed 2-D convolution, channels-last.

The kernel is in Keras's layout ``(kh, kw, filters, in)`` and viewed in torch's layout (a
permute, no copy). ``"same"`` padding gives ``size * stride`` outputs, as in TF.

Example:
    >>> import torch
    >>> Conv2DTranspose(2, 3, strides=2, padding="same")(torch.zeros(1, 5, 5, 3)).shape
    torch.Size([1, 10, 10, 2])
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.base import pair
from unison.keras.layers.conv import _check_padding, _to_nchw
from unison.keras.layers.conv_base import _channels, _Conv, _positive, keep_channels_last_storage


def _transpose_length(
    size: int, kernel: int, stride: int, dilation: int, padding: str, output_padding: int | None
) -> int:
    """Keras's output length of a transposed convolution."""
    kernel = kernel + (kernel - 1) * (dilation - 1)
    if output_padding is None:
        return size * stride + max(kernel - stride, 0) if padding == "valid" else size * stride
    pad = kernel // 2 if padding == "same" else 0
    return (size - 1) * stride + kernel - 2 * pad + output_padding


class Conv2DTranspose(_Conv):
    """Transposed 2-D convolution (the gradient of ``Conv2D``), Keras's ``Conv2DTranspose``.

    Output size per axis, as Keras: ``size * stride`` for ``"same"``; ``size * stride +
    max(kernel - stride, 0)`` for ``"valid"``; with ``output_padding``, ``(size - 1) * stride +
    kernel - 2 * pad + output_padding`` (``pad = kernel // 2`` for ``"same"``, else 0).
    """

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        output_padding: Any = None,
        data_format: str | None = None,
        dilation_rate: Any = (1, 1),
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(data_format, activation, use_bias, bias_initializer, bias_regularizer, **kwargs)
        self.filters = _positive(filters, "filters")
        self.kernel_size = pair(kernel_size, "kernel_size")
        self.strides = pair(strides, "strides")
        self.dilation_rate = pair(dilation_rate, "dilation_rate")
        self.padding = _check_padding(padding)
        self.output_padding = (
            pair(output_padding, "output_padding", positive=False) if output_padding is not None else None
        )
        if self.output_padding is not None and any(p >= s for p, s in zip(self.output_padding, self.strides)):
            raise ValueError(
                f"Each output_padding must be smaller than the stride on its axis. Received: "
                f"output_padding={self.output_padding}, strides={self.strides}"
            )
        self._kernel_args = (kernel_initializer, kernel_regularizer)

    def build(self, input_shape: torch.Size) -> None:
        if len(input_shape) != 4:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=4 (batch, height, "
                f"width, channels), found ndim={len(input_shape)}. Full shape received: {tuple(input_shape)}"
            )
        self.in_channels = int(input_shape[-1])
        init, reg = self._kernel_args
        self.kernel = self.add_weight(
            name="kernel", shape=(*self.kernel_size, self.filters, self.in_channels), initializer=init, regularizer=reg
        )
        keep_channels_last_storage(self.kernel)
        self._add_bias(self.filters)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = _to_nchw(inputs, self)
        _channels(self, inputs, self.in_channels)
        y = F.conv_transpose2d(x, self.kernel.permute(3, 2, 0, 1), None, self.strides, 0, 0, 1, self.dilation_rate)
        pads = []
        for axis in (1, 0):  # F.pad lists the last axis (width) first
            size, full = x.shape[2 + axis], y.shape[2 + axis]
            k, s, d = self.kernel_size[axis], self.strides[axis], self.dilation_rate[axis]
            op = self.output_padding[axis] if self.output_padding is not None else None
            target = _transpose_length(size, k, s, d, self.padding, op)
            # The forward "same" convolution of the target size pads `before` pixels first.
            before = (max((size - 1) * s + (k - 1) * d + 1 - target, 0) // 2) if self.padding == "same" else 0
            pads += [-before, target - (full - before)]
        y = F.pad(y, pads)
        if self.bias is not None:
            y = y + self.bias.reshape(1, -1, 1, 1)
        return self.activation(y.permute(0, 2, 3, 1))


__all__ = ["Conv2DTranspose"]
