"""``keras.utils.bounding_boxes``: Keras 3's box helpers on torch tensors.

Formats (case-insensitive): ``"xyxy"`` (left, top, right, bottom), ``"yxyx"``, ``"xywh"``,
``"center_xywh"``, ``"center_yxhw"`` and the relative ``"rel_xyxy"``, ``"rel_yxyx"``,
``"rel_xywh"``, ``"rel_center_xywh"`` (divided by the image's width and height). Boxes are
``(N, 4)`` or ``(batch, N, 4)``; results are float32 torch tensors, as Keras's are float32 tensors.
The formulas are Keras 3.15's (``compute_iou`` adds ``1e-7`` to the union, ``compute_ciou`` its
epsilons), so values agree with Keras's to float rounding.

Example:
    >>> import numpy as np
    >>> convert_format(np.array([[10, 20, 30, 40]]), source="xyxy", target="xywh").tolist()
    [[10.0, 20.0, 20.0, 20.0]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

__all__ = [
    "affine_transform",
    "clip_to_image_size",
    "compute_ciou",
    "compute_iou",
    "convert_format",
    "crop",
    "decode_deltas_to_boxes",
    "encode_box_to_deltas",
    "pad",
]

SUPPORTED_FORMATS = (
    "xyxy",
    "yxyx",
    "xywh",
    "center_xywh",
    "center_yxhw",
    "rel_xyxy",
    "rel_yxyx",
    "rel_xywh",
    "rel_center_xywh",
)
_EPSILON = 1e-7  # keras.backend.epsilon()'s default


def as_tensor(value: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A torch tensor of ``value`` (arrays, lists, tensors), converted to ``dtype`` when given."""
    if isinstance(value, torch.Tensor):
        tensor = value
    elif hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        tensor = torch.as_tensor(np.ascontiguousarray(value.numpy()))
    else:
        tensor = torch.as_tensor(np.ascontiguousarray(value))  # a reversed view has negative strides
    return tensor if dtype is None else tensor.to(dtype)


def _dtype(dtype: Any) -> torch.dtype:
    name = getattr(dtype, "name", dtype)
    name = str(name).replace("torch.", "")
    found = getattr(torch, name, None)
    if not isinstance(found, torch.dtype):
        raise ValueError(f"`dtype` must name a float dtype such as 'float32'. Received: dtype={dtype!r}")
    return found


