"""Keras 3's colour augmentation layers: ``AutoContrast``, ``Equalization``, ``Solarization``,
``RandomInvert``, ``RandomGrayscale``, ``RandomColorDegeneration``, ``RandomPosterization``,
``RandomSharpness``.

Batched torch, the same formulas as Keras 3 (values read in ``value_range``, worked on in
``[0, 255]`` where Keras does). ``factor`` follows Keras: a number ``f`` is ``(max(-f, low), f)``
within the layer's bounds, a pair is sorted; one value per image is drawn from it. As with the
other augmentation layers, a call augments unless ``training=False``, which passes the images
through (``AutoContrast`` acts in both). Draws come from ``tf.random.set_seed``'s generator or
the layer's ``seed``; they differ from Keras's draws, so give a one-value factor (``(f, f)``)
where a test needs a fixed transform.

Example:
    >>> import torch
    >>> x = torch.tensor([[[[10.0], [60.0]]]])  # one 1x2 grey image
    >>> AutoContrast()(x).flatten().tolist()
    [0.0, 255.0]
    >>> Solarization(threshold_factor=(0, 0))(x).flatten().tolist()  # everything above 0: inverted
    [245.0, 195.0]
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from unison.keras.layers.augmentation import _Augmentation
from unison.keras.layers.image_resizing import image_batch

_GRAY = (0.2989, 0.5870, 0.1140)  # tf.image.rgb_to_grayscale's weights


def value_range_of(value: Any) -> list[float]:
    """Keras's ``value_range``: two numbers, sorted."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValueError(f"The `value_range` argument should be a list of two numbers. Received: value_range={value}")
    return sorted(value)


def keras_factor(factor: Any, bounds: tuple[float, float], what: str = "factor") -> tuple[float, float]:
    """Keras 3's ``_set_factor``: ``f`` -> ``(max(-f, low), f)``; a pair sorted; both within ``bounds``."""
    message = (
        f"The `{what}` argument should be a number (or a list of two numbers) in the range "
        f"[{bounds[0]}, {bounds[1]}]. Received: {what}={factor}"
    )
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        low, high = sorted(float(f) for f in factor)
        return low, high
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if factor < bounds[0] or factor > bounds[1]:
            raise ValueError(message)
        return max(-abs(float(factor)), float(bounds[0])), abs(float(factor))
    raise ValueError(message)


def to_range(x: torch.Tensor, source: Any, target: Any) -> torch.Tensor:
    """Map values linearly from ``source`` ``(low, high)`` to ``target`` (Keras's ``_transform_value_range``)."""
    if list(source) == list(target):
        return x
    return (x - source[0]) / (source[1] - source[0]) * (target[1] - target[0]) + target[0]


def grayscale(x: torch.Tensor) -> torch.Tensor:
    """``(N, H, W, 3)`` -> ``(N, H, W, 1)`` luma, as ``tf.image.rgb_to_grayscale``."""
    if x.shape[-1] != 3:
        raise ValueError(
            f"Converting to grayscale takes RGB images (3 channels, last axis). Received: images of shape {tuple(x.shape)}"
        )
    return (x * torch.tensor(_GRAY, dtype=x.dtype, device=x.device)).sum(-1, keepdim=True)


