"""``data_format="channels_first"`` for the convolution, pooling, resampling and reshaping layers.

unison's layers compute on channels-last tensors (Keras's default layout, and the layout their
kernels are written for). A layer built with ``data_format="channels_first"`` (or with
``data_format=None`` while ``keras.backend.image_data_format()`` is ``"channels_first"``, as
Keras reads it) takes ``(batch, channels, *spatial)`` inputs: its call moves the channel axis
last, computes, and moves the channel axis of a spatial output (rank >= 3) back to axis 1. An
output without spatial axes (global pooling, ``Flatten``) is returned as it is: ``Flatten``
therefore flattens in channels-last order, which is what Keras's ``Flatten(data_format=
"channels_first")`` does too (it exists to keep a Dense layer's weights valid across formats).
Kernels keep Keras's layout in both formats, so weights move between formats unchanged.

Example:
    >>> import torch
    >>> from unison.keras import layers
    >>> layers.Conv2D(4, 3, data_format="channels_first")(torch.zeros(2, 3, 8, 8)).shape
    torch.Size([2, 4, 6, 6])
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["from_channels_last", "to_channels_last", "use_data_format"]

_FORMATS = ("channels_last", "channels_first")


def use_data_format(layer: Any, data_format: str | None) -> str:
    """Validate ``data_format`` (``None``: the backend's ``image_data_format()``), remember it on
    ``layer`` and return it."""
    if data_format is None:
        from unison.keras.backend.config import image_data_format

        data_format = image_data_format()
    value = str(data_format).lower() if isinstance(data_format, str) else data_format
    if value not in _FORMATS:
        raise ValueError(
            f"The `data_format` argument must be one of {list(_FORMATS)}. Received: data_format={data_format!r}"
        )
    layer.data_format = value
    layer.__dict__["_channels_first"] = value == "channels_first"
    return str(value)


def to_channels_last(x: Any) -> Any:
    """``(batch, channels, *spatial)`` as ``(batch, *spatial, channels)`` (a view)."""
    return x.movedim(1, -1) if isinstance(x, torch.Tensor) and x.dim() >= 3 else x


def from_channels_last(y: Any) -> Any:
    """A spatial channels-last output back to channels-first; other outputs unchanged."""
    return y.movedim(-1, 1) if isinstance(y, torch.Tensor) and y.dim() >= 3 else y
