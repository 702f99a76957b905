"""Convolution and pooling layers, channels-last like Keras (inputs are ``(N, H, W, C)``).

Inside, the tensor is viewed as NCHW with channels-last memory (a permute, no copy), which is
the layout oneDNN and cuDNN convolve fastest; outputs are permuted back to NHWC views.

Example:
    >>> import torch
    >>> Conv2D(8, 3, padding="same")(torch.zeros(2, 28, 28, 1)).shape
    torch.Size([2, 28, 28, 8])
"""

from __future__ import annotations

import contextvars
import math
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras import activations
from unison.keras.dtype_policies import DTypePolicyMixin
from unison.keras.layers.base import Layer, pair
from unison.keras.layers.conv_base import keep_channels_last_storage
from unison.keras.layers.data_format import use_data_format

_PADDINGS = ("valid", "same")

# The Conv2D whose call skips its ReLU (run_conv_relu_pool applies it after the pooling); per
# thread and task, so replicas calling one model from several threads never see another's choice.
_DEFERRED_RELU: contextvars.ContextVar[Any] = contextvars.ContextVar("unison_deferred_relu", default=None)


def _check_padding(padding: str) -> str:
    if not isinstance(padding, str) or padding.lower() not in _PADDINGS:
        raise ValueError(f"padding must be 'valid' or 'same'. Received: padding={padding!r}")
    return padding.lower()


