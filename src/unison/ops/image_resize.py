"""``tf.image.resize`` and its family, channels last as in TF.

``resize`` follows TF 2 (half-pixel centres): ``bilinear`` equals
``torch.nn.functional.interpolate(..., mode="bilinear", align_corners=False)`` (computed by
OpenCV's kernel where it is installed and nothing differentiates: see ``image_resize_cv2``); ``nearest``
picks ``floor((i + 0.5) * in / out)``; ``bicubic`` is Keys' cubic (a = -0.5) with out-of-image
taps dropped and the rest renormalised, its weights read from TF's 1024-entry table; ``area``
weighs each input pixel by its overlap; ``lanczos3``/``lanczos5``/``gaussian``/``mitchellcubic``
and ``antialias=True`` are TF's scale-and-translate kernels (widened when downsampling).

Example:
    >>> import unison as tf
    >>> image = tf.reshape(tf.eye(5), [5, 5, 1])
    >>> [round(v, 4) for v in tf.image.resize(image, [3, 5])[0, :, 0].tolist()]
    [0.6667, 0.3333, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.ops import image_resize_cv2
from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import to_tensor
from unison.ops.image_core import _batched


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


# --- sampling kernels (TF's sampling_kernels.h), x = |distance| in input pixels --------------------


def _triangle(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp(1.0 - x, min=0.0)


def _keys_cubic(x: torch.Tensor) -> torch.Tensor:
    # Keys' cubic convolution kernel with a = -0.5 (Catmull-Rom).
    near = (1.5 * x - 2.5) * x * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return torch.where(x <= 1.0, near, torch.where(x < 2.0, far, torch.zeros_like(x)))


def _mitchell_cubic(x: torch.Tensor) -> torch.Tensor:
    # Mitchell-Netravali with B = C = 1/3.
    near = ((7.0 / 6.0) * x - 2.0) * x * x + 8.0 / 9.0
    far = (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0
    return torch.where(x < 1.0, near, torch.where(x < 2.0, far, torch.zeros_like(x)))


def _lanczos(radius: float) -> Callable[[torch.Tensor], torch.Tensor]:
    def kernel(x: torch.Tensor) -> torch.Tensor:
        pix = torch.pi * x
        value = radius * torch.sin(pix) * torch.sin(pix / radius) / (pix * pix).clamp_min(1e-30)
        return torch.where(x <= 1e-3, torch.ones_like(x), torch.where(x > radius, torch.zeros_like(x), value))

    return kernel


def _gaussian(x: torch.Tensor) -> torch.Tensor:
    sigma = 0.5  # TF's Gaussian: radius 1.5 = 3 sigma
    return torch.where(x >= 1.5, torch.zeros_like(x), torch.exp(-x * x / (2.0 * sigma * sigma)))


_KERNELS: dict[str, tuple[Callable[[torch.Tensor], torch.Tensor], float]] = {
    "bilinear": (_triangle, 1.0),
    "bicubic": (_keys_cubic, 2.0),
    "lanczos3": (_lanczos(3.0), 3.0),
    "lanczos5": (_lanczos(5.0), 5.0),
    "gaussian": (_gaussian, 1.5),
    "mitchellcubic": (_mitchell_cubic, 2.0),
}


def _scale_and_translate_weights(in_size: int, out_size: int, method: str, antialias: bool) -> torch.Tensor:
    """``[out_size, in_size]`` weights of TF's ScaleAndTranslate (its span bounds, float32 arithmetic)."""
    kernel, radius = _KERNELS[method]
    inv_scale = torch.tensor(in_size, dtype=torch.float32) / out_size
    kernel_scale = torch.clamp(inv_scale, min=1.0) if antialias else torch.tensor(1.0)
    sample = (torch.arange(out_size, dtype=torch.float32) + 0.5) * inv_scale
    start = torch.ceil(sample - radius * kernel_scale - 0.5).clamp(0, in_size - 1)
    end = torch.floor(sample + radius * kernel_scale - 0.5).clamp(0, in_size - 1) + 1
    source = torch.arange(in_size, dtype=torch.float32).unsqueeze(0)
    inside = (source >= start.unsqueeze(1)) & (source < end.unsqueeze(1))
    distance = ((source + 0.5 - sample.unsqueeze(1)) * (1.0 / kernel_scale)).abs()
    weights = torch.where(inside, kernel(distance), torch.zeros_like(distance))
    total = weights.sum(dim=1, keepdim=True)
    usable = total.abs() >= 1000 * torch.finfo(torch.float32).tiny
    weights = torch.where(usable, weights / torch.where(usable, total, torch.ones_like(total)), weights)
    return weights.masked_fill(((sample < 0) | (sample > in_size)).unsqueeze(1), 0.0)


