"""``keras.ops.image``, part 2: colour spaces, Sobel edges, Gaussian blur, SSIM and padding or
cropping to a size, with Keras's arguments (``data_format=None`` reads ``image_data_format()``).

Example:
    >>> from unison.keras import ops
    >>> tuple(ops.image.pad_images(ops.ones((4, 4, 3)), 1, 2, target_height=7, target_width=8).shape)
    (7, 8, 3)
"""

from __future__ import annotations

import functools
import itertools
import operator
from typing import Any

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.keras.ops._convert import tensor
from unison.ops import image_color as _tf_color
from unison.ops import image_metrics as _tf_metrics
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor


def _data_format(data_format: str | None) -> str:
    from unison.keras.ops._config import standardize_data_format

    return standardize_data_format(data_format)


def _rank_3_or_4(t: Tensor, what: str = "images") -> None:
    if t.dim() not in (3, 4):
        raise ValueError(
            f"Invalid {what} rank: expected rank 3 (single image) or rank 4 (batch of images). "
            f"Received input with shape: {what}.shape={tuple(t.shape)}"
        )


def _last(t: Tensor, first: bool) -> Tensor:
    return t.movedim(-3, -1) if first else t


def _back(t: Tensor, first: bool) -> Tensor:
    return t.movedim(-1, -3) if first else t


def _color(images: Any, data_format: str | None, convert: Any) -> Tensor:
    t = tensor(images)
    _rank_3_or_4(t)
    if not t.is_floating_point():
        raise ValueError(f"Invalid images dtype: expected float dtype. Received: images.dtype={t.dtype}")
    first = _data_format(data_format) == "channels_first"
    return _back(tensor(convert(_last(t, first))), first)


def rgb_to_hsv(images: Any, data_format: str | None = None) -> Tensor:
    """``keras.ops.image.rgb_to_hsv(images, data_format=None)``: RGB in [0, 1] to HSV in [0, 1]."""
    return _color(images, data_format, _tf_color.rgb_to_hsv)


def hsv_to_rgb(images: Any, data_format: str | None = None) -> Tensor:
    """``keras.ops.image.hsv_to_rgb(images, data_format=None)``: HSV in [0, 1] to RGB."""
    return _color(images, data_format, _tf_color.hsv_to_rgb)


def sobel_edges(images: Any, data_format: str | None = None) -> Tensor:
    """``keras.ops.image.sobel_edges(images, data_format=None)``: the vertical and horizontal Sobel
    responses, ``(N, H, W, C, 2)`` (``(N, C, H, W, 2)`` channels-first)."""
    t = tensor(images)
    first = data_format == "channels_first"  # Keras compares the raw argument here
    edges = tensor(_tf_metrics.sobel_edges(t.permute(0, 2, 3, 1) if first else t))
    return edges.permute(0, 3, 1, 2, 4) if first else edges


def _gaussian_1d(size: int, sigma: Any, dtype: torch.dtype) -> Tensor:
    x = torch.arange(size, dtype=dtype) - (size - 1) / 2
    kernel = torch.exp(-0.5 * (x / torch.as_tensor(sigma, dtype=dtype)) ** 2)
    return kernel / kernel.sum()


