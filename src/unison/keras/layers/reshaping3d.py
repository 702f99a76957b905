"""Keras's 3-D reshaping layers on ``(batch, depth, height, width, channels)``: ``ZeroPadding3D``,
``Cropping3D``, ``UpSampling3D``, and ``SpatialDropout3D``.

Example:
    >>> import torch
    >>> ZeroPadding3D(1)(torch.zeros(1, 2, 2, 2, 3)).shape
    torch.Size([1, 4, 4, 4, 3])
    >>> UpSampling3D((1, 2, 3))(torch.zeros(1, 2, 2, 2, 3)).shape
    torch.Size([1, 2, 4, 6, 3])
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.base import Layer
from unison.keras.layers.conv_nd import check_spatial_rank, ntuple
from unison.keras.layers.data_format import use_data_format
from unison.keras.layers.misc import SpatialDropout1D
from unison.keras.layers.reshaping1d import repeat_nearest

__all__ = ["Cropping3D", "SpatialDropout3D", "UpSampling3D", "ZeroPadding3D"]


def _three_pairs(value: Any, what: str) -> tuple[tuple[int, int], ...]:
    """``n``, ``(d, h, w)`` or ``((d0, d1), (h0, h1), (w0, w1))``, non-negative."""

    def _int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if _int(value):
        return ((value, value),) * 3
    if isinstance(value, (tuple, list)) and len(value) == 3:
        if all(_int(v) for v in value):
            return tuple((int(v), int(v)) for v in value)
        if all(isinstance(v, (tuple, list)) and len(v) == 2 and all(_int(e) for e in v) for v in value):
            return tuple((int(v[0]), int(v[1])) for v in value)
    raise ValueError(
        f"`{what}` should be a non-negative int, a tuple of 3 non-negative ints, or a tuple of 3 tuples of 2 "
        f"non-negative ints ((left_dim1, right_dim1), (left_dim2, right_dim2), (left_dim3, right_dim3)). "
        f"Received: {what}={value!r}"
    )


class ZeroPadding3D(Layer):
    """Pad the three spatial axes with zeros: ``padding`` is ``n``, ``(d, h, w)`` or three ``(start, end)`` pairs."""

    def __init__(self, padding: Any = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.padding = _three_pairs(padding, "padding")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        check_spatial_rank(self, inputs.dim(), 3, inputs.shape)
        (d0, d1), (h0, h1), (w0, w1) = self.padding
        return F.pad(inputs, (0, 0, w0, w1, h0, h1, d0, d1))


class Cropping3D(Layer):
    """Crop the three spatial axes: ``cropping`` is ``n``, ``(d, h, w)`` or three ``(start, end)`` pairs."""

    def __init__(self, cropping: Any = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.cropping = _three_pairs(cropping, "cropping")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        check_spatial_rank(self, inputs.dim(), 3, inputs.shape)
        sizes = inputs.shape[1:4]
        if any(a + b >= n for (a, b), n in zip(self.cropping, sizes)):
            raise ValueError(
                f"Layer '{self.name}': cropping={self.cropping} leaves nothing of inputs of shape "
                f"{tuple(inputs.shape)}. Crop less than each spatial size {tuple(sizes)}."
            )
        (d0, d1), (h0, h1), (w0, w1) = self.cropping
        return inputs[:, d0 : sizes[0] - d1, h0 : sizes[1] - h1, w0 : sizes[2] - w1, :]


class UpSampling3D(Layer):
    """Repeat each cell ``size[i]`` times along spatial axis ``i`` (nearest neighbour)."""

    def __init__(self, size: Any = (2, 2, 2), data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.size = ntuple(size, 3, "size")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        check_spatial_rank(self, inputs.dim(), 3, inputs.shape)
        return repeat_nearest(inputs, self.size)


class SpatialDropout3D(SpatialDropout1D):
    """Drop whole channels of ``(batch, depth, height, width, channels)`` inputs when training.

    With ``data_format="channels_first"`` the inputs are ``(batch, channels, depth, height, width)``.
    """

    _rank = 5

    def __init__(self, rate: float, data_format: str | None = None, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(rate, seed, **kwargs)
        # a masked layer: its forward does not move channels, so the noise shape follows the format
        self._first = use_data_format(self, data_format) == "channels_first"
        self.__dict__["_channels_first"] = False

    def _noise(self, inputs: torch.Tensor) -> torch.Tensor:
        if not self._first or inputs.dim() != 5:
            return super()._noise(inputs)
        if self.rate == 0:
            return inputs
        shape = (inputs.shape[0], inputs.shape[1], 1, 1, 1)
        return inputs * self.random.keep_mask(shape, self.rate, inputs)
