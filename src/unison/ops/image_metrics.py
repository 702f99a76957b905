"""``tf.image``'s measurements and filters: ``image_gradients``, ``sobel_edges``,
``total_variation``, ``psnr``, ``ssim``, ``ssim_multiscale`` and ``extract_patches``, with TF's
formulas (SSIM: an 11x11 Gaussian window of sigma 1.5, VALID filtering, k1 = 0.01, k2 = 0.03).

Example:
    >>> import unison as tf
    >>> image = tf.reshape(tf.range(16, dtype=tf.float32), [1, 4, 4, 1])
    >>> dy, dx = tf.image.image_gradients(image)
    >>> dy[0, :, 0, 0].tolist(), dx[0, 0, :, 0].tolist()
    ([4.0, 4.0, 4.0, 0.0], [1.0, 1.0, 1.0, 0.0])
"""

from __future__ import annotations

import math as _math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import to_tensor
from unison.ops.image_core import convert_image_dtype


def _rank4(images: Any, op: str) -> torch.Tensor:
    t = to_tensor(images)
    if t.dim() != 4:
        raise ValueError(
            f"tf.image.{op} expects a 4D tensor [batch_size, h, w, d], not {list(t.shape)}. Add the batch axis with "
            "tf.expand_dims(image, 0)."
        )
    return t


