"""``tf.image``: TF's image functions over torch, channels last as in TF.

Every function takes one image ``[height, width, channels]`` (what a ``tf.data`` ``map`` sees)
or a batch ``[batch, height, width, channels]`` and returns the same layout. Random functions
draw from the generator ``tf.random.set_seed`` seeds (torch's); ``seed=`` is accepted, as in
:mod:`unison.ops.random`. Integer images hold ``0..MAX`` of their dtype, float images ``[0, 1]``
(:func:`convert_image_dtype` converts between them as TF does).

``resize`` follows TF 2 (half-pixel centres): ``bilinear`` equals
``torch.nn.functional.interpolate(..., mode="bilinear", align_corners=False)``; ``nearest``
picks ``floor((i + 0.5) * in / out)``; ``bicubic`` is Keys' cubic (a = -0.5) with out-of-image
taps dropped and the rest renormalised (TF's kernel rounds the cubic weights to a 1/1024 table,
so values may differ from TF's in the third decimal); ``area`` weighs each input pixel by its
overlap; ``antialias=True`` widens the bilinear/bicubic kernel when downsampling.

Example:
    >>> import unison as tf
    >>> image = tf.reshape(tf.range(12, dtype=tf.float32), [2, 2, 3])
    >>> tf.image.flip_left_right(image)[0].tolist()
    [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    >>> tf.image.resize(image, [4, 4]).shape
    torch.Size([4, 4, 3])
"""

from __future__ import annotations

import math as _math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import as_dtype, to_tensor


def _rank_3_or_4(images: Any, fn: str) -> torch.Tensor:
    t = to_tensor(images)
    if t.dim() not in (3, 4):
        raise ValueError(
            f"tf.image.{fn}: the image must have 3 ([height, width, channels]) or 4 ([batch, height, width, "
            f"channels]) dimensions. Received shape {list(t.shape)}; a grayscale [height, width] image needs "
            "tf.expand_dims(image, -1)."
        )
    return t


def _batched(images: Any, fn: str) -> tuple[torch.Tensor, bool]:
    t = _rank_3_or_4(images, fn)
    return (t, True) if t.dim() == 4 else (t.unsqueeze(0), False)


