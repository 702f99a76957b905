"""``tf.image``: TF's image functions over torch, channels last as in TF.

Every function takes one image ``[height, width, channels]`` (what a ``tf.data`` ``map`` sees)
or a batch ``[batch, height, width, channels]`` and returns the same layout. Random functions
draw from the generator ``tf.random.set_seed`` seeds (torch's); ``seed=`` is accepted, as in
:mod:`unison.ops.random`; the ``stateless_random_*`` ones are determined by their ``seed`` pair.
Integer images hold ``0..MAX`` of their dtype, float images ``[0, 1]``
(:func:`convert_image_dtype` converts between them as TF does).

This module holds flips, rotations, crops and pads and gathers the rest under ``tf.image``:
:mod:`~unison.ops.image_resize` (the resize family), :mod:`~unison.ops.image_color` (colour),
:mod:`~unison.ops.image_metrics` (gradients, PSNR, SSIM, patches), :mod:`~unison.ops.image_boxes`
(non-max suppression, crop_and_resize, bounding boxes) and :mod:`~unison.ops.image_codecs`.

Example:
    >>> import unison as tf
    >>> image = tf.reshape(tf.range(12, dtype=tf.float32), [2, 2, 3])
    >>> tf.image.flip_left_right(image)[0].tolist()
    [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    >>> tf.image.resize(image, [4, 4]).shape
    torch.Size([4, 4, 3])
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.ops._dispatch import wrap_namespace
from unison.ops.determinism import require_seed
from unison.ops.dtypes import to_tensor
from unison.ops.image_bbox import (
    draw_bounding_boxes,
    sample_distorted_bounding_box,
    stateless_sample_distorted_bounding_box,
)
from unison.ops.image_boxes import (
    combined_non_max_suppression,
    crop_and_resize,
    extract_glimpse,
    non_max_suppression,
    non_max_suppression_overlaps,
    non_max_suppression_padded,
    non_max_suppression_with_scores,
)
from unison.ops.image_codecs import (
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    decode_webp,
    extract_jpeg_shape,
    is_jpeg,
)
from unison.ops.image_color import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    grayscale_to_rgb,
    hsv_to_rgb,
    per_image_standardization,
    random_brightness,
    random_contrast,
    random_hue,
    random_saturation,
    rgb_to_grayscale,
    rgb_to_hsv,
    rgb_to_yiq,
    rgb_to_yuv,
    stateless_random_brightness,
    stateless_random_contrast,
    stateless_random_hue,
    stateless_random_saturation,
    yiq_to_rgb,
    yuv_to_rgb,
)
from unison.ops.image_core import _hw, _rank_3_or_4, convert_image_dtype, stateless_generator
from unison.ops.image_encode import (
    adjust_jpeg_quality,
    encode_jpeg,
    encode_png,
    random_jpeg_quality,
    stateless_random_jpeg_quality,
)
from unison.ops.image_metrics import (
    extract_patches,
    image_gradients,
    psnr,
    sobel_edges,
    ssim,
    ssim_multiscale,
    total_variation,
)
from unison.ops.image_resize import ResizeMethod, resize, resize_with_pad

# --- flips --------------------------------------------------------------------------------------


def flip_left_right(image: Any) -> torch.Tensor:
    """``tf.image.flip_left_right``: mirror the width axis."""
    return _rank_3_or_4(image, "flip_left_right").flip(-2)


def flip_up_down(image: Any) -> torch.Tensor:
    """``tf.image.flip_up_down``: mirror the height axis."""
    return _rank_3_or_4(image, "flip_up_down").flip(-3)


def _random_flip(image: Any, axis: int, fn: str, seed: int | None = None) -> torch.Tensor:
    require_seed(seed)
    t = _rank_3_or_4(image, fn)
    if t.dim() == 3:
        return t.flip(axis) if float(torch.rand(())) < 0.5 else t
    flip = (torch.rand(t.shape[0]) < 0.5).to(t.device).reshape(-1, 1, 1, 1)
    return torch.where(flip, t.flip(axis), t)


def random_flip_left_right(image: Any, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_flip_left_right``: mirror the width axis with probability 1/2 (each image of a batch)."""
    return _random_flip(image, -2, "random_flip_left_right", seed)


def random_flip_up_down(image: Any, seed: int | None = None) -> torch.Tensor:
    """``tf.image.random_flip_up_down``: mirror the height axis with probability 1/2 (each image of a batch)."""
    return _random_flip(image, -3, "random_flip_up_down", seed)


