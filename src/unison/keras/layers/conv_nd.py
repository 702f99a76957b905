"""Rank-generic pieces of the convolutions and ``Conv3D``: sizes per axis, TF's ``"same"`` padding.

A rank-``r`` layer takes channels-last inputs ``(batch, *spatial, channels)`` with ``r`` spatial
axes (``data_format="channels_first"`` is handled by :mod:`.data_format`), moves the channels to
axis 1 (a permute, no copy) and calls torch's native ``conv{r}d``. Kernels keep Keras's layout
``(*kernel_size, in / groups, filters)``, viewed in torch's ``(filters, in / groups, *kernel_size)``.

Example:
    >>> import torch
    >>> Conv3D(4, 3, padding="same")(torch.zeros(2, 5, 6, 7, 3)).shape
    torch.Size([2, 5, 6, 7, 4])
    >>> ntuple(2, 3, "strides")
    (2, 2, 2)
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.conv import _check_padding, _same_pads
from unison.keras.layers.conv_base import _channels, _Conv, _positive

__all__ = [
    "Conv3D",
    "check_spatial_rank",
    "conv_fn",
    "conv_same",
    "grouped_conv",
    "ntuple",
    "pad_same_nd",
    "to_torch_layout",
]

_AXES = {1: "batch, steps, channels", 2: "batch, height, width, channels", 3: "batch, depth, height, width, channels"}


def ntuple(value: Any, rank: int, what: str, positive: bool = True) -> tuple[int, ...]:
    """``n`` -> ``(n,) * rank``; a tuple of ``rank`` ints as given (> 0, or >= 0 with ``positive=False``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        out = (int(value),) * rank
    elif (
        isinstance(value, (tuple, list))
        and len(value) == rank
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        out = tuple(int(v) for v in value)
    else:
        raise ValueError(f"{what} must be an int or a tuple of {rank} ints. Received: {what}={value!r}")
    low = 1 if positive else 0
    if any(v < low for v in out):
        raise ValueError(
            f"The `{what}` argument must be a tuple of {rank} integers >= {low}. Received {what}={value!r}. "
            f"Fix: e.g. {what}={max(low, 1)}."
        )
    return out


def check_spatial_rank(layer: Any, ndim: int, rank: int, shape: Any) -> None:
    """Raise Keras's message when an input of ``ndim`` axes reaches a layer of ``rank`` spatial axes."""
    if ndim != rank + 2:
        raise ValueError(
            f"Input 0 of layer '{layer.name}' is incompatible with the layer: expected ndim={rank + 2} "
            f"({_AXES[rank]}), found ndim={ndim}. Full shape received: {tuple(shape)}"
        )


def to_torch_layout(x: torch.Tensor) -> torch.Tensor:
    """``(batch, *spatial, channels)`` viewed as ``(batch, channels, *spatial)`` (no copy)."""
    return x.movedim(-1, 1)


def from_torch_layout(y: torch.Tensor) -> torch.Tensor:
    return y.movedim(1, -1)


def conv_fn(rank: int) -> Any:
    return (F.conv1d, F.conv2d, F.conv3d)[rank - 1]


def grouped_conv(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    strides: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    groups: int,
) -> torch.Tensor:
    """``conv{1,2,3}d`` of a ``(batch, channels, *spatial)`` tensor; a grouped 1-D one runs as a 2-D
    convolution of height 1, which torch's CPU kernels compute 2-3 times faster (forward and
    backward) than its grouped ``conv1d``."""
    if x.dim() == 3 and groups > 1:
        y = F.conv2d(
            x.unsqueeze(2), weight.unsqueeze(2), bias, (1, strides[0]), (0, padding[0]), (1, dilation[0]), groups
        )
        return y.squeeze(2)
    return conv_fn(x.dim() - 2)(x, weight, bias, strides, padding, dilation, groups)


def pad_same_nd(
    x: torch.Tensor,
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    dilation: tuple[int, ...] | None = None,
    value: float = 0.0,
) -> torch.Tensor:
    """Pad the spatial axes of a ``(batch, channels, *spatial)`` tensor as TF's ``"same"`` does."""
    rank = len(kernel)
    dilation = dilation or (1,) * rank
    pads: list[int] = []
    for axis in reversed(range(rank)):  # F.pad lists the last axis first
        pads += _same_pads(x.shape[2 + axis], kernel[axis], strides[axis], dilation[axis])
    return F.pad(x, pads, value=value) if any(pads) else x


def conv_same(
    x: torch.Tensor, kernel: tuple[int, ...], strides: tuple[int, ...], dilation: tuple[int, ...]
) -> tuple[torch.Tensor, tuple[int, ...]]:
    """``x`` and the ``padding`` argument for a convolution with TF's ``"same"`` padding.

    Where TF pads both ends equally (odd kernels at stride 1) the convolution pads itself, with no
    padded copy of the input; otherwise ``x`` comes back padded and the padding is 0.
    """
    pads = [_same_pads(x.shape[2 + a], kernel[a], strides[a], dilation[a]) for a in range(len(kernel))]
    if all(before == after for before, after in pads):
        return x, tuple(before for before, _ in pads)
    return pad_same_nd(x, kernel, strides, dilation), (0,) * len(kernel)


class _ConvND(_Conv):
    """A rank-``rank`` convolution (Keras's ``BaseConv``): ``Conv3D`` is its rank-3 form."""

    rank = 3

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
        self.kernel_size = ntuple(kernel_size, self.rank, "kernel_size")
        self.strides = ntuple(strides, self.rank, "strides")
        self.dilation_rate = ntuple(dilation_rate, self.rank, "dilation_rate")
        self.groups = _positive(groups, "groups")
        self.padding = _check_padding(padding)
        if self.filters % self.groups:
            raise ValueError(
                f"The number of filters must be evenly divisible by the number of groups. Received: groups={groups}, "
                f"filters={filters}."
            )
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                f"`strides > 1` is not compatible with `dilation_rate > 1`. Received: strides={self.strides} and "
                f"dilation_rate={self.dilation_rate}. Fix: pass strides=1 or dilation_rate=1."
            )
        self._kernel_args = (kernel_initializer, kernel_regularizer)

    def build(self, input_shape: torch.Size) -> None:
        check_spatial_rank(self, len(input_shape), self.rank, input_shape)
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
            shape=(*self.kernel_size, self.in_channels // self.groups, self.filters),
            initializer=init,
            regularizer=reg,
        )
        self._add_bias(self.filters)

    def convolution_op(self, inputs: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
        """Keras's ``Conv.convolution_op``: ``inputs`` convolved with ``kernel`` (Keras's layout) by the
        layer's strides, padding, dilation and groups; no bias, no activation. A subclass that
        overrides it changes what ``call`` convolves with (see ``Conv2D.convolution_op``)."""
        return self._convolve(inputs, kernel, None)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if type(self).convolution_op is not _ConvND.convolution_op:  # Keras's hook, overridden
            y = self.convolution_op(inputs, self.kernel)
            return self.activation(y + self.bias if self.bias is not None else y)
        return self.activation(self._convolve(inputs, self.kernel, self.bias))

    def _convolve(self, inputs: torch.Tensor, kernel: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        """The convolution (plus ``bias``) of channels-last ``inputs``, channels-last."""
        check_spatial_rank(self, inputs.dim(), self.rank, inputs.shape)
        _channels(self, inputs, self.in_channels)
        x = to_torch_layout(inputs)
        padding: tuple[int, ...] = (0,) * self.rank
        if self.padding == "same":
            x, padding = conv_same(x, self.kernel_size, self.strides, self.dilation_rate)
        weight = kernel.permute(self.rank + 1, self.rank, *range(self.rank))
        y = grouped_conv(x, weight, bias, self.strides, padding, self.dilation_rate, self.groups)
        return from_torch_layout(y)


class Conv3D(_ConvND):
    """3-D convolution over ``(batch, depth, height, width, channels)`` (Keras's ``Conv3D``).

    Args:
        filters: output channels.
        kernel_size, strides, dilation_rate: an int or a tuple of 3 ints.
        padding: ``"valid"`` or ``"same"`` (TF's: ``ceil(size / stride)`` outputs).
        groups: split the channels into independent groups.
    """

    rank = 3
