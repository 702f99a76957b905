"""Keras 3's image-preprocessing contract for the newer augmentation layers, and ``MaxNumBoundingBoxes``.

A layer of this base draws one *transformation* per call (``get_random_transformation(data,
training)``, ``None`` at inference) and applies it to each part of the data: ``transform_images``,
``transform_labels``, ``transform_bounding_boxes``, ``transform_segmentation_masks``. Data is a
batch ``(N, H, W, C)``, one image ``(H, W, C)`` (what a ``tf.data`` ``map`` sees) or a dict with
``"images"`` and optionally ``"labels"``, ``"bounding_boxes"`` (``{"boxes", "labels"}``, in the
layer's ``bounding_box_format``) and ``"segmentation_masks"``. As in Keras 3, a transformation can
be built by hand and passed to ``transform_images`` to apply a fixed augmentation.

Example:
    >>> import numpy as np
    >>> layer = MaxNumBoundingBoxes(max_number=2, bounding_box_format="xyxy")
    >>> out = layer({"images": np.zeros((1, 4, 4, 3)),
    ...              "bounding_boxes": {"boxes": np.ones((1, 1, 4)), "labels": np.ones((1, 1))}})
    >>> out["bounding_boxes"]["labels"].tolist()
    [[1.0, -1.0]]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.layers.base import Layer
from unison.keras.layers.misc import RandomSource, check_channels_last
from unison.keras.utils.bounding_boxes import as_tensor

__all__ = ["ImagePreprocessingLayer", "MaxNumBoundingBoxes", "keras_factor_01"]


def keras_factor_01(factor: Any, what: str = "factor") -> tuple[float, float]:
    """Keras 3's ``_set_factor`` with bounds ``[0, 1]``: ``f`` -> ``(0, f)``, a pair sorted."""
    message = (
        f"The `{what}` argument should be a number (or a list of two numbers) in the range [0, 1]. "
        f"Received: factor={factor}"
    )
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > 1 or factor[1] < 0:
            raise ValueError(message)
        low, high = sorted(factor)
        return low, high
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if factor < 0 or factor > 1:
            raise ValueError(message)
        return max(-abs(factor), 0), abs(factor)
    raise ValueError(message)


def _images_of(data: Any) -> Any:
    return data["images"] if isinstance(data, dict) else data


