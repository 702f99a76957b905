"""``keras.visualization``: draw boxes and masks on images, and plot image galleries (Keras 3's).

``draw_bounding_boxes`` draws with OpenCV, as Keras 3 does (``pip install opencv-python-headless``;
without it the call raises ``ImportError`` saying so); the galleries plot with matplotlib (the
``plot`` extra), imported when first used. ``draw_segmentation_masks`` needs neither. Images are
``(batch, height, width, channels)`` (or channels-first with ``data_format="channels_first"``);
drawing functions return NumPy ``uint8`` images like Keras's.

Example:
    >>> import numpy as np
    >>> masks = np.array([[[[1], [0]]]])  # one 1x2 mask: class 1 (colour (1, 127, 31)), class 0 (black)
    >>> draw_segmentation_masks(np.zeros((1, 1, 2, 3)), masks, num_classes=2, alpha=1.0)[0, :, :, 0].tolist()
    [[1, 0]]
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch

from unison.keras.ops._config import image_data_format
from unison.keras.utils.bounding_boxes import as_tensor, convert_format

__all__ = [
    "draw_bounding_boxes",
    "draw_segmentation_masks",
    "plot_bounding_box_gallery",
    "plot_image_gallery",
    "plot_segmentation_mask_gallery",
]


def _numpy(value: Any) -> np.ndarray:
    return as_tensor(value).detach().cpu().numpy()


def _batched(images: Any) -> np.ndarray:
    array = _numpy(images)
    if array.ndim != 4:
        raise ValueError(f"`images` must be batched 4D tensor. Received: images.shape={tuple(array.shape)}")
    return array


def _channels_last(array: np.ndarray, data_format: str | None) -> np.ndarray:
    return array.transpose(0, 2, 3, 1) if (data_format or image_data_format()) == "channels_first" else array


def _cv2(function: str) -> Any:
    try:
        import cv2
    except ImportError as exc:
        raise ImportError(
            f"The `{function}` function requires the `cv2` package (OpenCV), as Keras's does. "
            "Please install it with `pip install opencv-python-headless` (or `opencv-python`)."
        ) from exc
    return cv2


def _pyplot(function: str) -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"The `{function}` function requires the `matplotlib` package. "
            "Please install it with `pip install matplotlib` (or unison's `plot` extra)."
        ) from exc
    return plt


def _unit_rgb(color: Any) -> tuple[float, float, float]:
    """An RGB colour in [0, 255] as matplotlib's [0, 1] triple."""
    red, green, blue = (float(c) / 255.0 for c in color)
    return red, green, blue


def _text_location(x: int, y: int, font_scale: float, thickness: int) -> tuple[int, int]:
    """Above the box when there is room, else just inside its top-left corner (Keras's rule)."""
    font_height = int(font_scale * 12)
    if y - 8 - 2 * font_height > 0:
        return x, y - 8
    return x + 3, y + 2 * font_height + thickness + 3


def draw_bounding_boxes(
    images: Any,
    bounding_boxes: dict[str, Any],
    bounding_box_format: str,
    class_mapping: dict[int, str] | None = None,
    color: Any = (128, 128, 128),
    line_thickness: int = 2,
    text_thickness: int | None = 1,
    font_scale: float = 1.0,
    data_format: str | None = None,
) -> np.ndarray:
    """Images with their boxes drawn (labels -1 skipped) and, where ``class_mapping`` names the class,
    the class name (and ``confidences``, if given) written above each box; ``uint8`` channels-last.

    Float images are read in ``[0, 1]`` when their maximum is at most 1, else in ``[0, 255]``.

    Example:
        >>> import numpy as np
        >>> out = draw_bounding_boxes(np.zeros((1, 8, 8, 3)), {"boxes": [[[1, 1, 5, 5]]], "labels": [[0]]},
        ...                           "xyxy", line_thickness=1)  # doctest: +SKIP
    """
    cv2 = _cv2("draw_bounding_boxes")
    class_mapping = class_mapping or {}
    text_thickness = text_thickness or line_thickness
    array = _batched(images)
    if not isinstance(bounding_boxes, dict):
        raise TypeError(
            f"`bounding_boxes` should be a dict. Received: bounding_boxes={bounding_boxes} of type "
            f"{type(bounding_boxes)}"
        )
    if "boxes" not in bounding_boxes or "labels" not in bounding_boxes:
        raise ValueError(
            f"`bounding_boxes` should be a dict containing 'boxes' and 'labels' keys. Received: bounding_boxes={bounding_boxes}"
        )
    first = (data_format or image_data_format()) == "channels_first"
    height, width = (array.shape[-2], array.shape[-1]) if first else (array.shape[-3], array.shape[-2])
    boxes = _numpy(convert_format(dict(bounding_boxes), bounding_box_format, "xyxy", height, width)["boxes"])
    labels = _numpy(bounding_boxes["labels"])
    confidences = _numpy(bounding_boxes["confidences"]) if "confidences" in bounding_boxes else None
    if array.dtype.kind == "f" and array.size > 0:
        array = np.clip(array, 0, 1) * 255 if array.max() <= 1.0 else np.clip(array, 0, 255)
    array = np.ascontiguousarray(array.astype("uint8"))
    drawn = []
    for i in range(array.shape[0]):
        image = np.ascontiguousarray(array[i])
        for j in range(boxes[i].shape[0]):
            x1, y1, x2, y2 = (int(v) for v in boxes[i][j].astype("int32"))
            label = int(labels[i][j].astype("int32"))
            if label == -1:  # padding
                continue
            cv2.rectangle(image, (x1, y1), (x2, y2), color, line_thickness)
            if label in class_mapping:
                text = class_mapping[label]
                if confidences is not None:
                    text = f"{text} | {confidences[i][j]:.2f}"
                cv2.putText(
                    img=image,
                    text=text,
                    org=_text_location(x1, y1, font_scale, text_thickness),
                    fontFace=cv2.FONT_HERSHEY_SIMPLEX,
                    fontScale=font_scale,
                    color=color,
                    thickness=text_thickness,
                )
        drawn.append(image)
    return np.stack(drawn, axis=0)