def gaussian_blur(
    images: Any, kernel_size: Any = (3, 3), sigma: Any = (1.0, 1.0), data_format: str | None = None
) -> Tensor:
    """``keras.ops.image.gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None)``:
    a depthwise Gaussian filter with TF's ``"same"`` padding (zeros outside the image)."""
    t = tensor(images)
    _rank_3_or_4(t)
    squeeze = t.dim() == 3
    if squeeze:
        t = t.unsqueeze(0)
    first = data_format == "channels_first"  # Keras's TF backend compares the raw argument
    x = t if first else t.permute(0, 3, 1, 2)
    kh, kw = (int(kernel_size[0]), int(kernel_size[1]))
    # Keras's kernel: outer(gauss(kw, sigma[1]), gauss(kh, sigma[0])) reshaped (not transposed) to (kh, kw)
    ky = _gaussian_1d(kw, sigma[1], x.dtype)
    kx = _gaussian_1d(kh, sigma[0], x.dtype)
    kernel = torch.outer(ky, kx).reshape(kh, kw).to(x.device)
    channels = x.shape[1]
    weight = kernel.reshape(1, 1, kh, kw).expand(channels, 1, kh, kw)
    # TF "same": the extra row or column of padding goes after
    top, left = (kh - 1) // 2, (kw - 1) // 2
    padded = F.pad(x, (left, kw - 1 - left, top, kh - 1 - top))
    out = F.conv2d(padded, weight, groups=channels)
    out = out if first else out.permute(0, 2, 3, 1)
    return out.squeeze(0) if squeeze else out


def ssim(
    image1: Any,
    image2: Any,
    max_val: float = 1.0,
    filter_size: int = 11,
    filter_sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
    data_format: str | None = None,
) -> Tensor:
    """``keras.ops.image.ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01,
    k2=0.03, data_format=None)``: the structural similarity per image pair (a Gaussian window over
    the valid region, averaged over positions and channels)."""
    a, b = tensor(image1), tensor(image2)
    original = a.dtype
    compute = a.dtype if a.is_floating_point() else torch.get_default_dtype()
    a, b = a.to(compute), b.to(compute)
    _rank_3_or_4(a, "image1")
    _rank_3_or_4(b, "image2")
    unbatched = a.dim() == 3
    if unbatched:
        a, b = a.unsqueeze(0), b.unsqueeze(0)
    if _data_format(data_format) == "channels_last":
        a, b = a.permute(0, 3, 1, 2), b.permute(0, 3, 1, 2)
    n, c, h, w = a.shape
    g = _gaussian_1d(filter_size, filter_sigma, compute).to(a.device)
    weight = torch.outer(g, g).reshape(1, 1, filter_size, filter_size)
    x, y = a.reshape(n * c, 1, h, w), b.reshape(n * c, 1, h, w)

    def blur(v: Tensor) -> Tensor:
        return F.conv2d(v, weight)

    mu1, mu2 = blur(x), blur(y)
    s11 = blur(x * x) - mu1 * mu1
    s22 = blur(y * y) - mu2 * mu2
    s12 = blur(x * y) - mu1 * mu2
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    value = ((2 * mu1 * mu2 + c1) * (2 * s12 + c2)) / ((mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2))
    per_image = value.mean(dim=(1, 2, 3)).reshape(n, c).mean(dim=-1)
    out = per_image[0] if unbatched else per_image
    return out.to(original)


def _exactly_two(a: Any, b: Any, target: Any, names: str) -> None:
    if [a, b, target].count(None) != 1:
        raise ValueError(
            f"Must specify exactly two of {names}. Received: {names.replace(', ', '/')}=({a}, {b}, {target})"
        )
    for value, label in zip((a, b, target), names.split(", ")):
        if value is not None and value < 0:
            raise ValueError(f"{label} must be >= 0. Received: {label}={value}")