class ImagePreprocessingLayer(Layer):
    """The base: one transformation per call, applied to images, labels, boxes and masks alike."""

    def __init__(
        self,
        bounding_box_format: str | None = None,
        data_format: str | None = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_channels_last(data_format)
        self.bounding_box_format = bounding_box_format
        self.data_format = "channels_last"
        self.seed = seed
        self.random = RandomSource(seed)
        self.built = True

    # -- the four transforms and the draw, overridden by each layer ---------------------------
    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        """The parameters of one random augmentation of ``data`` (``None``: nothing to do)."""
        return None

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> torch.Tensor:
        """``images`` (a batch) with ``transformation`` applied; float32, as Keras's compute dtype."""
        x = as_tensor(images)
        x = x.to(torch.float32) if not x.is_floating_point() else x
        return self._transform_images(x, transformation) if training else x

    def _transform_images(self, images: torch.Tensor, transformation: Any) -> torch.Tensor:
        return images

    def transform_labels(self, labels: Any, transformation: Any = None, training: bool = True) -> Any:
        """Labels are unchanged by a geometric or colour augmentation."""
        return labels

    def transform_bounding_boxes(self, bounding_boxes: Any, transformation: Any = None, training: bool = True) -> Any:
        raise NotImplementedError(
            f"Layer {type(self).__name__} does not transform bounding boxes (as in Keras 3). "
            "Pass only images (and labels), or use a layer that moves boxes."
        )

    def transform_segmentation_masks(self, masks: Any, transformation: Any = None, training: bool = True) -> Any:
        """Masks get the image transform with nearest sampling (Keras's default)."""
        return self.transform_images(masks, transformation, training)

    # -- the call --------------------------------------------------------------------------------
    def _batched(self, images: Any) -> bool:
        rank = as_tensor(images).dim()
        if rank not in (3, 4):
            raise ValueError(
                f"Expected image tensor to have rank 3 (single image) or 4 (batch of images). "
                f"Received: data.shape={tuple(as_tensor(images).shape)}"
            )
        return rank == 4

    def _on_batch(self, fn: Any, value: Any, batched: bool, transformation: Any, training: bool) -> Any:
        if batched:
            return fn(as_tensor(value), transformation, training)
        out = fn(as_tensor(value).unsqueeze(0), transformation, training)
        return out.squeeze(0)

    def call(self, data: Any, training: bool = True) -> Any:
        if isinstance(data, dict) and "images" not in data:
            raise ValueError(
                f"Layer '{self.name}' takes images or a dict with an 'images' key (and optionally 'labels', "
                f"'bounding_boxes', 'segmentation_masks'). Received a dict with keys {sorted(data)}"
            )
        batched = self._batched(data["images"] if isinstance(data, dict) else data)  # checked before any draw
        transformation = self.get_random_transformation(data, training=training)
        if not isinstance(data, dict):
            return self._on_batch(self.transform_images, data, batched, transformation, training)
        data = dict(data)
        data["images"] = self._on_batch(self.transform_images, data["images"], batched, transformation, training)
        if "bounding_boxes" in data:
            if not self.bounding_box_format:
                raise ValueError(
                    "You passed an input with a 'bounding_boxes' key, but you didn't specify a bounding box "
                    f"format. Pass a `bounding_box_format` argument to your {type(self).__name__} layer, e.g. "
                    "`bounding_box_format='xyxy'`."
                )
            data["bounding_boxes"] = self._boxes(data["bounding_boxes"], batched, transformation, training)
        if "labels" in data:
            data["labels"] = self._on_batch(self.transform_labels, data["labels"], batched, transformation, training)
        if "segmentation_masks" in data:
            data["segmentation_masks"] = self._on_batch(
                self.transform_segmentation_masks, data["segmentation_masks"], batched, transformation, training
            )
        return data

    def _boxes(self, boxes: Any, batched: bool, transformation: Any, training: bool) -> dict[str, Any]:
        if not isinstance(boxes, dict) or "boxes" not in boxes:
            raise ValueError(
                f"`bounding_boxes` must be a dict with a 'boxes' entry (and 'labels'). Received: {type(boxes).__name__}"
            )
        dense = {key: as_tensor(value) for key, value in boxes.items()}
        if batched:
            return self.transform_bounding_boxes(dense, transformation, training)
        single = {key: value.unsqueeze(0) for key, value in dense.items()}
        out = self.transform_bounding_boxes(single, transformation, training)
        return {key: value.squeeze(0) for key, value in out.items()}

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def keras_config(self, **entries: Any) -> dict[str, Any]:
        """Keras 3's config keys: the base ones, then the layer's own ``entries``."""
        from unison.keras.layers.layer_config import dtype_entry

        config = {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": dtype_entry(self),
            "data_format": self.data_format,
        }
        if self.bounding_box_format is not None:  # Keras lists it only when it was given
            config["bounding_box_format"] = self.bounding_box_format
        return {**config, **entries}


class MaxNumBoundingBoxes(ImagePreprocessingLayer):
    """Pad or cut each image's boxes to ``max_number`` (Keras 3's ``MaxNumBoundingBoxes``).

    Missing boxes and labels are ``fill_value`` (-1); images and masks pass unchanged. As in
    Keras 3, boxes need the layer's ``bounding_box_format`` set.
    """

    def __init__(self, max_number: int, fill_value: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_number = int(max_number)
        self.fill_value = int(fill_value)
        if self.max_number < 0:
            raise ValueError(f"`max_number` must be >= 0. Received: max_number={max_number}")

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> torch.Tensor:
        return as_tensor(images)

    def transform_bounding_boxes(self, bounding_boxes: Any, transformation: Any = None, training: bool = True) -> Any:
        boxes, labels = as_tensor(bounding_boxes["boxes"]), as_tensor(bounding_boxes["labels"])
        missing = max(self.max_number - boxes.shape[1], 0)
        boxes = torch.nn.functional.pad(boxes[:, : self.max_number], (0, 0, 0, missing), value=self.fill_value)
        labels = torch.nn.functional.pad(labels[:, : self.max_number], (0, missing), value=self.fill_value)
        out = dict(bounding_boxes)
        out["boxes"], out["labels"] = boxes, labels
        return out

    def get_config(self) -> dict[str, Any]:
        return self.keras_config(max_number=self.max_number)
