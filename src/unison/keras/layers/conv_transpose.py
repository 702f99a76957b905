"""``Conv1DTranspose``, ``Conv2DTranspose``, ``Conv3DTranspose``: Keras's transposed convolutions, channels-last.

One rank-generic class: the kernel is in Keras's layout ``(*kernel_size, filters, in)`` and viewed
in torch's layout (a permute, no copy) for torch's native ``conv_transpose{1,2,3}d``. ``"same"``
padding gives ``size * stride`` outputs, as in TF. torch computes Keras's output window of the
full transposed convolution directly (its ``padding`` and ``output_padding``), with no cropped copy.

Example:
    >>> import torch
    >>> Conv2DTranspose(2, 3, strides=2, padding="same")(torch.zeros(1, 5, 5, 3)).shape
    torch.Size([1, 10, 10, 2])
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.conv import _check_padding
from unison.keras.layers.conv_base import _channels, _Conv, _positive, keep_channels_last_storage
from unison.keras.layers.conv_nd import check_spatial_rank, from_torch_layout, ntuple, to_torch_layout

_TRANSPOSED = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)


def _transpose_length(
    size: int, kernel: int, stride: int, dilation: int, padding: str, output_padding: int | None
) -> int:
    """Keras's output length of a transposed convolution."""
    kernel = kernel + (kernel - 1) * (dilation - 1)
    if output_padding is None:
        return size * stride + max(kernel - stride, 0) if padding == "valid" else size * stride
    pad = kernel // 2 if padding == "same" else 0
    return (size - 1) * stride + kernel - 2 * pad + output_padding


class _Narrow(torch.autograd.Function):
    """``y[:, :, :t1, :t2, ...]`` (a view) whose gradient keeps ``y``'s memory layout.

    Slicing's own backward zero-fills a contiguous (channels-first) tensor, so the transposed
    convolution's backward got its gradient in another layout than its channels-last input and
    weight, and oneDNN reordered it: 8% of the DCGAN generator's stride-2 layer, forward and
    backward (BENCHMARKS.md issue 36).
    """

    @staticmethod
    def forward(ctx: Any, y: torch.Tensor, sizes: tuple[int, ...]) -> torch.Tensor:
        ctx.layout = (y.shape, y.stride())
        return y[(slice(None), slice(None)) + tuple(slice(0, n) for n in sizes)]

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        shape, stride = ctx.layout
        full = grad.new_empty_strided(shape, stride).zero_()
        full[(slice(None), slice(None)) + tuple(slice(0, n) for n in grad.shape[2:])] = grad
        return full, None


class _ConvTranspose(_Conv):
    """Transposed convolution of ``rank`` spatial axes (the gradient of a convolution).

    Output size per axis, as Keras: ``size * stride`` for ``"same"``; ``size * stride +
    max(kernel - stride, 0)`` for ``"valid"``; with ``output_padding``, ``(size - 1) * stride +
    kernel - 2 * pad + output_padding`` (``pad = kernel // 2`` for ``"same"``, else 0).
    """

    rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        output_padding: Any = None,
        data_format: str | None = None,
        dilation_rate: Any = 1,
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
        self.kernel_size = ntuple(kernel_size, self.rank, "kernel_size")
        self.strides = ntuple(strides, self.rank, "strides")
        self.dilation_rate = ntuple(dilation_rate, self.rank, "dilation_rate")
        self.padding = _check_padding(padding)
        self.output_padding = (
            ntuple(output_padding, self.rank, "output_padding", positive=False) if output_padding is not None else None
        )
        if self.output_padding is not None and any(p >= s for p, s in zip(self.output_padding, self.strides)):
            raise ValueError(
                f"Each output_padding must be smaller than the stride on its axis. Received: "
                f"output_padding={self.output_padding}, strides={self.strides}"
            )
        self._kernel_args = (kernel_initializer, kernel_regularizer)

    def build(self, input_shape: torch.Size) -> None:
        check_spatial_rank(self, len(input_shape), self.rank, input_shape)
        self.in_channels = int(input_shape[-1])
        init, reg = self._kernel_args
        self.kernel = self.add_weight(
            name="kernel", shape=(*self.kernel_size, self.filters, self.in_channels), initializer=init, regularizer=reg
        )
        if self.rank == 2:
            keep_channels_last_storage(self.kernel)
        self._add_bias(self.filters)

    def _crops(self, x: torch.Tensor) -> list[tuple[int, int, int]]:
        """Per spatial axis, ``(full, before, target)``: the full transposed convolution's length,
        how many of its leading cells Keras drops, and Keras's output length."""
        crops = []
        for axis in range(self.rank):
            size = x.shape[2 + axis]
            k, s, d = self.kernel_size[axis], self.strides[axis], self.dilation_rate[axis]
            op = self.output_padding[axis] if self.output_padding is not None else None
            target = _transpose_length(size, k, s, d, self.padding, op)
            full = (size - 1) * s + (k - 1) * d + 1
            # The forward "same" convolution of the target size pads `before` pixels first.
            before = max(full - target, 0) // 2 if self.padding == "same" else 0
            crops.append((full, before, target))
        return crops

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        check_spatial_rank(self, inputs.dim(), self.rank, inputs.shape)
        _channels(self, inputs, self.in_channels)
        x = to_torch_layout(inputs)
        weight = self.kernel.permute(self.rank + 1, self.rank, *range(self.rank))  # (in, filters, *k)
        crops = self._crops(x)
        # torch's `padding` p drops p cells at both ends of the full transposed convolution and
        # `output_padding` q (< max(stride, dilation)) gives back q at the end: Keras's window is
        # [before, before + target) = torch's [p, full - p + q) for p = before, q = before - after.
        # Computing that window directly skips the cropping copy (forward and backward); where the
        # crop is lopsided the other way (stride 2, kernel 5, "same": 1 before, 2 after), torch
        # computes `after - before` extra cells at the end, dropped by a view.
        padding: list[int] = []
        output_padding: list[int] = []
        narrow = False
        for full, before, target in crops:
            # Keras's arguments keep q < stride: "same" crops at least as much after as before
            # (after > before: q = 0), and `after` < 0 (zeros added after: "valid" with a stride
            # above the kernel, or output_padding) is above -stride.
            after = full - before - target
            padding.append(before)
            output_padding.append(max(before - after, 0))
            narrow = narrow or after > before
        y = _TRANSPOSED[self.rank - 1](
            x, weight, None, self.strides, tuple(padding), tuple(output_padding), 1, self.dilation_rate
        )
        if narrow:
            y = _Narrow.apply(y, tuple(target for _, _, target in crops))
        return self._finish(y)

    def _finish(self, y: torch.Tensor) -> torch.Tensor:
        if self.bias is not None:
            y = y + self.bias.reshape(1, -1, *(1,) * self.rank)
        return self.activation(from_torch_layout(y))


class Conv1DTranspose(_ConvTranspose):
    """Transposed 1-D convolution over ``(batch, steps, channels)`` (Keras's ``Conv1DTranspose``)."""

    rank = 1


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-D convolution over ``(batch, height, width, channels)`` (Keras's ``Conv2DTranspose``)."""

    rank = 2


class Conv3DTranspose(_ConvTranspose):
    """Transposed 3-D convolution over ``(batch, depth, height, width, channels)`` (Keras's ``Conv3DTranspose``)."""

    rank = 3


__all__ = ["Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose"]