def pad_images(
    images: Any,
    top_padding: int | None = None,
    left_padding: int | None = None,
    bottom_padding: int | None = None,
    right_padding: int | None = None,
    target_height: int | None = None,
    target_width: int | None = None,
    data_format: str | None = None,
) -> Tensor:
    """``keras.ops.image.pad_images(images, top_padding=None, left_padding=None, bottom_padding=None,
    right_padding=None, target_height=None, target_width=None, data_format=None)``: zero padding;
    give exactly two of each (top, bottom, height) and (left, right, width)."""
    t = tensor(images)
    _rank_3_or_4(t)
    _exactly_two(top_padding, bottom_padding, target_height, "top_padding, bottom_padding, target_height")
    _exactly_two(left_padding, right_padding, target_width, "left_padding, right_padding, target_width")
    first = _data_format(data_format) == "channels_first"
    height, width = (t.shape[-2], t.shape[-1]) if first else (t.shape[-3], t.shape[-2])
    top = top_padding if top_padding is not None else target_height - bottom_padding - height  # type: ignore[operator]
    bottom = bottom_padding if bottom_padding is not None else target_height - top - height  # type: ignore[operator]
    left = left_padding if left_padding is not None else target_width - right_padding - width  # type: ignore[operator]
    right = right_padding if right_padding is not None else target_width - left - width  # type: ignore[operator]
    for value, label in (
        (top, "top_padding"),
        (left, "left_padding"),
        (right, "right_padding"),
        (bottom, "bottom_padding"),
    ):
        if value < 0:
            raise ValueError(f"{label} must be >= 0. Received: {label}={value}")
    pad = (left, right, top, bottom) if first else (0, 0, left, right, top, bottom)
    return F.pad(t, pad)


def crop_images(
    images: Any,
    top_cropping: int | None = None,
    left_cropping: int | None = None,
    bottom_cropping: int | None = None,
    right_cropping: int | None = None,
    target_height: int | None = None,
    target_width: int | None = None,
    data_format: str | None = None,
) -> Tensor:
    """``keras.ops.image.crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None,
    right_cropping=None, target_height=None, target_width=None, data_format=None)``: a crop; give
    exactly two of each (top, bottom, height) and (left, right, width)."""
    t = tensor(images)
    _rank_3_or_4(t)
    _exactly_two(top_cropping, bottom_cropping, target_height, "top_cropping, bottom_cropping, target_height")
    _exactly_two(left_cropping, right_cropping, target_width, "left_cropping, right_cropping, target_width")
    first = _data_format(data_format) == "channels_first"
    height, width = (t.shape[-2], t.shape[-1]) if first else (t.shape[-3], t.shape[-2])
    top = top_cropping if top_cropping is not None else height - target_height - bottom_cropping  # type: ignore[operator]
    th = target_height if target_height is not None else height - bottom_cropping - top  # type: ignore[operator]
    left = left_cropping if left_cropping is not None else width - target_width - right_cropping  # type: ignore[operator]
    tw = target_width if target_width is not None else width - right_cropping - left  # type: ignore[operator]
    for value, label in ((top, "top_cropping"), (th, "target_height"), (left, "left_cropping"), (tw, "target_width")):
        if value < 0:
            raise ValueError(f"{label} must be >= 0. Received: {label}={value}")
    if top + th > height or left + tw > width:
        raise InvalidArgumentError(
            None,
            None,
            f"keras.ops.image.crop_images: the crop (top {top}, left {left}, {th}x{tw}) reaches past the "
            f"{height}x{width} image. Make top + height <= {height} and left + width <= {width}.",
        )
    h_axis, w_axis = (-2, -1) if first else (-3, -2)
    return t.narrow(h_axis, top, th).narrow(w_axis, left, tw)


# --- projective transforms (TF's ImageProjectiveTransformV3) ----------------------------------------

_INTERPOLATIONS = ("nearest", "bilinear")
_FILL_MODES = ("constant", "nearest", "wrap", "reflect")


def _fold(coord: Tensor, size: int, mode: str) -> Tensor:
    """TF's map_coordinate: a source coordinate outside ``[0, size - 1]`` folded back as ``mode`` says."""
    if mode == "constant":
        return coord
    if mode == "nearest":
        return coord.clamp(0.0, size - 1.0)
    if size <= 1:
        return torch.zeros_like(coord)
    if mode == "reflect":
        period = 2.0 * size
        folded = torch.remainder(coord, period)
        folded = torch.where(folded >= size, period - 1.0 - folded, folded)
        inside = (coord >= 0) & (coord <= size - 1)
        return torch.where(inside, coord, folded).clamp(0.0, size - 1.0)
    # wrap, with TF's integer arithmetic on (size - 1)
    span = float(size - 1)
    below = coord + size * (torch.trunc(-coord / span) + 1)
    above = coord - size * torch.trunc(coord / span)
    out = torch.where(coord < 0, below, torch.where(coord > size - 1, above, coord))
    return out.clamp(0.0, size - 1.0)


