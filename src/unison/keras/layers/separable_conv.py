"""``DepthwiseConv1D``/``2D`` and ``SeparableConv1D``/``2D``: Keras's per-channel (then pointwise) convolutions.

One rank-generic pair of classes: ``depthwise_kernel`` is ``(*kernel_size, in, depth_multiplier)``
and ``pointwise_kernel`` ``(*(1,) * rank, in * depth_multiplier, filters)``, as in Keras.

Example:
    >>> import torch
    >>> SeparableConv2D(4, 3, padding="same")(torch.zeros(1, 5, 5, 2)).shape
    torch.Size([1, 5, 5, 4])
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.conv import _check_padding
from unison.keras.layers.conv_base import _channels, _Conv, _positive
from unison.keras.layers.conv_nd import (
    check_spatial_rank,
    conv_fn,
    conv_same,
    from_torch_layout,
    grouped_conv,
    ntuple,
    to_torch_layout,
)

__all__ = ["DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D"]


class _Depthwise(_Conv):
    """Depthwise convolution: each input channel convolved with its own ``depth_multiplier`` filters.

    Output channel ``c * depth_multiplier + m`` comes from input channel ``c`` (TF's order).
    """

    _depthwise_bias = True  # SeparableConv adds its bias after the pointwise step
    rank = 2

    def __init__(
        self,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        depth_multiplier: int = 1,
        data_format: str | None = None,
        dilation_rate: Any = 1,
        activation: Any = None,
        use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        depthwise_regularizer: Any = None,
        bias_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(data_format, activation, use_bias, bias_initializer, bias_regularizer, **kwargs)
        self.kernel_size = ntuple(kernel_size, self.rank, "kernel_size")
        self.strides = ntuple(strides, self.rank, "strides")
        self.dilation_rate = ntuple(dilation_rate, self.rank, "dilation_rate")
        self.padding = _check_padding(padding)
        self.depth_multiplier = _positive(depth_multiplier, "depth_multiplier")
        self._depthwise_args = (depthwise_initializer, depthwise_regularizer)

    def build(self, input_shape: torch.Size) -> None:
        check_spatial_rank(self, len(input_shape), self.rank, input_shape)
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
        check_spatial_rank(self, inputs.dim(), self.rank, inputs.shape)
        x = to_torch_layout(inputs)
        _channels(self, inputs, self.in_channels)
        padding: tuple[int, ...] = (0,) * self.rank
        if self.padding == "same":
            x, padding = conv_same(x, self.kernel_size, self.strides, self.dilation_rate)
        # (*k, in, m) -> (in * m, 1, *k): output channel c * m + j comes from input channel c
        weight = self.depthwise_kernel.permute(self.rank, self.rank + 1, *range(self.rank)).reshape(
            self.in_channels * self.depth_multiplier, 1, *self.kernel_size
        )
        bias = self.bias if self._depthwise_bias else None
        return grouped_conv(x, weight, bias, self.strides, padding, self.dilation_rate, self.in_channels)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.activation(from_torch_layout(self._depthwise(inputs)))


class DepthwiseConv1D(_Depthwise):
    """Depthwise 1-D convolution over ``(batch, steps, channels)`` (Keras's ``DepthwiseConv1D``)."""

    rank = 1


class DepthwiseConv2D(_Depthwise):
    """Depthwise 2-D convolution over ``(batch, height, width, channels)`` (Keras's ``DepthwiseConv2D``).

    Output channel ``c * depth_multiplier + m`` comes from input channel ``c`` (TF's order).
    """

    rank = 2


class _Separable(_Depthwise):
    """Depthwise convolution followed by a pointwise (kernel size 1) convolution to ``filters`` channels."""

    # tf_keras's configs carry these (its base Conv's); Keras 3 lists neither
    _config_omitted = frozenset({"kernel_initializer", "kernel_regularizer"})

    _depthwise_bias = False

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str | None = None,
        dilation_rate: Any = 1,
        depth_multiplier: int = 1,
        activation: Any = None,
        use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform",
        pointwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        depthwise_regularizer: Any = None,
        pointwise_regularizer: Any = None,
        bias_regularizer: Any = None,
        *,
        kernel_initializer: Any = None,
        kernel_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        # kernel_initializer/kernel_regularizer: tf_keras's SeparableConv configs carry its base Conv's,
        # which no weight uses there either (the kernels have their depthwise_/pointwise_ ones)
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
            shape=(*(1,) * self.rank, self.in_channels * self.depth_multiplier, self.filters),
            initializer=init,
            regularizer=reg,
        )
        self._add_bias(self.filters)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if self.rank == 1:
            # The pointwise step is a matmul over the channels of the channels-last depthwise output:
            # torch's conv1d would first copy that output to (batch, channels, steps) and take its
            # slower kernel (1.6x Keras's time; benchmarks/layers_vs_keras.py).
            depthwise = from_torch_layout(self._depthwise(inputs))
            kernel = self.pointwise_kernel.reshape(-1, self.pointwise_kernel.shape[-1])
            return self.activation(F.linear(depthwise, kernel.t(), self.bias))
        weight = self.pointwise_kernel.permute(self.rank + 1, self.rank, *range(self.rank))
        y = conv_fn(self.rank)(self._depthwise(inputs), weight, self.bias)
        return self.activation(from_torch_layout(y))


class SeparableConv1D(_Separable):
    """Separable 1-D convolution over ``(batch, steps, channels)`` (Keras's ``SeparableConv1D``)."""

    rank = 1


class SeparableConv2D(_Separable):
    """Separable 2-D convolution over ``(batch, height, width, channels)`` (Keras's ``SeparableConv2D``)."""

    rank = 2