# --- crops and pads -----------------------------------------------------------------------------


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
    require_seed(seed)
    # an axis kept whole (an image's channels) has offset 0: no draw (each costs ~3 us a call)
    offsets = [int(torch.randint(0, d - s + 1, ())) if d > s else 0 for s, d in zip(target, t.shape)]
    return t[tuple(slice(o, o + s) for o, s in zip(offsets, target))]


def rot90(image: Any, k: int = 1, name: str | None = None) -> torch.Tensor:
    """``tf.image.rot90``: rotate by ``k`` quarter turns counter-clockwise."""
    return torch.rot90(_rank_3_or_4(image, "rot90"), int(k) % 4, dims=(-3, -2))


def transpose(image: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.transpose``: swap the height and width axes."""
    return _rank_3_or_4(image, "transpose").transpose(-3, -2)


def _stateless_flip(image: Any, seed: Any, axis: int, op: str) -> torch.Tensor:
    t = _rank_3_or_4(image, op)
    draws = torch.rand(t.shape[0] if t.dim() == 4 else 1, generator=stateless_generator(seed, f"tf.image.{op}"))
    flip = (draws < 0.5).to(t.device)
    if t.dim() == 3:
        return t.flip(axis) if bool(flip[0]) else t
    return torch.where(flip.reshape(-1, 1, 1, 1), t.flip(axis), t)


def stateless_random_flip_left_right(image: Any, seed: Any) -> torch.Tensor:
    """``tf.image.stateless_random_flip_left_right``: mirror the width axis with probability 1/2, the ``seed`` deciding."""
    return _stateless_flip(image, seed, -2, "stateless_random_flip_left_right")


def stateless_random_flip_up_down(image: Any, seed: Any) -> torch.Tensor:
    """``tf.image.stateless_random_flip_up_down``: mirror the height axis with probability 1/2, the ``seed`` deciding."""
    return _stateless_flip(image, seed, -3, "stateless_random_flip_up_down")


def stateless_random_crop(value: Any, size: Any, seed: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.stateless_random_crop``: :func:`random_crop` at an offset the ``seed`` determines."""
    t = to_tensor(value)
    target = [int(s) for s in (to_tensor(size).reshape(-1).tolist() if not isinstance(size, (list, tuple)) else size)]
    if len(target) != t.dim() or any(s < 0 or s > d for s, d in zip(target, t.shape)):
        raise ValueError(
            f"tf.image.stateless_random_crop: size needs one entry per axis, each at most the value's size. "
            f"Received size={target} for a value of shape {list(t.shape)}."
        )
    generator = stateless_generator(seed, "tf.image.stateless_random_crop")
    offsets = [int(torch.randint(0, d - s + 1, (), generator=generator)) for s, d in zip(target, t.shape)]
    return t[tuple(slice(o, o + s) for o, s in zip(offsets, target))]


__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_jpeg_quality",
    "adjust_saturation",
    "central_crop",
    "combined_non_max_suppression",
    "convert_image_dtype",
    "crop_and_resize",
    "crop_to_bounding_box",
    "decode_and_crop_jpeg",
    "decode_bmp",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_webp",
    "draw_bounding_boxes",
    "encode_jpeg",
    "encode_png",
    "extract_glimpse",
    "extract_jpeg_shape",
    "extract_patches",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "hsv_to_rgb",
    "image_gradients",
    "is_jpeg",
    "non_max_suppression",
    "non_max_suppression_overlaps",
    "non_max_suppression_padded",
    "non_max_suppression_with_scores",
    "pad_to_bounding_box",
    "per_image_standardization",
    "psnr",
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "random_hue",
    "random_jpeg_quality",
    "random_saturation",
    "resize",
    "resize_with_crop_or_pad",
    "resize_with_pad",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "rot90",
    "sample_distorted_bounding_box",
    "sobel_edges",
    "ssim",
    "ssim_multiscale",
    "stateless_random_brightness",
    "stateless_random_contrast",
    "stateless_random_crop",
    "stateless_random_flip_left_right",
    "stateless_random_flip_up_down",
    "stateless_random_hue",
    "stateless_random_jpeg_quality",
    "stateless_random_saturation",
    "stateless_sample_distorted_bounding_box",
    "total_variation",
    "transpose",
    "yiq_to_rgb",
    "yuv_to_rgb",
]

# the names defined here; those gathered from image_* modules are wrapped where they live
wrap_namespace(globals(), [n for n in __all__ if getattr(globals()[n], "__module__", "") == __name__])


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.image", name)