def _project(images: Tensor, transforms: Tensor, interpolation: str, fill_mode: str, fill_value: float) -> Tensor:
    """Each output pixel (x, y) reads the input at ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``,
    ``k = c0 x + c1 y + 1``; NHWC images, ``(N, 8)`` transforms."""
    n, height, width, channels = images.shape
    m = transforms.to(device=images.device, dtype=torch.float32)
    if m.shape[0] == 1 and n > 1:
        m = m.expand(n, 8)
    ys, xs = torch.meshgrid(
        torch.arange(height, device=images.device, dtype=torch.float32),
        torch.arange(width, device=images.device, dtype=torch.float32),
        indexing="ij",
    )

    def coef(i: int) -> Tensor:
        return m[:, i, None, None]

    k = coef(6) * xs + coef(7) * ys + 1.0
    src_x = _fold((coef(0) * xs + coef(1) * ys + coef(2)) / k, width, fill_mode)
    src_y = _fold((coef(3) * xs + coef(4) * ys + coef(5)) / k, height, fill_mode)
    flat = images.reshape(n, height * width, channels)
    work = flat.to(torch.float32)

    def read(iy: Tensor, ix: Tensor) -> Tensor:
        inside = (iy >= 0) & (iy <= height - 1) & (ix >= 0) & (ix <= width - 1)
        index = (iy.clamp(0, height - 1) * width + ix.clamp(0, width - 1)).long().reshape(n, -1, 1)
        values = work.gather(1, index.expand(-1, -1, channels)).reshape(n, height, width, channels)
        return torch.where(inside.unsqueeze(-1), values, torch.full_like(values, float(fill_value)))

    if interpolation == "nearest":
        # std::round: halves away from zero
        out = read(
            torch.sign(src_y) * torch.floor(src_y.abs() + 0.5), torch.sign(src_x) * torch.floor(src_x.abs() + 0.5)
        )
    else:
        y0, x0 = torch.floor(src_y), torch.floor(src_x)
        wy, wx = (src_y - y0).unsqueeze(-1), (src_x - x0).unsqueeze(-1)
        top = read(y0, x0) * (1 - wx) + read(y0, x0 + 1) * wx
        bottom = read(y0 + 1, x0) * (1 - wx) + read(y0 + 1, x0 + 1) * wx
        out = top * (1 - wy) + bottom * wy
    return out.to(images.dtype)


def _check_interpolation(interpolation: str, fill_mode: str = "constant") -> None:
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(
            f"Invalid value for argument `interpolation`. Expected of one {_INTERPOLATIONS}. "
            f"Received: interpolation={interpolation}"
        )
    if fill_mode not in _FILL_MODES:
        raise ValueError(
            f"Invalid value for argument `fill_mode`. Expected of one {_FILL_MODES}. Received: fill_mode={fill_mode}"
        )


def affine_transform(
    images: Any,
    transform: Any,
    interpolation: str = "bilinear",
    fill_mode: str = "constant",
    fill_value: float = 0,
    data_format: str | None = None,
) -> Tensor:
    """``keras.ops.image.affine_transform(images, transform, interpolation="bilinear",
    fill_mode="constant", fill_value=0, data_format=None)``: ``transform`` ``[a0, a1, a2, b0, b1, b2,
    c0, c1]`` (or a batch of them) maps each output pixel to the input point it samples."""
    _check_interpolation(interpolation, fill_mode)
    t, m = tensor(images), tensor(transform)
    _rank_3_or_4(t)
    if m.dim() not in (1, 2) or m.shape[-1] != 8:
        raise ValueError(
            "Invalid transform: expected shape (8,) (single transform) or (batch, 8) (batch of transforms). "
            f"Received input with shape: transform.shape={tuple(m.shape)}"
        )
    squeeze = t.dim() == 3
    x = t.unsqueeze(0) if squeeze else t
    first = _data_format(data_format) == "channels_first"
    x = x.permute(0, 2, 3, 1) if first else x
    out = _project(x, m.reshape(-1, 8), interpolation, fill_mode, fill_value)
    out = out.permute(0, 3, 1, 2) if first else out
    return out.squeeze(0) if squeeze else out


