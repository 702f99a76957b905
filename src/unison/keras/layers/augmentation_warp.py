"""Keras 3's warping augmentations: ``RandomPerspective`` and ``RandomElasticTransform``.

``RandomPerspective`` moves each image's four corners by up to ``scale / 2`` of the image (a
fraction of each corner's coordinates, as Keras 3) and resamples through the homography of the
old corners to the new ones (``keras.ops.image.perspective_transform``); boxes move with their
corners. ``RandomElasticTransform`` shifts each pixel by blurred Gaussian noise
(``keras.ops.image.elastic_transform``, ``alpha = 0.1 s max(H, W)``, ``sigma = 0.05 s min(H, W)``
for a distortion ``s`` drawn from ``scale``) and clips to ``value_range``. Each image is
augmented with a probability drawn from ``factor``. The transformations are Keras 3's dicts
(``{"apply_perspective", "start_points", "end_points", "input_shape"}`` and
``{"apply_transform", "distortion_factor", "seed"}``), so a fixed one can be passed to
``transform_images``.

Example:
    >>> import torch
    >>> x = torch.arange(16.0).reshape(1, 4, 4, 1)
    >>> torch.equal(RandomPerspective(factor=0.0)(x), x)  # probability 0: unchanged
    True
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.layers.image_preprocessing import ImagePreprocessingLayer, _images_of, keras_factor_01
from unison.keras.ops._image_more import _homography, elastic_transform, perspective_transform
from unison.keras.utils.bounding_boxes import as_tensor, clip_to_image_size, convert_format

__all__ = ["RandomElasticTransform", "RandomPerspective"]

_INTERPOLATIONS = ("nearest", "bilinear")
_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _check_interpolation(interpolation: str) -> None:
    if interpolation not in _INTERPOLATIONS:
        raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one {_INTERPOLATIONS}.")


def _batch_size(data: Any) -> tuple[int, int, int]:
    shape = [int(size) for size in as_tensor(_images_of(data)).shape]
    return (1, shape[0], shape[1]) if len(shape) == 3 else (shape[0], shape[1], shape[2])


class RandomPerspective(ImagePreprocessingLayer):
    """Random perspective warps (Keras 3's ``RandomPerspective``); identity at inference.

    Args:
        factor: the probability range an image is warped with (a number ``f``: ``(0, f)``).
        scale: how far corners move, in ``[0, 1]``; interpolation: ``"bilinear"`` or ``"nearest"``;
        fill_value: the value outside the warped image.
    """

    def __init__(
        self,
        factor: Any = 1.0,
        scale: float = 1.0,
        interpolation: str = "bilinear",
        fill_value: float = 0.0,
        seed: int | None = None,
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.factor = keras_factor_01(factor)
        self.scale, self.fill_value, self.interpolation = scale, fill_value, interpolation
        if scale < 0.0 or scale > 1.0:
            raise ValueError(f"The `scale` argument should be a number in the range [0,1]. Received: scale={scale}")
        _check_interpolation(interpolation)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        n, height, width = _batch_size(data)
        cpu = torch.device("cpu")
        probability = self.random.uniform((n,), self.factor[0], self.factor[1], cpu)
        apply = self.random.uniform((n,), 0.0, 1.0, cpu) < probability
        moves = self.random.uniform((n, 4, 2), -0.5 * self.scale, 0.5 * self.scale, cpu)
        corners = torch.tensor([[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1], [width - 1, height - 1]])
        start = corners.expand(n, 4, 2)
        return {
            "apply_perspective": apply,
            "start_points": start,
            "end_points": start + start * moves,
            "input_shape": tuple(as_tensor(_images_of(data)).shape),
        }

    def _warp(self, images: torch.Tensor, transformation: Any, interpolation: str) -> torch.Tensor:
        if transformation is None or images.shape[0] == 0:
            return images
        out = perspective_transform(
            images,
            transformation["start_points"],
            transformation["end_points"],
            interpolation=interpolation,
            fill_value=self.fill_value,
        )
        apply = as_tensor(transformation["apply_perspective"]).to(torch.bool).to(images.device)
        return torch.where(apply.reshape(-1, 1, 1, 1), out.to(images.dtype), images)

    def _transform_images(self, images: torch.Tensor, transformation: Any) -> torch.Tensor:
        return self._warp(images, transformation, self.interpolation)

    def transform_segmentation_masks(self, masks: Any, transformation: Any = None, training: bool = True) -> Any:
        x = as_tensor(masks)
        return self._warp(x, transformation, "nearest") if training else x

    def transform_bounding_boxes(self, bounding_boxes: Any, transformation: Any = None, training: bool = True) -> Any:
        """Each box becomes the smallest box around its warped corners, clipped to the image."""
        if not training or transformation is None:
            return bounding_boxes
        shape = transformation["input_shape"]
        height, width = shape[-3], shape[-2]
        boxes = convert_format(dict(bounding_boxes), self.bounding_box_format or "xyxy", "xyxy", height, width)
        xyxy = as_tensor(boxes["boxes"])
        start = as_tensor(transformation["start_points"]).double().reshape(-1, 4, 2)
        end = as_tensor(transformation["end_points"]).double().reshape(-1, 4, 2)
        coefficients = _homography(start, end).to(torch.float32)  # output pixel -> input pixel
        matrix = torch.cat([coefficients, torch.ones(coefficients.shape[0], 1)], -1).reshape(-1, 3, 3)
        forward = torch.linalg.inv(matrix).unsqueeze(1)  # input pixel -> output pixel, per image
        x0, y0, x1, y1 = xyxy.unbind(-1)
        xs, ys = [], []
        for cx, cy in ((x0, y0), (x1, y1), (x0, y1), (x1, y0)):
            points = torch.stack([cx, cy, torch.ones_like(cx)], -1).unsqueeze(-1)  # (B, N, 3, 1)
            moved = (forward @ points).squeeze(-1)
            xs.append(moved[..., 0] / moved[..., 2])
            ys.append(moved[..., 1] / moved[..., 2])
        x_all, y_all = torch.stack(xs, -1), torch.stack(ys, -1)
        warped = torch.stack([x_all.amin(-1), y_all.amin(-1), x_all.amax(-1), y_all.amax(-1)], -1)
        apply = as_tensor(transformation["apply_perspective"]).to(torch.bool).reshape(-1, 1, 1)
        boxes["boxes"] = torch.where(apply, warped, xyxy)
        return clip_to_image_size(boxes, height=height, width=width, bounding_box_format="xyxy")

    def get_config(self) -> dict[str, Any]:
        return self.keras_config(
            factor=self.factor,
            scale=self.scale,
            interpolation=self.interpolation,
            fill_value=self.fill_value,
            seed=self.seed,
        )


class RandomElasticTransform(ImagePreprocessingLayer):
    """Random elastic distortions (Keras 3's ``RandomElasticTransform``); identity at inference.

    Args:
        factor: the probability range an image is distorted with; scale: the distortion's range
        (both in ``[0, 1]``, a number ``f`` meaning ``(0, f)``); interpolation: ``"bilinear"`` or
        ``"nearest"``; fill_mode: ``"constant"``, ``"nearest"``, ``"wrap"``, ``"mirror"`` or
        ``"reflect"``; fill_value: the constant fill; value_range: the images' range (clipped to).
    """

    def __init__(
        self,
        factor: Any = 1.0,
        scale: Any = 1.0,
        interpolation: str = "bilinear",
        fill_mode: str = "reflect",
        fill_value: float = 0.0,
        value_range: Any = (0, 255),
        seed: int | None = None,
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.factor = keras_factor_01(factor)
        self.scale = keras_factor_01(scale, "scale")
        self.interpolation, self.fill_mode, self.fill_value = interpolation, fill_mode, fill_value
        self.value_range = value_range
        _check_interpolation(interpolation)
        if fill_mode not in _FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one {set(_FILL_MODES)}.")

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training or self.scale[1] == 0 or self.factor[1] == 0:
            return None
        n = _batch_size(data)[0]
        cpu = torch.device("cpu")
        probability = self.random.uniform((n,), self.factor[0], self.factor[1], cpu)
        apply = self.random.uniform((n,), 0.0, 1.0, cpu) < probability
        distortion = self.random.uniform((), self.scale[0], self.scale[1], cpu)
        noise_seed = int(self.random.uniform((), 0.0, 2.0**31 - 1, cpu))
        return {"apply_transform": apply, "distortion_factor": distortion, "seed": noise_seed}

    def _transform_images(self, images: torch.Tensor, transformation: Any) -> torch.Tensor:
        return self._distort(images, transformation, self.interpolation)

    def _distort(self, images: torch.Tensor, transformation: Any, interpolation: str) -> torch.Tensor:
        if transformation is None or images.shape[0] == 0:
            return images
        height, width = images.shape[-3], images.shape[-2]
        factor = float(as_tensor(transformation["distortion_factor"]))
        alpha, sigma = max(height, width) * 0.1 * factor, min(height, width) * 0.05 * factor
        seed = transformation.get("seed")
        seed = int(seed) if isinstance(seed, (int, float)) or isinstance(seed, torch.Tensor) else seed
        moved = elastic_transform(
            images,
            alpha=alpha,
            sigma=sigma,
            interpolation=interpolation,
            fill_mode=self.fill_mode,
            fill_value=self.fill_value,
            seed=seed,
        )
        apply = as_tensor(transformation["apply_transform"]).to(torch.bool).to(images.device).reshape(-1, 1, 1, 1)
        out = torch.where(apply, moved.to(images.dtype), images)
        return out.clamp(self.value_range[0], self.value_range[1])

    def transform_segmentation_masks(self, masks: Any, transformation: Any = None, training: bool = True) -> Any:
        x = as_tensor(masks)
        return self._distort(x, transformation, "nearest") if training else x

    def get_config(self) -> dict[str, Any]:
        return self.keras_config(
            factor=self.factor,
            scale=self.scale,
            interpolation=self.interpolation,
            fill_mode=self.fill_mode,
            fill_value=self.fill_value,
            value_range=self.value_range,
            seed=self.seed,
        )