def _palette(num_classes: int) -> list[list[int]]:
    """Keras's default class colours: ``i * (2**25 - 1, 2**15 - 1, 2**21 - 1) % 255``."""
    palette = np.array([2**25 - 1, 2**15 - 1, 2**21 - 1])
    return [((i * palette) % 255).tolist() for i in range(num_classes)]


def draw_segmentation_masks(
    images: Any,
    segmentation_masks: Any,
    num_classes: int | None = None,
    color_mapping: dict[int, Any] | None = None,
    alpha: float = 0.8,
    blend: bool = True,
    ignore_index: int = -1,
    data_format: str | None = None,
) -> Any:
    """Colour each pixel by its class in ``segmentation_masks`` (integers, ``(batch, H, W, 1)``).

    With ``blend`` the colours are mixed into the images by ``alpha`` (``ignore_index`` pixels kept)
    and the result is ``uint8``; without it the coloured images are returned as float32.
    ``num_classes`` defaults to the largest class in the masks (as Keras's; that class is then not
    drawn, since classes are ``0 .. num_classes - 1``).
    """
    array = _channels_last(_batched(images), data_format)
    masks = _numpy(segmentation_masks)
    if (data_format or image_data_format()) == "channels_first":
        masks = masks.transpose(0, 2, 3, 1)
    if masks.dtype.kind not in "iu":
        raise TypeError(
            f"`segmentation_masks` must be in integer dtype. Received: segmentation_masks.dtype={masks.dtype}"
        )
    if num_classes is None:
        num_classes = int(masks.max())
    colors = _palette(num_classes) if color_mapping is None else [color_mapping[i] for i in range(num_classes)]
    images_f = array.astype(np.float32)
    valid = masks[..., 0] != ignore_index
    painted = images_f.copy()
    for index, color in enumerate(colors):
        painted[masks[..., 0] == index] = np.asarray(color, dtype=np.float32)[None, :]
    if not blend:
        return torch.from_numpy(painted)
    mixed = images_f * (1 - alpha) + painted * alpha
    mixed = np.where(valid[..., None], mixed, images_f)
    # float -> uint8 as TensorFlow casts (truncation), what Keras's result is on TF
    return torch.from_numpy(mixed).to(torch.uint8).numpy()