def _homography(start: Tensor, end: Tensor) -> Tensor:
    """The 8 projective coefficients mapping each ``end`` point to its ``start`` point (batched)."""
    sx, sy, ex, ey = start[..., 0], start[..., 1], end[..., 0], end[..., 1]
    zero, one = torch.zeros_like(ex), torch.ones_like(ex)
    rows_x = torch.stack([ex, ey, one, zero, zero, zero, -sx * ex, -sx * ey], dim=-1)
    rows_y = torch.stack([zero, zero, zero, ex, ey, one, -sy * ex, -sy * ey], dim=-1)
    a = torch.stack([rows_x, rows_y], dim=-2).reshape(*start.shape[:-2], 8, 8)
    b = torch.stack([sx, sy], dim=-1).reshape(*start.shape[:-2], 8, 1)
    return torch.linalg.solve(a, b).squeeze(-1)


def perspective_transform(
    images: Any,
    start_points: Any,
    end_points: Any,
    interpolation: str = "bilinear",
    fill_value: float = 0,
    data_format: str | None = None,
) -> Tensor:
    """``keras.ops.image.perspective_transform(images, start_points, end_points, interpolation="bilinear",
    fill_value=0, data_format=None)``: the homography taking the 4 ``start_points`` ``(x, y)`` to the
    4 ``end_points``."""
    _check_interpolation(interpolation)
    t = tensor(images)
    _rank_3_or_4(t)
    start, end = tensor(start_points).to(torch.float32), tensor(end_points).to(torch.float32)
    for pts, label in ((start, "start_points"), (end, "end_points")):
        if pts.dim() not in (2, 3) or tuple(pts.shape[-2:]) != (4, 2):
            raise ValueError(
                f"Invalid {label} shape: expected (4, 2) for a single image or (N, 4, 2) for a batch. "
                f"Received shape: {tuple(pts.shape)}"
            )
    if start.shape != end.shape:
        raise ValueError("start_points and end_points must have the same shape.")
    squeeze = t.dim() == 3
    x = t.unsqueeze(0) if squeeze else t
    first = _data_format(data_format) == "channels_first"
    x = x.permute(0, 2, 3, 1) if first else x
    m = _homography(start.reshape(-1, 4, 2).double(), end.reshape(-1, 4, 2).double()).to(torch.float32)
    out = _project(x, m, interpolation, "constant", fill_value)
    out = out.permute(0, 3, 1, 2) if first else out
    return out.squeeze(0) if squeeze else out


_MAP_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _fix_index(index: Tensor, size: int, fill_mode: str) -> tuple[Tensor, Tensor]:
    """An integer index brought into ``[0, size)`` as ``fill_mode`` says, and whether it was inside."""
    if fill_mode == "constant":
        return index.clamp(0, size - 1), (index >= 0) & (index < size)
    everywhere = torch.ones_like(index, dtype=torch.bool)
    if fill_mode == "nearest":
        return index.clamp(0, size - 1), everywhere
    if fill_mode == "wrap":
        return torch.remainder(index, size), everywhere
    folded = torch.remainder(index.abs(), 2 * size)
    under = folded < size
    fixed = torch.where(under, folded, 2 * size - folded)
    if fill_mode == "reflect":
        fixed = torch.where(under, fixed, fixed - 1)
    return fixed, everywhere


