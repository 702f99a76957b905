"""Private layers some applications need that ``keras.layers`` lacks (not public API).

``GroupedConv2D`` is Keras's ``Conv2D(groups=...)`` with ``padding="same"`` (ConvNeXt's 7x7
depthwise convolution, whose kernel Keras stores as ``(7, 7, 1, channels)``, unlike
``DepthwiseConv2D``'s ``(7, 7, channels, 1)``; RegNet's grouped 3x3 convolutions); ``LayerScale`` multiplies by a learned
per-channel vector; ``StochasticDepth`` drops a residual branch per example while training.

Example:
    >>> import torch
    >>> scale = LayerScale(0.5, 3)
    >>> scale(torch.ones(1, 3)).tolist()
    [[0.5, 0.5, 0.5]]
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras import initializers
from unison.keras.layers.base import Layer


class GroupedConv2D(Layer):
    """A ``"same"``-padded ``Conv2D`` with ``groups`` channel groups (Keras's kernel layout)."""

    keras_class_name = "Conv2D"  # its name in Keras 3's weights files (layers/conv2d...)

    def __init__(
        self, filters: int, kernel_size: int, groups: int, strides: int = 1, use_bias: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.filters, self.kernel_size, self.groups = int(filters), int(kernel_size), int(groups)
        self.strides, self.use_bias = int(strides), bool(use_bias)

    def build(self, input_shape: torch.Size) -> None:
        channels = int(input_shape[-1])
        if channels % self.groups or self.filters % self.groups:
            raise ValueError(
                f"Layer '{self.name}': input channels ({channels}) and filters ({self.filters}) must both be "
                f"divisible by groups ({self.groups})."
            )
        size = self.kernel_size
        self.kernel = self.add_weight(
            name="kernel", shape=(size, size, channels // self.groups, self.filters), initializer="glorot_uniform"
        )
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer="zeros") if self.use_bias else None

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        weight = self.kernel.permute(3, 2, 0, 1)  # (filters, in / groups, kh, kw): torch's layout
        x = inputs.permute(0, 3, 1, 2)
        pads = []
        for size in (x.shape[3], x.shape[2]):  # F.pad takes the last axis first
            # TF's "same": ceil(size / stride) outputs, the extra padding after (not before)
            total = max((-(-size // self.strides) - 1) * self.strides + self.kernel_size - size, 0)
            pads += [total // 2, total - total // 2]
        y = F.conv2d(F.pad(x, pads), weight, self.bias, stride=self.strides, groups=self.groups)
        return y.permute(0, 2, 3, 1)

    def get_config(self) -> dict[str, Any]:
        config = {"filters": self.filters, "kernel_size": self.kernel_size, "groups": self.groups,
                  "strides": self.strides, "use_bias": self.use_bias}  # fmt: skip
        return {**super().get_config(), **config}


class LayerScale(Layer):
    """``inputs * gamma``: a learned scale per channel (last axis), started at ``init_values``."""

    def __init__(self, init_values: float, projection_dim: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.init_values, self.projection_dim = float(init_values), int(projection_dim)

    def build(self, input_shape: torch.Size) -> None:
        self.gamma = self.add_weight(
            name="gamma", shape=(self.projection_dim,), initializer=initializers.Constant(self.init_values)
        )

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return inputs * self.gamma

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "init_values": self.init_values, "projection_dim": self.projection_dim}


class StochasticDepth(Layer):
    """While training, zero the whole input of an example with probability ``drop_path_rate``
    (and scale the kept ones by ``1 / (1 - rate)``); the identity at inference."""

    def __init__(self, drop_path_rate: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0 <= drop_path_rate < 1:
            raise ValueError(f"drop_path_rate must be in [0, 1). Received: drop_path_rate={drop_path_rate!r}")
        self.drop_path_rate = float(drop_path_rate)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        if not self.training or self.drop_path_rate == 0:
            return inputs
        keep = 1.0 - self.drop_path_rate
        shape = (inputs.shape[0],) + (1,) * (inputs.dim() - 1)
        mask = torch.empty(shape, dtype=inputs.dtype, device=inputs.device).bernoulli_(keep)
        return inputs * mask / keep

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "drop_path_rate": self.drop_path_rate}


class FixedNormalization(Layer):
    """``(x - mean) / max(sqrt(variance), 1e-7)`` on the last axis with constant statistics.

    Keras's ``Normalization(mean=..., variance=...)`` as its applications use it: the statistics
    are constants, not weights (``keras.layers.Normalization`` in unison keeps them as weights).
    """

    def __init__(self, mean: Any, variance: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mean_values = [float(v) for v in mean]
        self.variance_values = [float(v) for v in variance]
        self.register_buffer("mean", torch.tensor(self.mean_values), persistent=False)
        self.register_buffer("std", torch.tensor(self.variance_values).sqrt().clamp_min(1e-7), persistent=False)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        mean, std = self._buffers["mean"], self._buffers["std"]
        assert mean is not None and std is not None  # registered in __init__
        return (inputs - mean.to(inputs.dtype)) / std.to(inputs.dtype)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "mean": self.mean_values, "variance": self.variance_values}
