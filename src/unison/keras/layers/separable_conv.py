"""``DepthwiseConv2D`` and ``SeparableConv2D``: Keras's per-channel (then pointwise) 2-D convolutions.

Example:
    >>> import torch
    >>> SeparableConv2D(4, 3, padding="same")(torch.zeros(1, 5, 5, 2)).shape
    torch.Size([1, 5, 5, 4])
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.base import pair
from unison.keras.layers.conv import _check_padding, _pad_same, _to_nchw
from unison.keras.layers.conv_base import _channels, _Conv, _positive

__all__ = ["DepthwiseConv2D", "SeparableConv2D"]


class DepthwiseConv2D(_Conv):
    """Depthwise 2-D convolution: each input channel convolved with its own ``depth_multiplier`` filters.

    Output channel ``c * depth_multiplier + m`` comes from input channel ``c`` (TF's order).
    """

    _depthwise_bias = True  # SeparableConv2D adds its bias after the pointwise step

    def __init__(
        self,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        depth_multiplier: int = 1,
        data_format: str | None = None,
        dilation_rate: Any = (1, 1),
        activation: Any = None,
        use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        depthwise_regularizer: Any = None,
        bias_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(data_format, activation, use_bias, bias_initializer, bias_regularizer, **kwargs)
        self.kernel_size = pair(kernel_size, "kernel_size")
        self.strides = pair(strides, "strides")
        self.dilation_rate = pair(dilation_rate, "dilation_rate")
        self.padding = _check_padding(padding)
        self.depth_multiplier = _positive(depth_multiplier, "depth_multiplier")
        self._depthwise_args = (depthwise_initializer, depthwise_regularizer)

    def build(self, input_shape: torch.Size) -> None:
        if len(input_shape) != 4:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=4 (batch, height, "
                f"width, channels), found ndim={len(input_shape)}. Full shape received: {tuple(input_shape)}"
            )
        self.in_channels = int(input_shape[-1])
        init, reg = self._depthwise_args
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel",
            shape=(*self.kernel_size, self.in_channels, self.depth_multiplier),
            initializer=init,
            regularizer=reg,
        )
        self._build_rest()

    def _build_rest(self) -> None:
        self._add_bias(self.in_channels * self.depth_multiplier)

    def _depthwise(self, inputs: torch.Tensor) -> torch.Tensor:
        x = _to_nchw(inputs, self)
        _channels(self, inputs, self.in_channels)
        if self.padding == "same":
            x = _pad_same(x, self.kernel_size, self.strides, self.dilation_rate)
        kh, kw = self.kernel_size
        weight = self.depthwise_kernel.permute(2, 3, 0, 1).reshape(self.in_channels * self.depth_multiplier, 1, kh, kw)
        bias = self.bias if self._depthwise_bias else None
        return F.conv2d(x, weight, bias, self.strides, 0, self.dilation_rate, self.in_channels)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.activation(self._depthwise(inputs).permute(0, 2, 3, 1))


class SeparableConv2D(DepthwiseConv2D):
    """Depthwise convolution followed by a 1x1 pointwise convolution to ``filters`` channels."""

    _depthwise_bias = False

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        data_format: str | None = None,
        dilation_rate: Any = (1, 1),
        depth_multiplier: int = 1,
        activation: Any = None,
        use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform",
        pointwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        depthwise_regularizer: Any = None,
        pointwise_regularizer: Any = None,
        bias_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            kernel_size,
            strides,
            padding,
            depth_multiplier,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            depthwise_initializer,
            bias_initializer,
            depthwise_regularizer,
            bias_regularizer,
            **kwargs,
        )
        self.filters = _positive(filters, "filters")
        self._pointwise_args = (pointwise_initializer, pointwise_regularizer)

    def _build_rest(self) -> None:
        init, reg = self._pointwise_args
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel",
            shape=(1, 1, self.in_channels * self.depth_multiplier, self.filters),
            initializer=init,
            regularizer=reg,
        )
        self._add_bias(self.filters)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        y = F.conv2d(self._depthwise(inputs), self.pointwise_kernel.permute(3, 2, 0, 1), self.bias)
        return self.activation(y.permute(0, 2, 3, 1))
