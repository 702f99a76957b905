"""``tf.image``'s box functions: greedy non-max suppression (hard and soft) and ``crop_and_resize``.

Boxes are ``[y1, x1, y2, x2]`` (either corner order, as in TF). Greedy suppression is sequential
by nature: each of at most ``max_output_size`` steps takes the best remaining box and suppresses
(or, with ``soft_nms_sigma``, down-weights) the rest in one vectorised operation.

Example:
    >>> import unison as tf
    >>> boxes = tf.constant([[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, 2.0, 1.0, 3.0]])
    >>> tf.image.non_max_suppression(boxes, tf.constant([0.9, 0.8, 0.7]), 3).tolist()
    [0, 2]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import to_tensor


def _iou(boxes: torch.Tensor) -> torch.Tensor:
    y1, y2 = torch.minimum(boxes[:, 0], boxes[:, 2]), torch.maximum(boxes[:, 0], boxes[:, 2])
    x1, x2 = torch.minimum(boxes[:, 1], boxes[:, 3]), torch.maximum(boxes[:, 1], boxes[:, 3])
    area = (y2 - y1) * (x2 - x1)
    inter_h = (torch.minimum(y2[:, None], y2[None]) - torch.maximum(y1[:, None], y1[None])).clamp_min(0)
    inter_w = (torch.minimum(x2[:, None], x2[None]) - torch.maximum(x1[:, None], x1[None])).clamp_min(0)
    inter = inter_h * inter_w
    union = area[:, None] + area[None] - inter
    return torch.where((area[:, None] > 0) & (area[None] > 0), inter / union.clamp_min(1e-30), torch.zeros_like(inter))


def _check(boxes: torch.Tensor, scores: torch.Tensor, max_output_size: Any, op: str) -> int:
    if boxes.dim() != 2 or boxes.shape[-1] != 4:
        raise InvalidArgumentError(
            None, None, f"tf.image.{op}: boxes must be 2-D [num_boxes, 4]. Received shape {list(boxes.shape)}."
        )
    if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.image.{op}: scores must be 1-D with one score per box ({boxes.shape[0]}). Received shape "
            f"{list(scores.shape)}.",
        )
    size = int(to_tensor(max_output_size))
    if size < 0:
        raise InvalidArgumentError(None, None, f"tf.image.{op}: max_output_size must be >= 0. Received {size}.")
    return size


def _greedy(
    similarity: torch.Tensor, scores: torch.Tensor, size: int, threshold: float, score_threshold: float, sigma: float
) -> tuple[torch.Tensor, torch.Tensor]:
    current = scores.clone()
    alive = current > score_threshold
    picked: list[int] = []
    picked_scores: list[torch.Tensor] = []
    scale = -0.5 / sigma if sigma > 0 else 0.0
    for _ in range(min(size, scores.shape[0])):
        masked = torch.where(alive, current, torch.full_like(current, -torch.inf))
        best = int(torch.argmax(masked))
        if not bool(alive[best]):
            break
        picked.append(best)
        picked_scores.append(current[best])
        alive[best] = False
        row = similarity[:, best]  # TF reads overlaps[candidate, selected]
        if sigma > 0:
            current = current * torch.where(row <= threshold, torch.exp(scale * row * row), torch.zeros_like(row))
            alive &= current > score_threshold
        else:
            alive &= ~(row > threshold)
    indices = torch.tensor(picked, dtype=torch.int32)
    values = torch.stack(picked_scores) if picked_scores else scores.new_zeros(0)
    return indices, values


def non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    name: str | None = None,
) -> torch.Tensor:
    """``tf.image.non_max_suppression``: indices (int32) of the boxes kept, best score first."""
    b, s = to_tensor(boxes, torch.float32), to_tensor(scores, torch.float32)
    size = _check(b, s, max_output_size, "non_max_suppression")
    _threshold(iou_threshold, "non_max_suppression")
    return _greedy(_iou(b), s, size, float(iou_threshold), float(score_threshold), 0.0)[0]


def _threshold(value: float, op: str) -> None:
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidArgumentError(None, None, f"tf.image.{op}: iou_threshold must be in [0, 1]. Received {value}.")


def non_max_suppression_with_scores(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    soft_nms_sigma: float = 0.0,
    name: str | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.image.non_max_suppression_with_scores``: ``(indices, scores)``; ``soft_nms_sigma > 0``
    down-weights overlapping boxes by ``exp(-iou**2 / (2 * sigma))`` (Soft-NMS) instead of dropping them."""
    b, s = to_tensor(boxes, torch.float32), to_tensor(scores, torch.float32)
    size = _check(b, s, max_output_size, "non_max_suppression_with_scores")
    _threshold(iou_threshold, "non_max_suppression_with_scores")
    if float(soft_nms_sigma) < 0:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.image.non_max_suppression_with_scores: soft_nms_sigma must be >= 0. Received {soft_nms_sigma}.",
        )
    return _greedy(_iou(b), s, size, float(iou_threshold), float(score_threshold), float(soft_nms_sigma))