def map_coordinates(
    inputs: Any, coordinates: Any, order: int, fill_mode: str = "constant", fill_value: float = 0
) -> Tensor:
    """``keras.ops.image.map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0)``:
    ``inputs`` sampled at ``coordinates`` (shape ``(inputs.ndim, ...)``), nearest (``order=0``) or
    linear (``order=1``); integer inputs are rounded back."""
    x = tensor(inputs)
    coords = tensor(coordinates)
    if coords.dim() < 2:
        raise ValueError(
            f"Invalid coordinates rank: expected at least rank 2. Received input with shape: {tuple(coords.shape)}"
        )
    if coords.shape[0] != x.dim():
        raise ValueError(
            "First dim of `coordinates` must be the same as the rank of `inputs`. Received inputs with shape: "
            f"{tuple(x.shape)} and coordinate leading dim of {coords.shape[0]}"
        )
    if fill_mode not in _MAP_FILL_MODES:
        raise ValueError(
            f"Invalid value for argument `fill_mode`. Expected one of {set(_MAP_FILL_MODES)}. Received: fill_mode={fill_mode}"
        )
    if order not in (0, 1):
        raise NotImplementedError("map_coordinates currently requires order<=1")
    weight_dtype = coords.dtype if coords.is_floating_point() else torch.get_default_dtype()
    nodes_per_axis = []
    for axis in range(x.dim()):
        c = coords[axis]
        if order == 0:
            index = (torch.round(c) if c.is_floating_point() else c).long()
            nodes = [(index, torch.ones((), dtype=weight_dtype))]
        else:
            c = c.to(weight_dtype)
            lower = torch.floor(c)
            upper_weight = c - lower
            nodes = [(lower.long(), 1 - upper_weight), (lower.long() + 1, upper_weight)]
        nodes_per_axis.append([(*_fix_index(i, x.shape[axis], fill_mode), w) for i, w in nodes])
    result: Tensor | None = None
    fill = torch.as_tensor(fill_value, dtype=x.dtype).to(weight_dtype)
    for combo in itertools.product(*nodes_per_axis):  # 2**ndim corners at most: a loop over axes, not elements
        indices = tuple(item[0] for item in combo)
        gathered = x[indices].to(weight_dtype)
        if fill_mode == "constant":
            valid = torch.stack([item[1] for item in combo]).all(dim=0)
            gathered = torch.where(valid, gathered, fill)
        weight = functools.reduce(operator.mul, [item[2] for item in combo])
        term = weight * gathered
        result = term if result is None else result + term
    assert result is not None
    if not x.is_floating_point():
        result = torch.round(result)
    return result.to(x.dtype)


def extract_patches_3d(
    volumes: Any,
    size: Any,
    strides: Any = None,
    dilation_rate: Any = 1,
    padding: str = "valid",
    data_format: str | None = None,
) -> Tensor:
    """``keras.ops.image.extract_patches_3d(volumes, size, strides=None, dilation_rate=1,
    padding="valid", data_format=None)``: ``(d, h, w)`` patches of volumes as the last axis
    (``d * h * w * channels`` values; ``strides`` defaults to ``size``), as Keras computes them: a
    convolution with an identity kernel."""
    from unison.keras.ops.nn import conv

    if isinstance(size, int):
        size = (size, size, size)
    if len(size) != 3:
        raise TypeError(f"Invalid `size` argument. Expected an int or a tuple of length 3. Received: size={size}")
    strides = size if strides is None else strides
    if isinstance(strides, int):
        strides = (strides, strides, strides)
    if len(strides) != 3:
        raise ValueError(f"Invalid `strides` argument. Got: {strides}")
    t = tensor(volumes)
    if t.dim() not in (4, 5):
        raise ValueError(
            f"extract_patches_3d takes a volume (rank 4) or a batch of volumes (rank 5). Received shape {tuple(t.shape)}."
        )
    first = _data_format(data_format) == "channels_first"
    channels = t.shape[-4] if first else t.shape[-1]
    out_dim = size[0] * size[1] * size[2] * channels
    kernel = torch.eye(out_dim, dtype=t.dtype, device=t.device).reshape(*size, channels, out_dim)
    unbatched = t.dim() == 4
    x = t.unsqueeze(0) if unbatched else t
    patches = conv(
        x,
        kernel,
        strides=tuple(strides),
        padding=padding,
        data_format="channels_first" if first else "channels_last",
        dilation_rate=dilation_rate,
    )
    return patches.squeeze(0) if unbatched else patches


