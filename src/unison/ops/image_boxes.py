"""``tf.image``'s box functions: greedy non-max suppression (hard and soft), ``crop_and_resize`` and
``extract_glimpse``.

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

from typing import Any, NamedTuple

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


def non_max_suppression_padded(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    pad_to_max_output_size: bool = False,
    name: str | None = None,
    sorted_input: bool = False,
    canonicalized_coordinates: bool = False,
    tile_size: int = 512,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.image.non_max_suppression_padded``: ``(indices, num_valid)``, the indices padded with 0 to
    ``max_output_size`` when ``pad_to_max_output_size`` (required for a batch ``[..., n, 4]``)."""
    op = "non_max_suppression_padded"
    b, s = to_tensor(boxes, torch.float32), to_tensor(scores, torch.float32)
    size = int(to_tensor(max_output_size))
    _threshold(iou_threshold, op)
    if b.dim() > 2 and not pad_to_max_output_size:
        raise ValueError(
            f"tf.image.{op}: 'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for batched input"
        )
    if b.dim() < 2 or b.shape[-1] != 4 or s.shape != b.shape[:-1]:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.image.{op}: boxes must be [..., num_boxes, 4] and scores [..., num_boxes]. Received "
            f"{list(b.shape)} and {list(s.shape)}.",
        )
    lead = b.shape[:-2]
    flat_b, flat_s = b.reshape(-1, *b.shape[-2:]), s.reshape(-1, s.shape[-1])
    picked, counts = [], []
    for boxes_i, scores_i in zip(flat_b, flat_s):  # one greedy pass per image of the batch
        chosen = _greedy(_iou(boxes_i), scores_i, size, float(iou_threshold), float(score_threshold), 0.0)[0]
        counts.append(chosen.shape[0])
        picked.append(
            torch.cat([chosen, chosen.new_zeros(size - chosen.shape[0])]) if pad_to_max_output_size else chosen
        )
    if b.dim() == 2:
        return picked[0], torch.tensor(counts[0], dtype=torch.int32)
    indices = torch.stack(picked).reshape(*lead, size) if picked else torch.zeros(*lead, size, dtype=torch.int32)
    return indices, torch.tensor(counts, dtype=torch.int32).reshape(lead)


class CombinedNonMaxSuppression(NamedTuple):
    """What ``combined_non_max_suppression`` returns (TF's namedtuple and field names)."""

    nmsed_boxes: torch.Tensor
    nmsed_scores: torch.Tensor
    nmsed_classes: torch.Tensor
    valid_detections: torch.Tensor


def combined_non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_size_per_class: int,
    max_total_size: int,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    pad_per_class: bool = False,
    clip_boxes: bool = True,
    name: str | None = None,
) -> CombinedNonMaxSuppression:
    """``tf.image.combined_non_max_suppression``: greedy suppression per class, then the best
    ``max_total_size`` detections per image: ``(boxes, scores, classes, valid_detections)``.

    ``boxes`` is ``[batch, num_boxes, q, 4]`` (``q`` 1: shared by every class, or one per class),
    ``scores`` ``[batch, num_boxes, num_classes]``; outputs are zero-padded.
    """
    op = "combined_non_max_suppression"
    b, s = to_tensor(boxes, torch.float32), to_tensor(scores, torch.float32)
    if b.dim() != 4 or b.shape[-1] != 4 or s.dim() != 3 or s.shape[:2] != b.shape[:2]:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.image.{op}: boxes must be [batch, num_boxes, q, 4] and scores [batch, num_boxes, "
            f"num_classes]. Received {list(b.shape)} and {list(s.shape)}.",
        )
    classes = s.shape[-1]
    if b.shape[2] not in (1, classes):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.image.{op}: third dimension of boxes must be either 1 or num_classes ({classes}). "
            f"Received {b.shape[2]}.",
        )
    _threshold(iou_threshold, op)
    per_class, total = int(max_output_size_per_class), int(max_total_size)
    if per_class <= 0 or total <= 0:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.image.{op}: max_output_size_per_class and max_total_size must be > 0. Received "
            f"{per_class} and {total}.",
        )
    keep = min(per_class * classes, total) if pad_per_class else total
    out_boxes, out_scores, out_classes, valid = [], [], [], []
    for image_boxes, image_scores in zip(b, s):
        found_boxes, found_scores, found_classes = [], [], []
        for c in range(classes):
            class_boxes = image_boxes[:, c if b.shape[2] > 1 else 0]
            chosen, kept = _greedy(
                _iou(class_boxes), image_scores[:, c], per_class, float(iou_threshold), float(score_threshold), 0.0
            )
            found_boxes.append(class_boxes[chosen.long()])
            found_scores.append(kept)
            found_classes.append(torch.full((chosen.shape[0],), float(c)))
        all_scores = torch.cat(found_scores)
        order = torch.argsort(all_scores, descending=True, stable=True)[:keep]
        count = order.shape[0]
        picked = torch.cat(found_boxes)[order]
        if clip_boxes:
            picked = picked.clamp(0.0, 1.0)
        pad = keep - count
        out_boxes.append(torch.cat([picked, picked.new_zeros(pad, 4)]))
        out_scores.append(torch.cat([all_scores[order], all_scores.new_zeros(pad)]))
        out_classes.append(torch.cat([torch.cat(found_classes)[order], torch.zeros(pad)]))
        valid.append(count)
    return CombinedNonMaxSuppression(
        torch.stack(out_boxes),
        torch.stack(out_scores),
        torch.stack(out_classes),
        torch.tensor(valid, dtype=torch.int32),
    )


