"""Keras 3's batch-mixing augmentation layers, ``MixUp`` and ``CutMix``, and ``Pipeline``.

``MixUp`` blends each image with another of the batch (a random permutation) by a weight drawn
from ``Beta(alpha, alpha)``; ``CutMix`` pastes a box of the partner image, the box's area being
``1 - w`` of the image for ``w`` drawn from ``Beta(a, a)`` (``a`` uniform in ``factor``). Both
take a batch of images or a dict ``{"images": ..., "labels": ...}`` and then mix the labels
by the same weights (for ``CutMix``, the area actually kept), as Keras 3. At inference they pass
the data through. ``Pipeline`` calls its layers in turn, passing ``training`` on, as Keras 3's.

Example:
    >>> import torch
    >>> x = torch.ones(4, 3, 3, 1)
    >>> bool((MixUp(seed=1)(x) == 1).all())  # mixing equal images changes nothing
    True
    >>> from unison.keras.layers.augmentation_color import Solarization
    >>> Pipeline([Solarization(threshold_factor=(0, 0))])(torch.zeros(1, 1, 1, 1)).flatten().tolist()
    [255.0]
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import nn

from unison.keras.layers.augmentation import _Augmentation
from unison.keras.layers.augmentation_color import keras_factor
from unison.keras.layers.base import Layer, takes_training
from unison.keras.layers.image_resizing import image_batch
from unison.keras.saving.serialization import from_config, layer_config

__all__ = ["CutMix", "MixUp", "Pipeline", "RandomErasing"]


class _Mixing(_Augmentation):
    """Images or ``{"images", "labels"}`` in, the same structure out; ``_mix`` does the work."""

    def call(self, inputs: Any, training: bool = True) -> Any:
        data = dict(inputs) if isinstance(inputs, dict) else {"images": inputs}
        if "images" not in data:
            raise ValueError(
                f"Layer '{self.name}' takes images or a dict with an 'images' key (and optionally 'labels'). "
                f"Received a dict with keys {sorted(data)}"
            )
        x, batched = image_batch(data["images"], self)
        if training:
            labels = data.get("labels")
            y = None if labels is None else torch.as_tensor(labels).to(x.dtype).reshape(x.shape[0], -1)
            x, y = self._mix(x, y)
            if labels is not None:
                data["labels"] = y.reshape(torch.as_tensor(labels).shape) if y is not None else labels
        data["images"] = x if batched else x[0]
        return data if isinstance(inputs, dict) else data["images"]

    def _mix(self, x: torch.Tensor, y: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        raise NotImplementedError

    def _permutation(self, n: int, device: torch.device) -> torch.Tensor:
        return torch.randperm(n, generator=self.random.generator).to(device)

    def _beta(self, n: int, alpha: float, device: torch.device) -> torch.Tensor:
        """``n`` draws from ``Beta(alpha, alpha)``, reproducible under the layer's seed."""
        seed = int(self.random.uniform((1,), 0.0, 2.0**31, torch.device("cpu"))[0])
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)  # torch's gamma sampler takes no generator: a forked, seeded global one
            concentration = torch.full((n,), float(alpha))
            return torch.distributions.Beta(concentration, concentration).sample().to(device)