def _sides(boxes: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return tuple(boxes[..., i : i + 1] for i in range(4))


def _to_xyxy(boxes: torch.Tensor, source: str, height: Any, width: Any) -> torch.Tensor:
    a, b, c, d = _sides(boxes)
    if source == "xyxy":
        return boxes
    if source == "yxyx":
        return torch.cat([b, a, d, c], -1)
    if source == "xywh":
        return torch.cat([a, b, a + c, b + d], -1)
    if source == "center_xywh":
        return torch.cat([a - c / 2.0, b - d / 2.0, a + c / 2.0, b + d / 2.0], -1)
    if source == "center_yxhw":
        return torch.cat([b - d / 2.0, a - c / 2.0, b + d / 2.0, a + c / 2.0], -1)
    if source == "rel_xyxy":
        return torch.cat([a * width, b * height, c * width, d * height], -1)
    if source == "rel_yxyx":
        return torch.cat([b * width, a * height, d * width, c * height], -1)
    if source == "rel_xywh":
        return torch.cat([a * width, b * height, (a + c) * width, (b + d) * height], -1)
    # rel_center_xywh
    return torch.cat([(a - c / 2.0) * width, (b - d / 2.0) * height, (a + c / 2.0) * width, (b + d / 2.0) * height], -1)


def _from_xyxy(boxes: torch.Tensor, target: str, height: Any, width: Any) -> torch.Tensor:
    x1, y1, x2, y2 = _sides(boxes)
    w, h = x2 - x1, y2 - y1
    cx, cy = x1 + w / 2.0, y1 + h / 2.0
    table = {
        "xyxy": lambda: boxes,
        "yxyx": lambda: torch.cat([y1, x1, y2, x2], -1),
        "xywh": lambda: torch.cat([x1, y1, w, h], -1),
        "center_xywh": lambda: torch.cat([cx, cy, w, h], -1),
        "center_yxhw": lambda: torch.cat([cy, cx, h, w], -1),
        "rel_xyxy": lambda: torch.cat([x1 / width, y1 / height, x2 / width, y2 / height], -1),
        "rel_yxyx": lambda: torch.cat([y1 / height, x1 / width, y2 / height, x2 / width], -1),
        "rel_xywh": lambda: torch.cat([x1 / width, y1 / height, w / width, h / height], -1),
        "rel_center_xywh": lambda: torch.cat([cx / width, cy / height, w / width, h / height], -1),
    }
    return table[target]()


def convert_format(
    boxes: Any, source: str, target: str, height: Any = None, width: Any = None, dtype: Any = "float32"
) -> Any:
    """Convert boxes from format ``source`` to ``target`` (a dict's ``"boxes"`` entry is converted in place).

    Example:
        >>> convert_format([[0.1, 0.2, 0.5, 0.6]], "rel_xyxy", "xyxy", height=10, width=20).tolist()
        [[2.0, 2.0, 10.0, 6.0]]
    """
    if isinstance(boxes, dict):
        boxes["boxes"] = convert_format(boxes["boxes"], source, target, height, width, dtype)
        return boxes
    tensor = as_tensor(boxes)
    if tensor.dim() == 0 or tensor.shape[-1] != 4:
        raise ValueError(
            f"`boxes` must be a tensor with the last dimension of 4. Received: boxes.shape={tuple(tensor.shape)}"
        )
    source, target = str(source).lower(), str(target).lower()
    if source not in SUPPORTED_FORMATS or target not in SUPPORTED_FORMATS:
        raise ValueError(
            f"Invalid source or target format. Supported formats: {SUPPORTED_FORMATS}. "
            f"Received: source={source!r}, target={target!r}"
        )
    if (source.startswith("rel_") or target.startswith("rel_")) and (width is None or height is None):
        raise ValueError(
            "convert_format() must receive `height` and `width` when transforming between relative and "
            f"absolute formats. Received: source={source!r}, target={target!r}, height={height}, width={width}"
        )
    kind = _dtype(dtype)
    tensor = tensor.to(kind)
    if source == target:
        return tensor
    height = None if height is None else as_tensor(height, kind)
    width = None if width is None else as_tensor(width, kind)
    if source.startswith("rel_") and target.startswith("rel_"):
        source, target = source[4:], target[4:]  # relative to relative: no image size needed
    return _from_xyxy(_to_xyxy(tensor, source, height, width), target, height, width)


def _area(boxes: torch.Tensor) -> torch.Tensor:
    x1, y1, x2, y2 = _sides(boxes)
    return ((x2 - x1) * (y2 - y1)).squeeze(-1)


def clip_to_image_size(
    bounding_boxes: dict[str, Any], height: Any = None, width: Any = None, bounding_box_format: str = "xyxy"
) -> dict[str, Any]:
    """Clip ``bounding_boxes["boxes"]`` to the image; labels of boxes left with no area become -1.

    Only ``"xyxy"`` (needs ``height`` and ``width``) and ``"rel_xyxy"`` (clipped to [0, 1]), as Keras 3.

    Example:
        >>> out = clip_to_image_size({"boxes": [[-10, -20, 150, 160]], "labels": [3]}, height=100, width=120)
        >>> out["boxes"].tolist(), out["labels"].tolist()
        ([[0, 0, 120, 100]], [3])
    """
    if bounding_box_format not in ("xyxy", "rel_xyxy"):
        raise NotImplementedError(
            "clip_to_image_size() supports bounding_box_format 'xyxy' and 'rel_xyxy' (as Keras 3). "
            f"Received: bounding_box_format={bounding_box_format!r}; convert with convert_format() first."
        )
    if bounding_box_format == "xyxy" and (height is None or width is None):
        raise ValueError(
            f"`height` and `width` must be set if `format='xyxy'`. Received: height={height}, width={width}"
        )
    boxes = as_tensor(bounding_boxes["boxes"])
    labels = bounding_boxes.get("labels")
    if bounding_box_format == "xyxy":
        high_x, high_y = as_tensor(width, boxes.dtype), as_tensor(height, boxes.dtype)
    else:
        high_x = high_y = torch.ones((), dtype=boxes.dtype)
    x1, y1, x2, y2 = _sides(boxes)
    zero = torch.zeros((), dtype=boxes.dtype)
    boxes = torch.cat(
        [
            torch.minimum(torch.maximum(x1, zero), high_x),
            torch.minimum(torch.maximum(y1, zero), high_y),
            torch.minimum(torch.maximum(x2, zero), high_x),
            torch.minimum(torch.maximum(y2, zero), high_y),
        ],
        -1,
    )
    result = dict(bounding_boxes)
    result["boxes"] = boxes
    if labels is not None:
        labels = as_tensor(labels)
        result["labels"] = torch.where(_area(boxes) > 0, labels, torch.full_like(labels, -1))
    return result


def _inverse_affine(
    center_x: Any,
    center_y: Any,
    angle: torch.Tensor,
    translate_x: Any,
    translate_y: Any,
    scale: Any,
    shear_x: Any,
    shear_y: Any,
    height: Any,
    width: Any,
) -> torch.Tensor:
    """Keras 3's ``_compute_inverse_affine_matrix`` (torchvision's convention, degrees), ``(B, 2, 3)``."""
    kind = angle.dtype

    def t(value: Any) -> torch.Tensor:
        return as_tensor(value, kind)

    angle, shear_x, shear_y = -angle, -t(shear_x), -t(shear_y)
    cx, cy = t(center_x) * (width - 1), t(center_y) * (height - 1)
    rot = angle * (math.pi / 180.0)
    tx, ty = -t(translate_x) * (width - 1), -t(translate_y) * (height - 1)
    sx, sy = shear_x * (math.pi / 180.0), shear_y * (math.pi / 180.0)
    a = torch.cos(rot - sy) / torch.cos(sy)
    b = a * torch.tan(sx) + torch.sin(rot)
    c = -torch.sin(rot - sy) / torch.cos(sy)
    d = torch.cos(rot) - c * torch.tan(sx)
    scale = t(scale)
    a0, a1, b0, b1 = d * scale, -b * scale, -c * scale, a * scale
    a2 = cx - a0 * (cx + tx) - a1 * (cy + ty)
    b2 = cy - b0 * (cx + tx) - b1 * (cy + ty)
    rows = torch.broadcast_tensors(a0, a1, a2, b0, b1, b2)
    return torch.stack(rows, -1).reshape(-1, 2, 3)


def affine_transform(
    boxes: Any,
    angle: Any,
    translate_x: Any,
    translate_y: Any,
    scale: Any,
    shear_x: Any,
    shear_y: Any,
    height: Any,
    width: Any,
    center_x: Any = None,
    center_y: Any = None,
    bounding_box_format: str = "xyxy",
) -> torch.Tensor:
    """Move ``(batch, N, 4)`` xyxy boxes by one affine transform per batch item (Keras 3's formula).

    ``angle`` and the shears are in degrees (one per batch item), translations fractions of the
    image, ``center_x``/``center_y`` the centre as a fraction (0.5 each by default). Each box becomes
    the smallest box around its four transformed corners.

    Example:
        >>> import numpy as np
        >>> zero = np.zeros(1, "float32")
        >>> affine_transform(np.array([[[1.0, 2.0, 3.0, 4.0]]]), zero, zero, zero, np.ones(1, "float32"),
        ...                  zero, zero, 10, 10).tolist()
        [[[1.0, 2.0, 3.0, 4.0]]]
    """
    if bounding_box_format != "xyxy":
        raise NotImplementedError(
            "affine_transform() supports only bounding_box_format='xyxy' (as Keras 3). "
            f"Received: bounding_box_format={bounding_box_format!r}; convert with convert_format() first."
        )
    angle_t = as_tensor(angle)
    if not angle_t.is_floating_point():
        angle_t = angle_t.to(torch.float32)
    if angle_t.dim() != 1:
        raise ValueError(f"`angle` must hold one value per batch item (rank 1). Received: shape {tuple(angle_t.shape)}")
    matrix = _inverse_affine(
        0.5 if center_x is None else center_x,
        0.5 if center_y is None else center_y,
        angle_t,
        translate_x,
        translate_y,
        scale,
        shear_x,
        shear_y,
        height,
        width,
    )
    box_t = as_tensor(boxes, matrix.dtype)
    if box_t.dim() != 3 or box_t.shape[-1] != 4:
        raise ValueError(
            f"`boxes` must be (batch, num_boxes, 4) in xyxy format. Received: boxes.shape={tuple(box_t.shape)}"
        )
    batch, count = box_t.shape[0], box_t.shape[1]
    x1, y1, x2, y2 = box_t.unbind(-1)
    corners = torch.stack([x1, y1, x2, y1, x2, y2, x1, y2], -1).reshape(batch, count, 4, 2)
    corners = torch.cat([corners, torch.ones(batch, count, 4, 1, dtype=corners.dtype)], -1)
    moved = torch.einsum("bnxy,byz->bnxz", corners, matrix.transpose(1, 2))
    return torch.cat([moved.amin(2), moved.amax(2)], -1)


def _xyxy_only(function: str, bounding_box_format: str) -> None:
    if bounding_box_format != "xyxy":
        raise NotImplementedError(
            f"{function}() supports only bounding_box_format='xyxy' (as Keras 3). "
            f"Received: bounding_box_format={bounding_box_format!r}; convert with convert_format() first."
        )


def crop(boxes: Any, top: Any, left: Any, height: Any, width: Any, bounding_box_format: str = "xyxy") -> torch.Tensor:
    """Boxes relative to the window ``(top, left, height, width)``, clipped to it.

    Example:
        >>> crop([[10, 20, 50, 60]], top=10, left=20, height=40, width=30).tolist()
        [[0, 10, 30, 40]]
    """
    _xyxy_only("crop", bounding_box_format)
    box_t = as_tensor(boxes)
    x1, y1, x2, y2 = _sides(box_t)
    return torch.cat(
        [
            (x1 - left).clip(0, width),
            (y1 - top).clip(0, height),
            (x2 - left).clip(0, width),
            (y2 - top).clip(0, height),
        ],
        -1,
    )


def pad(
    boxes: Any, top: Any, left: Any, height: Any = None, width: Any = None, bounding_box_format: str = "xyxy"
) -> torch.Tensor:
    """Boxes shifted by ``left`` and ``top`` (the image padded on those sides).

    Example:
        >>> pad([[1, 2, 3, 4]], top=10, left=20).tolist()
        [[21, 12, 23, 14]]
    """
    _xyxy_only("pad", bounding_box_format)
    x1, y1, x2, y2 = _sides(as_tensor(boxes))
    return torch.cat([x1 + left, y1 + top, x2 + left, y2 + top], -1)


def _variance(variance: Any) -> torch.Tensor | None:
    if variance is None:
        return None
    tensor = as_tensor(variance, torch.float32)
    if tensor.dim() == 0 or tensor.shape[-1] != 4:
        raise ValueError(f"`variance` must be length 4, got {variance}")
    return tensor


def _image_size(image_shape: Any) -> tuple[Any, Any]:
    if image_shape is None:
        return None, None
    height, width, _ = image_shape
    return height, width


def encode_box_to_deltas(
    anchors: Any,
    boxes: Any,
    anchor_format: str,
    box_format: str,
    encoding_format: str = "center_yxhw",
    variance: Any = None,
    image_shape: Any = None,
) -> torch.Tensor:
    """Boxes as offsets from anchors: centre shifts over anchor sizes, log size ratios (``/ variance``).

    Example:
        >>> encode_box_to_deltas([[0, 0, 10, 10]], [[0, 0, 10, 10]], "xyxy", "xyxy").tolist()
        [[0.0, 0.0, 0.0, 0.0]]
    """
    var = _variance(variance)
    if encoding_format not in ("center_xywh", "center_yxhw"):
        raise ValueError(f"`encoding_format` should be one of 'center_xywh' or 'center_yxhw', got {encoding_format}")
    height, width = _image_size(image_shape)
    encoded_anchors = convert_format(anchors, anchor_format, encoding_format, height, width)
    encoded = convert_format(boxes, box_format, encoding_format, height, width)
    anchor_size = encoded_anchors[..., 2:].clamp_min(_EPSILON)
    box_size = encoded[..., 2:].clamp_min(_EPSILON)
    delta = torch.cat(
        [(encoded[..., :2] - encoded_anchors[..., :2]) / anchor_size, torch.log(box_size / anchor_size)], -1
    )
    return delta / var if var is not None else delta


def decode_deltas_to_boxes(
    anchors: Any,
    boxes_delta: Any,
    anchor_format: str,
    box_format: str,
    encoded_format: str = "center_yxhw",
    variance: Any = None,
    image_shape: Any = None,
) -> Any:
    """The inverse of :func:`encode_box_to_deltas`; dicts of levels (anchors and deltas alike) decode per level.

    Example:
        >>> decode_deltas_to_boxes([[0, 0, 10, 10]], [[0.0, 0.0, 0.0, 0.0]], "xyxy", "xyxy").tolist()
        [[0.0, 0.0, 10.0, 10.0]]
    """
    var = _variance(variance)
    if encoded_format not in ("center_xywh", "center_yxhw"):
        raise ValueError(f"`encoded_format` should be 'center_xywh' or 'center_yxhw', but got '{encoded_format}'.")
    height, width = _image_size(image_shape)

    def decode(anchor: Any, delta: Any) -> torch.Tensor:
        encoded_anchor = convert_format(anchor, anchor_format, encoded_format, height, width)
        delta_t = as_tensor(delta, torch.float32)
        if var is not None:
            delta_t = delta_t * var
        size = encoded_anchor[..., 2:]
        box = torch.cat([delta_t[..., :2] * size + encoded_anchor[..., :2], torch.exp(delta_t[..., 2:]) * size], -1)
        return convert_format(box, encoded_format, box_format, height, width)

    if isinstance(anchors, dict) and isinstance(boxes_delta, dict):
        return {level: decode(anchor, boxes_delta[level]) for level, anchor in anchors.items()}
    return decode(anchors, boxes_delta)


def _to_yxyx(boxes: Any, bounding_box_format: str, image_shape: Any) -> torch.Tensor:
    height, width = _image_size(image_shape)
    return convert_format(boxes, bounding_box_format, "yxyx", height, width)


def compute_iou(
    boxes1: Any,
    boxes2: Any,
    bounding_box_format: str,
    use_masking: bool = False,
    mask_val: int = -1,
    image_shape: Any = None,
) -> torch.Tensor:
    """Pairwise IoUs: ``(M, 4)`` and ``(N, 4)`` boxes give ``(M, N)`` (batched ones ``(batch, M, N)``).

    With ``use_masking``, pairs where either box has all coordinates below 0 (padding) get ``mask_val``.

    Example:
        >>> [round(v, 4) for v in compute_iou([[0, 0, 2, 2]], [[1, 0, 3, 2], [0, 0, 2, 2]], "xyxy")[0].tolist()]
        [0.3333, 1.0]
    """
    for which, value in (("boxes1", boxes1), ("boxes2", boxes2)):
        rank = as_tensor(value).dim()
        if rank not in (2, 3):
            raise ValueError(
                f"compute_iou() expects {which} to be batched, or to be unbatched. Received: "
                f"len({which}.shape)={rank}. Expected either len({which}.shape)=2 or len({which}.shape)=3."
            )
    if "rel" in bounding_box_format and image_shape is None:
        raise ValueError(
            "When using relative bounding box formats (e.g. `rel_yxyx`) the `image_shape` argument must be "
            f"provided. Received `image_shape`: {image_shape}"
        )
    first, second = (
        _to_yxyx(boxes1, bounding_box_format, image_shape),
        _to_yxyx(boxes2, bounding_box_format, image_shape),
    )
    t1, l1, b1, r1 = _sides(first)
    t2, l2, b2, r2 = (side.transpose(-1, -2) for side in _sides(second))
    inter = (torch.minimum(b1, b2) - torch.maximum(t1, t2)).clamp_min(0.0) * (
        torch.minimum(r1, r2) - torch.maximum(l1, l2)
    ).clamp_min(0.0)
    area1 = _area_yxyx(first).unsqueeze(-1)
    area2 = _area_yxyx(second)
    area2 = area2.unsqueeze(1 if area2.dim() == 2 else 0)
    iou = inter / (area1 + area2 - inter + _EPSILON)
    if not use_masking:
        return iou
    mask1 = first.amax(-1, keepdim=True) < 0.0
    mask2 = (second.amax(-1, keepdim=True) < 0.0).transpose(-1, -2)
    return torch.where(mask1 | mask2, torch.full_like(iou, float(mask_val)), iou)


def _area_yxyx(boxes: torch.Tensor) -> torch.Tensor:
    top, left, bottom, right = _sides(boxes)
    return ((bottom - top) * (right - left)).squeeze(-1)


def compute_ciou(boxes1: Any, boxes2: Any, bounding_box_format: str, image_shape: Any = None) -> torch.Tensor:
    """Complete IoU of matching boxes (``(..., 4)`` each, broadcast): IoU minus the centre-distance and
    aspect-ratio penalties.

    Example:
        >>> round(float(compute_ciou([[0, 0, 2, 2]], [[0, 0, 2, 2]], "xyxy")[0]), 4)
        1.0
    """
    if "rel" in bounding_box_format:
        # Keras 3.15 refuses relative formats here whatever image_shape is
        raise ValueError(
            "When using relative bounding box formats (e.g. `rel_yxyx`) the `image_shape` argument must be "
            f"provided. Received `image_shape`: {image_shape}"
        )
    height, width = _image_size(image_shape)
    first = convert_format(boxes1, bounding_box_format, "xyxy", height, width)
    second = convert_format(boxes2, bounding_box_format, "xyxy", height, width)
    x1a, y1a, x2a, y2a = _sides(first)
    x1b, y1b, x2b, y2b = _sides(second)
    w1, h1 = x2a - x1a, y2a - y1a + _EPSILON
    w2, h2 = x2b - x1b, y2b - y1b + _EPSILON
    inter = (torch.minimum(x2a, x2b) - torch.maximum(x1a, x1b)).clamp_min(0) * (
        torch.minimum(y2a, y2b) - torch.maximum(y1a, y1b)
    ).clamp_min(0)
    union = w1 * h1 + w2 * h2 - inter + _EPSILON
    iou = (inter / (union + _EPSILON)).squeeze(-1)
    convex_w = torch.maximum(x2a, x2b) - torch.minimum(x1a, x1b)
    convex_h = torch.maximum(y2a, y2b) - torch.minimum(y1a, y1b)
    diagonal = (convex_w**2 + convex_h**2 + _EPSILON).squeeze(-1)
    distance = (((x1a + x2a) / 2 - (x1b + x2b) / 2) ** 2 + ((y1a + y2a) / 2 - (y1b + y2b) / 2) ** 2).squeeze(-1)
    v = ((4 / math.pi**2) * (torch.atan(w2 / h2) - torch.atan(w1 / h1)) ** 2).squeeze(-1)
    alpha = v / (v - iou + (1 + _EPSILON))
    return iou - (distance / diagonal + v * alpha)