def non_max_suppression_overlaps(
    overlaps: Any,
    scores: Any,
    max_output_size: Any,
    overlap_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    name: str | None = None,
) -> torch.Tensor:
    """``tf.image.non_max_suppression_overlaps``: greedy suppression from a given ``[n, n]`` overlap matrix."""
    o, s = to_tensor(overlaps, torch.float32), to_tensor(scores, torch.float32)
    if o.dim() != 2 or o.shape[0] != o.shape[1] or s.dim() != 1 or s.shape[0] != o.shape[0]:
        raise InvalidArgumentError(
            None,
            None,
            "tf.image.non_max_suppression_overlaps: overlaps must be [n, n] and scores [n]. Received "
            f"{list(o.shape)} and {list(s.shape)}.",
        )
    size = int(to_tensor(max_output_size))
    return _greedy(o, s, size, float(overlap_threshold), float(score_threshold), 0.0)[0]


def crop_and_resize(
    image: Any,
    boxes: Any,
    box_indices: Any,
    crop_size: Any,
    method: str = "bilinear",
    extrapolation_value: float = 0.0,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.image.crop_and_resize``: ``[num_boxes, crop_height, crop_width, depth]`` float32 crops.

    Box ``[y1, x1, y2, x2]`` in normalised coordinates maps ``y`` to ``y * (height - 1)``; samples
    outside the image take ``extrapolation_value``; ``method`` is ``"bilinear"`` or ``"nearest"``.
    """
    t = to_tensor(image)
    if t.dim() != 4:
        raise InvalidArgumentError(
            None, None, f"tf.image.crop_and_resize: image must be 4-D [batch, h, w, depth]. Received {list(t.shape)}."
        )
    b = to_tensor(boxes, torch.float32)
    idx = to_tensor(box_indices).long()
    crop_h, crop_w = (int(v) for v in to_tensor(crop_size).reshape(-1).tolist())
    if crop_h <= 0 or crop_w <= 0:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.image.crop_and_resize: crop dimensions must be positive. Received crop_size=[{crop_h}, {crop_w}].",
        )
    if b.dim() != 2 or b.shape[-1] != 4 or idx.shape != (b.shape[0],):
        raise InvalidArgumentError(
            None,
            None,
            "tf.image.crop_and_resize: boxes must be [num_boxes, 4] and box_indices [num_boxes]. Received "
            f"{list(b.shape)} and {list(idx.shape)}.",
        )
    if str(method) not in ("bilinear", "nearest"):
        raise ValueError(f"tf.image.crop_and_resize: method must be 'bilinear' or 'nearest'. Received {method!r}.")
    batch, height, width, _ = t.shape
    if bool(((idx < 0) | (idx >= batch)).any()):
        raise InvalidArgumentError(
            None, None, f"tf.image.crop_and_resize: box_indices has values outside [0, {batch})."
        )
    ys = _sample(b[:, 0], b[:, 2], height, crop_h)  # [n, crop_h]
    xs = _sample(b[:, 1], b[:, 3], width, crop_w)
    x = t.to(torch.float32)
    if method == "nearest":
        rows, cols = torch.floor(ys + 0.5).long(), torch.floor(xs + 0.5).long()  # roundf: half away from 0
        out = _gather(x, idx, rows.clamp(0, height - 1), cols.clamp(0, width - 1))
    else:
        top, left = ys.floor(), xs.floor()
        dy, dx = (ys - top)[:, :, None, None], (xs - left)[:, None, :, None]
        r0, r1 = top.long().clamp(0, height - 1), ys.ceil().long().clamp(0, height - 1)
        c0, c1 = left.long().clamp(0, width - 1), xs.ceil().long().clamp(0, width - 1)
        upper = _gather(x, idx, r0, c0) + (_gather(x, idx, r0, c1) - _gather(x, idx, r0, c0)) * dx
        lower = _gather(x, idx, r1, c0) + (_gather(x, idx, r1, c1) - _gather(x, idx, r1, c0)) * dx
        out = upper + (lower - upper) * dy
    outside = ((ys < 0) | (ys > height - 1))[:, :, None, None] | ((xs < 0) | (xs > width - 1))[:, None, :, None]
    return torch.where(outside, torch.tensor(float(extrapolation_value)), out)


def _sample(start: torch.Tensor, end: torch.Tensor, size: int, count: int) -> torch.Tensor:
    if count > 1:
        step = (end - start) * (size - 1) / (count - 1)
        return start[:, None] * (size - 1) + torch.arange(count, dtype=torch.float32)[None] * step[:, None]
    return (0.5 * (start + end) * (size - 1))[:, None]


def _gather(x: torch.Tensor, idx: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    return x[idx[:, None, None], rows[:, :, None], cols[:, None, :]]


__all__ = ["crop_and_resize", "non_max_suppression", "non_max_suppression_overlaps", "non_max_suppression_with_scores"]

# symbolic-aware here, where pickle finds them by their module and name
wrap_namespace(globals(), __all__)