class MixUp(_Mixing):
    """Blend each image (and label) with a random partner of the batch: ``w x + (1 - w) x_partner``.

    Args:
        alpha: the Beta distribution's concentration (small: weights near 0 or 1).
    """

    def __init__(
        self, alpha: float = 0.2, data_format: str | None = None, seed: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(seed, data_format=data_format, **kwargs)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha <= 0:
            raise ValueError(f"`alpha` must be a positive number (the Beta concentration). Received: alpha={alpha!r}")
        self.alpha = alpha

    def _mix(self, x: torch.Tensor, y: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        order = self._permutation(x.shape[0], x.device)
        weight = self._beta(x.shape[0], self.alpha, x.device).to(x.dtype)
        x = weight.reshape(-1, 1, 1, 1) * x + (1.0 - weight.reshape(-1, 1, 1, 1)) * x[order]
        if y is not None:
            y = weight.reshape(-1, 1) * y + (1.0 - weight.reshape(-1, 1)) * y[order]
        return x, y


class CutMix(_Mixing):
    """Paste a random box of a partner image into each image; labels mixed by the area kept.

    Args:
        factor: the range of the Beta concentration ``a`` (a number ``f``: ``(0, f)``), in ``[0, 1]``.
    """

    _config_forms: ClassVar[dict[str, str]] = {"factor": "from_zero"}

    def __init__(
        self, factor: Any = 1.0, seed: int | None = None, data_format: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(seed, data_format=data_format, **kwargs)
        self.factor = keras_factor(factor, (0, 1))

    def _mix(self, x: torch.Tensor, y: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        n, height, width, _ = x.shape
        alpha = float(self.random.uniform((1,), self.factor[0], self.factor[1], torch.device("cpu"))[0]) + 1e-6
        ratio = torch.sqrt(1.0 - self._beta(n, alpha, x.device).to(x.dtype))

        def bounds(length: int) -> tuple[torch.Tensor, torch.Tensor]:
            crop = ratio * length
            start = self.random.uniform((n,), 0.0, 1.0, x.device).to(x.dtype) * (length - crop)
            return start, start + crop

        x0, x1 = bounds(width)
        y0, y1 = bounds(height)
        grid_y = torch.arange(height, dtype=x.dtype, device=x.device).reshape(1, -1, 1, 1)
        grid_x = torch.arange(width, dtype=x.dtype, device=x.device).reshape(1, 1, -1, 1)

        def r(t: torch.Tensor) -> torch.Tensor:
            return t.reshape(-1, 1, 1, 1)

        box = (grid_x >= r(x0)) & (grid_x < r(x1)) & (grid_y >= r(y0)) & (grid_y < r(y1))
        order = self._permutation(n, x.device)
        x = torch.where(box, x[order], x)
        if y is not None:
            kept = (1.0 - (x1 - x0) * (y1 - y0) / (width * height)).reshape(-1, 1)
            y = kept * y + (1.0 - kept) * y[order]
        return x, y


class RandomErasing(_Augmentation):
    """Erase a random box of an image (with a probability drawn from ``factor``), as Keras 3.

    The box's sides are ``sqrt(s)`` of the image's, ``s`` drawn per side from ``scale``; it is
    filled with ``fill_value`` (a number or one per channel), or with Gaussian noise times
    ``value_range[1]`` when None, clipped to ``value_range``.
    """

    _config_forms: ClassVar[dict[str, str]] = {"factor": "from_zero"}

    def __init__(
        self,
        factor: Any = 1.0,
        scale: Any = (0.02, 0.33),
        fill_value: Any = None,
        value_range: Any = (0, 255),
        seed: int | None = None,
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(seed, data_format=data_format, **kwargs)
        self.factor = keras_factor(factor, (0, 1))
        self.scale = keras_factor(scale, (0, 1), "scale")
        self.fill_value, self.value_range = fill_value, value_range

    def _augment(self, x: torch.Tensor) -> torch.Tensor:
        n, height, width, _ = x.shape
        sides = torch.sqrt(self.random.uniform((n, 2), self.scale[0], self.scale[1], x.device)).to(x.dtype)

        def bounds(length: int, ratio: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            crop = ratio * length
            start = self.random.uniform((n,), 0.0, 1.0, x.device).to(x.dtype) * (length - crop)
            return start.reshape(-1, 1, 1, 1), (start + crop).reshape(-1, 1, 1, 1)

        x0, x1 = bounds(width, sides[:, 0])
        y0, y1 = bounds(height, sides[:, 1])
        grid_y = torch.arange(height, dtype=x.dtype, device=x.device).reshape(1, -1, 1, 1)
        grid_x = torch.arange(width, dtype=x.dtype, device=x.device).reshape(1, 1, -1, 1)
        box = (grid_x >= x0) & (grid_x < x1) & (grid_y >= y0) & (grid_y < y1)
        apply = (self._uniform(x, (0.0, 1.0)) < self._uniform(x, self.factor)).reshape(-1, 1, 1, 1)
        if self.fill_value is not None and not (
            isinstance(self.fill_value, (int, float))
            or (isinstance(self.fill_value, (tuple, list)) and len(self.fill_value) == 3)
        ):  # checked when used, as Keras 3 does
            raise ValueError(
                "The `fill_value` argument should be a number (or a list of three numbers). "
                f"Received: fill_value={self.fill_value}"
            )
        if self.fill_value is None:
            fill = self.random.normal(tuple(x.shape), x.device).to(x.dtype) * self.value_range[1]
        else:
            fill = torch.as_tensor(self.fill_value, dtype=x.dtype, device=x.device).expand_as(x)
        fill = fill.clamp(self.value_range[0], self.value_range[1])
        return torch.where(box & apply, fill, x)


class Pipeline(Layer):
    """Apply ``layers`` in order, passing ``training`` to those that take it (not a model: a plain layer).

    Args:
        layers: the layers (or any callables) to apply, first to last.
    """

    def __init__(self, layers: list[Any], name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        if not isinstance(layers, (list, tuple)):
            raise ValueError(f"`Pipeline` takes a list of layers. Received: layers of type {type(layers).__name__}")
        self._pipeline_layers = list(layers)
        self._modules_list = nn.ModuleList([layer for layer in layers if isinstance(layer, nn.Module)])
        self.built = True

    @property
    def layers(self) -> list[Any]:
        """The pipeline's layers, in order."""
        return self._pipeline_layers

    def call(self, inputs: Any, training: bool | None = True) -> Any:
        for layer in self._pipeline_layers:
            call = getattr(layer, "call", None) or layer
            kwargs = {"training": training} if training is not None and takes_training(call) else {}
            inputs = layer(inputs, **kwargs)
        return inputs

    def get_config(self) -> dict[str, Any]:
        return {"layers": [layer_config(layer) for layer in self._pipeline_layers], "name": self.name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Pipeline:
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError(
                "`Pipeline` config must contain a `layers` key mapping to a list of serialized layers. "
                f"Received config with layers={layers}."
            )
        return cls([from_config(entry) for entry in layers], name=config.get("name"))
