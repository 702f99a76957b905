"""``tf.image.draw_bounding_boxes`` and ``sample_distorted_bounding_box`` (and its stateless twin),
following TF's kernels: box outlines one pixel wide at ``int(coordinate * (size - 1))``, and random
crops drawn as TF draws them (aspect ratio, then height, then offset; up to ``max_attempts``).

Example:
    >>> import unison as tf
    >>> canvas = tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 1]), tf.constant([[[0.0, 0.0, 1.0, 1.0]]]), [[1.0]])
    >>> canvas[0, :, :, 0].tolist()[1]
    [1.0, 0.0, 0.0, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import torch

from unison.errors import InvalidArgumentError
from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import to_tensor
from unison.ops.image_core import stateless_generator

_DEFAULT_COLORS = (
    (1, 1, 0, 1),
    (0, 0, 1, 1),
    (1, 0, 0, 1),
    (0, 1, 0, 1),
    (0.5, 0, 0.5, 1),
    (0.5, 0.5, 0, 1),
    (0.5, 0, 0, 1),
    (0, 0, 0.5, 1),
    (0, 1, 1, 1),
    (1, 0, 1, 1),
)


def draw_bounding_boxes(images: Any, boxes: Any, colors: Any, name: str | None = None) -> torch.Tensor:
    """``tf.image.draw_bounding_boxes``: one-pixel outlines of ``boxes`` ``[batch, n, 4]`` on float ``images``.

    Box ``i`` takes colour ``colors[i % len(colors)]`` (TF's ten defaults when ``colors`` is empty);
    inverted boxes and boxes entirely outside the image are skipped, as in TF.
    """
    op = "tf.image.draw_bounding_boxes"
    canvas = to_tensor(images).clone()
    if canvas.dim() != 4 or canvas.shape[-1] not in (1, 3, 4):
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: images must be 4-D [batch, height, width, depth] with depth 1 (GRY), 3 (RGB) or 4 "
            f"(RGBA). Received shape {list(canvas.shape)}.",
        )
    b = to_tensor(boxes, torch.float32)
    if b.dim() != 3 or b.shape[-1] != 4 or b.shape[0] != canvas.shape[0]:
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: boxes must be [batch, num_boxes, 4] with the images' batch size. Received "
            f"{list(b.shape)} for images {list(canvas.shape)}.",
        )
    depth = canvas.shape[-1]
    table = to_tensor(colors, torch.float32) if colors is not None else torch.zeros(0, 4)
    if table.numel() == 0:
        table = torch.tensor(_DEFAULT_COLORS, dtype=torch.float32)
        if depth == 1:
            table[:, 0] = 1.0
    if table.dim() != 2 or table.shape[1] < depth:
        raise InvalidArgumentError(
            None, None, f"{op}: colors must be [num_colors, >= depth ({depth})]. Received {list(table.shape)}."
        )
    height, width = canvas.shape[1], canvas.shape[2]
    # int() truncates toward zero, as the kernel's float -> int64 conversion does.
    corners = (b * torch.tensor([height - 1, width - 1, height - 1, width - 1], dtype=torch.float32)).trunc().long()
    for image, image_boxes in enumerate(corners.tolist()):
        for index, (top, left, bottom, right) in enumerate(image_boxes):
            if top > bottom or left > right or top >= height or bottom < 0 or left >= width or right < 0:
                continue
            color = table[index % table.shape[0], :depth].to(canvas.dtype)
            row0, row1 = max(top, 0), min(bottom, height - 1)
            col0, col1 = max(left, 0), min(right, width - 1)
            if top >= 0:
                canvas[image, top, col0 : col1 + 1] = color
            if bottom < height:
                canvas[image, bottom, col0 : col1 + 1] = color
            if left >= 0:
                canvas[image, row0 : row1 + 1, left] = color
            if right < width:
                canvas[image, row0 : row1 + 1, right] = color
    return canvas


class DistortedBoundingBox(NamedTuple):
    """What ``sample_distorted_bounding_box`` returns (TF's field names)."""

    begin: torch.Tensor
    size: torch.Tensor
    bboxes: torch.Tensor


def _crop(
    generator: torch.Generator, width: int, height: int, area_range: Sequence[float], aspect: float
) -> tuple[int, int, int, int] | None:
    """TF's GenerateRandomCrop: ``(x, y, w, h)`` of a crop with the aspect ratio, or None."""
    min_area, max_area = area_range[0] * width * height, area_range[1] * width * height
    crop_h = round(math.sqrt(min_area / aspect))
    max_h = round(math.sqrt(max_area / aspect))
    if round(max_h * aspect) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)
        if round(max_h * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    crop_h = min(crop_h, max_h)
    if crop_h < max_h:
        crop_h += int(torch.randint(0, max_h - crop_h + 1, (), generator=generator))
    crop_w = round(crop_h * aspect)
    if crop_w * crop_h < min_area:
        crop_h += 1
        crop_w = round(crop_h * aspect)
    if crop_w * crop_h > max_area:
        crop_h -= 1
        crop_w = round(crop_h * aspect)
    area = crop_w * crop_h
    if area < min_area or area > max_area or crop_w > width or crop_h > height or crop_w <= 0 or crop_h <= 0:
        return None
    y = int(torch.randint(0, height - crop_h, (), generator=generator)) if crop_h < height else 0
    x = int(torch.randint(0, width - crop_w, (), generator=generator)) if crop_w < width else 0
    return x, y, crop_w, crop_h


def _covers(crop: tuple[int, int, int, int], boxes: list[list[int]], min_covered: float) -> bool:
    x, y, w, h = crop
    for top, left, bottom, right in boxes:
        area = (bottom - top) * (right - left)
        if area <= 0:
            continue
        inter = max(min(bottom, y + h) - max(top, y), 0) * max(min(right, x + w) - max(left, x), 0)
        if inter / area >= min_covered:
            return True
    return False


def _sample(
    generator: torch.Generator,
    image_size: Any,
    bounding_boxes: Any,
    min_object_covered: float,
    aspect_ratio_range: Sequence[float],
    area_range: Sequence[float],
    max_attempts: int,
    use_image_if_no_bounding_boxes: bool,
    op: str,
) -> DistortedBoundingBox:
    size = [int(v) for v in to_tensor(image_size).reshape(-1).tolist()]
    if len(size) != 3 or size[0] <= 0 or size[1] <= 0:
        raise InvalidArgumentError(
            None, None, f"{op}: image_size must be [height, width, channels] with positive sides. Received {size}."
        )
    height, width = size[0], size[1]
    raw = to_tensor(bounding_boxes, torch.float32).reshape(-1, 4)
    if raw.shape[0] == 0:
        if not use_image_if_no_bounding_boxes:
            raise InvalidArgumentError(
                None,
                None,
                f"{op}: No bounding boxes provided as input. One must enable "
                "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes.",
            )
        raw = torch.tensor([[0.0, 0.0, 1.0, 1.0]])
    if float(raw.min()) < 0 or float(raw.max()) > 1:
        raise InvalidArgumentError(None, None, f"{op}: bounding_boxes must hold normalised coordinates in [0, 1].")
    scale = torch.tensor([height, width, height, width], dtype=torch.float32)
    pixel_boxes = (raw * scale).long().tolist()
    low, high = float(aspect_ratio_range[0]), float(aspect_ratio_range[1])
    if low <= 0 or high < low or not 0 < float(area_range[0]) <= float(area_range[1]) <= 1:
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: aspect_ratio_range must be 0 < low <= high and area_range 0 < low <= high <= 1. "
            f"Received {list(aspect_ratio_range)} and {list(area_range)}.",
        )
    crop = None
    for _ in range(int(max_attempts)):
        aspect = float(torch.rand((), generator=generator)) * (high - low) + low
        candidate = _crop(generator, width, height, area_range, aspect)
        if candidate is not None and _covers(candidate, pixel_boxes, float(min_object_covered)):
            crop = candidate
            break
    x, y, w, h = crop if crop is not None else (0, 0, width, height)
    begin = torch.tensor([y, x, 0], dtype=torch.int32)
    extent = torch.tensor([h, w, -1], dtype=torch.int32)
    box = torch.tensor([[[y / height, x / width, (y + h) / height, (x + w) / width]]], dtype=torch.float32)
    return DistortedBoundingBox(begin, extent, box)


def sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: int = 0,
    min_object_covered: float = 0.1,
    aspect_ratio_range: Sequence[float] = (0.75, 1.33),
    area_range: Sequence[float] = (0.05, 1.0),
    max_attempts: int = 100,
    use_image_if_no_bounding_boxes: bool = False,
    name: str | None = None,
) -> DistortedBoundingBox:
    """``tf.image.sample_distorted_bounding_box``: ``(begin, size, bboxes)`` of a random crop that
    covers at least ``min_object_covered`` of one of the boxes (the whole image after ``max_attempts``).

    Feed ``begin`` and ``size`` to ``tf.slice``; draws from torch's generator (``tf.random.set_seed``).
    """
    generator = torch.Generator()
    generator.manual_seed(int(torch.randint(0, 2**62, ())))
    return _sample(
        generator,
        image_size,
        bounding_boxes,
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
        "tf.image.sample_distorted_bounding_box",
    )


def stateless_sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: Any,
    min_object_covered: float = 0.1,
    aspect_ratio_range: Sequence[float] = (0.75, 1.33),
    area_range: Sequence[float] = (0.05, 1.0),
    max_attempts: int = 100,
    use_image_if_no_bounding_boxes: bool = False,
    name: str | None = None,
) -> DistortedBoundingBox:
    """``tf.image.stateless_sample_distorted_bounding_box``: the same crop for the same ``seed`` pair."""
    op = "tf.image.stateless_sample_distorted_bounding_box"
    return _sample(
        stateless_generator(seed, op),
        image_size,
        bounding_boxes,
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
        op,
    )


__all__ = ["draw_bounding_boxes", "sample_distorted_bounding_box", "stateless_sample_distorted_bounding_box"]

# symbolic-aware here, where pickle finds them by their module and name
wrap_namespace(globals(), __all__)
