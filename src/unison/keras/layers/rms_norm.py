"""``RMSNormalization`` (Keras 3): ``x * rsqrt(mean(x**2) + epsilon) * scale`` over ``axis``.

Trailing axes run in ``torch.nn.functional.rms_norm`` (Keras's torch backend does the same);
half-precision inputs are normalised in float32 and cast back, as Keras does.

Example:
    >>> import torch
    >>> layer = RMSNormalization()
    >>> y = layer(torch.tensor([[3.0, 4.0]]))
    >>> [round(v, 4) for v in y[0].tolist()]
    [0.8485, 1.1314]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.dtype_policies import DTypePolicyMixin
from unison.keras.layers.base import Layer


class RMSNormalization(DTypePolicyMixin, Layer):
    """Root-mean-square normalisation with a learned ``scale`` (ones at first).

    Args:
        axis: the axis or axes to normalise over (default -1); ``scale`` has their sizes.
        epsilon: added to the mean square (default 1e-6).
    """

    def __init__(self, axis: int | Sequence[int] = -1, epsilon: float = 1e-6, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = sorted(axis) if isinstance(axis, (list, tuple)) else axis
        self.epsilon = float(epsilon)

    def _axes(self, rank: int) -> list[int]:
        axes: list[Any] = list(self.axis) if isinstance(self.axis, list) else [self.axis]
        for axis in axes:
            if not isinstance(axis, int) or not -rank <= axis < rank:
                raise ValueError(
                    f"Axis {axis} is out of bounds for an input of rank {rank} in layer '{self.name}'. "
                    f"Received: axis={self.axis}"
                )
        return axes

    def build(self, input_shape: Any) -> None:
        axes = self._axes(len(input_shape))
        shape = tuple(int(input_shape[a]) for a in axes)
        self.scale = self.add_weight(name="scale", shape=shape, initializer="ones")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        rank = inputs.dim()
        axes = sorted(a % rank for a in self._axes(rank))
        x = inputs if inputs.dtype in (torch.float32, torch.float64) else inputs.float()
        scale = self.scale.to(x.dtype)
        if axes == list(range(rank - len(axes), rank)):  # trailing axes: the fused kernel
            y = F.rms_norm(x, tuple(x.shape[rank - len(axes) :]), scale, self.epsilon)
        else:
            shape = [x.shape[a] if a in axes else 1 for a in range(rank)]
            ms = x.square().mean(dim=axes, keepdim=True)
            y = x * torch.rsqrt(ms + self.epsilon) * scale.reshape(shape)
        return y.to(inputs.dtype) if inputs.is_floating_point() else y

    def compute_output_shape(self, input_shape: Any) -> Any:
        self._axes(len(input_shape))
        return tuple(input_shape)


__all__ = ["RMSNormalization"]
