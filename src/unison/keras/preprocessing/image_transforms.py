"""Keras 2's image transforms (``keras.preprocessing.image``): ``apply_affine_transform``,
``apply_channel_shift``, ``apply_brightness_shift``, their ``random_*`` forms, and Keras 3's
``smart_resize``.

They take one NumPy image and return a NumPy image, as tf_keras's. ``apply_affine_transform``
builds tf_keras's matrix (rotation ``theta`` and ``shear`` in degrees, shifts ``tx``/``ty`` in
pixels, zooms ``zx``/``zy``, about the image centre; with ``row_axis < col_axis``, ``tx`` moves
the columns, as in tf_keras) and samples
every channel at once in torch, as SciPy's ``ndimage.affine_transform`` does with ``order`` 0
(nearest) or 1 (linear) and its ``mode``: ``"nearest"`` (edge repeated), ``"reflect"``
(``d c b a | a b c d``), ``"wrap"`` (SciPy's: first and last pixel overlap) and ``"constant"``
(``cval`` outside the image). The ``random_*`` functions draw from NumPy's global generator in
tf_keras's order, so after the same ``np.random.seed`` they draw the same parameters.

Example:
    >>> import numpy as np
    >>> x = np.arange(9.0).reshape(1, 3, 3)  # channels first: channel, row, column
    >>> apply_affine_transform(x, tx=1, fill_mode="constant").tolist()
    [[[1.0, 2.0, 0.0], [4.0, 5.0, 0.0], [7.0, 8.0, 0.0]]]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.keras.utils.image_utils import array_to_img, crop_to_aspect, img_to_array, resize_images

_FILL_MODES = ("constant", "nearest", "reflect", "wrap")


def _fold(coord: torch.Tensor, size: int, mode: str) -> torch.Tensor:
    """SciPy's boundary ``mode`` for sample coordinates along an axis of ``size`` pixels."""
    if mode == "constant":
        return coord
    if size <= 1:
        return torch.zeros_like(coord)
    if mode == "reflect":  # half-sample symmetric, period 2 * size
        coord = torch.remainder(coord, 2.0 * size)
        coord = torch.where(coord >= size, 2.0 * size - 1.0 - coord, coord)
    elif mode == "wrap":  # SciPy's legacy wrap: period size - 1
        outside = (coord < 0) | (coord > size - 1)  # inside points stay: the last one is not the first
        coord = torch.where(outside, torch.remainder(coord, float(size - 1)), coord)
    return coord.clamp(0.0, size - 1.0)


def _sample(x: torch.Tensor, c0: torch.Tensor, c1: torch.Tensor, order: int, mode: str, cval: float) -> torch.Tensor:
    """``x`` ``(C, D0, D1)`` read at the float coordinates ``(c0, c1)`` (each ``(D0, D1)``)."""
    _, d0, d1 = x.shape
    outside = (c0 < 0) | (c0 > d0 - 1) | (c1 < 0) | (c1 > d1 - 1)
    f0, f1 = _fold(c0, d0, mode), _fold(c1, d1, mode)
    if order == 0:
        out = x[:, torch.floor(f0 + 0.5).clamp(0, d0 - 1).long(), torch.floor(f1 + 0.5).clamp(0, d1 - 1).long()]
    else:
        i0, i1 = torch.floor(f0), torch.floor(f1)
        w0, w1 = f0 - i0, f1 - i1
        a0, b0 = i0.clamp(0, d0 - 1).long(), (i0 + 1).clamp(0, d0 - 1).long()
        a1, b1 = i1.clamp(0, d1 - 1).long(), (i1 + 1).clamp(0, d1 - 1).long()
        top = x[:, a0, a1] * (1 - w1) + x[:, a0, b1] * w1
        bottom = x[:, b0, a1] * (1 - w1) + x[:, b0, b1] * w1
        out = top * (1 - w0) + bottom * w0
    if mode == "constant":
        out = torch.where(outside, torch.full_like(out, cval), out)
    return out


def transform_matrix_offset_center(matrix: np.ndarray, x: int, y: int) -> np.ndarray:
    """``matrix`` moved to act about the centre of an ``x`` by ``y`` image (tf_keras's helper)."""
    o_x, o_y = float(x) / 2 - 0.5, float(y) / 2 - 0.5
    offset = np.array([[1, 0, o_x], [0, 1, o_y], [0, 0, 1]])
    reset = np.array([[1, 0, -o_x], [0, 1, -o_y], [0, 0, 1]])
    return offset @ matrix @ reset