def _same_pads(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TF's 'same' padding: output = ceil(size/stride), extra padding goes after."""
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _to_nchw(x: torch.Tensor, layer: Layer) -> torch.Tensor:
    if x.dim() != 4:
        raise ValueError(
            f"Input 0 of layer '{layer.name}' is incompatible with the layer: expected ndim=4 "
            f"(batch, height, width, channels), found ndim={x.dim()}. Full shape received: {tuple(x.shape)}"
        )
    return x.permute(0, 3, 1, 2)


def _pad_same(
    x: torch.Tensor,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilation: tuple[int, int] = (1, 1),
    value: float = 0.0,
) -> torch.Tensor:
    top, bottom = _same_pads(x.shape[2], kernel[0], strides[0], dilation[0])
    left, right = _same_pads(x.shape[3], kernel[1], strides[1], dilation[1])
    if top or bottom or left or right:
        x = F.pad(x, (left, right, top, bottom), value=value)
    return x


class Conv2D(DTypePolicyMixin, Layer):
    """2-D convolution over ``(N, H, W, C)`` inputs (Keras's ``Conv2D``)."""

    _config_extras = ("activity_regularizer",)  # Keras lists it for convolutions

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        data_format: str | None = None,
        dilation_rate: Any = (1, 1),
        groups: int = 1,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        if not isinstance(filters, int) or filters < 1:
            raise ValueError(f"filters must be a positive integer. Received: filters={filters!r}")
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1 or filters % groups:
            raise ValueError(
                "The number of filters must be evenly divisible by the number of groups (a positive integer). "
                f"Received: groups={groups!r}, filters={filters}."
            )
        self.filters, self.groups = filters, groups
        self.kernel_size = pair(kernel_size, "kernel_size")
        self.strides = pair(strides, "strides")
        self.dilation_rate = pair(dilation_rate, "dilation_rate")
        self.padding = _check_padding(padding)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self._init = (kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer)

    def build(self, input_shape: torch.Size) -> None:
        if len(input_shape) != 4:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=4 "
                f"(batch, height, width, channels), found ndim={len(input_shape)}. Full shape "
                f"received: {tuple(input_shape)}"
            )
        k_init, b_init, k_reg, b_reg = self._init
        self.in_channels = int(input_shape[-1])
        if self.in_channels % self.groups:
            raise ValueError(
                f"The number of input channels must be evenly divisible by the number of groups. Received "
                f"groups={self.groups}, but the input has {self.in_channels} channels (full input shape is "
                f"{tuple(input_shape)})."
            )
        self.kernel = self.add_weight(
            name="kernel",
            # Keras's (kh, kw, in / groups, filters)
            shape=(*self.kernel_size, self.in_channels // self.groups, self.filters),
            initializer=k_init,
            regularizer=k_reg,
        )
        keep_channels_last_storage(self.kernel)
        self.bias = (
            self.add_weight(name="bias", shape=(self.filters,), initializer=b_init, regularizer=b_reg)
            if self.use_bias
            else None
        )

    def convolution_op(self, inputs: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
        """Keras's ``Conv.convolution_op``: ``inputs`` convolved with ``kernel`` (Keras's layout
        ``(kh, kw, in / groups, filters)``) by the layer's strides, padding, dilation and groups;
        no bias, no activation. A subclass that overrides it changes what ``call`` convolves with.

        Example:
            >>> import torch
            >>> conv = Conv2D(2, 3, padding="same")
            >>> _ = conv(torch.ones(1, 4, 4, 1))
            >>> tuple(conv.convolution_op(torch.ones(1, 4, 4, 1), conv.kernel * 0).shape)
            (1, 4, 4, 2)
        """
        return self._convolve(inputs, kernel, None)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if type(self).convolution_op is not Conv2D.convolution_op:  # Keras's hook, overridden
            y = self.convolution_op(inputs, self.kernel)
            return self.activation(y + self.bias if self.bias is not None else y)
        y = self._convolve(inputs, self.kernel, self.bias)
        if _DEFERRED_RELU.get() is self:
            return y
        return self.activation(y)

    def _convolve(self, inputs: torch.Tensor, kernel: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        """The convolution (plus ``bias``) of channels-last ``inputs``, channels-last."""
        x = _to_nchw(inputs, self)
        if x.shape[1] != self.in_channels:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected axis -1 "
                f"of input shape to have value {self.in_channels}, but received input with shape "
                f"{tuple(inputs.shape)}."
            )
        padding: tuple[int, int] = (0, 0)
        if self.padding == "same":
            top, bottom = _same_pads(x.shape[2], self.kernel_size[0], self.strides[0], self.dilation_rate[0])
            left, right = _same_pads(x.shape[3], self.kernel_size[1], self.strides[1], self.dilation_rate[1])
            # The convolution pads both ends by the smaller count itself; only TF's extra cells
            # after (the odd one of an even kernel, or stride 2: kernel 5 pads 1 before, 2 after)
            # go into a padded copy. Padding the whole amount in the copy made oneDNN's kernels
            # run on a larger, unaligned input: the DCGAN's discriminator convolution took 1.15x
            # as long forward and backward (benchmarks/models_vs_tf.py, BENCHMARKS.md issue 36).
            padding = (top, left)
            if bottom != top or right != left:
                x = F.pad(x, (0, right - left, 0, bottom - top))
        # torch convolves (filters, in, kh, kw): a permuted view of Keras's kernel, whose storage
        # build() laid out channels-last (keep_channels_last_storage), so oneDNN copies nothing.
        y = F.conv2d(x, kernel.permute(3, 2, 0, 1), bias, self.strides, padding, self.dilation_rate, self.groups)
        return y.permute(0, 2, 3, 1)


class _Pool2D(Layer):
    def __init__(
        self,
        pool_size: Any = (2, 2),
        strides: Any = None,
        padding: str = "valid",
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.pool_size = pair(pool_size, "pool_size")
        self.strides = pair(strides, "strides") if strides is not None else self.pool_size
        self.padding = _check_padding(padding)


class MaxPooling2D(_Pool2D):
    """Max over ``pool_size`` windows of ``(N, H, W, C)`` inputs."""

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = _to_nchw(inputs, self)
        if self.padding == "same":
            x = _pad_same(x, self.pool_size, self.strides, value=float("-inf"))
        return F.max_pool2d(x, self.pool_size, self.strides).permute(0, 2, 3, 1)


class AveragePooling2D(_Pool2D):
    """Mean over ``pool_size`` windows; with 'same' padding the padded cells are not counted."""

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = _to_nchw(inputs, self)
        if self.padding == "same":
            ones = torch.ones_like(x[:1, :1])
            total = F.avg_pool2d(_pad_same(x, self.pool_size, self.strides), self.pool_size, self.strides)
            count = F.avg_pool2d(_pad_same(ones, self.pool_size, self.strides), self.pool_size, self.strides)
            return (total / count).permute(0, 2, 3, 1)
        return F.avg_pool2d(x, self.pool_size, self.strides).permute(0, 2, 3, 1)


class GlobalAveragePooling2D(Layer):
    """Mean over height and width: ``(N, H, W, C) -> (N, C)``."""

    def __init__(self, data_format: str | None = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.keepdims = keepdims

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _to_nchw(inputs, self)
        return inputs.mean(dim=(1, 2), keepdim=self.keepdims)


def _plain(module: Any) -> bool:
    """Whether ``module`` runs no torch hooks (a hook must see what the layer computes)."""
    return not (module._forward_hooks or module._forward_pre_hooks)


def conv_relu_pool_fusable(conv: Any, pool: Any, x: Any) -> bool:
    """Whether ``pool(conv(x))`` may run as ``relu(pool(conv_without_relu(x)))``.

    ReLU is non-decreasing, so ``max(relu(a), relu(b)) == relu(max(a, b))`` exactly, and the
    gradient goes to the same element (or is zero in both orders): pooling first computes the
    ReLU and its backward on a quarter of the elements of a 2x2 pool, which on CPU is most of
    the time these memory-bound passes take (benchmarks/results/cnn_step.md). Only a built
    channels-last ``Conv2D`` with a plain ReLU activation (``activation="relu"``) followed by a
    channels-last ``MaxPooling2D``, neither subclassed nor hooked, and real tensors (not the
    symbolic ones of the functional API).
    """
    return (
        type(conv) is Conv2D
        and type(pool) is MaxPooling2D
        and conv.built
        and type(x) is torch.Tensor
        and type(conv.activation) is torch.nn.ReLU
        and not conv.activation.inplace
        and not conv.__dict__.get("_channels_first")
        and not pool.__dict__.get("_channels_first")
        and _plain(conv)
        and _plain(pool)
        and _plain(conv.activation)
    )


def run_conv_relu_pool(conv: Any, pool: Any, x: torch.Tensor) -> torch.Tensor:
    """``pool(conv(x))`` for a pair :func:`conv_relu_pool_fusable` accepts, the ReLU after the pool."""
    token = _DEFERRED_RELU.set(conv)
    try:
        y = conv(x)
    finally:
        _DEFERRED_RELU.reset(token)
    return torch.relu(pool(y))
