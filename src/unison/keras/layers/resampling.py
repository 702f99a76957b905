"""Resampling, padding and pooling layers, channels-last like Keras: ``UpSampling2D``, ``ZeroPadding2D``,
``Cropping2D``, ``MaxPooling1D``/``MaxPool1D``, ``AveragePooling1D``/``AvgPool1D``,
``GlobalMaxPooling2D``/``GlobalMaxPool2D``. ``"same"`` pooling pads as TF does (the odd step after).

Example:
    >>> import torch
    >>> UpSampling2D(size=2)(torch.zeros(1, 3, 4, 2)).shape
    torch.Size([1, 6, 8, 2])
    >>> MaxPooling1D(2, padding="same")(torch.tensor([[[1.0], [5.0], [2.0]]])).flatten().tolist()
    [5.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.base import Layer, pair
from unison.keras.layers.conv import _check_padding, _same_pads, _to_nchw
from unison.keras.layers.conv_base import check_rank, single_int
from unison.keras.layers.data_format import use_data_format
from unison.keras.layers.reshaping1d import repeat_nearest


class UpSampling2D(Layer):
    """Repeat rows and columns ``size`` times (``"nearest"``), or resize with ``"bilinear"``/``"bicubic"``/``"area"``.

    ``"bilinear"`` is ``tf.image.resize``'s (half-pixel centres), what Keras uses.
    """

    def __init__(
        self, size: Any = (2, 2), data_format: str | None = None, interpolation: str = "nearest", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.size = pair(size, "size")
        if interpolation not in ("nearest", "bilinear", "bicubic", "area"):
            raise ValueError(
                "interpolation must be one of 'nearest', 'bilinear', 'bicubic', 'area'. Received: "
                f"interpolation={interpolation!r}"
            )
        self.interpolation = interpolation

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _to_nchw(inputs, self)
        sh, sw = self.size
        if self.interpolation == "nearest":
            return repeat_nearest(inputs, (sh, sw))
        from unison.ops.image import resize

        return resize(inputs, [inputs.shape[1] * sh, inputs.shape[2] * sw], method=self.interpolation)


def _pairs(value: Any, what: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """``1``, ``(1, 2)`` or ``((top, bottom), (left, right))``."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return (value, value), (value, value)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        if all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
            return (value[0], value[0]), (value[1], value[1])
        if all(isinstance(v, (tuple, list)) and len(v) == 2 for v in value):
            flat = [v for part in value for v in part]
            if all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in flat):
                return (flat[0], flat[1]), (flat[2], flat[3])
    raise ValueError(
        f"`{what}` should be a non-negative int, a tuple of 2 ints, or a tuple of 2 tuples of 2 ints "
        f"((top, bottom), (left, right)). Received: {what}={value!r}"
    )


class ZeroPadding2D(Layer):
    """Pad rows and columns with zeros: ``padding`` is ``n``, ``(rows, cols)`` or ``((top, bottom), (left, right))``."""

    def __init__(self, padding: Any = (1, 1), data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.padding = _pairs(padding, "padding")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _to_nchw(inputs, self)
        (top, bottom), (left, right) = self.padding
        return F.pad(inputs, (0, 0, left, right, top, bottom))


class Cropping2D(Layer):
    """Crop rows and columns: ``cropping`` is ``n``, ``(rows, cols)`` or ``((top, bottom), (left, right))``."""

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.cropping = _pairs(cropping, "cropping")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _to_nchw(inputs, self)
        (top, bottom), (left, right) = self.cropping
        height, width = inputs.shape[1], inputs.shape[2]
        if top + bottom >= height or left + right >= width:
            raise ValueError(
                f"Layer '{self.name}': cropping={self.cropping} leaves nothing of inputs of shape "
                f"{tuple(inputs.shape)}. Crop less than the height and the width."
            )
        return inputs[:, top : height - bottom, left : width - right, :]


class _Pool1D(Layer):
    def __init__(
        self,
        pool_size: Any = 2,
        strides: Any = None,
        padding: str = "valid",
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.pool_size = single_int(pool_size, "pool_size")
        self.strides = single_int(strides, "strides") if strides is not None else self.pool_size
        self.padding = _check_padding(padding)

    def _planar(self, inputs: torch.Tensor) -> torch.Tensor:
        check_rank(inputs, 3, self, "batch, steps, channels")
        return inputs.permute(0, 2, 1)


class MaxPooling1D(_Pool1D):
    """Max over windows of ``pool_size`` steps of ``(batch, steps, channels)`` inputs."""

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = self._planar(inputs)
        if self.padding == "same":
            x = F.pad(x, _same_pads(x.shape[-1], self.pool_size, self.strides), value=float("-inf"))
        return F.max_pool1d(x, self.pool_size, self.strides).permute(0, 2, 1)


class AveragePooling1D(_Pool1D):
    """Mean over windows of ``pool_size`` steps; with ``"same"`` padding the padded steps are not counted."""

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        x = self._planar(inputs)
        if self.padding == "same":
            pads = _same_pads(x.shape[-1], self.pool_size, self.strides)
            total = F.avg_pool1d(F.pad(x, pads), self.pool_size, self.strides)
            count = F.avg_pool1d(F.pad(torch.ones_like(x[:1, :1]), pads), self.pool_size, self.strides)
            return (total / count).permute(0, 2, 1)
        return F.avg_pool1d(x, self.pool_size, self.strides).permute(0, 2, 1)


class GlobalMaxPooling2D(Layer):
    """Maximum over height and width: ``(N, H, W, C) -> (N, C)`` (``keepdims``: ``(N, 1, 1, C)``)."""

    def __init__(self, data_format: str | None = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.keepdims = bool(keepdims)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _to_nchw(inputs, self)
        return inputs.amax(dim=(1, 2), keepdim=self.keepdims)


MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D
GlobalMaxPool2D = GlobalMaxPooling2D

__all__ = [
    "AveragePooling1D",
    "AvgPool1D",
    "Cropping2D",
    "GlobalMaxPool2D",
    "GlobalMaxPooling2D",
    "MaxPool1D",
    "MaxPooling1D",
    "UpSampling2D",
    "ZeroPadding2D",
]
