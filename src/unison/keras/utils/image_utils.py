"""Keras 3's ``keras.utils`` image functions (``keras.preprocessing.image`` re-exports them):
``load_img``, ``img_to_array``, ``array_to_img``, ``save_img``, with Pillow as Keras uses it; and
Keras's smart resize (``crop_to_aspect``, ``resize_images``), which the ``Resizing`` layer and
``image_dataset_from_directory`` share.

Example:
    >>> import numpy as np
    >>> img = array_to_img(np.zeros((2, 3, 3)), scale=False)
    >>> img.size, img_to_array(img).shape
    ((3, 2), (2, 3, 3))
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")
_COLOR_MODES = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(
            "keras.preprocessing.image needs Pillow to read and write images. Install it: "
            "pip install 'unison[tf]' (TF programs' usual packages) or pip install pillow"
        ) from None
    return Image


def _data_format(data_format: str | None) -> str:
    from unison.keras.ops._config import standardize_data_format

    return standardize_data_format(data_format)


def img_to_array(img: Any, data_format: str | None = None, dtype: Any = None) -> np.ndarray:
    """A PIL image as a ``(height, width, channels)`` array (float32 unless ``dtype``); grayscale gets one channel."""
    x = np.asarray(img, dtype=np.dtype(dtype or "float32"))
    if x.ndim == 2:
        x = x[:, :, None]
    if x.ndim != 3:
        raise ValueError(f"img_to_array: unsupported image shape {x.shape}; expected (height, width[, channels]).")
    return np.transpose(x, (2, 0, 1)) if _data_format(data_format) == "channels_first" else x


def array_to_img(x: Any, data_format: str | None = None, scale: bool = True, dtype: Any = None) -> Any:
    """A ``(height, width, channels)`` array (1, 3 or 4 channels) as a PIL image.

    With ``scale`` the values are shifted and scaled to ``[0, 255]`` first, as in Keras.
    """
    image = _pil()
    arr = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
    arr = arr.astype(np.dtype(dtype or "float32"))
    if arr.ndim != 3:
        raise ValueError(f"array_to_img expects a rank-3 array (height, width, channels). Received shape {arr.shape}.")
    if _data_format(data_format) == "channels_first":
        arr = np.transpose(arr, (1, 2, 0))
    if scale:
        arr = arr - np.min(arr)
        peak = np.max(arr)
        if peak != 0:
            arr = arr / peak
        arr = arr * 255
    channels = arr.shape[2]
    if channels not in (1, 3, 4):
        raise ValueError(f"array_to_img supports 1, 3 or 4 channels. Received {channels} (shape {arr.shape}).")
    pixels = np.clip(arr, 0, 255).astype("uint8")
    if channels == 1:
        return image.fromarray(pixels[:, :, 0], "L")
    return image.fromarray(pixels, "RGB" if channels == 3 else "RGBA")


def load_img(
    path: Any,
    color_mode: str = "rgb",
    target_size: tuple[int, int] | None = None,
    interpolation: str = "nearest",
    keep_aspect_ratio: bool = False,
) -> Any:
    """Load an image file as a PIL image, converted to ``color_mode`` and resized to ``target_size=(h, w)``.

    With ``keep_aspect_ratio`` the image is centre-cropped to the target's aspect ratio before resizing.
    """
    if color_mode not in _COLOR_MODES:
        raise ValueError(f"load_img: color_mode must be one of {list(_COLOR_MODES)}. Received: {color_mode!r}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"load_img: interpolation must be one of {list(_INTERPOLATIONS)}. Received: {interpolation!r}")
    image = _pil()
    if isinstance(path, (str, os.PathLike)) and not os.path.exists(path):
        raise FileNotFoundError(f"load_img: no image file at {os.fspath(path)!r}.")
    img = image.open(path)
    if img.mode != _COLOR_MODES[color_mode]:
        img = img.convert(_COLOR_MODES[color_mode])
    if target_size is not None:
        height, width = int(target_size[0]), int(target_size[1])
        if img.size != (width, height):
            if keep_aspect_ratio:
                w, h = img.size
                crop_w, crop_h = min(w, round(h * width / height)), min(h, round(w * height / width))
                left, top = (w - crop_w) // 2, (h - crop_h) // 2
                img = img.crop((left, top, left + crop_w, top + crop_h))
            resample = getattr(image.Resampling, interpolation.upper())
            img = img.resize((width, height), resample)
    return img


def save_img(
    path: Any, x: Any, data_format: str | None = None, file_format: str | None = None, scale: bool = True, **kwargs: Any
) -> None:
    """Save a ``(height, width, channels)`` array as an image file (RGBA to JPEG drops the alpha, as Keras)."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and (
        file_format == "jpg" or file_format == "jpeg" or str(path).lower().endswith((".jpg", ".jpeg"))
    ):
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def crop_to_aspect(x: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """The largest central window of ``x`` with the aspect ratio ``height : width`` (Keras's smart resize)."""
    in_h, in_w = x.shape[1], x.shape[2]
    crop_h = max(min(in_h, int(in_w * height / width)), 1)
    crop_w = max(min(in_w, int(in_h * width / height)), 1)
    top, left = int((in_h - crop_h) / 2), int((in_w - crop_w) / 2)
    return x[:, top : top + crop_h, left : left + crop_w, :]


def resize_images(
    x: torch.Tensor, height: int, width: int, interpolation: str = "bilinear", antialias: bool = False
) -> Any:
    from unison.ops.image import resize

    if (x.shape[1], x.shape[2]) == (height, width):
        return x
    return resize(x, [height, width], method=interpolation, antialias=antialias).to(x.dtype)


__all__ = ["array_to_img", "crop_to_aspect", "img_to_array", "load_img", "resize_images", "save_img"]
