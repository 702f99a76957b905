"""``tf.image``'s colour functions: brightness, contrast, gamma, hue, saturation, the colour-space
conversions and ``per_image_standardization``. Integer images are converted to float32 ``[0, 1]``
for the arithmetic and back (saturating), as TF does.

Example:
    >>> import unison as tf
    >>> tf.image.adjust_brightness(tf.constant([[[0, 100, 250]]], dtype=tf.uint8), 0.1).tolist()
    [[[25, 125, 255]]]
"""

from __future__ import annotations

import math as _math
from typing import Any

import torch

from unison.ops._dispatch import wrap_namespace
from unison.ops.determinism import require_seed
from unison.ops.dtypes import to_tensor
from unison.ops.image_core import _as_float, _no_gradient, _rank_3_or_4, convert_image_dtype, stateless_generator


def per_image_standardization(image: Any) -> torch.Tensor:
    """``tf.image.per_image_standardization``: ``(x - mean) / max(std, 1 / sqrt(N))`` per image, float32."""
    t = _rank_3_or_4(image, "per_image_standardization").to(torch.float32)
    dims = (-3, -2, -1)
    pixels = t.shape[-3] * t.shape[-2] * t.shape[-1]
    mean = t.mean(dim=dims, keepdim=True)
    std = t.std(dim=dims, keepdim=True, correction=0)
    floor = torch.tensor(1.0 / _math.sqrt(max(pixels, 1)), dtype=torch.float32)
    return (t - mean) / torch.maximum(std, floor)