def plot_image_gallery(
    images: Any,
    y_true: Any = None,
    y_pred: Any = None,
    label_map: dict[Any, str] | None = None,
    rows: int | None = None,
    cols: int | None = None,
    value_range: Any = (0, 255),
    scale: float = 2,
    path: str | None = None,
    show: bool | None = None,
    transparent: bool = True,
    dpi: int = 60,
    legend_handles: Any = None,
    data_format: str | None = None,
) -> None:
    """Plot images in a ``rows x cols`` grid with matplotlib; saved to ``path`` or shown.

    ``y_true``/``y_pred`` (with ``label_map``) title each image. Values are mapped from
    ``value_range`` to ``[0, 255]``.
    """
    plt = _pyplot("plot_image_gallery")
    if path is not None and show:
        raise ValueError("plot_gallery() expects either `path` to be set, or `show` to be true.")
    if (y_true is not None or y_pred is not None) and label_map is None:
        raise ValueError("If `y_true` or `y_pred` are provided, a `label_map` must also be provided.")
    show = show if show is not None else path is None
    array = _numpy(images)
    batch_size = array.shape[0] if array.ndim == 4 else 1
    rows = rows or int(math.ceil(math.sqrt(batch_size)))
    cols = cols or int(math.ceil(batch_size // rows))
    if array.ndim != 4:
        raise ValueError("`plot_images_gallery()` requires you to batch your `np.array` samples together.")
    array = _channels_last(array[: min(rows * cols, batch_size)], data_format)
    fig, axes = plt.subplots(
        nrows=rows,
        ncols=cols,
        figsize=(cols * scale, rows * scale),
        frameon=False,
        layout="tight",
        squeeze=True,
        sharex="row",
        sharey="col",
    )
    fig.subplots_adjust(wspace=0, hspace=0)
    if isinstance(axes, np.ndarray) and axes.ndim == 1:
        axes = np.expand_dims(axes, 0 if rows == 1 else -1)
    if legend_handles is not None:
        fig.legend(handles=legend_handles, loc="lower center")
    low, high = value_range
    if list(value_range) != [0, 255]:
        array = (array.astype(np.float32) - low) / (high - low) * 255.0
    true = None if y_true is None else _numpy(y_true)
    pred = None if y_pred is None else _numpy(y_pred)
    for row in range(rows):
        for col in range(cols):
            index = row * cols + col
            axis = axes[row, col] if isinstance(axes, np.ndarray) else axes
            axis.imshow(array[index].astype("uint8"))
            axis.margins(x=0, y=0)
            axis.axis("off")
            title = []
            if true is not None and label_map is not None and index < len(true):
                title.append(f"Label: {label_map.get(true[index], 'Unknown')}")
            if pred is not None and label_map is not None and index < len(pred):
                title.append(f"Pred: {label_map.get(pred[index], 'Unknown')}")
            if title:
                axis.set_title("  ".join(title), fontsize=8)
    if path is not None:
        plt.savefig(fname=path, pad_inches=0, bbox_inches="tight", transparent=transparent, dpi=dpi)
        plt.close()
    elif show:
        plt.show()
        plt.close()


def plot_bounding_box_gallery(
    images: Any,
    bounding_box_format: str,
    y_true: Any = None,
    y_pred: Any = None,
    value_range: Any = (0, 255),
    true_color: Any = (0, 188, 212),
    pred_color: Any = (255, 235, 59),
    line_thickness: int = 2,
    font_scale: float = 1.0,
    text_thickness: int | None = None,
    class_mapping: dict[int, str] | None = None,
    ground_truth_mapping: dict[int, str] | None = None,
    prediction_mapping: dict[int, str] | None = None,
    legend: bool = False,
    legend_handles: Any = None,
    rows: int | None = None,
    cols: int | None = None,
    data_format: str | None = None,
    **kwargs: Any,
) -> None:
    """A gallery of images with true and predicted boxes drawn (:func:`draw_bounding_boxes`), optionally
    a legend; ``kwargs`` go to :func:`plot_image_gallery` (``path``, ``show``, ``scale``, ...)."""
    _pyplot("plot_bounding_box_gallery")
    from matplotlib import patches

    prediction_mapping = prediction_mapping or class_mapping
    ground_truth_mapping = ground_truth_mapping or class_mapping
    plotted = _channels_last(_batched(images), data_format)
    draw = functools.partial(
        draw_bounding_boxes,
        bounding_box_format=bounding_box_format,
        line_thickness=line_thickness,
        text_thickness=text_thickness,
        font_scale=font_scale,
    )
    if y_true is not None:
        plotted = draw(plotted, y_true, color=true_color, class_mapping=ground_truth_mapping)
    if y_pred is not None:
        plotted = draw(plotted, y_pred, color=pred_color, class_mapping=prediction_mapping)
    if legend:
        if legend_handles:
            raise ValueError(
                "Only pass `legend` OR `legend_handles` to `keras.visualization.plot_bounding_box_gallery()`."
            )
        legend_handles = [
            patches.Patch(color=_unit_rgb(true_color), label="Ground Truth"),
            patches.Patch(color=_unit_rgb(pred_color), label="Prediction"),
        ]
    plot_image_gallery(plotted, value_range=value_range, legend_handles=legend_handles, rows=rows, cols=cols, **kwargs)


def plot_segmentation_mask_gallery(
    images: Any,
    num_classes: int,
    value_range: Any = (0, 255),
    y_true: Any = None,
    y_pred: Any = None,
    color_mapping: dict[int, Any] | None = None,
    blend: bool = True,
    alpha: float = 0.8,
    ignore_index: int = -1,
    data_format: str | None = None,
    **kwargs: Any,
) -> None:
    """One row per image: the image, then its true and predicted masks drawn on it
    (:func:`draw_segmentation_masks`); ``kwargs`` go to :func:`plot_image_gallery`."""
    first = (data_format or image_data_format()) == "channels_first"
    array = _channels_last(_batched(images), data_format)
    cols = 1 + (y_true is not None) + (y_pred is not None)
    draw = functools.partial(
        draw_segmentation_masks,
        num_classes=num_classes,
        color_mapping=color_mapping,
        alpha=alpha,
        ignore_index=ignore_index,
        blend=blend,
    )

    def drawn(masks: Any) -> np.ndarray:
        mask_array = _numpy(masks)
        mask_array = mask_array.transpose(0, 2, 3, 1) if first else mask_array
        out = draw(array, mask_array.astype(np.int32), data_format="channels_last")
        return _numpy(out)

    true = drawn(y_true) if y_true is not None else None
    pred = drawn(y_pred) if y_pred is not None else None
    gallery = []
    for i in range(array.shape[0]):
        gallery.append(array[i])
        if true is not None:
            gallery.append(true[i])
        if pred is not None:
            gallery.append(pred[i])
    plot_image_gallery(np.stack(gallery, axis=0), value_range=value_range, rows=array.shape[0], cols=cols, **kwargs)