def _bicubic_weights(in_size: int, out_size: int) -> torch.Tensor:
    """TF's ResizeBicubic with half-pixel centres: Keys' weights from a 1024-entry table, taps
    outside the image dropped and the rest renormalised."""
    table_size = 1024
    x = torch.arange(table_size + 1, dtype=torch.float32) / table_size
    near = (1.5 * x - 2.5) * x * x + 1.0
    x1 = x + 1.0
    far = ((-0.5 * x1 + 2.5) * x1 - 4.0) * x1 + 2.0
    scale = torch.tensor(in_size, dtype=torch.float32) / out_size
    location = (torch.arange(out_size, dtype=torch.float32) + 0.5) * scale - 0.5
    base = torch.floor(location)
    offset = torch.round((location - base) * table_size).long()  # lrintf
    taps = torch.stack([far[offset], near[offset], near[table_size - offset], far[table_size - offset]], dim=1)
    index = base.long().unsqueeze(1) + torch.arange(-1, 3).unsqueeze(0)
    valid = (index >= 0) & (index < in_size)
    taps = torch.where(valid, taps, torch.zeros_like(taps))
    taps = taps / taps.sum(dim=1, keepdim=True)
    weights = torch.zeros(out_size, in_size, dtype=torch.float32)
    return weights.scatter_add_(1, index.clamp(0, in_size - 1), taps)


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


def _size(size: Any, op: str) -> tuple[int, int]:
    values = to_tensor(size).reshape(-1).tolist() if not isinstance(size, (list, tuple)) else list(size)
    if len(values) != 2 or any(int(v) != v for v in values):
        raise ValueError(
            f"tf.image.{op}: 'size' must be a 1-D Tensor of 2 elements: [new_height, new_width], two positive ints. "
            f"Received: size={size!r}"
        )
    if any(int(v) <= 0 for v in values):
        raise InvalidArgumentError(
            f"tf.image.{op}: output dimensions must be positive: size [new_height, new_width] takes two positive "
            f"ints. Received: size={size!r}"
        )
    return int(values[0]), int(values[1])


# Integer pixels become float32 before the bilinear kernel reads them. A fresh float copy of each
# decoded image (4 bytes a value, ~2 MB for a 640x480 photo) is mostly page faults when it is freed
# right after the resize and the next image, of another size, needs it again: the memory goes back
# to the OS and comes back zeroed (a loop over 300 photos keeping its results: 0.36 ms of CPU per
# image for the copy, 0.05-0.08 ms into memory already mapped; the one-thread image pipeline of
# benchmarks/image_files_vs_tf.py, in-process A/B: 1.46 vs 1.52 CPU ms per image in all). So each
# thread converts into a buffer of its own, kept between calls, for images up to this many values
# (32 MB of float32 per thread at most; a pipeline's worker threads free theirs when they end).
_SCRATCH_MAX = 8 * 1024 * 1024
_scratch = threading.local()


def _traced() -> bool:
    return bool(torch.compiler.is_compiling() or torch.jit.is_tracing() or torch._C._are_functorch_transforms_active())


