"""``keras.ops.image``: ``resize`` and ``rgb_to_grayscale`` for channels-last (or channels-first) images.

``resize`` is ``tf.image.resize`` (:mod:`unison.ops.image`) with Keras's arguments: ``interpolation``,
``crop_to_aspect_ratio`` / ``pad_to_aspect_ratio`` (centre crop or pad to the target's aspect ratio
first) and ``data_format``.

Example:
    >>> from unison.keras import ops
    >>> ops.image.resize(ops.ones((2, 4, 4, 3)), (2, 2)).shape
    torch.Size([2, 2, 2, 3])
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.ops._convert import tensor
from unison.keras.ops._image_more import *  # noqa: F403
from unison.keras.ops._image_more import __all__ as _more_names
from unison.ops import image as _tf_image
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area")


def _data_format(data_format: str | None) -> str:
    from unison.keras.ops._config import standardize_data_format

    return standardize_data_format(data_format)


def _to_last(images: Any, data_format: str | None, fn: str) -> tuple[Tensor, bool]:
    t = tensor(images)
    if t.dim() not in (3, 4):
        raise ValueError(
            f"keras.ops.image.{fn} takes an image (rank 3) or a batch of images (rank 4). "
            f"Received a tensor of shape {tuple(t.shape)}."
        )
    first = _data_format(data_format) == "channels_first"
    return (torch.movedim(t, -3, -1) if first else t), first


def resize(
    images: Any,
    size: Any,
    interpolation: str = "bilinear",
    antialias: bool = False,
    crop_to_aspect_ratio: bool = False,
    pad_to_aspect_ratio: bool = False,
    fill_mode: str = "constant",
    fill_value: float = 0.0,
    data_format: str | None = None,
) -> Tensor:
    """``keras.ops.image.resize(images, size, interpolation="bilinear", ...)``: ``size = (height, width)``."""
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(
            f"keras.ops.image.resize: interpolation must be one of {list(_INTERPOLATIONS)}. "
            f"Received: interpolation={interpolation!r}"
        )
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError("keras.ops.image.resize: pass only one of crop_to_aspect_ratio and pad_to_aspect_ratio.")
    x, first = _to_last(images, data_format, "resize")
    height, width = int(size[0]), int(size[1])
    h, w = x.shape[-3], x.shape[-2]
    if crop_to_aspect_ratio:
        crop_h, crop_w = min(h, round(w * height / width)), min(w, round(h * width / height))
        top, left = (h - crop_h) // 2, (w - crop_w) // 2
        x = x[..., top : top + crop_h, left : left + crop_w, :]
    elif pad_to_aspect_ratio:
        pad_h, pad_w = max(h, round(w * height / width)), max(w, round(h * width / height))
        top, left = (pad_h - h) // 2, (pad_w - w) // 2
        pads = (0, 0, left, pad_w - w - left, top, pad_h - h - top)
        x = torch.nn.functional.pad(x, pads, value=float(fill_value))
    out = _tf_image.resize(x, [height, width], method=interpolation, antialias=antialias)
    return torch.movedim(out, -1, -3) if first else out


def rgb_to_grayscale(images: Any, data_format: str | None = None) -> Tensor:
    """``keras.ops.image.rgb_to_grayscale(images)``: one channel, ITU-R 601 weights."""
    x, first = _to_last(images, data_format, "rgb_to_grayscale")
    out = _tf_image.rgb_to_grayscale(x)
    return torch.movedim(out, -1, -3) if first else out


def extract_patches(
    images: Any,
    size: Any,
    strides: Any = None,
    dilation_rate: int = 1,
    padding: str = "valid",
    data_format: str | None = None,
) -> Tensor:
    """``keras.ops.image.extract_patches(images, size, strides=None, ...)``: each ``size`` patch flattened.

    The result is ``(batch, rows, cols, patch_h * patch_w * channels)`` with each patch's values in
    (row, column, channel) order, as Keras; ``strides`` defaults to ``size`` (non-overlapping).

    Example:
        >>> import torch
        >>> extract_patches(torch.arange(16.0).reshape(1, 4, 4, 1), 2)[0, 0, 1].tolist()
        [2.0, 3.0, 6.0, 7.0]
    """
    x, first = _to_last(images, data_format, "extract_patches")
    batched = x.dim() == 4
    if not batched:
        x = x.unsqueeze(0)
    ph, pw = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
    sh, sw = (ph, pw) if strides is None else ((strides, strides) if isinstance(strides, int) else tuple(strides))
    channels = x.shape[-1]
    planar = torch.movedim(x, -1, 1)
    mode = str(padding).lower()
    if mode not in ("valid", "same"):
        raise ValueError(f"keras.ops.image.extract_patches: padding must be 'valid' or 'same'. Received: {padding!r}")
    if mode == "same":
        pads = []
        for size_, k, st in ((x.shape[2], pw, sw), (x.shape[1], ph, sh)):
            effective = (k - 1) * dilation_rate + 1
            total = max((-(-size_ // st) - 1) * st + effective - size_, 0)
            pads.extend([total // 2, total - total // 2])
        planar = torch.nn.functional.pad(planar, pads)
    cols = torch.nn.functional.unfold(planar, (ph, pw), dilation=dilation_rate, stride=(sh, sw))
    rows_out = (planar.shape[2] - (ph - 1) * dilation_rate - 1) // sh + 1
    cols_out = (planar.shape[3] - (pw - 1) * dilation_rate - 1) // sw + 1
    # unfold gives (channel, row, col) per patch; Keras orders a patch (row, col, channel).
    patches = cols.reshape(x.shape[0], channels, ph * pw, rows_out, cols_out).permute(0, 3, 4, 2, 1)
    out = patches.reshape(x.shape[0], rows_out, cols_out, ph * pw * channels)
    if first:
        out = torch.movedim(out, -1, 1)
    return out if batched else out[0]


__all__ = ["extract_patches", "resize", "rgb_to_grayscale"]


# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), __all__)
__all__ = sorted([*__all__, *_more_names])  # wrapped in _image_more
