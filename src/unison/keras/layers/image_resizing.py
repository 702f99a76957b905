"""Image resizing layers (Keras 3): ``Resizing`` and ``CenterCrop``, and the image helpers the
augmentation layers share. They take one image ``(height, width, channels)`` or a batch and
return float images; they act the same in training and at inference.

Example:
    >>> import torch
    >>> Resizing(4, 6)(torch.rand(2, 8, 8, 3)).shape
    torch.Size([2, 4, 6, 3])
    >>> CenterCrop(2, 2)(torch.arange(16.0).reshape(4, 4, 1))[..., 0].tolist()
    [[5.0, 6.0], [9.0, 10.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.base import Layer
from unison.keras.layers.misc import check_channels_last
from unison.keras.utils.image_utils import crop_to_aspect, resize_images


def image_batch(inputs: Any, layer: Layer) -> tuple[torch.Tensor, bool]:
    """A float batch ``(N, H, W, C)`` and whether the input was batched."""
    x = inputs if isinstance(inputs, torch.Tensor) else torch.as_tensor(inputs)
    if x.dim() not in (3, 4):
        raise ValueError(
            f"Layer '{layer.name}' takes an image (height, width, channels) or a batch (batch, height, width, "
            f"channels). Received: input shape {tuple(x.shape)}; a grayscale image needs a channels axis of 1."
        )
    if not x.is_floating_point():
        x = x.to(torch.float32)
    return (x, True) if x.dim() == 4 else (x.unsqueeze(0), False)


def check_choice(value: Any, choices: Sequence[str], what: str) -> str:
    if value not in choices:
        raise NotImplementedError(
            f"Unknown `{what}`: expected one of {', '.join(repr(c) for c in choices)}. Received: {what}={value!r}"
        )
    return str(value)


def target_size(height: Any, width: Any) -> tuple[int, int]:
    for what, value in (("height", height), ("width", width)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{what}` must be a positive integer. Received: {what}={value!r}")
    return int(height), int(width)


class Resizing(Layer):
    """Resize images to ``height x width`` (``tf.image.resize``'s methods: ``"bilinear"``, ``"nearest"``,
    ``"bicubic"``, ``"area"``).

    ``crop_to_aspect_ratio=True`` first takes the largest central window of the target aspect
    ratio; ``pad_to_aspect_ratio=True`` instead pads evenly with ``fill_value`` to that ratio.
    """

    def __init__(
        self,
        height: int,
        width: int,
        interpolation: str = "bilinear",
        crop_to_aspect_ratio: bool = False,
        pad_to_aspect_ratio: bool = False,
        fill_mode: str = "constant",
        fill_value: float = 0.0,
        antialias: bool = False,
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_channels_last(data_format)
        self.height, self.width = target_size(height, width)
        self.interpolation = check_choice(interpolation, ("bilinear", "nearest", "bicubic", "area"), "interpolation")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError(
                "Only one of crop_to_aspect_ratio and pad_to_aspect_ratio can be True. Received: "
                "crop_to_aspect_ratio=True, pad_to_aspect_ratio=True; set one of them to False."
            )
        check_choice(fill_mode, ("constant",), "fill_mode")
        self.crop_to_aspect_ratio, self.pad_to_aspect_ratio = bool(crop_to_aspect_ratio), bool(pad_to_aspect_ratio)
        self.fill_value, self.antialias = float(fill_value), bool(antialias)

    def call(self, inputs: Any) -> torch.Tensor:
        x, batched = image_batch(inputs, self)
        if self.crop_to_aspect_ratio:
            x = crop_to_aspect(x, self.height, self.width)
        elif self.pad_to_aspect_ratio:
            in_h, in_w = x.shape[1], x.shape[2]
            pad_h = max(in_h, int(in_w * self.height / self.width))
            pad_w = max(in_w, int(in_h * self.width / self.height))
            top, left = int((pad_h - in_h) / 2), int((pad_w - in_w) / 2)
            x = F.pad(x, (0, 0, left, pad_w - in_w - left, top, pad_h - in_h - top), value=self.fill_value)
        x = resize_images(x, self.height, self.width, self.interpolation, self.antialias)
        return x if batched else x[0]


class CenterCrop(Layer):
    """Crop the centre ``height x width`` of each image (offset ``(size - target) // 2``).

    An image smaller than the target on either side is resized instead: its largest central
    window of the target aspect ratio, resized bilinearly.
    """

    def __init__(self, height: int, width: int, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_channels_last(data_format)
        self.height, self.width = target_size(height, width)

    def call(self, inputs: Any) -> torch.Tensor:
        x, batched = image_batch(inputs, self)
        in_h, in_w = x.shape[1], x.shape[2]
        if in_h >= self.height and in_w >= self.width:
            top, left = (in_h - self.height) // 2, (in_w - self.width) // 2
            x = x[:, top : top + self.height, left : left + self.width, :]
        else:
            x = resize_images(crop_to_aspect(x, self.height, self.width), self.height, self.width)
        return x if batched else x[0]


__all__ = ["CenterCrop", "Resizing", "check_choice", "crop_to_aspect", "image_batch", "resize_images", "target_size"]