def _as_float_input(x: torch.Tensor) -> torch.Tensor:
    """``x`` as float32 for a kernel that only reads it (the result must not outlive the call):
    an integer CPU tensor is converted into this thread's scratch buffer, the same values as
    ``x.to(torch.float32)``."""
    n = x.numel()
    if x.dtype.is_floating_point or x.dtype.is_complex or x.device.type != "cpu" or n > _SCRATCH_MAX:
        return x.to(torch.float32)
    if type(x) is not torch.Tensor or not x.is_contiguous() or _traced():
        # traced or transformed tensors (vmap): the plain op, which tracers know; a strided view:
        # ``to`` keeps its layout, which picks the kernel (and its rounding), so the plain op too
        return x.to(torch.float32)
    buffer = getattr(_scratch, "buffer", None)
    if buffer is None or buffer.numel() < n:
        room = min(max(n + n // 4, 1 << 16), _SCRATCH_MAX)  # room for the next, larger image
        buffer = torch.empty(room, dtype=torch.float32)
        _scratch.buffer = buffer
    return buffer[:n].view(x.shape).copy_(x)


_RESIZE_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _weights(in_size: int, out_size: int, kind: str, antialias: bool) -> torch.Tensor:
    if kind == "area":
        return _area_weights(in_size, out_size)
    if kind == "bicubic" and not antialias:
        return _bicubic_weights(in_size, out_size)
    return _scale_and_translate_weights(in_size, out_size, kind, antialias)


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
    if method == "bilinear" and not antialias and not preserve_aspect_ratio:
        fast = image_resize_cv2.bilinear(images, size, as_float=_as_float_input)  # the common case, lean
        if fast is not None:
            return fast
    x, batched = _batched(images, "resize")
    kind = str(method).lower()
    if kind not in _RESIZE_METHODS:
        raise ValueError(
            f"tf.image.resize: method must be one of {list(_RESIZE_METHODS)}. Received: method={method!r}."
        )
    height, width = x.shape[1], x.shape[2]
    new_height, new_width = _size(size, "resize")
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
        fast = None
        if kind == "bilinear" and not antialias:
            fast = image_resize_cv2.bilinear(x, [new_height, new_width], as_float=_as_float_input)
        if fast is not None:
            out = fast
        elif kind == "bilinear" and not antialias:
            xf = _as_float_input(x)  # read by the kernel only: the output is a new tensor
            planar = F.interpolate(
                xf.permute(0, 3, 1, 2), size=(new_height, new_width), mode="bilinear", align_corners=False
            )
            out = planar.permute(0, 2, 3, 1)
        else:
            xf = x.to(torch.float32)
            wh, ww = _weights(height, new_height, kind, antialias), _weights(width, new_width, kind, antialias)
            out = torch.einsum("oh,nhwc,pw->nopc", wh.to(xf), xf, ww.to(xf))
    return out if batched else out[0]


def resize_with_pad(
    image: Any, target_height: int, target_width: int, method: str = ResizeMethod.BILINEAR, antialias: bool = False
) -> torch.Tensor:
    """``tf.image.resize_with_pad``: resize to fit inside the target keeping the aspect ratio, then
    pad the rest evenly with zeros (float32, as ``resize`` returns)."""
    x, batched = _batched(image, "resize_with_pad")
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise ValueError(
            f"tf.image.resize_with_pad: target_height and target_width must be > 0. Received ({th}, {tw})."
        )
    height, width = x.shape[1], x.shape[2]
    # TF's arithmetic, float32: the larger ratio decides, the resized side is floor(size / ratio).
    ratio = torch.maximum(torch.tensor(width / tw, dtype=torch.float32), torch.tensor(height / th, dtype=torch.float32))
    resized_h = int(torch.floor(torch.tensor(height, dtype=torch.float32) / ratio))
    resized_w = int(torch.floor(torch.tensor(width, dtype=torch.float32) / ratio))
    pad_h = max(int(torch.floor(torch.tensor((th - resized_h) / 2, dtype=torch.float32))), 0)
    pad_w = max(int(torch.floor(torch.tensor((tw - resized_w) / 2, dtype=torch.float32))), 0)
    resized = resize(x, [resized_h, resized_w], method=method, antialias=antialias)
    out = F.pad(resized, (0, 0, pad_w, tw - resized_w - pad_w, pad_h, th - resized_h - pad_h))
    return out if batched else out[0]


__all__ = ["ResizeMethod", "resize", "resize_with_pad"]

# symbolic-aware here, where pickle finds them by their module and name
wrap_namespace(globals(), __all__)