class AutoContrast(_Augmentation):
    """Stretch each image's channels to span ``value_range`` (min to low, max to high), in training and inference.

    Args:
        value_range: the range of the input values, ``(0, 255)`` by default.
    """

    _config_forms: ClassVar[dict[str, str]] = {"value_range": "list"}

    _config_omitted = frozenset({"seed"})  # deterministic: Keras lists no seed

    def __init__(self, value_range: Any = (0, 255), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value_range = value_range_of(value_range)
        self._range = self.value_range

    def call(self, inputs: Any, training: bool = True) -> torch.Tensor:
        x, batched = image_batch(inputs, self)
        images = to_range(x, self._range, (0, 255))
        low = images.amin(dim=(1, 2), keepdim=True)
        high = images.amax(dim=(1, 2), keepdim=True)
        scale = 255.0 / (high - low)
        out = (images * scale - low * scale).clamp(0.0, 255.0)  # a flat channel gives NaN: kept as it was
        out = to_range(out, (0, 255), self._range)
        out = torch.where(torch.isnan(out), x, out)
        return out if batched else out[0]


class Equalization(_Augmentation):
    """Histogram-equalise each channel (one histogram per channel over the whole batch, as Keras 3).

    Args:
        value_range: the range of the input values; bins: the histogram's bins (256).
    """

    _config_forms: ClassVar[dict[str, str]] = {"value_range": "list"}

    _config_omitted = frozenset({"seed"})  # deterministic: Keras lists no seed

    def __init__(self, value_range: Any = (0, 255), bins: int = 256, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
            raise ValueError(f"`bins` must be an integer >= 2. Received: bins={bins!r}")
        self.bins, self.value_range = bins, value_range_of(value_range)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        n, h, w, c = x.shape
        channels = to_range(x, self.value_range, (0, 255)).permute(3, 0, 1, 2).reshape(c, -1)
        index = (channels * (self.bins - 1) / 255.0).to(torch.int64).clamp(0, self.bins - 1)
        hist = torch.zeros(c, self.bins, dtype=torch.int64, device=x.device).scatter_add_(
            1, index, torch.ones_like(index)
        )
        cdf = hist.cumsum(1)
        cdf_min = torch.where(cdf > 0, cdf, cdf[:, -1:]).amin(1, keepdim=True)  # the first non-zero count
        denominator = cdf[:, -1:] - cdf_min
        denominator = torch.where(denominator == 0, torch.ones_like(denominator), denominator)
        table = torch.round((cdf - cdf_min) * 255 / denominator.to(torch.float64)).clamp(0, 255).to(x.dtype)
        lookup = (channels / 255.0 * (self.bins - 1)).clamp(0, self.bins - 1).to(torch.int64)
        equalized = table.gather(1, lookup)
        flat = (hist > 0).sum(1, keepdim=True) <= 1  # one value only: nothing to spread
        equalized = torch.where(flat, channels, equalized)
        out = equalized.reshape(c, n, h, w).permute(1, 2, 3, 0)
        return to_range(out, (0, 255), self.value_range)


class Solarization(_Augmentation):
    """Add ``addition_factor * 255`` (drawn) and invert the pixels at or above a drawn threshold.

    As Keras 3: the addition is uniform in ``[a_low, a_high * 255]`` and the threshold in
    ``[t_low, t_high * 255]``, both per image, on values mapped to ``[0, 255]``.
    """

    _config_forms: ClassVar[dict[str, str]] = {
        "addition_factor": "from_zero",
        "threshold_factor": "from_zero",
        "value_range": "list",
    }

    def __init__(
        self,
        addition_factor: Any = 0.0,
        threshold_factor: Any = 0.0,
        value_range: Any = (0, 255),
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(seed, **kwargs)
        self.addition_factor = _unit_factor(addition_factor, "addition_factor")
        self.threshold_factor = _unit_factor(threshold_factor, "threshold_factor")
        self.value_range = value_range_of(value_range)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        a, t = self.addition_factor, self.threshold_factor
        additions = self._uniform(x, (a[0], a[1] * 255)).reshape(-1, 1, 1, 1).to(x.dtype)
        thresholds = self._uniform(x, (t[0], t[1] * 255)).reshape(-1, 1, 1, 1).to(x.dtype)
        images = (to_range(x, self.value_range, (0, 255)) + additions).clamp(0, 255)
        images = torch.where(images < thresholds, images, 255 - images)
        return to_range(images, (0, 255), self.value_range)


def _unit_factor(factor: Any, what: str) -> tuple[float, float]:
    """Solarization's factors: a number ``f`` is ``(0, f)``; everything in ``[0, 1]``."""
    message = f"The `factor` argument should be a number (or a list of two numbers) in the range [0, 1]. Received: {what}={factor}"
    values = list(factor) if isinstance(factor, (tuple, list)) else [0.0, factor]
    if len(values) != 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise ValueError(message)
    if any(v < 0 or v > 1 for v in values):
        raise ValueError(message)
    low, high = sorted(float(v) for v in values)
    return low, high


class RandomInvert(_Augmentation):
    """Invert an image (``value_range[1] - x``) when a uniform draw falls below one drawn from ``factor``."""

    _config_forms: ClassVar[dict[str, str]] = {"factor": "from_zero"}

    def __init__(self, factor: Any = 1.0, value_range: Any = (0, 255), seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.factor = keras_factor(factor, (0, 1))  # Keras's bounds: 0.3 is (0, 0.3), a negative raises
        self.value_range = value_range

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        probability = self._uniform(x, self.factor)
        invert = (self._uniform(x, (0.0, 1.0)) < probability).reshape(-1, 1, 1, 1)
        return torch.where(invert, self.value_range[1] - x, x)


class RandomGrayscale(_Augmentation):
    """Turn an image grey (luma in all three channels) with probability ``factor``."""

    _config_omitted = frozenset({"seed"})  # Keras takes a seed but does not list it

    def __init__(
        self, factor: float = 0.5, data_format: str | None = None, seed: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(seed, data_format=data_format, **kwargs)
        if not isinstance(factor, (int, float)) or factor < 0 or factor > 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = factor

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        apply = (self._uniform(x, (0.0, 1.0)) < self.factor).reshape(-1, 1, 1, 1)
        return torch.where(apply, grayscale(x).expand_as(x), x)


class RandomColorDegeneration(_Augmentation):
    """Blend each image toward its greyscale by a factor drawn from ``factor`` (1: fully grey)."""

    _config_forms: ClassVar[dict[str, str]] = {"factor": "symmetric", "value_range": "list"}

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.factor, self.value_range = keras_factor(factor, (-1, 1)), value_range_of(value_range)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        factor = self._uniform(x, self.factor).reshape(-1, 1, 1, 1).to(x.dtype)
        return (x + factor * (grayscale(x) - x)).clamp(self.value_range[0], self.value_range[1])


class RandomPosterization(_Augmentation):
    """Keep the top ``bits`` bits of each 8-bit value, ``bits`` drawn as an integer from ``factor`` in ``[1, 8]``."""

    _config_forms: ClassVar[dict[str, str]] = {"factor": "from_one", "value_range": "list"}

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        self.factor, self.value_range = keras_factor(factor, (1, 8)), value_range_of(value_range)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        low, high = int(self.factor[0]), int(self.factor[1])
        if low != high:  # Keras draws randint(low, high): high itself is never drawn
            bits = torch.floor(self._uniform(x, (0.0, 1.0)) * (high - low)).to(torch.int64) + low
        else:
            bits = torch.full((x.shape[0],), low, dtype=torch.int64, device=x.device)
        shift = (8 - bits).reshape(-1, 1, 1, 1)
        images = to_range(x, self.value_range, (0, 255)).to(torch.uint8).to(torch.int64)
        images = (images >> shift) << shift
        return to_range(images.to(x.dtype), (0, 255), self.value_range)


class RandomSharpness(_Augmentation):
    """Blend each image with a smoothed copy: factor ``f`` drawn from ``factor``, ``2 f`` = 1 keeps it.

    As Keras 3: ``x + (1 - 2 f) * (smooth(x) - x)``, where ``smooth`` is the 3x3 kernel
    ``[[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13`` (zero padding), clipped to ``value_range``.
    """

    _config_forms: ClassVar[dict[str, str]] = {"factor": "from_zero", "value_range": "list"}

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(seed, **kwargs)
        # Keras's bounds: 0.3 is (0, 0.3), a negative raises
        self.factor, self.value_range = keras_factor(factor, (0, 1)), value_range_of(value_range)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        sharpness = (self._uniform(x, self.factor) * 2).reshape(-1, 1, 1, 1).to(x.dtype)
        c = x.shape[-1]
        kernel = torch.full((3, 3), 1.0 / 13.0, dtype=x.dtype, device=x.device)
        kernel[1, 1] = 5.0 / 13.0
        smoothed = F.conv2d(x.permute(0, 3, 1, 2), kernel.expand(c, 1, 3, 3), padding=1, groups=c).permute(0, 2, 3, 1)
        return (x + (1.0 - sharpness) * (smoothed - x)).clamp(self.value_range[0], self.value_range[1])


def _odd_sizes(kernel_size: Any) -> tuple[int, int]:
    message = f"kernel_size must be an odd number. Received: kernel_size={kernel_size}"
    sizes = list(kernel_size) if isinstance(kernel_size, (tuple, list)) else [kernel_size, kernel_size]
    if len(sizes) != 2 or not all(isinstance(k, int) and not isinstance(k, bool) and k > 0 and k % 2 for k in sizes):
        raise ValueError(message)
    return int(sizes[0]), int(sizes[1])


def _gaussian(size: int, sigma: torch.Tensor) -> torch.Tensor:
    x = torch.arange(size, dtype=sigma.dtype, device=sigma.device) - (size - 1) / 2
    kernel = torch.exp(-0.5 * (x / sigma) ** 2)
    return kernel / kernel.sum()


class RandomGaussianBlur(_Augmentation):
    """Blur an image with a Gaussian kernel, with a probability drawn from ``factor``.

    As Keras 3: a uniform draw below the drawn probability blurs that image; the kernel's two
    sigmas (columns, rows) are drawn once per batch from ``sigma`` (a number ``s``: ``(0, s)``);
    zero padding; the result is clipped to ``value_range``.
    """

    _config_forms: ClassVar[dict[str, str]] = {"factor": "from_zero"}

    def __init__(
        self,
        factor: Any = 1.0,
        kernel_size: Any = 3,
        sigma: Any = 1.0,
        value_range: Any = (0, 255),
        data_format: str | None = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(seed, data_format=data_format, **kwargs)
        self.factor = keras_factor(factor, (0, 1))
        self.kernel_size = _odd_sizes(kernel_size)
        self.sigma = keras_factor(sigma, (0, 1), "sigma")
        self.value_range = value_range_of(value_range)

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        probability = self._uniform(x, self.factor)
        apply = (self._uniform(x, (0.0, 1.0)) < probability).reshape(-1, 1, 1, 1)
        sigma = self.random.uniform((2,), self.sigma[0], self.sigma[1], x.device).to(x.dtype) + 1e-6
        k0, k1 = self.kernel_size
        # Keras's kernel: outer(rows' 1-D kernel, columns') laid out as (k0, k1)
        kernel = torch.outer(_gaussian(k1, sigma[1]), _gaussian(k0, sigma[0])).reshape(k0, k1)
        c = x.shape[-1]
        blurred = F.conv2d(
            x.permute(0, 3, 1, 2), kernel.expand(c, 1, k0, k1), padding=(k0 // 2, k1 // 2), groups=c
        ).permute(0, 2, 3, 1)
        return torch.where(apply, blurred, x).clamp(self.value_range[0], self.value_range[1])


__all__ = [
    "AutoContrast",
    "RandomGaussianBlur",
    "Equalization",
    "RandomColorDegeneration",
    "RandomGrayscale",
    "RandomInvert",
    "RandomPosterization",
    "RandomSharpness",
    "Solarization",
]