def extract_glimpse(
    input: Any,  # noqa: A002 - TF's argument name
    size: Any,
    offsets: Any,
    centered: bool = True,
    normalized: bool = True,
    noise: str = "uniform",
    name: str | None = None,
) -> torch.Tensor:
    """``tf.image.extract_glimpse``: a ``size = [h, w]`` window of each image at ``offsets`` ``[batch, 2]`` (y, x).

    As TF 2's kernel places it: ``normalized`` offsets are scaled by the image size, ``centered``
    ones are measured from the image centre (``[-1, 1]`` when also normalized, and only then is the
    offset the window's centre); the position is truncated to whole pixels. Window pixels outside
    the image are ``noise``: ``"zero"``, ``"uniform"`` (between the image's min and max) or
    ``"gaussian"`` (the image's mean and standard deviation).
    """
    op = "extract_glimpse"
    t = to_tensor(input, torch.float32)
    if t.dim() != 4:
        raise InvalidArgumentError(
            None, None, f"tf.image.{op}: input must be 4-D [batch, height, width, channels]. Received {list(t.shape)}."
        )
    height, width = (int(v) for v in to_tensor(size).reshape(-1).tolist())
    where = to_tensor(offsets, torch.float32)
    if where.shape != (t.shape[0], 2):
        raise InvalidArgumentError(
            None, None, f"tf.image.{op}: offsets must be [batch_size, 2] (y, x). Received {list(where.shape)}."
        )
    if str(noise) not in ("uniform", "gaussian", "zero"):
        raise InvalidArgumentError(
            None, None, f"tf.image.{op}: noise must be 'uniform', 'gaussian' or 'zero'. Received noise={noise!r}."
        )
    batch, in_h, in_w, channels = t.shape
    y, x = where[:, 0], where[:, 1]
    if normalized:
        y, x = y * in_h, x * in_w
        if centered:
            y, x = y / 2.0 + in_h / 2.0 - height / 2.0, x / 2.0 + in_w / 2.0 - width / 2.0
    elif centered:
        y, x = y + in_h / 2.0, x + in_w / 2.0
    rows = y.trunc().long()[:, None] + torch.arange(height)[None]  # [batch, h]
    cols = x.trunc().long()[:, None] + torch.arange(width)[None]
    inside = ((rows >= 0) & (rows < in_h))[:, :, None] & ((cols >= 0) & (cols < in_w))[:, None, :]
    picked = t[
        torch.arange(batch)[:, None, None], rows.clamp(0, in_h - 1)[:, :, None], cols.clamp(0, in_w - 1)[:, None, :]
    ]
    if noise == "zero":
        fill = torch.zeros_like(picked)
    elif noise == "uniform":
        low = t.amin(dim=(1, 2, 3)).reshape(-1, 1, 1, 1)
        high = t.amax(dim=(1, 2, 3)).reshape(-1, 1, 1, 1)
        fill = torch.rand_like(picked) * (high - low) + low
    else:
        mean = t.mean(dim=(1, 2, 3)).reshape(-1, 1, 1, 1)
        std = t.std(dim=(1, 2, 3), correction=0).reshape(-1, 1, 1, 1)
        fill = torch.randn_like(picked) * std + mean
    return torch.where(inside[..., None], picked, fill)


__all__ = [
    "combined_non_max_suppression",
    "crop_and_resize",
    "extract_glimpse",
    "non_max_suppression",
    "non_max_suppression_overlaps",
    "non_max_suppression_padded",
    "non_max_suppression_with_scores",
]

# symbolic-aware here, where pickle finds them by their module and name
wrap_namespace(globals(), __all__)