def _axes(x: np.ndarray, row_axis: int, col_axis: int, channel_axis: int) -> None:
    if x.ndim != 3:
        raise ValueError(
            f"The image must be 3-D (rows, columns and channels, in the order the *_axis arguments say). "
            f"Received: an array of shape {x.shape}; a grayscale image needs a channels axis of 1."
        )
    if sorted(a % 3 for a in (row_axis, col_axis, channel_axis)) != [0, 1, 2]:
        raise ValueError(
            "`row_axis`, `col_axis` and `channel_axis` must name the three different axes of the image. "
            f"Received: row_axis={row_axis}, col_axis={col_axis}, channel_axis={channel_axis}"
        )


def apply_affine_transform(
    x: Any,
    theta: float = 0,
    tx: float = 0,
    ty: float = 0,
    shear: float = 0,
    zx: float = 1,
    zy: float = 1,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    order: int = 1,
) -> np.ndarray:
    """Rotate, shift, shear and zoom one image about its centre (tf_keras's ``apply_affine_transform``).

    Args:
        x: a 3-D image; ``row_axis``, ``col_axis`` and ``channel_axis`` say which axis is which.
        theta: rotation in degrees; tx, ty: shifts in pixels; shear: in degrees;
        zx, zy: zoom factors (``< 1`` magnifies).
        fill_mode, cval: outside points, as SciPy's ``mode``/``cval``; order: 0 (nearest) or 1 (linear).
    """
    x = np.asarray(x)
    _axes(x, row_axis, col_axis, channel_axis)
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"Unknown `fill_mode`: expected one of {list(_FILL_MODES)}. Received: fill_mode={fill_mode!r}")
    if order not in (0, 1):
        raise ValueError(f"`order` must be 0 (nearest) or 1 (linear interpolation). Received: order={order!r}")
    matrices = []
    if theta != 0:
        t = np.deg2rad(theta)
        matrices.append(np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]]))
    if tx != 0 or ty != 0:
        matrices.append(np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]]))
    if shear != 0:
        s = np.deg2rad(shear)
        matrices.append(np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]]))
    if zx != 1 or zy != 1:
        matrices.append(np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]]))
    if not matrices:
        return x
    matrix = matrices[0]
    for m in matrices[1:]:
        matrix = matrix @ m
    matrix = transform_matrix_offset_center(matrix, x.shape[row_axis], x.shape[col_axis])
    if col_axis > row_axis:  # the matrix is in (x, y) order; arrays index (row, column): M' = P M P
        matrix[:, [0, 1]] = matrix[:, [1, 0]]
        matrix[[0, 1]] = matrix[[1, 0]]
    channels = torch.from_numpy(np.ascontiguousarray(np.moveaxis(x, channel_axis, 0))).to(torch.float64)
    d0, d1 = channels.shape[1], channels.shape[2]
    o0, o1 = torch.meshgrid(torch.arange(d0, dtype=torch.float64), torch.arange(d1, dtype=torch.float64), indexing="ij")
    c0 = matrix[0, 0] * o0 + matrix[0, 1] * o1 + matrix[0, 2]
    c1 = matrix[1, 0] * o0 + matrix[1, 1] * o1 + matrix[1, 2]
    out = _sample(channels, c0, c1, order, fill_mode, float(cval)).numpy()
    if not np.issubdtype(x.dtype, np.floating):
        out = np.floor(out + 0.5)  # SciPy rounds half up into an integer output
    return np.moveaxis(out.astype(x.dtype), 0, channel_axis)


def _range(value: Any, what: str) -> tuple[float, float]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValueError(f"`{what}` should be a tuple or list of two floats. Received: {value!r}")
    return float(value[0]), float(value[1])


def random_rotation(
    x: Any,
    rg: float,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    interpolation_order: int = 1,
) -> np.ndarray:
    """Rotate by an angle drawn from ``[-rg, rg]`` degrees."""
    theta = np.random.uniform(-rg, rg)
    return apply_affine_transform(
        x, theta=theta, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
        fill_mode=fill_mode, cval=cval, order=interpolation_order,
    )  # fmt: skip


def random_shift(
    x: Any,
    wrg: float,
    hrg: float,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    interpolation_order: int = 1,
) -> np.ndarray:
    """Shift by fractions drawn from ``[-hrg, hrg]`` of the height and ``[-wrg, wrg]`` of the width."""
    x = np.asarray(x)
    _axes(x, row_axis, col_axis, channel_axis)
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(
        x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
        fill_mode=fill_mode, cval=cval, order=interpolation_order,
    )  # fmt: skip