class ResizeMethod:
    """``tf.image.ResizeMethod``: the names ``tf.image.resize`` takes as ``method``."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


# --- flips --------------------------------------------------------------------------------------


def flip_left_right(image: Any) -> torch.Tensor:
    """``tf.image.flip_left_right``: mirror the width axis."""
    return _rank_3_or_4(image, "flip_left_right").flip(-2)


def flip_up_down(image: Any) -> torch.Tensor:
    """``tf.image.flip_up_down``: mirror the height axis."""
    return _rank_3_or_4(image, "flip_up_down").flip(-3)


def _random_flip(image: Any, axis: int, fn: str) -> torch.Tensor:
    t = _rank_3_or_4(image, fn)
    if t.dim() == 3:
        return t.flip(axis) if float(torch.rand(())) < 0.5 else t
    flip = (torch.rand(t.shape[0]) < 0.5).to(t.device).reshape(-1, 1, 1, 1)
    return torch.where(flip, t.flip(axis), t)


def random_flip_left_right(image: Any, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_flip_left_right``: mirror the width axis with probability 1/2 (each image of a batch)."""
    return _random_flip(image, -2, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_flip_up_down``: mirror the height axis with probability 1/2 (each image of a batch)."""
    return _random_flip(image, -3, "random_flip_up_down")


# --- resizing -----------------------------------------------------------------------------------


def _triangle(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp(1.0 - x, min=0.0)


def _keys_cubic(x: torch.Tensor) -> torch.Tensor:
    # Keys' cubic convolution kernel with a = -0.5 (Catmull-Rom), x = |distance|.
    near = (1.5 * x - 2.5) * x * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return torch.where(x <= 1.0, near, torch.where(x < 2.0, far, torch.zeros_like(x)))


def _kernel_weights(
    in_size: int, out_size: int, kernel: Callable[[torch.Tensor], torch.Tensor], radius: float, antialias: bool
) -> torch.Tensor:
    """``[out_size, in_size]`` sampling weights: output pixel ``i`` samples at ``(i + 0.5) * in / out``."""
    inv_scale = in_size / out_size
    kernel_scale = max(inv_scale, 1.0) if antialias else 1.0
    sample = (torch.arange(out_size, dtype=torch.float64) + 0.5) * inv_scale
    source = torch.arange(in_size, dtype=torch.float64) + 0.5
    distance = (source.unsqueeze(0) - sample.unsqueeze(1)).abs() / kernel_scale
    weights = torch.where(distance < radius, kernel(distance), torch.zeros_like(distance))
    total = weights.sum(dim=1, keepdim=True)
    return torch.where(total.abs() > 0, weights / torch.where(total == 0, torch.ones_like(total), total), weights)


def _area_weights(in_size: int, out_size: int) -> torch.Tensor:
    # Output pixel i averages input [i * s, (i + 1) * s), each pixel weighted by its overlap.
    scale = in_size / out_size
    start = torch.arange(out_size, dtype=torch.float64).unsqueeze(1) * scale
    pixel = torch.arange(in_size, dtype=torch.float64).unsqueeze(0)
    overlap = torch.clamp(torch.minimum(pixel + 1, start + scale) - torch.maximum(pixel, start), min=0.0)
    return overlap / scale


def _nearest_index(in_size: int, out_size: int) -> torch.Tensor:
    scale = torch.tensor(in_size / out_size, dtype=torch.float32)
    index = torch.floor((torch.arange(out_size, dtype=torch.float32) + 0.5) * scale).long()
    return torch.clamp(index, 0, in_size - 1)


def _size(size: Any) -> tuple[int, int]:
    values = to_tensor(size).reshape(-1).tolist() if not isinstance(size, (list, tuple)) else list(size)
    if len(values) != 2 or any(int(v) != v or int(v) <= 0 for v in values):
        raise ValueError(
            f"tf.image.resize: size must be [new_height, new_width], two positive ints. Received: size={size!r}"
        )
    return int(values[0]), int(values[1])


_RESIZE_METHODS = ("bilinear", "nearest", "bicubic", "area")


def resize(
    images: Any,
    size: Any,
    method: str = ResizeMethod.BILINEAR,
    preserve_aspect_ratio: bool = False,
    antialias: bool = False,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.image.resize``: images resized to ``size = [new_height, new_width]``.

    The result is float32, except with ``method="nearest"``, which keeps the dtype (as in TF).
    With ``preserve_aspect_ratio`` the image is scaled to fit inside ``size``.

    Example:
        >>> import unison as tf
        >>> image = tf.reshape(tf.eye(5), [5, 5, 1])
        >>> [round(v, 4) for v in tf.image.resize(image, [3, 5])[0, :, 0].tolist()]
        [0.6667, 0.3333, 0.0, 0.0, 0.0]
    """
    x, batched = _batched(images, "resize")
    kind = str(method).lower()
    if kind not in _RESIZE_METHODS:
        raise ValueError(
            f"tf.image.resize: unison implements the methods {list(_RESIZE_METHODS)}. Received: method={method!r}. "
            "Use one of those (lanczos, gaussian and mitchellcubic are not implemented)."
        )
    height, width = x.shape[1], x.shape[2]
    new_height, new_width = _size(size)
    if preserve_aspect_ratio:
        scale = min(
            torch.tensor(new_height / height, dtype=torch.float32), torch.tensor(new_width / width, dtype=torch.float32)
        )
        new_height = max(int(torch.round(scale * height)), 1)
        new_width = max(int(torch.round(scale * width)), 1)
    if kind == "nearest":
        rows, cols = _nearest_index(height, new_height), _nearest_index(width, new_width)
        out = x.index_select(1, rows.to(x.device)).index_select(2, cols.to(x.device))
    else:
        xf = x.to(torch.float32)
        if kind == "bilinear" and not antialias:
            planar = F.interpolate(
                xf.permute(0, 3, 1, 2), size=(new_height, new_width), mode="bilinear", align_corners=False
            )
            out = planar.permute(0, 2, 3, 1)
        else:
            if kind == "area":
                wh, ww = _area_weights(height, new_height), _area_weights(width, new_width)
            else:
                kernel, radius = (_triangle, 1.0) if kind == "bilinear" else (_keys_cubic, 2.0)
                wh = _kernel_weights(height, new_height, kernel, radius, antialias)
                ww = _kernel_weights(width, new_width, kernel, radius, antialias)
            out = torch.einsum("oh,nhwc,pw->nopc", wh.to(xf), xf, ww.to(xf))
    return out if batched else out[0]


# --- crops and pads -----------------------------------------------------------------------------


def _hw(t: torch.Tensor) -> tuple[int, int]:
    return t.shape[-3], t.shape[-2]


def crop_to_bounding_box(
    image: Any, offset_height: int, offset_width: int, target_height: int, target_width: int
) -> torch.Tensor:
    """``tf.image.crop_to_bounding_box``: the ``target_height x target_width`` window at the given offset."""
    t = _rank_3_or_4(image, "crop_to_bounding_box")
    height, width = _hw(t)
    oh, ow, th, tw = int(offset_height), int(offset_width), int(target_height), int(target_width)
    if oh < 0 or ow < 0 or th <= 0 or tw <= 0 or oh + th > height or ow + tw > width:
        raise ValueError(
            "tf.image.crop_to_bounding_box: the box must lie inside the image (offsets >= 0, targets > 0, "
            f"offset + target <= size). Received offset ({oh}, {ow}) and target ({th}, {tw}) for an image "
            f"of height {height} and width {width}."
        )
    return t[..., oh : oh + th, ow : ow + tw, :]


def pad_to_bounding_box(
    image: Any, offset_height: int, offset_width: int, target_height: int, target_width: int
) -> torch.Tensor:
    """``tf.image.pad_to_bounding_box``: the image placed at the offset in a zero ``target`` canvas."""
    t = _rank_3_or_4(image, "pad_to_bounding_box")
    height, width = _hw(t)
    oh, ow, th, tw = int(offset_height), int(offset_width), int(target_height), int(target_width)
    bottom, right = th - oh - height, tw - ow - width
    if oh < 0 or ow < 0 or bottom < 0 or right < 0:
        raise ValueError(
            "tf.image.pad_to_bounding_box: offsets must be >= 0 and the image must fit (offset + size <= "
            f"target). Received offset ({oh}, {ow}) and target ({th}, {tw}) for an image of height {height} "
            f"and width {width}."
        )
    return F.pad(t, (0, 0, ow, right, oh, bottom))


def resize_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> torch.Tensor:
    """``tf.image.resize_with_crop_or_pad``: crop the centre, or pad evenly with zeros, to the target size."""
    t = _rank_3_or_4(image, "resize_with_crop_or_pad")
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise ValueError(f"tf.image.resize_with_crop_or_pad: the target size must be positive. Received ({th}, {tw}).")
    height, width = _hw(t)
    crop_h, crop_w = max((height - th) // 2, 0), max((width - tw) // 2, 0)
    pad_h, pad_w = max((th - height) // 2, 0), max((tw - width) // 2, 0)
    cropped = crop_to_bounding_box(t, crop_h, crop_w, min(th, height), min(tw, width))
    return pad_to_bounding_box(cropped, pad_h, pad_w, th, tw)


def central_crop(image: Any, central_fraction: float) -> torch.Tensor:
    """``tf.image.central_crop``: the central ``central_fraction`` (in (0, 1]) of each side."""
    t = _rank_3_or_4(image, "central_crop")
    fraction = float(central_fraction)
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"tf.image.central_crop: central_fraction must be in (0, 1]. Received: {central_fraction}")
    if fraction == 1.0:
        return t
    height, width = _hw(t)
    top = int((height - height * fraction) / 2)
    left = int((width - width * fraction) / 2)
    return t[..., top : height - top, left : width - left, :]


def random_crop(value: Any, size: Any, seed: int | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.image.random_crop``: a window of shape ``size`` (one entry per axis) at a uniform random offset."""
    t = to_tensor(value)
    target = [int(s) for s in (to_tensor(size).reshape(-1).tolist() if not isinstance(size, (list, tuple)) else size)]
    if len(target) != t.dim() or any(s < 0 or s > d for s, d in zip(target, t.shape)):
        raise ValueError(
            f"tf.image.random_crop: size needs one entry per axis, each at most the value's size. Received "
            f"size={target} for a value of shape {list(t.shape)}."
        )
    offsets = [int(torch.randint(0, d - s + 1, ())) for s, d in zip(target, t.shape)]
    return t[tuple(slice(o, o + s) for o, s in zip(offsets, target))]


# --- dtypes and colour --------------------------------------------------------------------------


def _max(dtype: torch.dtype) -> int:
    return int(torch.iinfo(dtype).max)


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False, name: str | None = None) -> torch.Tensor:
    """``tf.image.convert_image_dtype``: rescale between integer ``0..MAX`` and float ``[0, 1]`` images.

    int -> float divides by the input's MAX; float -> int multiplies by (MAX + 0.5) and
    truncates (``saturate=True`` clamps first); int -> int shifts the scale; float -> float casts.

    Example:
        >>> import unison as tf
        >>> tf.image.convert_image_dtype(tf.constant([0, 255], dtype=tf.uint8), tf.float32).tolist()
        [0.0, 1.0]
        >>> tf.image.convert_image_dtype(tf.constant([0.0, 0.5, 1.0]), tf.uint8).tolist()
        [0, 127, 255]
    """
    t = to_tensor(image)
    target = as_dtype(dtype)
    if not isinstance(target, torch.dtype) or target == torch.bool or target.is_complex:
        raise AttributeError(
            f"tf.image.convert_image_dtype: dtype must be a floating point or integer dtype. Received: {dtype!r}"
        )
    if t.dtype == torch.bool or t.is_complex():
        raise TypeError(f"tf.image.convert_image_dtype takes an integer or float image. Received {t.dtype}.")
    if t.dtype == target:
        return t
    if not t.is_floating_point() and not target.is_floating_point:
        in_max, out_max = _max(t.dtype), _max(target)
        if in_max > out_max:
            scaled = torch.div(t, (in_max + 1) // (out_max + 1), rounding_mode="floor")
            return _saturate(scaled, target) if saturate else scaled.to(target)
        cast = _saturate(t, target) if saturate else t.to(target)
        return cast * ((out_max + 1) // (in_max + 1))
    if t.is_floating_point() and target.is_floating_point:
        return t.to(target)
    if not t.is_floating_point():
        return t.to(target) * torch.tensor(1.0 / _max(t.dtype), dtype=target)
    scaled = t * torch.tensor(_max(target) + 0.5, dtype=t.dtype)
    return _saturate(scaled, target) if saturate else scaled.to(target)


def _saturate(t: torch.Tensor, target: torch.dtype) -> torch.Tensor:
    info = torch.iinfo(target)
    if t.is_floating_point():
        return torch.clamp(t, float(info.min), float(info.max)).to(target)
    return torch.clamp(t.long(), info.min, info.max).to(target)


def _as_float(image: torch.Tensor) -> torch.Tensor:
    # TF computes colour adjustments in float16/float32 and converts other dtypes to float32.
    return image if image.dtype in (torch.float16, torch.float32) else convert_image_dtype(image, torch.float32)


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


class _NoGradient(torch.autograd.Function):
    """Identity forward; a backward pass through it raises TF's ``LookupError`` for ``op``."""

    @staticmethod
    def forward(ctx: Any, value: torch.Tensor, op: str) -> torch.Tensor:
        ctx.op = op
        return value.view_as(value)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise LookupError(
            f"gradient registry has no entry for: {ctx.op}. TF defines no gradient for this operation, so "
            "unison does not either; compute it outside the GradientTape (or under tape.stop_recording())."
        )


def _no_gradient(value: torch.Tensor, op: str) -> torch.Tensor:
    return _NoGradient.apply(value, op) if value.requires_grad else value


def random_brightness(image: Any, max_delta: float, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_brightness``: :func:`adjust_brightness` by one delta uniform in ``[-max_delta, max_delta)``."""
    if float(max_delta) < 0:
        raise ValueError(f"tf.image.random_brightness: max_delta must be non-negative. Received: {max_delta}")
    delta = (torch.rand(()) * 2 - 1) * float(max_delta)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_contrast``: :func:`adjust_contrast` by one factor uniform in ``[lower, upper)``."""
    if float(upper) <= float(lower):
        raise ValueError(f"tf.image.random_contrast: upper must be > lower. Received: lower={lower}, upper={upper}")
    if float(lower) < 0:
        raise ValueError(f"tf.image.random_contrast: lower must be non-negative. Received: lower={lower}")
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


__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "central_crop",
    "convert_image_dtype",
    "crop_to_bounding_box",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "pad_to_bounding_box",
    "per_image_standardization",
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "resize",
    "resize_with_crop_or_pad",
    "rgb_to_grayscale",
]

wrap_namespace(globals(), __all__)


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.image", name)
