"""``keras.visualization`` on unison against Keras 3.15: drawn pixels, and galleries saved as PNG and read back.

Both sides draw boxes with OpenCV and plot with matplotlib (the ``test`` extra installs both), so
the saved galleries are compared pixel for pixel.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_IMAGES = (np.cos(np.arange(2 * 24 * 32 * 3) * 0.7) * 100 + 120).reshape(2, 24, 32, 3).astype(np.float32)
_BOXES = {
    "boxes": np.array([[[2.0, 3.0, 20.0, 18.0], [5.0, 5.0, 9.0, 9.0]], [[0.0, 0.0, 31.0, 23.0], [1, 1, 2, 2]]]),
    "labels": np.array([[0, 1], [2, -1]]),
}
_MASKS = (np.arange(2 * 24 * 32) % 5 - 1).reshape(2, 24, 32, 1).astype(np.int32)


def _np(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def _gallery(tmp_name, plot, **kwargs):
    """Plot into a PNG under a fresh temporary folder and read its pixels back."""
    import os
    import tempfile

    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.image

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, tmp_name)
        plot(path=path, **kwargs)
        return matplotlib.image.imread(path)


@same_as_tf("keras:visualization.draw_bounding_boxes")
def test_draw_bounding_boxes(tf):
    draw = tf.keras.visualization.draw_bounding_boxes
    plain = draw(_IMAGES, dict(_BOXES), "xyxy")
    named = draw(
        _IMAGES / 255.0,
        {**_BOXES, "confidences": np.array([[0.9, 0.25], [0.5, 0.1]])},
        "xyxy",
        class_mapping={0: "cat", 2: "dog"},
        color=(255, 0, 0),
        line_thickness=1,
        font_scale=0.3,
    )
    relative = draw(_IMAGES.astype(np.uint8), {"boxes": _BOXES["boxes"] / 40.0, "labels": _BOXES["labels"]}, "rel_xyxy")
    return plain, named, relative


@pytest.mark.parametrize(
    ("images", "boxes"),
    [(_IMAGES[0], _BOXES), (_IMAGES, _BOXES["boxes"]), (_IMAGES, {"boxes": _BOXES["boxes"]})],
)
@same_as_tf("keras:visualization.draw_bounding_boxes", edge=True)
def test_draw_bounding_boxes_bad_inputs(tf, images, boxes):
    return tf.keras.visualization.draw_bounding_boxes(images, boxes, "xyxy")


@same_as_tf("keras:visualization.draw_segmentation_masks")
def test_draw_segmentation_masks(tf):
    draw = tf.keras.visualization.draw_segmentation_masks
    return (
        _np(draw(_IMAGES, _MASKS)),
        _np(draw(_IMAGES, _MASKS, num_classes=4, alpha=0.3)),
        _np(draw(_IMAGES, _MASKS, num_classes=3, color_mapping={0: (1, 2, 3), 1: (9, 9, 9), 2: (200, 0, 50)})),
        _np(draw(_IMAGES, _MASKS, num_classes=4, blend=False, ignore_index=2)),
    )


@pytest.mark.parametrize("case", ["float masks", "rank 3 images"])
@same_as_tf("keras:visualization.draw_segmentation_masks", edge=True)
def test_draw_segmentation_masks_bad_inputs(tf, case):
    if case == "float masks":
        return tf.keras.visualization.draw_segmentation_masks(_IMAGES, _MASKS.astype(np.float32))
    return tf.keras.visualization.draw_segmentation_masks(_IMAGES[0], _MASKS[0])


@same_as_tf("keras:visualization.plot_image_gallery")
def test_plot_image_gallery(tf):
    plot = tf.keras.visualization.plot_image_gallery
    grid = _gallery("grid.png", plot, images=np.concatenate([_IMAGES, _IMAGES[::-1]]), scale=1, dpi=40)
    titled = _gallery(
        "titled.png",
        plot,
        images=_IMAGES / 255.0,
        value_range=(0, 1),
        y_true=np.array([0, 1]),
        y_pred=np.array([1, 1]),
        label_map={0: "zero", 1: "one"},
        rows=1,
        cols=2,
        dpi=30,
    )
    return grid, titled


@pytest.mark.parametrize("case", ["labels without a map", "path and show", "one image"])
@same_as_tf("keras:visualization.plot_image_gallery", edge=True)
def test_plot_image_gallery_bad_arguments(tf, case):
    plot = tf.keras.visualization.plot_image_gallery
    if case == "labels without a map":
        return plot(_IMAGES, y_true=np.array([0, 1]), path="unused.png")
    if case == "path and show":
        return plot(_IMAGES, path="unused.png", show=True)
    return plot(_IMAGES[0], path="unused.png")


@same_as_tf("keras:visualization.plot_bounding_box_gallery")
def test_plot_bounding_box_gallery(tf):
    return _gallery(
        "boxes.png",
        tf.keras.visualization.plot_bounding_box_gallery,
        images=_IMAGES,
        bounding_box_format="xyxy",
        y_true=dict(_BOXES),
        y_pred={"boxes": _BOXES["boxes"] + 2, "labels": _BOXES["labels"]},
        class_mapping={0: "a", 1: "b", 2: "c"},
        font_scale=0.3,
        legend=True,
        rows=1,
        cols=2,
        dpi=30,
    )


@same_as_tf("keras:visualization.plot_bounding_box_gallery", edge=True)
def test_plot_bounding_box_gallery_legend_twice(tf):
    return tf.keras.visualization.plot_bounding_box_gallery(
        _IMAGES, "xyxy", y_true=dict(_BOXES), legend=True, legend_handles=["x"], path="unused.png"
    )


@same_as_tf("keras:visualization.plot_segmentation_mask_gallery")
def test_plot_segmentation_mask_gallery(tf):
    return _gallery(
        "masks.png",
        tf.keras.visualization.plot_segmentation_mask_gallery,
        images=_IMAGES,
        num_classes=4,
        y_true=_MASKS,
        y_pred=_MASKS[:, ::-1],
        dpi=30,
    )


@same_as_tf("keras:visualization.plot_segmentation_mask_gallery", edge=True)
def test_plot_segmentation_mask_gallery_unbatched(tf):
    return tf.keras.visualization.plot_segmentation_mask_gallery(_IMAGES[0], num_classes=3, path="unused.png")