def random_shear(
    x: Any,
    intensity: float,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    interpolation_order: int = 1,
) -> np.ndarray:
    """Shear by an angle drawn from ``[-intensity, intensity]`` degrees."""
    shear = np.random.uniform(-intensity, intensity)
    return apply_affine_transform(
        x, shear=shear, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
        fill_mode=fill_mode, cval=cval, order=interpolation_order,
    )  # fmt: skip


def random_zoom(
    x: Any,
    zoom_range: Any,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    interpolation_order: int = 1,
) -> np.ndarray:
    """Zoom rows and columns by two factors drawn from ``zoom_range`` (``(1, 1)``: unchanged)."""
    low, high = _range(zoom_range, "zoom_range")
    zx, zy = (1.0, 1.0) if (low, high) == (1.0, 1.0) else np.random.uniform(low, high, 2)
    return apply_affine_transform(
        x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
        fill_mode=fill_mode, cval=cval, order=interpolation_order,
    )  # fmt: skip


def apply_channel_shift(x: Any, intensity: float, channel_axis: int = 0) -> np.ndarray:
    """Add ``intensity`` to every channel, clipped to the image's own minimum and maximum."""
    x = np.asarray(x)
    return np.clip(x + intensity, np.min(x), np.max(x))


def random_channel_shift(x: Any, intensity_range: float, channel_axis: int = 0) -> np.ndarray:
    """``apply_channel_shift`` by an intensity drawn from ``[-intensity_range, intensity_range]``."""
    intensity = np.random.uniform(-intensity_range, intensity_range)
    return apply_channel_shift(x, intensity, channel_axis)


def apply_brightness_shift(x: Any, brightness: float, scale: bool = True) -> np.ndarray:
    """Scale the brightness by ``brightness`` through an 8-bit image, as tf_keras does with Pillow.

    The image goes to 8 bits (rescaled to ``[0, 255]`` when ``scale`` or when its values leave that
    range), its pixels are multiplied by ``brightness`` (Pillow's ``ImageEnhance.Brightness``), and it
    comes back as float32 (in its first range again when it was rescaled only for the trip).
    """
    from PIL import ImageEnhance

    x = np.asarray(x)
    x_min, x_max = np.min(x), np.max(x)
    local_scale = bool(x_min < 0 or x_max > 255)
    image = ImageEnhance.Brightness(array_to_img(x, scale=local_scale or scale)).enhance(brightness)
    out = img_to_array(image)
    if not scale and local_scale:
        out = out / 255 * (x_max - x_min) + x_min
    return out


def random_brightness(x: Any, brightness_range: Any, scale: bool = True) -> np.ndarray:
    """``apply_brightness_shift`` by a factor drawn from ``brightness_range``."""
    low, high = _range(brightness_range, "brightness_range")
    return apply_brightness_shift(x, np.random.uniform(low, high), scale)


def smart_resize(x: Any, size: Any, interpolation: str = "bilinear", data_format: str = "channels_last") -> Any:
    """Resize to ``size`` without distorting: the largest central window of the target aspect ratio,
    resized (Keras's ``smart_resize``). Takes an image or a batch; a NumPy input gives NumPy back.

    Example:
        >>> smart_resize(np.ones((4, 8, 3)), (2, 2)).shape
        (2, 2, 3)
    """
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise ValueError(f"`size` must be (height, width). Received: size={size!r}")
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            f"`data_format` must be 'channels_last' or 'channels_first'. Received: data_format={data_format!r}"
        )
    is_numpy = isinstance(x, np.ndarray)
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))
    if t.dim() not in (3, 4):
        raise ValueError(
            f"Expected an image array with shape `(height, width, channels)`, or `(batch_size, height, width, "
            f"channels)`, but got input with incorrect rank, of shape {tuple(t.shape)}."
        )
    batched = t.dim() == 4
    t = t if batched else t.unsqueeze(0)
    if data_format == "channels_first":
        t = t.permute(0, 2, 3, 1)
    t = t.to(torch.float32) if not t.is_floating_point() else t
    out = resize_images(crop_to_aspect(t, int(size[0]), int(size[1])), int(size[0]), int(size[1]), interpolation)
    if data_format == "channels_first":
        out = out.permute(0, 3, 1, 2)
    out = out if batched else out[0]
    return out.numpy() if is_numpy else out


__all__ = [
    "apply_affine_transform",
    "apply_brightness_shift",
    "apply_channel_shift",
    "random_brightness",
    "random_channel_shift",
    "random_rotation",
    "random_shear",
    "random_shift",
    "random_zoom",
    "smart_resize",
    "transform_matrix_offset_center",
]
