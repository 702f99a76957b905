"""Keras 3's 1-D reshaping layers on ``(batch, steps, features)``: ``ZeroPadding1D``, ``Cropping1D``, ``UpSampling1D``.

Example:
    >>> import torch
    >>> x = torch.arange(4.0).reshape(1, 2, 2)
    >>> ZeroPadding1D(1)(x)[0].tolist()
    [[0.0, 0.0], [0.0, 1.0], [2.0, 3.0], [0.0, 0.0]]
    >>> UpSampling1D(2)(x)[0, :, 0].tolist()
    [0.0, 0.0, 2.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.base import Layer
from unison.keras.layers.data_format import use_data_format


def _two_ints(value: Any, what: str) -> tuple[int, int]:
    """``n`` -> ``(n, n)``; ``(start, end)`` as given (non-negative ints)."""
    pair = (value, value) if isinstance(value, int) and not isinstance(value, bool) else value
    if (
        isinstance(pair, (tuple, list))
        and len(pair) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in pair)
    ):
        return int(pair[0]), int(pair[1])
    raise ValueError(
        f"`{what}` must be a non-negative int or a tuple of 2 non-negative ints (start, end). Received: {what}={value!r}"
    )


def _check_rank3(layer: Layer, inputs: torch.Tensor) -> None:
    if inputs.dim() != 3:
        raise ValueError(
            f"Layer '{layer.name}' expects inputs of shape (batch, steps, features). "
            f"Received: input shape {tuple(inputs.shape)}"
        )


class ZeroPadding1D(Layer):
    """Add ``padding`` zero steps at the start and end of the steps axis (``n`` or ``(start, end)``)."""

    def __init__(self, padding: Any = 1, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        use_data_format(self, data_format)
        self.padding = _two_ints(padding, "padding")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _check_rank3(self, inputs)
        return F.pad(inputs, (0, 0, *self.padding))


class Cropping1D(Layer):
    """Remove ``cropping`` steps from the start and end of the steps axis (``n`` or ``(start, end)``)."""

    def __init__(self, cropping: Any = (1, 1), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cropping = _two_ints(cropping, "cropping")

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _check_rank3(self, inputs)
        start, end = self.cropping
        if start + end >= inputs.shape[1]:
            raise ValueError(
                f"Layer '{self.name}': cropping={self.cropping} leaves nothing of inputs of shape "
                f"{tuple(inputs.shape)}. Crop fewer than {inputs.shape[1]} steps in all."
            )
        return inputs[:, start : inputs.shape[1] - end]


def repeat_nearest(inputs: torch.Tensor, sizes: tuple[int, ...]) -> torch.Tensor:
    """Repeat each cell of channels-last ``inputs`` ``sizes[i]`` times along spatial axis ``i``.

    Float 2-D and 3-D inputs go through ``F.interpolate``'s channels-last nearest kernel, whose
    backward is one pass; chained ``repeat_interleave`` (or a broadcast view) costs several copies
    or a strided sum, 2-8x slower on CPU. One axis stays a ``repeat_interleave``: torch has no
    channels-last 1-D kernel, and the transposed copies would cost more than they save. ``"nearest-exact"`` maps output cell ``j`` to ``floor((j + 0.5) / s)``, which is
    ``j // s`` without float rounding at any integer factor ``s``.

    Example:
        >>> repeat_nearest(torch.arange(2.0).reshape(1, 1, 2, 1), (1, 2)).flatten().tolist()
        [0.0, 0.0, 1.0, 1.0]
    """
    if len(sizes) == 1 or not inputs.is_floating_point() or inputs.numel() == 0:
        for axis, size in enumerate(sizes, start=1):
            inputs = inputs.repeat_interleave(size, dim=axis)
        return inputs
    out = [n * s for n, s in zip(inputs.shape[1:-1], sizes, strict=True)]
    return F.interpolate(inputs.movedim(-1, 1), size=out, mode="nearest-exact").movedim(1, -1)


class UpSampling1D(Layer):
    """Repeat each step ``size`` times along the steps axis."""

    def __init__(self, size: int = 2, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"`size` must be a positive int. Received: size={size!r}")
        self.size = size

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        _check_rank3(self, inputs)
        return repeat_nearest(inputs, (self.size,))


__all__ = ["Cropping1D", "UpSampling1D", "ZeroPadding1D"]
