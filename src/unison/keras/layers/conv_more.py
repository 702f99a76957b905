"""More convolution layers, channels-last like Keras: ``Conv1D``, ``Conv2DTranspose``,
``SeparableConv2D``, ``DepthwiseConv2D`` (resampling and pooling: :mod:`.resampling`).

Kernels are in Keras's layout (``Conv1D``: ``(k, in / groups, filters)``; ``Conv2DTranspose``:
``(kh, kw, filters, in)``; ``depthwise_kernel``: ``(kh, kw, in, depth_multiplier)``;
``pointwise_kernel``: ``(1, 1, in * depth_multiplier, filters)``) and viewed in torch's layout
(a permute, no copy) for the convolution. ``"same"`` padding is TF's: ``ceil(size / stride)``
outputs, with the odd padding pixel after.

Example:
    >>> import torch
    >>> Conv1D(4, 3, padding="causal")(torch.zeros(2, 10, 3)).shape
    torch.Size([2, 10, 4])
    >>> Conv2DTranspose(2, 3, strides=2, padding="same")(torch.zeros(1, 5, 5, 3)).shape
    torch.Size([1, 10, 10, 2])
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras import activations
from unison.keras.layers.base import Layer, pair
from unison.keras.layers.conv import _check_padding, _pad_same, _same_pads, _to_nchw
from unison.keras.layers.data_format import use_data_format


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


class _Conv(Layer):
    """Arguments and bias shared by the convolutions."""

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


class Conv1D(_Conv):
    """1-D convolution over ``(batch, steps, channels)`` (Keras's ``Conv1D``).

    ``padding``: ``"valid"``, ``"same"`` or ``"causal"`` (left padding only, so output ``t`` sees
    inputs ``<= t``). ``groups`` splits the channels into independent groups.
    """

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str | None = None,
        dilation_rate: Any = 1,
        groups: int = 1,
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
        self.kernel_size = single_int(kernel_size, "kernel_size")
        self.strides = single_int(strides, "strides")
        self.dilation_rate = single_int(dilation_rate, "dilation_rate")
        self.groups = _positive(groups, "groups")
        if not isinstance(padding, str) or padding.lower() not in ("valid", "same", "causal"):
            raise ValueError(f"padding must be 'valid', 'same' or 'causal'. Received: padding={padding!r}")
        self.padding = padding.lower()
        if self.filters % self.groups:
            raise ValueError(
                f"The number of filters must be evenly divisible by the number of groups. Received: groups={groups}, "
                f"filters={filters}."
            )
        self._kernel_args = (kernel_initializer, kernel_regularizer)

    def build(self, input_shape: torch.Size) -> None:
        if len(input_shape) != 3:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=3 (batch, steps, "
                f"channels), found ndim={len(input_shape)}. Full shape received: {tuple(input_shape)}"
            )
        self.in_channels = int(input_shape[-1])
        if self.in_channels % self.groups:
            raise ValueError(
                f"The number of input channels must be evenly divisible by the number of groups. Received "
                f"groups={self.groups}, but the input has {self.in_channels} channels (full input shape is "
                f"{tuple(input_shape)})."
            )
        init, reg = self._kernel_args
        self.kernel = self.add_weight(
            name="kernel",
            shape=(self.kernel_size, self.in_channels // self.groups, self.filters),
            initializer=init,
            regularizer=reg,
        )
        self._add_bias(self.filters)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        check_rank(inputs, 3, self, "batch, steps, channels")
        _channels(self, inputs, self.in_channels)
        x = inputs.permute(0, 2, 1)
        reach = (self.kernel_size - 1) * self.dilation_rate
        if self.padding == "causal":
            x = F.pad(x, (reach, 0))
        elif self.padding == "same":
            x = F.pad(x, _same_pads(x.shape[-1], self.kernel_size, self.strides, self.dilation_rate))
        weight = self.kernel.permute(2, 1, 0)
        y = F.conv1d(x, weight, self.bias, self.strides, 0, self.dilation_rate, self.groups)
        return self.activation(y.permute(0, 2, 1))


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
        self.output_padding = pair(output_padding, "output_padding") if output_padding is not None else None
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


__all__ = ["Conv1D", "Conv2DTranspose", "DepthwiseConv2D", "SeparableConv2D", "check_rank", "single_int"]
