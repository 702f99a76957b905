"""Keras 3's hue and saturation augmentation: ``RandomHue``, ``RandomSaturation``, and
``RandomColorJitter`` (brightness, contrast, saturation and hue in turn).

Both go through HSV (``tf.image.rgb_to_hsv``'s formulas) as Keras 3 does. ``RandomHue`` turns
the hue by ``±f / 2`` of a full turn (``f`` drawn from ``factor`` in ``[0, 1]``, the sign at
random) on values mapped from ``value_range`` to ``[0, 1]``; ``RandomSaturation`` multiplies the
saturation by ``f / (1 - f)`` for ``f`` drawn from ``factor`` (``0.5`` keeps it, ``1`` saturates
fully, ``0`` greys), clipped to ``value_range``.

Example:
    >>> import torch
    >>> red = torch.tensor([[[[200.0, 0.0, 0.0]]]])
    >>> RandomHue(factor=(1.0, 1.0))(red).flatten().round().tolist()  # half a turn: cyan
    [0.0, 200.0, 200.0]
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from unison.keras.layers.augmentation import RandomBrightness, RandomContrast, _Augmentation
from unison.keras.layers.augmentation_color import keras_factor, to_range, value_range_of
from unison.ops.image_color import hsv_to_rgb, rgb_to_hsv

_EPSILON = 1e-7  # Keras's backend.epsilon()


def _check_rgb(x: torch.Tensor, name: str) -> None:
    if x.shape[-1] != 3:
        raise ValueError(f"Layer '{name}' takes RGB images (3 channels, last axis). Received: shape {tuple(x.shape)}")


class RandomHue(_Augmentation):
    """Turn each image's hue by a random ``±f / 2`` turn, ``f`` drawn from ``factor`` in ``[0, 1]``."""

    _config_forms: ClassVar[dict[str, str]] = {"factor": "from_zero"}

    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: str | None = None, seed: int | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(seed, data_format=data_format, **kwargs)
        self.factor, self.value_range = keras_factor(factor, (0, 1)), value_range_of(value_range)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        _check_rgb(x, self.name)
        sign = torch.where(self._uniform(x, (0.0, 1.0)) > 0.5, -1.0, 1.0)
        shift = (sign * self._uniform(x, self.factor) * 0.5).reshape(-1, 1, 1).to(x.dtype)
        hsv = rgb_to_hsv(to_range(x, self.value_range, (0, 1)))
        hue = hsv[..., 0] + shift
        hue = torch.where(hue > 1.0, hue - 1.0, hue)
        hue = torch.where(hue < 0.0, hue + 1.0, hue)
        rgb = hsv_to_rgb(torch.stack([hue, hsv[..., 1], hsv[..., 2]], dim=-1)).clamp(0, 1)
        return to_range(rgb, (0, 1), self.value_range)


class RandomSaturation(_Augmentation):
    """Scale each image's saturation by ``f / (1 - f)``, ``f`` drawn from ``factor`` (a number ``f``: ``(-f, f)``)."""

    _config_forms: ClassVar[dict[str, str]] = {"factor": "symmetric", "value_range": "list"}

    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: str | None = None, seed: int | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(seed, data_format=data_format, **kwargs)
        self.factor, self.value_range = keras_factor(factor, (-1, 1)), value_range_of(value_range)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        _check_rgb(x, self.name)
        f = self._uniform(x, self.factor)
        scale = (f / (1 - f + _EPSILON)).reshape(-1, 1, 1).to(x.dtype)
        hsv = rgb_to_hsv(x)
        saturation = (hsv[..., 1] * scale).clamp(self.value_range[0], self.value_range[1])
        return hsv_to_rgb(torch.stack([hsv[..., 0], saturation, hsv[..., 2]], dim=-1))


class RandomColorJitter(_Augmentation):
    """``RandomBrightness``, ``RandomContrast``, ``RandomSaturation`` and ``RandomHue`` in that order,
    each only when its factor is given (Keras 3's ``RandomColorJitter``); identity at inference."""

    def __init__(
        self,
        value_range: Any = (0, 255),
        brightness_factor: Any = None,
        contrast_factor: Any = None,
        saturation_factor: Any = None,
        hue_factor: Any = None,
        seed: int | None = None,
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(seed, data_format=data_format, **kwargs)
        self.value_range = value_range
        self.brightness_factor, self.contrast_factor = brightness_factor, contrast_factor
        self.saturation_factor, self.hue_factor = saturation_factor, hue_factor
        steps: list[_Augmentation] = []
        if brightness_factor is not None:
            steps.append(RandomBrightness(brightness_factor, value_range=value_range, seed=seed))
        if contrast_factor is not None:
            steps.append(RandomContrast(contrast_factor, value_range=value_range, seed=seed))
        if saturation_factor is not None:
            steps.append(RandomSaturation(saturation_factor, value_range=value_range, seed=seed))
        if hue_factor is not None:
            steps.append(RandomHue(hue_factor, value_range=value_range, seed=seed))
        self._steps = torch.nn.ModuleList(steps)  # registered as submodules
        self._order = steps

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        for step in self._order:
            x = step._augment(x)
        return x


__all__ = ["RandomColorJitter", "RandomHue", "RandomSaturation"]