_SCALE_METHODS = ("linear", "bilinear", "trilinear", "triangle", "cubic", "bicubic", "tricubic", "lanczos3", "lanczos5")


def _kernel(method: str, x: Tensor) -> Tensor:
    if method == "linear":
        return torch.clamp(1 - x.abs(), min=0.0)
    if method == "cubic":  # Keys' cubic, a = -0.5
        out = ((1.5 * x - 2.5) * x) * x + 1.0
        out = torch.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
        return torch.where(x >= 2.0, torch.zeros((), dtype=x.dtype), out)
    radius = 3.0 if method == "lanczos3" else 5.0
    y = radius * torch.sin(torch.pi * x) * torch.sin(torch.pi * x / radius)
    safe = torch.where(x != 0, torch.pi**2 * x**2, torch.ones((), dtype=x.dtype))
    out = torch.where(x > 1e-3, y / safe, torch.ones((), dtype=x.dtype))
    return torch.where(x > radius, torch.zeros((), dtype=x.dtype), out)


def _weight_matrix(
    in_size: int, out_size: int, scale: Tensor, translation: Tensor, method: str, antialias: bool
) -> Tensor:
    dtype = scale.dtype
    inv_scale = 1.0 / scale
    kernel_scale = torch.clamp(inv_scale, min=1.0) if antialias else torch.ones((), dtype=dtype)
    sample = (torch.arange(out_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    x = (sample[None, :] - torch.arange(in_size, dtype=dtype)[:, None]).abs() / kernel_scale
    weights = _kernel(method, x)
    total = weights.sum(dim=0, keepdim=True)
    eps = float(torch.finfo(torch.float32).eps)
    zero = torch.zeros((), dtype=dtype)
    weights = torch.where(total.abs() > 1000.0 * eps, weights / torch.where(total != 0, total, 1.0), zero)
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return torch.where(inside[None, :], weights, zero)


def scale_and_translate(
    images: Any,
    output_shape: Any,
    scale: Any,
    translation: Any,
    spatial_dims: Any,
    method: str,
    antialias: bool = True,
) -> Tensor:
    """``keras.ops.image.scale_and_translate(images, output_shape, scale, translation, spatial_dims,
    method, antialias=True)``: JAX's ``scale_and_translate``: each of ``spatial_dims`` resampled to
    ``output_shape`` with ``(x + 0.5) * scale + translation`` by a separable kernel (linear, cubic,
    lanczos3, lanczos5), widened by ``1 / scale`` when ``antialias`` and downsampling."""
    if method not in _SCALE_METHODS:
        raise ValueError(
            f"Invalid value for argument `method`. Expected of one {set(_SCALE_METHODS)}. Received: method={method}"
        )
    if method in ("bilinear", "trilinear", "triangle"):
        method = "linear"
    elif method in ("bicubic", "tricubic"):
        method = "cubic"
    x = tensor(images)
    sc, tr = tensor(scale), tensor(translation)
    dtype = torch.promote_types(sc.dtype, tr.dtype)
    dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
    sc, tr = sc.to(dtype).reshape(-1), tr.to(dtype).reshape(-1)
    dims = list(spatial_dims)
    if not dims:
        return x
    rounding = not (x.is_floating_point() or x.is_complex())
    out = x.to(torch.float32) if rounding else x
    for i, d in enumerate(dims):
        d = d % x.dim()
        w = _weight_matrix(x.shape[d], int(output_shape[d]), sc[i], tr[i], method, antialias).to(out.dtype)
        out = torch.tensordot(out, w, dims=([d], [0])).movedim(-1, d)
    if rounding:
        out = torch.clamp(torch.round(out), x.min().to(out.dtype), x.max().to(out.dtype)).to(x.dtype)
    return out


def _standard_normal(shape: tuple[int, ...], dtype: torch.dtype, seed: Any) -> Tensor:
    # keras.random's seed rules (None: the global generator; an int; a SeedGenerator), without
    # importing keras.random, which sits beside ops and imports it
    if seed is None:
        generator = None
    elif hasattr(seed, "torch_generator"):
        generator = seed.torch_generator()
    elif isinstance(seed, int) and not isinstance(seed, bool):
        generator = torch.Generator().manual_seed(seed)
    else:
        raise TypeError(
            f"keras.ops.image.elastic_transform: seed must be None, an int or a keras.random.SeedGenerator. "
            f"Received: seed={seed!r}"
        )
    return torch.randn(shape, generator=generator, dtype=dtype)


def elastic_transform(
    images: Any,
    alpha: float = 20.0,
    sigma: float = 5.0,
    interpolation: str = "bilinear",
    fill_mode: str = "reflect",
    fill_value: float = 0.0,
    seed: Any = None,
    data_format: str | None = None,
) -> Tensor:
    """``keras.ops.image.elastic_transform(images, alpha=20.0, sigma=5.0, interpolation="bilinear",
    fill_mode="reflect", fill_value=0.0, seed=None, data_format=None)``: each pixel moved by Gaussian
    noise (``sigma`` times a standard normal) blurred with ``sigma`` and scaled by ``alpha``; as in
    Keras, the horizontal and vertical displacements are the same draw."""
    _check_interpolation(interpolation, fill_mode)
    t = tensor(images)
    _rank_3_or_4(t)
    if not t.is_floating_point():
        raise ValueError(f"keras.ops.image.elastic_transform needs float images. Received dtype {t.dtype}.")
    squeeze = t.dim() == 3
    x = t.unsqueeze(0) if squeeze else t
    first = _data_format(data_format) == "channels_first"
    x = x.permute(0, 2, 3, 1) if first else x
    n, height, width, channels = x.shape
    size = 6 * int(sigma) | 1
    noise = _standard_normal((n, height, width), x.dtype, seed).to(x.device) * sigma
    shift = gaussian_blur(noise.unsqueeze(-1), (size, size), (sigma, sigma), data_format="channels_last")[..., 0]
    ys, xs = torch.meshgrid(
        torch.arange(height, dtype=x.dtype, device=x.device),
        torch.arange(width, dtype=x.dtype, device=x.device),
        indexing="ij",
    )
    src_y = (ys + alpha * shift).unsqueeze(-1).expand(n, height, width, channels)
    src_x = (xs + alpha * shift).unsqueeze(-1).expand(n, height, width, channels)
    batch = torch.arange(n, dtype=x.dtype, device=x.device).reshape(n, 1, 1, 1).expand_as(src_y)
    channel = torch.arange(channels, dtype=x.dtype, device=x.device).reshape(1, 1, 1, channels).expand_as(src_y)
    order = _INTERPOLATIONS.index(interpolation)
    out = map_coordinates(x, torch.stack([batch, src_y, src_x, channel]), order, fill_mode, fill_value)
    out = out.permute(0, 3, 1, 2) if first else out
    return out.squeeze(0) if squeeze else out


__all__ = [
    "affine_transform",
    "elastic_transform",
    "scale_and_translate",
    "extract_patches_3d",
    "map_coordinates",
    "perspective_transform",
    "crop_images",
    "gaussian_blur",
    "hsv_to_rgb",
    "pad_images",
    "rgb_to_hsv",
    "sobel_edges",
    "ssim",
]

# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), __all__)