def image_gradients(image: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.image.image_gradients``: forward differences ``(dy, dx)``, zero in the last row/column."""
    t = _rank4(image, "image_gradients")
    dy = F.pad(t[:, 1:] - t[:, :-1], (0, 0, 0, 0, 0, 1))
    dx = F.pad(t[:, :, 1:] - t[:, :, :-1], (0, 0, 0, 1))
    return dy, dx


def sobel_edges(image: Any) -> torch.Tensor:
    """``tf.image.sobel_edges``: ``[batch, h, w, d, 2]`` Sobel responses (dy, dx), reflect-padded."""
    t = _rank4(image, "sobel_edges")
    work = t if t.is_floating_point() else t.to(torch.float32)
    ky = torch.tensor([[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]], dtype=work.dtype)
    kernels = torch.stack([ky, ky.t()]).unsqueeze(1)  # [2, 1, 3, 3]
    batch, height, width, depth = work.shape
    planes = work.permute(0, 3, 1, 2).reshape(batch * depth, 1, height, width)
    padded = F.pad(planes, (1, 1, 1, 1), mode="reflect")
    out = F.conv2d(padded, kernels.to(work.device))  # [b*d, 2, h, w]
    return out.reshape(batch, depth, 2, height, width).permute(0, 3, 4, 1, 2)


def total_variation(images: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.total_variation``: the sum of absolute neighbour differences, per image of a batch."""
    t = to_tensor(images)
    if t.dim() not in (3, 4):
        raise ValueError(f"tf.image.total_variation: images must be 3-D or 4-D. Received shape {list(t.shape)}.")
    dims = (-3, -2, -1)
    rows = (t[..., 1:, :, :] - t[..., :-1, :, :]).abs().sum(dim=dims)
    cols = (t[..., :, 1:, :] - t[..., :, :-1, :]).abs().sum(dim=dims)
    return (rows + cols).to(t.dtype)  # torch sums integers in int64; TF keeps the dtype


def _float_pair(a: Any, b: Any, max_val: Any, op: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x, y = to_tensor(a), to_tensor(b)
    if x.dtype != y.dtype:
        raise TypeError(f"tf.image.{op}: both images must have the same dtype. Received {x.dtype} and {y.dtype}.")
    peak = convert_image_dtype(to_tensor(max_val).to(x.dtype), torch.float32)
    return convert_image_dtype(x, torch.float32), convert_image_dtype(y, torch.float32), peak


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.psnr``: peak signal-to-noise ratio in dB over the last three axes."""
    x, y, peak = _float_pair(a, b, max_val, "psnr")
    mse = ((x - y) ** 2).mean(dim=(-3, -2, -1))
    return 20 * torch.log(peak) / _math.log(10.0) - (10 / _math.log(10.0)) * torch.log(mse)


def _gauss(size: int, sigma: float) -> torch.Tensor:
    coords = torch.arange(size, dtype=torch.float32) - (size - 1) / 2.0
    g = coords**2 * (-0.5 / sigma**2)
    g = g.reshape(1, -1) + g.reshape(-1, 1)
    return torch.softmax(g.reshape(-1), dim=0).reshape(size, size)


def _ssim_per_channel(
    x: torch.Tensor,
    y: torch.Tensor,
    peak: torch.Tensor,
    size: int,
    sigma: float,
    k1: float,
    k2: float,
    op: str,
    index_map: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    height, width, depth = x.shape[-3:]
    if height < size or width < size:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.image.{op}: the images ({height}x{width}) must be at least filter_size={size} high and "
            "wide. Pass a smaller filter_size or larger images.",
        )
    kernel = _gauss(size, sigma).to(x.device).expand(depth, 1, size, size)
    lead = x.shape[:-3]

    def reducer(v: torch.Tensor) -> torch.Tensor:
        planes = v.reshape(-1, height, width, depth).permute(0, 3, 1, 2)
        out = F.conv2d(planes, kernel, groups=depth).permute(0, 2, 3, 1)
        return out.reshape(*lead, *out.shape[1:])

    c1, c2 = (k1 * peak) ** 2, (k2 * peak) ** 2
    mean0, mean1 = reducer(x), reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = mean0.square() + mean1.square()
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(x.square() + y.square())
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if index_map:
        return luminance * cs, cs
    return (luminance * cs).mean(dim=(-3, -2)), cs.mean(dim=(-3, -2))


def ssim(
    img1: Any,
    img2: Any,
    max_val: Any,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
    return_index_map: bool = False,
) -> torch.Tensor:
    """``tf.image.ssim``: structural similarity per image (mean over the window positions and channels),
    or with ``return_index_map`` the ``[..., h', w']`` map of each window position (mean over channels)."""
    x, y, peak = _float_pair(img1, img2, max_val, "ssim")
    size, sigma = int(filter_size), float(filter_sigma)
    per_channel, _ = _ssim_per_channel(x, y, peak, size, sigma, k1, k2, "ssim", index_map=return_index_map)
    return per_channel.mean(dim=-1)


_POWER_FACTORS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(
    img1: Any,
    img2: Any,
    max_val: Any,
    power_factors: Sequence[float] = _POWER_FACTORS,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
) -> torch.Tensor:
    """``tf.image.ssim_multiscale``: MS-SSIM over ``len(power_factors)`` scales (2x2 average pooling)."""
    x, y, peak = _float_pair(img1, img2, max_val, "ssim_multiscale")
    lead = x.shape[:-3]
    factors = torch.tensor(list(power_factors), dtype=torch.float32)
    terms = []
    for scale in range(len(factors)):
        if scale > 0:
            x, y = (_halve(v) for v in (x, y))
        value, cs = _ssim_per_channel(x, y, peak, int(filter_size), float(filter_sigma), k1, k2, "ssim_multiscale")
        terms.append(torch.relu(value if scale == len(factors) - 1 else cs))
    stacked = torch.stack(terms, dim=-1)
    return (stacked**factors).prod(dim=-1).mean(dim=-1).reshape(lead)


def _halve(v: torch.Tensor) -> torch.Tensor:
    # TF pads an odd side by mirroring its last row/column (SYMMETRIC), then 2x2 average-pools (VALID).
    planes = v.reshape(-1, *v.shape[-3:]).permute(0, 3, 1, 2)
    planes = torch.cat([planes, planes[:, :, -1:]], dim=2) if planes.shape[2] % 2 else planes
    planes = torch.cat([planes, planes[:, :, :, -1:]], dim=3) if planes.shape[3] % 2 else planes
    pooled = F.avg_pool2d(planes, 2).permute(0, 2, 3, 1)
    return pooled.reshape(*v.shape[:-3], *pooled.shape[1:])


def _four(values: Any, name: str) -> tuple[int, int]:
    items = [int(v) for v in values]
    if len(items) != 4 or items[0] != 1 or items[3] != 1:
        raise ValueError(f"tf.image.extract_patches: {name} must be [1, rows, cols, 1]. Received {name}={values!r}")
    return items[1], items[2]


def extract_patches(
    images: Any, sizes: Any, strides: Any, rates: Any, padding: str, name: str | None = None
) -> torch.Tensor:
    """``tf.image.extract_patches``: ``[batch, out_rows, out_cols, ksize_rows * ksize_cols * depth]``
    patches (row, column, channel order), ``padding`` ``"VALID"`` or ``"SAME"`` (zeros)."""
    t = _rank4(images, "extract_patches")
    (kh, kw), (sh, sw), (rh, rw) = _four(sizes, "sizes"), _four(strides, "strides"), _four(rates, "rates")
    mode = str(padding).upper()
    if mode not in ("VALID", "SAME"):
        raise ValueError(f"tf.image.extract_patches: padding must be 'VALID' or 'SAME'. Received: {padding!r}")
    batch, height, width, depth = t.shape
    eff_h, eff_w = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if mode == "VALID":
        out_h, out_w = max((height - eff_h) // sh + 1, 0), max((width - eff_w) // sw + 1, 0)
        top = left = 0
    else:
        out_h, out_w = -(-height // sh), -(-width // sw)
        top = max((out_h - 1) * sh + eff_h - height, 0) // 2
        left = max((out_w - 1) * sw + eff_w - width, 0) // 2
    rows = (torch.arange(out_h) * sh - top).reshape(-1, 1, 1, 1) + (torch.arange(kh) * rh).reshape(1, 1, -1, 1)
    cols = (torch.arange(out_w) * sw - left).reshape(1, -1, 1, 1) + (torch.arange(kw) * rw).reshape(1, 1, 1, -1)
    inside = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)  # [oh, ow, kh, kw]
    flat = (rows.clamp(0, max(height - 1, 0)) * width + cols.clamp(0, max(width - 1, 0))).reshape(-1)
    gathered = (
        t.reshape(batch, height * width, depth)[:, flat.to(t.device)]
        if height * width
        else t.new_zeros(batch, flat.numel(), depth)
    )
    gathered = gathered.reshape(batch, out_h, out_w, kh, kw, depth) * inside.to(t.device)[None, ..., None].to(t.dtype)
    return gathered.reshape(batch, out_h, out_w, kh * kw * depth)


__all__ = ["extract_patches", "image_gradients", "psnr", "sobel_edges", "ssim", "ssim_multiscale", "total_variation"]

# symbolic-aware here, where pickle finds them by their module and name
wrap_namespace(globals(), __all__)
