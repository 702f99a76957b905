"""``keras.utils.bounding_boxes`` on unison against Keras 3.15: formats, clipping, IoUs, deltas, affine moves."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_BOXES = np.array([[10.0, 20.0, 30.0, 60.0], [5.0, 5.0, 50.0, 25.0], [-4.0, 70.0, 90.0, 130.0]], np.float32)
_OTHER = np.array([[12.0, 18.0, 28.0, 50.0], [40.0, 0.0, 60.0, 30.0]], np.float32)
_FORMATS = ("xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", "rel_xyxy", "rel_yxyx", "rel_xywh", "rel_center_xywh")


def _np(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def _bb(tf):
    return tf.keras.utils.bounding_boxes


@same_as_tf("keras:utils.bounding_boxes.convert_format")
def test_convert_format_between_every_pair(tf):
    convert = _bb(tf).convert_format
    out = []
    for source in _FORMATS:
        for target in _FORMATS:
            out.append(_np(convert(_BOXES, source=source, target=target, height=100, width=200)))
    batched = convert(np.stack([_BOXES, _BOXES + 1]).astype(np.int32), source="XYXY", target="center_yxhw")
    as_dict = convert({"boxes": _BOXES, "labels": np.arange(3)}, source="xyxy", target="xywh")
    return out, _np(batched), _np(as_dict["boxes"]), _np(as_dict["labels"])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"boxes": np.zeros((2, 3), np.float32), "source": "xyxy", "target": "xywh"},
        {"boxes": _BOXES, "source": "xyxy", "target": "polygon"},
        {"boxes": _BOXES, "source": "xyxy", "target": "rel_xyxy"},
        {"boxes": np.zeros((0, 4), np.float32), "source": "xyxy", "target": "rel_center_xywh", "height": 4, "width": 8},
    ],
)
@same_as_tf("keras:utils.bounding_boxes.convert_format", edge=True)
def test_convert_format_edges(tf, kwargs):
    return _np(_bb(tf).convert_format(**kwargs))


@same_as_tf("keras:utils.bounding_boxes.clip_to_image_size")
def test_clip_to_image_size(tf):
    clip = _bb(tf).clip_to_image_size
    absolute = clip({"boxes": _BOXES, "labels": np.array([1, 2, 3])}, height=64, width=48)
    relative = clip({"boxes": _BOXES / 50.0, "labels": np.array([[4.0, 5.0, 6.0]])}, bounding_box_format="rel_xyxy")
    outside = clip({"boxes": np.array([[200.0, 200.0, 300.0, 300.0]], np.float32)}, height=10, width=10)
    return (
        _np(absolute["boxes"]),
        _np(absolute["labels"]),
        _np(relative["boxes"]),
        _np(relative["labels"]),
        _np(outside["boxes"]),
        sorted(outside),
    )


@pytest.mark.parametrize(
    "kwargs", [{"bounding_box_format": "xyxy"}, {"bounding_box_format": "xywh", "height": 3, "width": 3}]
)
@same_as_tf("keras:utils.bounding_boxes.clip_to_image_size", edge=True)
def test_clip_to_image_size_bad_arguments(tf, kwargs):
    return _bb(tf).clip_to_image_size({"boxes": _BOXES}, **kwargs)


@same_as_tf("keras:utils.bounding_boxes.compute_iou", "keras:utils.bounding_boxes.compute_ciou")
def test_ious(tf):
    bb = _bb(tf)
    batched1 = np.stack([_BOXES, _BOXES[::-1]])
    batched2 = np.stack([_OTHER, _OTHER * 0.5])
    padded = np.concatenate([_OTHER, -np.ones((1, 4), np.float32)])
    return (
        _np(bb.compute_iou(_BOXES, _OTHER, "xyxy")),
        _np(bb.compute_iou(batched1, batched2, "yxyx")),
        _np(bb.compute_iou(batched1, _OTHER, "xywh")),
        _np(bb.compute_iou(_BOXES, padded, "xyxy", use_masking=True, mask_val=-7)),
        _np(bb.compute_iou(_BOXES / 100, _OTHER / 100, "rel_xyxy", image_shape=(100, 100, 3))),
        _np(bb.compute_ciou(_BOXES[:2], _OTHER, "xyxy")),
        _np(bb.compute_ciou(batched1[:, :2], batched2, "center_xywh")),
    )


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("compute_iou", (np.zeros(4, np.float32), _OTHER, "xyxy")),
        ("compute_iou", (_BOXES, _OTHER, "rel_xyxy")),
        ("compute_ciou", (_BOXES, _BOXES, "rel_xyxy")),
        ("compute_iou", (np.zeros((0, 4), np.float32), _OTHER, "xyxy")),
    ],
)
@same_as_tf("keras:utils.bounding_boxes.compute_iou", "keras:utils.bounding_boxes.compute_ciou", edge=True)
def test_iou_edges(tf, name, args):
    return _np(getattr(_bb(tf), name)(*args))


@same_as_tf("keras:utils.bounding_boxes.encode_box_to_deltas", "keras:utils.bounding_boxes.decode_deltas_to_boxes")
def test_deltas_round_trip(tf):
    bb = _bb(tf)
    anchors = _OTHER[:1].repeat(3, axis=0) + np.arange(3, dtype=np.float32)[:, None]
    boxes = np.abs(_BOXES)
    plain = bb.encode_box_to_deltas(anchors, boxes, "xyxy", "xyxy")
    scaled = bb.encode_box_to_deltas(
        anchors,
        boxes / 100,
        "xyxy",
        "rel_xyxy",
        "center_xywh",
        variance=[0.1, 0.1, 0.2, 0.2],
        image_shape=(100, 100, 3),
    )
    decoded = bb.decode_deltas_to_boxes(anchors, plain, "xyxy", "yxyx")
    decoded_scaled = bb.decode_deltas_to_boxes(
        anchors, scaled, "xyxy", "rel_xyxy", "center_xywh", variance=[0.1, 0.1, 0.2, 0.2], image_shape=(100, 100, 3)
    )
    levels = bb.decode_deltas_to_boxes({"p3": anchors, "p4": anchors * 2}, {"p3": plain, "p4": plain}, "xyxy", "xywh")
    return _np(plain), _np(scaled), _np(decoded), _np(decoded_scaled), {k: _np(v) for k, v in levels.items()}


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("encode_box_to_deltas", {"variance": [1.0, 2.0]}),
        ("encode_box_to_deltas", {"encoding_format": "xyxy"}),
        ("decode_deltas_to_boxes", {"encoded_format": "yxyx"}),
        ("decode_deltas_to_boxes", {"variance": [1.0, 1.0, 1.0]}),
    ],
)
@same_as_tf(
    "keras:utils.bounding_boxes.encode_box_to_deltas", "keras:utils.bounding_boxes.decode_deltas_to_boxes", edge=True
)
def test_delta_bad_arguments(tf, name, kwargs):
    return _np(getattr(_bb(tf), name)(_OTHER, _OTHER, "xyxy", "xyxy", **kwargs))


@same_as_tf("keras:utils.bounding_boxes.crop", "keras:utils.bounding_boxes.pad")
def test_crop_and_pad(tf):
    bb = _bb(tf)
    batched = np.stack([_BOXES, _BOXES + 3])
    return (
        _np(bb.crop(_BOXES, top=10, left=20, height=40, width=30)),
        _np(bb.crop(batched, 5, 2, 50, 60)),
        _np(bb.pad(_BOXES, top=3, left=7)),
        _np(bb.pad(batched, 1.5, 2.5, height=9, width=9)),
    )


@pytest.mark.parametrize("name", ["crop", "pad"])
@same_as_tf("keras:utils.bounding_boxes.crop", "keras:utils.bounding_boxes.pad", edge=True)
def test_crop_and_pad_other_formats_and_empty(tf, name):
    fn = getattr(_bb(tf), name)
    empty = _np(fn(np.zeros((0, 4), np.float32), 1, 2, 3, 4))
    try:
        fn(_BOXES, 1, 2, 3, 4, bounding_box_format="yxyx")
    except NotImplementedError:
        return empty, "NotImplementedError"
    return empty, "accepted"


@same_as_tf("keras:utils.bounding_boxes.affine_transform", atol=1e-3)
def test_affine_transform(tf):
    boxes = np.stack([_BOXES, _BOXES[::-1]])
    angle = np.array([30.0, -45.0], np.float32)
    moved = _bb(tf).affine_transform(
        boxes,
        angle,
        np.array([0.1, -0.2], np.float32),
        np.array([0.0, 0.3], np.float32),
        np.array([1.2, 0.8], np.float32),
        np.array([10.0, 0.0], np.float32),
        np.array([0.0, -5.0], np.float32),
        height=100,
        width=80,
    )
    still = _bb(tf).affine_transform(
        boxes, np.zeros(2, np.float32), 0.0, 0.0, 1.0, 0.0, 0.0, 100, 80, center_x=0.2, center_y=0.7
    )
    return _np(moved), _np(still)


@same_as_tf("keras:utils.bounding_boxes.affine_transform", edge=True)
def test_affine_transform_other_format(tf):
    one = np.zeros(1, np.float32)
    return _bb(tf).affine_transform(_BOXES[None], one, one, one, one + 1, one, one, 10, 10, bounding_box_format="yxyx")
