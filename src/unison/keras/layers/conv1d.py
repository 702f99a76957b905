"""``Conv1D``: Keras's 1-D convolution over channels-last sequences (``"causal"`` padding too).

Example:
    >>> import torch
    >>> Conv1D(4, 3, padding="causal")(torch.zeros(2, 10, 3)).shape
    torch.Size([2, 10, 4])
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.conv import _same_pads
from unison.keras.layers.conv_base import _channels, _Conv, _positive, check_rank, single_int

__all__ = ["Conv1D"]


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

    def convolution_op(self, inputs: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
        """Keras's ``Conv.convolution_op``: ``inputs`` convolved with ``kernel`` (Keras's layout) by the
        layer's strides, padding, dilation and groups; no bias, no activation. A subclass that
        overrides it changes what ``call`` convolves with (see ``Conv2D.convolution_op``)."""
        return self._convolve(inputs, kernel, None)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if type(self).convolution_op is not Conv1D.convolution_op:  # Keras's hook, overridden
            y = self.convolution_op(inputs, self.kernel)
            return self.activation(y + self.bias if self.bias is not None else y)
        return self.activation(self._convolve(inputs, self.kernel, self.bias))

    def _convolve(self, inputs: torch.Tensor, kernel: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        """The convolution (plus ``bias``) of channels-last ``inputs``, channels-last."""
        check_rank(inputs, 3, self, "batch, steps, channels")
        _channels(self, inputs, self.in_channels)
        # (batch, steps, channels) viewed as (batch, channels, 1, steps) is channels_last memory, which
        # oneDNN's 2-D convolution walks without a copy; torch's conv1d would first copy the permuted
        # input to (batch, channels, steps) and takes its slower kernel (measured 2.2x the CPU time
        # forward + backward at 64 channels, benchmarks/conv1d_layout.py).
        x = inputs.permute(0, 2, 1).unsqueeze(2)
        reach = (self.kernel_size - 1) * self.dilation_rate
        padding = 0
        if self.padding == "causal":
            x = F.pad(x, (reach, 0))
        elif self.padding == "same":
            left, right = _same_pads(x.shape[-1], self.kernel_size, self.strides, self.dilation_rate)
            if left == right:
                padding = left  # the convolution pads both sides itself: no padded copy
            else:
                x = F.pad(x, (left, right))
        weight = kernel.permute(2, 1, 0).unsqueeze(2)
        y = F.conv2d(x, weight, bias, (1, self.strides), (0, padding), (1, self.dilation_rate), self.groups)
        return y.squeeze(2).permute(0, 2, 1)
