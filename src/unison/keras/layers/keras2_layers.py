"""Keras 2 (``tf_keras``) layers that Keras 3 dropped: ``LocallyConnected1D``, ``LocallyConnected2D``,
``ThresholdedReLU``.

A locally connected layer is a convolution whose weights differ at every output position. Its
weights are tf_keras's (``implementation=1``): ``kernel`` ``(outputs, prod(kernel_size) * in,
filters)`` with the patch flattened as ``(*kernel_size, in)`` for channels-last inputs and
``(in, *kernel_size)`` for channels-first ones, and ``bias`` ``(*output_size, filters)``, so
weights load from tf_keras unchanged. Patches come from ``Tensor.unfold`` (a view) and one batched
matmul (``einsum``) computes every position.

Example:
    >>> import torch
    >>> LocallyConnected1D(2, 3)(torch.zeros(4, 5, 3)).shape
    torch.Size([4, 3, 2])
    >>> ThresholdedReLU(1.0)(torch.tensor([0.5, 1.0, 2.0])).tolist()
    [0.0, 0.0, 2.0]
"""

from __future__ import annotations

import math
from typing import Any

import torch

from unison.keras.layers.conv_base import _channels, _Conv, _positive
from unison.keras.layers.conv_nd import check_spatial_rank, ntuple
from unison.keras.layers.masking import MaskedLayer

__all__ = ["LocallyConnected1D", "LocallyConnected2D", "ThresholdedReLU"]


class _LocallyConnected(_Conv):
    rank = 1

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str | None = None,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        implementation: int = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(data_format, activation, use_bias, bias_initializer, bias_regularizer, **kwargs)
        self.filters = _positive(filters, "filters")
        self.kernel_size = ntuple(kernel_size, self.rank, "kernel_size")
        self.strides = ntuple(strides, self.rank, "strides")
        if not isinstance(padding, str) or padding.lower() != "valid":
            raise ValueError(
                f'Invalid border mode for {type(self).__name__} (only "valid" is supported with implementation '
                f"1). Received: padding={padding!r}"
            )
        self.padding = "valid"
        if implementation != 1:
            raise ValueError(
                f"{type(self).__name__}: unison implements implementation=1 (tf_keras's default, a kernel of "
                f"shape (outputs, patch, filters)). Received: implementation={implementation!r}. Fix: leave "
                "implementation at 1; the outputs are the same."
            )
        self.implementation = 1
        self._kernel_args = (kernel_initializer, kernel_regularizer)

    def build(self, input_shape: torch.Size) -> None:
        check_spatial_rank(self, len(input_shape), self.rank, input_shape)
        self.in_channels = int(input_shape[-1])
        spatial = [int(n) for n in input_shape[1:-1]]
        self.output_size = tuple((n - k) // s + 1 for n, k, s in zip(spatial, self.kernel_size, self.strides))
        if min(self.output_size) <= 0:
            raise ValueError(
                f"One of the dimensions in the output is <= 0 due to downsampling in {self.name}. Consider "
                f"increasing the input size. Received input shape {tuple(input_shape)} which would produce "
                f"output shape with a zero or negative value in a dimension."
            )
        init, reg = self._kernel_args
        patch = math.prod(self.kernel_size) * self.in_channels
        self.kernel = self.add_weight(
            name="kernel",
            shape=(math.prod(self.output_size), patch, self.filters),
            initializer=init,
            regularizer=reg,
        )
        if self.use_bias:
            init, reg = self._bias_args
            self.bias = self.add_weight(
                name="bias", shape=(*self.output_size, self.filters), initializer=init, regularizer=reg
            )
        else:
            self.bias = None

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        check_spatial_rank(self, inputs.dim(), self.rank, inputs.shape)
        _channels(self, inputs, self.in_channels)
        x = inputs
        for axis, (k, s) in enumerate(zip(self.kernel_size, self.strides), start=1):
            x = x.unfold(axis, k, s)  # (N, *out, C, *k)
        first = self.data_format == "channels_first"
        if not first:  # tf_keras flattens a channels-last patch as (*k, C)
            x = x.movedim(self.rank + 1, -1)
        patches = x.reshape(x.shape[0], math.prod(self.output_size), -1)
        y = torch.einsum("npi,pif->npf", patches, self.kernel).reshape(x.shape[0], *self.output_size, self.filters)
        if self.bias is not None:
            bias: torch.Tensor = self.bias
            if first:  # tf_keras's bias_add reads the (*out, F) bias as (F, *out) for channels-first outputs
                bias = bias.reshape(self.filters, *self.output_size).movedim(0, -1)
            y = y + bias
        return self.activation(y)


class LocallyConnected1D(_LocallyConnected):
    """Unshared-weights 1-D convolution over ``(batch, steps, channels)`` (tf_keras's ``LocallyConnected1D``).

    ``padding`` is ``"valid"`` only (tf_keras's ``implementation=1``).
    """

    rank = 1


class LocallyConnected2D(_LocallyConnected):
    """Unshared-weights 2-D convolution over ``(batch, rows, cols, channels)`` (tf_keras's ``LocallyConnected2D``)."""

    rank = 2


class ThresholdedReLU(MaskedLayer):
    """``x`` where ``x > theta``, else 0 (tf_keras's ``ThresholdedReLU``; Keras 3 dropped it)."""

    def __init__(self, theta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if theta is None or isinstance(theta, bool) or not isinstance(theta, (int, float)):
            raise ValueError(
                f"Theta of a Thresholded ReLU layer cannot be None, expecting a float. Received: {theta!r}"
            )
        if theta < 0:
            raise ValueError(
                f"The theta value of a Thresholded ReLU layer should be >=0. Received: {theta}. Fix: e.g. theta=1.0."
            )
        self.theta = float(theta)

    def build(self, input_shape: Any) -> None:
        pass

    def call(self, inputs: torch.Tensor, mask: Any = None, training: bool = False) -> torch.Tensor:
        return inputs * (inputs > self.theta).to(inputs.dtype)
