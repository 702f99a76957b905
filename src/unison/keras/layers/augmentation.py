"""Image augmentation layers (Keras 3): ``RandomFlip``, ``RandomRotation``, ``RandomZoom``,
``RandomTranslation``, ``RandomContrast``, ``RandomBrightness``, ``RandomCrop``, ``RandomHeight``,
``RandomWidth`` (``Resizing`` and
``CenterCrop``: :mod:`.image_resizing`).

They take one image ``(height, width, channels)`` (what a ``tf.data`` ``map`` sees) or a batch
``(batch, height, width, channels)``, of any numeric dtype, and return float images (float32
unless the input is another float type). Each image of a batch gets its own random draw.

As in Keras, the random layers act when training and are the identity at inference: ``fit``
calls them with ``training=True``, ``predict``/``evaluate`` with ``False``, and a direct call
without ``training`` augments (Keras's default, so ``dataset.map(lambda x, y: (augment(x), y))``
works). ``RandomCrop`` at inference (and on images smaller than the crop) resizes instead: the
largest central window of the target aspect ratio, resized bilinearly. Draws come from the
generator ``tf.random.set_seed`` seeds, or from the layer's own when given ``seed=``.

Geometric layers map each output pixel to a source point with Keras's transforms, then sample
it (``interpolation``: ``"bilinear"`` or ``"nearest"``); points outside the image follow
``fill_mode``: ``"reflect"`` (``d c b a | a b c d | d c b a``), ``"wrap"`` (``a b c d | a b c d``),
``"nearest"`` (``a a a a | a b c d | d d d d``) or ``"constant"`` (``fill_value``).

Example:
    >>> import torch
    >>> image = torch.arange(4.0).reshape(2, 2, 1)
    >>> RandomFlip("horizontal")(image, training=False).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> RandomRotation((0.5, 0.5), interpolation="nearest")(image).flatten().tolist()  # a half turn
    [3.0, 2.0, 1.0, 0.0]
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch

from unison.keras.layers.base import Layer
from unison.keras.layers.image_resizing import check_choice, image_batch, target_size
from unison.keras.layers.misc import RandomSource, check_channels_last
from unison.keras.utils.image_utils import crop_to_aspect, resize_images

_FILL_MODES = ("reflect", "wrap", "constant", "nearest")
_INTERPOLATIONS = ("bilinear", "nearest")


def _bounds(factor: Any, what: str, symmetric: bool = True) -> tuple[float, float]:
    """``f`` -> ``(-f, f)`` (or ``(f, f)`` when not symmetric); ``(lo, hi)`` as given."""
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        return (-abs(float(factor)), abs(float(factor))) if symmetric else (float(factor), float(factor))
    if isinstance(factor, (tuple, list)) and len(factor) == 2 and all(isinstance(f, (int, float)) for f in factor):
        lower, upper = float(factor[0]), float(factor[1])
        if lower > upper:
            raise ValueError(f"`{what}` must be (lower, upper) with lower <= upper. Received: {what}={factor!r}")
        return lower, upper
    raise ValueError(f"`{what}` must be a float or a tuple of 2 floats (lower, upper). Received: {what}={factor!r}")


def _map_coordinates(coord: torch.Tensor, size: int, mode: str) -> torch.Tensor:
    """Source coordinates outside ``[0, size - 1]`` folded back in as ``mode`` says (constant: unchanged)."""
    if mode == "constant":
        return coord
    if size <= 1:
        return torch.zeros_like(coord)
    if mode == "reflect":
        period = 2.0 * size
        coord = torch.remainder(coord, period)
        coord = torch.where(coord >= size, period - 1.0 - coord, coord)
    elif mode == "wrap":
        coord = torch.remainder(coord, float(size))
    return coord.clamp(0.0, size - 1.0)


def affine_transform(
    images: torch.Tensor, matrices: torch.Tensor, interpolation: str, fill_mode: str, fill_value: float
) -> torch.Tensor:
    """Sample each image at ``(x', y') = (a0 x + a1 y + a2, b0 x + b1 y + b2)`` per output pixel.

    ``matrices`` is ``(N, 6)``: ``[a0, a1, a2, b0, b1, b2]`` per image, in pixel coordinates.
    """
    n, height, width, channels = images.shape
    m = matrices.to(device=images.device, dtype=torch.float32)
    ys, xs = torch.meshgrid(
        torch.arange(height, device=images.device, dtype=torch.float32),
        torch.arange(width, device=images.device, dtype=torch.float32),
        indexing="ij",
    )
    src_x = m[:, 0, None, None] * xs + m[:, 1, None, None] * ys + m[:, 2, None, None]
    src_y = m[:, 3, None, None] * xs + m[:, 4, None, None] * ys + m[:, 5, None, None]
    src_x = _map_coordinates(src_x, width, fill_mode)
    src_y = _map_coordinates(src_y, height, fill_mode)
    flat = images.reshape(n, height * width, channels)

    def read(iy: torch.Tensor, ix: torch.Tensor) -> torch.Tensor:
        inside = (iy >= 0) & (iy <= height - 1) & (ix >= 0) & (ix <= width - 1)
        index = (iy.clamp(0, height - 1) * width + ix.clamp(0, width - 1)).long().reshape(n, -1, 1)
        values = flat.gather(1, index.expand(-1, -1, channels)).reshape(n, height, width, channels)
        fill = torch.full_like(values, fill_value)
        return torch.where(inside.unsqueeze(-1), values, fill)

    if interpolation == "nearest":
        return read(torch.floor(src_y + 0.5), torch.floor(src_x + 0.5))
    y0, x0 = torch.floor(src_y), torch.floor(src_x)
    wy, wx = (src_y - y0).unsqueeze(-1), (src_x - x0).unsqueeze(-1)
    top = read(y0, x0) * (1 - wx) + read(y0, x0 + 1) * wx
    bottom = read(y0 + 1, x0) * (1 - wx) + read(y0 + 1, x0 + 1) * wx
    return (top * (1 - wy) + bottom * wy).to(images.dtype)


class _Augmentation(Layer):
    """A random layer: ``_augment(batch)`` when training, identity otherwise."""

    def __init__(self, seed: int | None = None, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_channels_last(data_format)
        self.seed = seed
        self.random = RandomSource(seed)

    def call(self, inputs: Any, training: bool = True) -> torch.Tensor:
        x, batched = image_batch(inputs, self)
        if training:
            x = self._augment(x)
        return x if batched else x[0]

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _uniform(self, x: torch.Tensor, bounds: tuple[float, float]) -> torch.Tensor:
        return self.random.uniform((x.shape[0],), bounds[0], bounds[1], x.device)


class RandomFlip(_Augmentation):
    """Flip each image left-right and/or up-down with probability 1/2 each.

    Args:
        mode: ``"horizontal"``, ``"vertical"`` or ``"horizontal_and_vertical"`` (default).
    """

    _MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode: str = "horizontal_and_vertical", seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        if mode not in self._MODES:
            raise ValueError(
                f"RandomFlip layer {self.name} received an unknown mode={mode!r}. Expected one of {list(self._MODES)}."
            )
        self.mode = mode

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        for kind, axis in (("horizontal", 2), ("vertical", 1)):
            if kind in self.mode:
                flip = (self._uniform(x, (0.0, 1.0)) < 0.5).reshape(-1, 1, 1, 1)
                x = torch.where(flip, x.flip(axis), x)
        return x


class _Geometric(_Augmentation):
    def __init__(
        self,
        fill_mode: str = "reflect",
        interpolation: str = "bilinear",
        seed: int | None = None,
        fill_value: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(seed, **kwargs)
        self.fill_mode = check_choice(fill_mode, _FILL_MODES, "fill_mode")
        self.interpolation = check_choice(interpolation, _INTERPOLATIONS, "interpolation")
        self.fill_value = float(fill_value)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        return affine_transform(x, self._matrices(x), self.interpolation, self.fill_mode, self.fill_value)

    def _matrices(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class RandomRotation(_Geometric):
    """Rotate each image by a random angle of ``factor * 2 pi`` radians (positive: counter-clockwise).

    ``factor=0.1`` draws from ``[-0.1, 0.1]`` turns; ``factor=(-0.2, 0.3)`` from that range.
    """

    _config_forms: ClassVar[dict[str, str]] = {"factor": "symmetric"}

    def __init__(
        self,
        factor: Any,
        fill_mode: str = "reflect",
        interpolation: str = "bilinear",
        seed: int | None = None,
        fill_value: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.factor = factor
        self._bounds = _bounds(factor, "factor")

    def _matrices(self, x: torch.Tensor) -> torch.Tensor:
        height, width = x.shape[1], x.shape[2]
        angle = self._uniform(x, self._bounds) * 2.0 * math.pi
        cos, sin = torch.cos(angle), torch.sin(angle)
        x_offset = ((width - 1) - (cos * (width - 1) - sin * (height - 1))) / 2.0
        y_offset = ((height - 1) - (sin * (width - 1) + cos * (height - 1))) / 2.0
        return torch.stack([cos, -sin, x_offset, sin, cos, y_offset], dim=1)


def _check_at_least(bounds: tuple[float, float], least: float, what: str, factor: Any) -> None:
    if bounds[0] < least:
        raise ValueError(f"`{what}` values must be >= {least}. Received: {what}={factor!r}")


class RandomZoom(_Geometric):
    """Zoom each image by ``1 + u`` with ``u`` drawn from ``height_factor`` (positive: zoom out).

    ``width_factor=None`` keeps the aspect ratio (the same zoom on both axes).
    """

    def __init__(
        self,
        height_factor: Any,
        width_factor: Any = None,
        fill_mode: str = "reflect",
        interpolation: str = "bilinear",
        seed: int | None = None,
        fill_value: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height = _bounds(height_factor, "height_factor")
        _check_at_least(self._height, -1.0, "height_factor", height_factor)
        self._width = _bounds(width_factor, "width_factor") if width_factor is not None else None
        if self._width is not None:
            _check_at_least(self._width, -1.0, "width_factor", width_factor)

    def _matrices(self, x: torch.Tensor) -> torch.Tensor:
        height, width = x.shape[1], x.shape[2]
        zy = 1.0 + self._uniform(x, self._height)
        zx = 1.0 + self._uniform(x, self._width) if self._width is not None else zy
        zeros = torch.zeros_like(zy)
        return torch.stack([zx, zeros, (width - 1) / 2.0 * (1 - zx), zeros, zy, (height - 1) / 2.0 * (1 - zy)], dim=1)


class RandomTranslation(_Geometric):
    """Shift each image by fractions of its size drawn from ``height_factor`` and ``width_factor``
    (positive: down and right)."""

    def __init__(
        self,
        height_factor: Any,
        width_factor: Any,
        fill_mode: str = "reflect",
        interpolation: str = "bilinear",
        seed: int | None = None,
        fill_value: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height, self._width = _bounds(height_factor, "height_factor"), _bounds(width_factor, "width_factor")
        for what, bounds, factor in (
            ("height_factor", self._height, height_factor),
            ("width_factor", self._width, width_factor),
        ):
            if bounds[0] < -1.0 or bounds[1] > 1.0:
                raise ValueError(f"`{what}` values must be in [-1, 1]. Received: {what}={factor!r}")

    def _matrices(self, x: torch.Tensor) -> torch.Tensor:
        dy = self._uniform(x, self._height) * x.shape[1]
        dx = self._uniform(x, self._width) * x.shape[2]
        ones, zeros = torch.ones_like(dx), torch.zeros_like(dx)
        return torch.stack([ones, zeros, -dx, zeros, ones, -dy], dim=1)


def _value_range(value_range: Any) -> tuple[float, float]:
    if (
        not isinstance(value_range, (tuple, list))
        or len(value_range) != 2
        or not all(isinstance(v, (int, float)) for v in value_range)
        or value_range[0] >= value_range[1]
    ):
        raise ValueError(f"`value_range` must be (low, high) with low < high. Received: value_range={value_range!r}")
    return float(value_range[0]), float(value_range[1])


class RandomContrast(_Augmentation):
    """Scale each image's deviation from its per-channel mean by a factor drawn from
    ``[1 - lower, 1 + upper]``, then clip to ``value_range`` (Keras 3)."""

    _config_forms: ClassVar[dict[str, str]] = {"factor": "from_zero"}

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        if isinstance(factor, (tuple, list)) and len(factor) == 2 and all(isinstance(f, (int, float)) for f in factor):
            lower, upper = float(factor[0]), float(factor[1])  # not an interval: 1 - lower and 1 + upper
        else:
            lower, upper = _bounds(factor, "factor", symmetric=False)
        if not (0 <= lower <= 1 and 0 <= upper <= 1):
            raise ValueError(f"`factor` values must be in [0, 1]. Received: factor={factor!r}")
        self.factor, self.value_range = factor, _value_range(value_range)
        self._range = (1.0 - lower, 1.0 + upper)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        factor = self._uniform(x, self._range).reshape(-1, 1, 1, 1).to(x.dtype)
        mean = x.mean(dim=(1, 2), keepdim=True)
        return torch.clamp((x - mean) * factor + mean, *self.value_range)


class RandomBrightness(_Augmentation):
    """Add to each image a delta drawn from ``factor * (high - low)`` of ``value_range``, then clip to it.

    ``factor=0.2`` draws from ``[-0.2, 0.2]``; each bound must be in ``[-1, 1]``.
    """

    _config_forms: ClassVar[dict[str, str]] = {"factor": "symmetric", "value_range": "list"}

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self._bounds = _bounds(factor, "factor")
        if self._bounds[0] < -1 or self._bounds[1] > 1:
            raise ValueError(f"`factor` values must be in [-1, 1]. Received: factor={factor!r}")
        self.factor, self.value_range = factor, _value_range(value_range)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        low, high = self.value_range
        delta = self._uniform(x, self._bounds).reshape(-1, 1, 1, 1).to(x.dtype) * (high - low)
        return torch.clamp(x + delta, low, high)


class RandomCrop(_Augmentation):
    """Crop each image to ``height x width`` at a random position when training.

    At inference the images pass through unchanged, as in Keras 3.15 (Keras 2 center-cropped and
    resized them instead). In training, images smaller than the crop are resized: the largest
    central window of the target aspect ratio, resized bilinearly to ``height x width``.
    """

    def __init__(self, height: int, width: int, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.height, self.width = target_size(height, width)

    def call(self, inputs: Any, training: bool = True) -> torch.Tensor:
        x, batched = image_batch(inputs, self)
        if not training:
            return x if batched else x[0]
        if x.shape[1] >= self.height and x.shape[2] >= self.width:
            n = x.shape[0]
            top = torch.floor(self._uniform(x, (0.0, 1.0)) * (x.shape[1] - self.height + 1)).long()
            left = torch.floor(self._uniform(x, (0.0, 1.0)) * (x.shape[2] - self.width + 1)).long()
            rows = (top.unsqueeze(1) + torch.arange(self.height, device=x.device)).reshape(n, self.height, 1)
            cols = (left.unsqueeze(1) + torch.arange(self.width, device=x.device)).reshape(n, 1, self.width)
            x = x[torch.arange(n, device=x.device).reshape(n, 1, 1), rows, cols]
        else:
            x = resize_images(crop_to_aspect(x, self.height, self.width), self.height, self.width)
        return x if batched else x[0]


class _RandomSide(_Augmentation):
    """Resize the batch along one axis by ``1 + u``, ``u`` drawn once per batch from ``factor``."""

    _axis = 1
    _what = "height"

    def __init__(self, factor: Any, interpolation: str = "bilinear", seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.factor = factor
        self._range = _bounds(factor, "factor")
        if self._range[0] < -1.0:
            raise ValueError(
                f"`factor` must have values larger than -1 (the {self._what} cannot shrink below 0). "
                f"Received: factor={factor!r}"
            )
        self.interpolation = check_choice(interpolation, ("bilinear", "nearest", "bicubic", "area"), "interpolation")

    def compute_output_shape(self, input_shape: Any) -> tuple[Any, ...]:
        # Keras 2's rule: the resized side is unknown until a batch draws its factor (None), even
        # for a fixed factor; batched (N, H, W, C) and single (H, W, C) images alike
        shape = list(input_shape)
        shape[self._axis - 4] = None
        return tuple(shape)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        # One draw per batch: the images of a batch must keep one shape to stay one tensor.
        scale = 1.0 + float(self.random.uniform((1,), self._range[0], self._range[1], x.device)[0])
        size = [int(x.shape[1]), int(x.shape[2])]
        size[self._axis - 1] = max(1, int(size[self._axis - 1] * scale))
        if size == [int(x.shape[1]), int(x.shape[2])]:
            return x.to(torch.get_default_dtype()) if not x.is_floating_point() else x
        out = resize_images(x if x.is_floating_point() else x.float(), size[0], size[1], self.interpolation)
        return out


class RandomHeight(_RandomSide):
    """Randomly resize the height of a batch of images when training (Keras 3's ``RandomHeight``).

    The new height is ``int(height * (1 + u))`` with ``u`` uniform in ``factor`` (a float ``f``
    means ``(-f, f)``), one draw per batch; at inference the images pass unchanged.

    Example:
        >>> import torch
        >>> RandomHeight((1.0, 1.0))(torch.zeros(2, 4, 3, 1)).shape
        torch.Size([2, 8, 3, 1])
    """


class RandomWidth(_RandomSide):
    """Randomly resize the width of a batch of images when training (Keras 3's ``RandomWidth``).

    Example:
        >>> import torch
        >>> RandomWidth((-0.5, -0.5))(torch.zeros(4, 6, 1)).shape
        torch.Size([4, 3, 1])
    """

    _axis = 2
    _what = "width"


__all__ = [
    "RandomBrightness",
    "RandomContrast",
    "RandomCrop",
    "RandomFlip",
    "RandomHeight",
    "RandomRotation",
    "RandomTranslation",
    "RandomWidth",
    "RandomZoom",
    "affine_transform",
]