def adjust_brightness(image: Any, delta: Any) -> torch.Tensor:
    """``tf.image.adjust_brightness``: add ``delta`` (on the ``[0, 1]`` float scale) to every value."""
    t = to_tensor(image)
    work = _as_float(t)
    out = work + to_tensor(delta, work.dtype)
    return convert_image_dtype(out, t.dtype, saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> torch.Tensor:
    """``tf.image.adjust_contrast``: ``(x - mean) * contrast_factor + mean``, the mean per image and channel."""
    t = to_tensor(images)
    if t.dim() < 3:
        raise ValueError(
            f"tf.image.adjust_contrast: images must be [..., height, width, channels]. Received shape {list(t.shape)}."
        )
    work = _as_float(t)
    mean = work.mean(dim=(-3, -2), keepdim=True)
    out = (work - mean) * to_tensor(contrast_factor, work.dtype) + mean
    # TF registers no gradient for AdjustContrastv2 (its autodiff guide shows the LookupError):
    # differentiating through it fails here too, instead of silently giving what TF cannot.
    return _no_gradient(convert_image_dtype(out, t.dtype, saturate=True), "AdjustContrastv2")


def random_brightness(image: Any, max_delta: float, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_brightness``: :func:`adjust_brightness` by one delta uniform in ``[-max_delta, max_delta)``."""
    if float(max_delta) < 0:
        raise ValueError(f"tf.image.random_brightness: max_delta must be non-negative. Received: {max_delta}")
    require_seed(seed)
    delta = (torch.rand(()) * 2 - 1) * float(max_delta)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_contrast``: :func:`adjust_contrast` by one factor uniform in ``[lower, upper)``."""
    if float(upper) <= float(lower):
        raise ValueError(f"tf.image.random_contrast: upper must be > lower. Received: lower={lower}, upper={upper}")
    if float(lower) < 0:
        raise ValueError(f"tf.image.random_contrast: lower must be non-negative. Received: lower={lower}")
    require_seed(seed)
    factor = torch.rand(()) * (float(upper) - float(lower)) + float(lower)
    return adjust_contrast(image, factor)


def rgb_to_grayscale(images: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.rgb_to_grayscale``: ``0.2989 R + 0.5870 G + 0.1140 B`` as one channel, same dtype."""
    t = to_tensor(images)
    if t.dim() < 1 or t.shape[-1] != 3:
        raise ValueError(
            f"tf.image.rgb_to_grayscale: the last axis must hold 3 channels (R, G, B). Received shape {list(t.shape)}."
        )
    work = convert_image_dtype(t, torch.float32)
    weights = torch.tensor([0.2989, 0.5870, 0.1140], dtype=torch.float32, device=work.device)
    gray = (work * weights).sum(dim=-1, keepdim=True)
    return convert_image_dtype(gray, t.dtype)


def grayscale_to_rgb(images: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.grayscale_to_rgb``: the single channel repeated three times."""
    t = to_tensor(images)
    if t.dim() < 2 or t.shape[-1] != 1:
        raise ValueError(
            f"tf.image.grayscale_to_rgb: the last axis of a grayscale image must have size 1. Received shape "
            f"{list(t.shape)}; add it with tf.expand_dims(image, -1)."
        )
    return t.expand((*t.shape[:-1], 3)).clone()


def adjust_gamma(image: Any, gamma: float = 1, gain: float = 1) -> torch.Tensor:
    """``tf.image.adjust_gamma``: ``gain * image ** gamma`` on the ``[0, 1]`` float scale."""
    t = to_tensor(image)
    if float(gamma) < 0:
        raise ValueError(f"tf.image.adjust_gamma: gamma must be >= 0 (a non-negative real number). Received: {gamma}")
    work = _as_float(t)
    return convert_image_dtype(float(gain) * work ** float(gamma), t.dtype, saturate=True)


def _rgb(images: Any, op: str) -> torch.Tensor:
    t = to_tensor(images)
    if t.dim() < 1 or t.shape[-1] != 3:
        raise ValueError(f"tf.image.{op}: the last axis must hold 3 channels. Received shape {list(t.shape)}.")
    return t


def _float_rgb(images: Any, op: str) -> torch.Tensor:
    t = _rgb(images, op)
    if not t.is_floating_point():
        raise TypeError(
            f"tf.image.{op} takes a float image (values in [0, 1]). Received {t.dtype}; convert it with "
            "tf.image.convert_image_dtype(image, tf.float32)."
        )
    return t


def rgb_to_hsv(images: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.rgb_to_hsv``: hue, saturation and value in ``[0, 1]`` from float RGB."""
    t = _float_rgb(images, "rgb_to_hsv")
    r, g, b = t.unbind(-1)
    value = torch.maximum(torch.maximum(r, g), b)
    spread = value - torch.minimum(torch.minimum(r, g), b)
    saturation = torch.where(value > 0, spread / torch.where(value > 0, value, torch.ones_like(value)), 0.0)
    norm = 1.0 / (6.0 * spread)
    hue = torch.where(
        r == value, norm * (g - b), torch.where(g == value, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0)
    )
    hue = torch.where(spread > 0, hue, torch.zeros_like(hue))
    hue = torch.where(hue < 0, hue + 1, hue)
    return torch.stack([hue, saturation, value], dim=-1)


def hsv_to_rgb(images: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.hsv_to_rgb``: the inverse of :func:`rgb_to_hsv`."""
    t = _float_rgb(images, "hsv_to_rgb")
    h, s, v = t.unbind(-1)
    dh = h * 6.0
    dr = ((dh - 3.0).abs() - 1.0).clamp(0.0, 1.0)
    dg = (2.0 - (dh - 2.0).abs()).clamp(0.0, 1.0)
    db = (2.0 - (dh - 4.0).abs()).clamp(0.0, 1.0)
    one_s = 1.0 - s
    return torch.stack([(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v], dim=-1)


_YUV = ([0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026])
_YUV_INV = ([1.0, 1.0, 1.0], [0.0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0.0])
_YIQ = ([0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955])
_YIQ_INV = ([1.0, 1.0, 1.0], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049])


def _matmul(images: Any, kernel: Any, op: str) -> torch.Tensor:
    t = _float_rgb(images, op)
    return t @ torch.tensor(kernel, dtype=t.dtype, device=t.device)


def rgb_to_yuv(images: Any) -> torch.Tensor:
    """``tf.image.rgb_to_yuv``: float RGB to YUV (TF's matrix)."""
    return _matmul(images, _YUV, "rgb_to_yuv")


def yuv_to_rgb(images: Any) -> torch.Tensor:
    """``tf.image.yuv_to_rgb``: the inverse of :func:`rgb_to_yuv`."""
    return _matmul(images, _YUV_INV, "yuv_to_rgb")


def rgb_to_yiq(images: Any) -> torch.Tensor:
    """``tf.image.rgb_to_yiq``: float RGB to YIQ (TF's matrix)."""
    return _matmul(images, _YIQ, "rgb_to_yiq")


def yiq_to_rgb(images: Any) -> torch.Tensor:
    """``tf.image.yiq_to_rgb``: the inverse of :func:`rgb_to_yiq`."""
    return _matmul(images, _YIQ_INV, "yiq_to_rgb")


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.adjust_saturation``: scale the HSV saturation (clamped to ``[0, 1]``) by the factor."""
    t = _rgb(image, "adjust_saturation")
    work = _as_float(t).to(torch.float32)
    hsv = rgb_to_hsv(work)
    factor = to_tensor(saturation_factor, torch.float32)
    hsv = torch.stack([hsv[..., 0], (hsv[..., 1] * factor).clamp(0.0, 1.0), hsv[..., 2]], dim=-1)
    return convert_image_dtype(_hsv_to_rgb_sector(hsv).to(_as_float(t).dtype), t.dtype, saturate=True)


def _hsv_to_rgb_sector(hsv: torch.Tensor) -> torch.Tensor:
    # TF's AdjustSaturation kernel converts back by hue sector (c, x, m), not by hsv_to_rgb's ramps.
    h, s, v = hsv.unbind(-1)
    c = s * v
    m = v - c
    dh = h * 6.0
    sector = dh.floor().clamp(0, 6).long()
    fmodu = torch.remainder(dh, 2.0)
    fmodu = torch.where(fmodu <= 0, fmodu + 2.0, fmodu)
    x = c * (1.0 - (fmodu - 1.0).abs())
    zero = torch.zeros_like(c)
    table = torch.stack(
        [
            torch.stack([c, x, zero], -1),
            torch.stack([x, c, zero], -1),
            torch.stack([zero, c, x], -1),
            torch.stack([zero, x, c], -1),
            torch.stack([x, zero, c], -1),
            torch.stack([c, zero, x], -1),
            torch.stack([zero, zero, zero], -1),
        ],
        dim=-2,
    )
    picked = torch.gather(table, -2, sector[..., None, None].expand(*sector.shape, 1, 3)).squeeze(-2)
    return picked + m.unsqueeze(-1)


def adjust_hue(image: Any, delta: float, name: str | None = None) -> torch.Tensor:
    """``tf.image.adjust_hue``: rotate the hue by ``delta`` (a fraction of the colour wheel, in ``[-1, 1]``)."""
    t = _rgb(image, "adjust_hue")
    if not -1.0 <= float(delta) <= 1.0:
        raise ValueError(f"tf.image.adjust_hue: delta must be in the interval [-1, 1]. Received: delta={delta}")
    work = _as_float(t)
    x = work.to(torch.float32)
    r, g, b = x.unbind(-1)
    # TF's AdjustHue kernel: hue as a sector (0..6) plus the position between the min and max channel.
    v_max = torch.maximum(torch.maximum(r, g), b)
    v_min = torch.minimum(torch.minimum(r, g), b)
    category = torch.where(
        r < g,
        torch.where(b < r, 1, torch.where(b > g, 3, 2)),
        torch.where(b < g, 0, torch.where(b > r, 4, 5)),
    )
    v_mid = r + g + b - v_max - v_min
    spread = v_max - v_min
    ratio = (v_mid - v_min) / torch.where(spread > 0, spread, torch.ones_like(spread))
    hue = category + torch.where(category % 2 == 0, ratio, 1 - ratio)
    hue = torch.where(spread > 0, hue, torch.zeros_like(hue)) + float(delta) * 6.0
    hue = torch.remainder(hue, 6.0)
    sector = hue.floor().long().clamp(0, 5)
    frac = hue - sector
    frac = torch.where(sector % 2 == 0, frac, 1 - frac)
    v_mid = v_min + frac * spread
    table = torch.stack(
        [
            torch.stack([v_max, v_mid, v_min], -1),
            torch.stack([v_mid, v_max, v_min], -1),
            torch.stack([v_min, v_max, v_mid], -1),
            torch.stack([v_min, v_mid, v_max], -1),
            torch.stack([v_mid, v_min, v_max], -1),
            torch.stack([v_max, v_min, v_mid], -1),
        ],
        dim=-2,
    )
    out = torch.gather(table, -2, sector[..., None, None].expand(*sector.shape, 1, 3)).squeeze(-2)
    return convert_image_dtype(out.to(work.dtype), t.dtype, saturate=True)


def random_hue(image: Any, max_delta: float, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_hue``: :func:`adjust_hue` by a delta uniform in ``[-max_delta, max_delta)``."""
    if not 0.0 <= float(max_delta) <= 0.5:
        raise ValueError(f"tf.image.random_hue: max_delta must be in [0, 0.5]. Received: max_delta={max_delta}")
    require_seed(seed)
    return adjust_hue(image, float((torch.rand(()) * 2 - 1) * float(max_delta)))


def random_saturation(image: Any, lower: float, upper: float, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_saturation``: :func:`adjust_saturation` by a factor uniform in ``[lower, upper)``."""
    _check_range(lower, upper, "random_saturation")
    require_seed(seed)
    return adjust_saturation(image, float(torch.rand(()) * (float(upper) - float(lower)) + float(lower)))


def _check_range(lower: float, upper: float, op: str) -> None:
    if float(upper) <= float(lower):
        raise ValueError(f"tf.image.{op}: upper must be > lower. Received: lower={lower}, upper={upper}")
    if float(lower) < 0:
        raise ValueError(f"tf.image.{op}: lower must be non-negative. Received: lower={lower}")


def _uniform(seed: Any, low: float, high: float, op: str) -> float:
    generator = stateless_generator(seed, f"tf.image.{op}")
    return float(torch.rand((), generator=generator) * (high - low) + low)


def stateless_random_brightness(image: Any, max_delta: float, seed: Any) -> torch.Tensor:
    """``tf.image.stateless_random_brightness``: :func:`adjust_brightness` by a delta the ``seed`` determines."""
    if float(max_delta) < 0:
        raise ValueError(f"tf.image.stateless_random_brightness: max_delta must be non-negative. Received: {max_delta}")
    return adjust_brightness(image, _uniform(seed, -float(max_delta), float(max_delta), "stateless_random_brightness"))


def stateless_random_contrast(image: Any, lower: float, upper: float, seed: Any) -> torch.Tensor:
    """``tf.image.stateless_random_contrast``: :func:`adjust_contrast` by a factor the ``seed`` determines."""
    _check_range(lower, upper, "stateless_random_contrast")
    return adjust_contrast(image, _uniform(seed, float(lower), float(upper), "stateless_random_contrast"))


def stateless_random_hue(image: Any, max_delta: float, seed: Any) -> torch.Tensor:
    """``tf.image.stateless_random_hue``: :func:`adjust_hue` by a delta the ``seed`` determines."""
    if not 0.0 <= float(max_delta) <= 0.5:
        raise ValueError(f"tf.image.stateless_random_hue: max_delta must be in [0, 0.5]. Received: {max_delta}")
    return adjust_hue(image, _uniform(seed, -float(max_delta), float(max_delta), "stateless_random_hue"))


def stateless_random_saturation(image: Any, lower: float, upper: float, seed: Any) -> torch.Tensor:
    """``tf.image.stateless_random_saturation``: :func:`adjust_saturation` by a factor the ``seed`` determines."""
    _check_range(lower, upper, "stateless_random_saturation")
    return adjust_saturation(image, _uniform(seed, float(lower), float(upper), "stateless_random_saturation"))


__all__ = [
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "grayscale_to_rgb",
    "hsv_to_rgb",
    "per_image_standardization",
    "random_brightness",
    "random_contrast",
    "random_hue",
    "random_saturation",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "stateless_random_brightness",
    "stateless_random_contrast",
    "stateless_random_hue",
    "stateless_random_saturation",
    "yiq_to_rgb",
    "yuv_to_rgb",
]

# symbolic-aware here, where pickle finds them by their module and name
wrap_namespace(globals(), __all__)
