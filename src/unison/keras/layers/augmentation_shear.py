"""Keras 3's ``RandomShear``: shear each image along x and y by factors drawn from ``x_factor`` and
``y_factor`` (a number ``f``: ``[-f, f]``; values in ``[0, 1]``), one random sign for both, as Keras 3.

The output pixel ``(x, y)`` reads the input at ``(x + sx y, sy x + y)``, sampled with
``interpolation`` and ``fill_mode`` as the other geometric layers (:mod:`.augmentation`).

Example:
    >>> import torch
    >>> x = torch.arange(9.0).reshape(1, 3, 3, 1)
    >>> torch.equal(RandomShear(x_factor=0.0, y_factor=0.0)(x), x)
    True
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from unison.keras.layers.augmentation import _Geometric


def _shear_factor(factor: Any, what: str) -> tuple[float, float]:
    message = (
        f"The `{what}` argument should be a number (or a list of two numbers) in the range [0, 1]. "
        f"Received: {what}={factor}"
    )
    values = list(factor) if isinstance(factor, (tuple, list)) else None
    if values is None:
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 <= factor <= 1:
            raise ValueError(message)
        return -abs(float(factor)), abs(float(factor))
    if len(values) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise ValueError(message)
    # (-f, f) is how get_config saves a number f (as Keras's does): it loads back as f
    if not (all(0 <= v <= 1 for v in values) or (0 <= values[1] <= 1 and values[0] == -values[1])):
        raise ValueError(message)
    low, high = sorted(float(v) for v in values)
    return low, high


class RandomShear(_Geometric):
    """Shear images by random factors (Keras 3's ``RandomShear``); identity at inference."""

    _config_forms: ClassVar[dict[str, str]] = {"x_factor": "symmetric", "y_factor": "symmetric"}

    def __init__(
        self,
        x_factor: Any = 0.0,
        y_factor: Any = 0.0,
        interpolation: str = "bilinear",
        fill_mode: str = "reflect",
        fill_value: float = 0.0,
        data_format: str | None = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format=data_format, **kwargs)
        self.x_factor = _shear_factor(x_factor, "x_factor")
        self.y_factor = _shear_factor(y_factor, "y_factor")

    def _matrices(self, x: torch.Tensor) -> torch.Tensor:
        sign = torch.where(self._uniform(x, (0.0, 1.0)) > 0.5, -1.0, 1.0)
        shear_y = self._uniform(x, self.y_factor) * sign
        shear_x = self._uniform(x, self.x_factor) * sign
        ones, zeros = torch.ones_like(shear_x), torch.zeros_like(shear_x)
        return torch.stack([ones, shear_x, zeros, shear_y, ones, zeros], dim=1)


__all__ = ["RandomShear"]
