"""Keras 3's policy augmentations built from the other layers: ``RandAugment`` and ``AugMix``.

``RandAugment`` applies ``num_ops`` operations, each picked uniformly from eleven (shear,
translation, rotation, brightness, colour degeneration, contrast, sharpness, posterization,
solarization, auto-contrast, equalization), all of strength ``factor``. ``AugMix`` runs
``num_chains`` chains of up to ``chain_depth`` such operations (each step may be skipped), mixes
the chains by Dirichlet(``alpha``) weights and blends the mix with the original image by a
Beta(``alpha``, ``alpha``) weight, clipped to ``value_range``. Both pass images through at
inference (as float32).

The transformation dicts have Keras 3's keys (``{"transforms", "layer_idxes"}``;
``{"chain_mixing_weights", "weight_sample", "chain_transforms"}``); each operation draws its own
strength when applied (its entry's ``"transformation"`` is not read), so a fixed transformation
fixes which operations run and how they are mixed, not their strengths.

Example:
    >>> import torch
    >>> x = torch.full((1, 2, 2, 3), 7.0)
    >>> torch.equal(RandAugment(num_ops=0)(x), x)
    True
"""

from __future__ import annotations

from typing import Any

import torch

from unison.keras.layers.augmentation import RandomBrightness, RandomContrast, RandomRotation, RandomTranslation
from unison.keras.layers.augmentation_color import (
    AutoContrast,
    Equalization,
    RandomColorDegeneration,
    RandomPosterization,
    RandomSharpness,
    Solarization,
)
from unison.keras.layers.augmentation_shear import RandomShear
from unison.keras.layers.image_preprocessing import ImagePreprocessingLayer, keras_factor_01
from unison.keras.utils.bounding_boxes import as_tensor

__all__ = ["AugMix", "RandAugment"]

_GEOMETRIC = ("random_shear", "random_translation", "random_rotation")
_COLOR_RANDOM = ("random_brightness", "random_color_degeneration", "random_contrast", "random_sharpness")
_COLOR_FIXED = ("random_posterization", "solarization", "auto_contrast", "equalization")


def _operations(factor: tuple[float, float], value_range: Any, interpolation: str, seed: int | None) -> dict[str, Any]:
    """The eleven operations, built as Keras 3 builds them (strength ``factor``)."""
    return {
        "random_shear": RandomShear(x_factor=factor, y_factor=factor, interpolation=interpolation, seed=seed),
        "random_translation": RandomTranslation(factor, factor, interpolation=interpolation, seed=seed),
        "random_rotation": RandomRotation(factor, interpolation=interpolation, seed=seed),
        "random_brightness": RandomBrightness(factor, value_range=value_range, seed=seed),
        "random_color_degeneration": RandomColorDegeneration(factor, value_range=value_range, seed=seed),
        "random_contrast": RandomContrast(factor, value_range=value_range, seed=seed),
        "random_sharpness": RandomSharpness(factor, value_range=value_range, seed=seed),
        "random_posterization": RandomPosterization(max(1, int(8 * factor[1])), value_range=value_range, seed=seed),
        "solarization": Solarization(
            addition_factor=factor, threshold_factor=factor, value_range=value_range, seed=seed
        ),
        "auto_contrast": AutoContrast(value_range=value_range),
        "equalization": Equalization(value_range=value_range),
    }


def _check_interpolation(interpolation: str) -> None:
    if interpolation not in ("bilinear", "nearest"):
        raise NotImplementedError(
            f"Unknown `interpolation`: expected one of 'bilinear', 'nearest'. Received: interpolation={interpolation!r}"
        )


def _check_count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"`{what}` must be a non-negative integer. Received: {what}={value!r}")
    return value


class _Policy(ImagePreprocessingLayer):
    _names: tuple[str, ...] = ()

    def _build_operations(self, factor: tuple[float, float], value_range: Any, interpolation: str) -> None:
        _check_interpolation(interpolation)
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError(
                f"The `value_range` argument should be a list of two numbers. Received: value_range={value_range}"
            )
        operations = _operations(factor, value_range, interpolation, self.seed)
        self._operations = {name: operations[name] for name in self._names}
        for name, layer in self._operations.items():
            self.add_module(name, layer)

    def _run_operation(self, name: str, images: torch.Tensor) -> torch.Tensor:
        return self._operations[name](images, training=True).to(images.dtype)

    def _pick(self, count: int, choices: int) -> list[int]:
        draws = self.random.uniform((count,), 0.0, float(choices), torch.device("cpu"))
        return [min(int(v), choices - 1) for v in draws.floor().tolist()]


class RandAugment(_Policy):
    """``num_ops`` random operations of strength ``factor`` per batch (Keras 3's ``RandAugment``).

    Args:
        value_range: the images' range; num_ops: operations per call; factor: their strength in
        ``[0, 1]`` (a number ``f``: ``(0, f)``); interpolation: ``"bilinear"`` or ``"nearest"``.
    """

    _names = (*_GEOMETRIC, *_COLOR_RANDOM, *_COLOR_FIXED)

    def __init__(
        self,
        value_range: Any = (0, 255),
        num_ops: int = 2,
        factor: Any = 0.5,
        interpolation: str = "bilinear",
        seed: int | None = None,
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.value_range, self.num_ops = value_range, _check_count(num_ops, "num_ops")
        self.factor, self.interpolation = keras_factor_01(factor), interpolation
        self._build_operations(self.factor, value_range, interpolation)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        return {
            "transforms": {name: None for name in self._names},
            "layer_idxes": torch.tensor(self._pick(self.num_ops, len(self._names))),
        }

    def _transform_images(self, images: torch.Tensor, transformation: Any) -> torch.Tensor:
        if transformation is None:
            return images
        for index in as_tensor(transformation["layer_idxes"]).reshape(-1).tolist():
            if not 0 <= int(index) < len(self._names):
                raise ValueError(f"RandAugment's `layer_idxes` must be in [0, {len(self._names)}). Received: {index}")
            images = self._run_operation(self._names[int(index)], images)
        return images

    def get_config(self) -> dict[str, Any]:
        return self.keras_config(
            value_range=self.value_range,
            num_ops=self.num_ops,
            factor=self.factor,
            interpolation=self.interpolation,
            seed=self.seed,
        )


class AugMix(_Policy):
    """Mixed chains of random operations (Keras 3's ``AugMix``).

    Args:
        value_range: the images' range; num_chains: chains mixed; chain_depth: the most operations
        per chain; factor: their strength in ``[0, 1]``; alpha: the Dirichlet and Beta
        concentration; all_ops: use all eleven operations (False: the seven that do not overlap
        ImageNet-C's corruptions); interpolation: ``"bilinear"`` or ``"nearest"``.
    """

    def __init__(
        self,
        value_range: Any = (0, 255),
        num_chains: int = 3,
        chain_depth: int = 3,
        factor: Any = 0.3,
        alpha: float = 1.0,
        all_ops: bool = True,
        interpolation: str = "bilinear",
        seed: int | None = None,
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(data_format=data_format, seed=seed, **kwargs)
        self.value_range = value_range
        self.num_chains, self.chain_depth = (
            _check_count(num_chains, "num_chains"),
            _check_count(chain_depth, "chain_depth"),
        )
        self.factor, self.alpha, self.all_ops, self.interpolation = (
            keras_factor_01(factor),
            alpha,
            all_ops,
            interpolation,
        )
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha <= 0:
            raise ValueError(f"`alpha` must be a positive number. Received: alpha={alpha!r}")
        self._names = (*_GEOMETRIC, *_COLOR_FIXED) + (_COLOR_RANDOM if all_ops else ())
        self._build_operations(self.factor, value_range, interpolation)

    def _gamma(self, shape: tuple[int, ...]) -> torch.Tensor:
        seed = int(self.random.uniform((), 0.0, 2.0**31 - 1, torch.device("cpu")))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)  # torch's gamma sampler takes no generator: a forked, seeded global one
            return torch._standard_gamma(torch.full(shape, float(self.alpha)))

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        gamma = self._gamma((self.num_chains,))
        pair = self._gamma((2,))
        chains = []
        for _ in range(self.num_chains):
            picks = self._pick(self.chain_depth, len(self._names) + 1)  # the extra choice: skip this step
            chains.append(
                [{"layer_name": self._names[p], "transformation": None} for p in picks if p < len(self._names)]
            )
        return {
            "chain_mixing_weights": gamma / gamma.sum(),
            "weight_sample": pair[0] / pair.sum(),  # Beta(alpha, alpha) as a ratio of gammas
            "chain_transforms": chains,
        }

    def _transform_images(self, images: torch.Tensor, transformation: Any) -> torch.Tensor:
        if transformation is None:
            return images
        weights = as_tensor(transformation["chain_mixing_weights"], images.dtype).to(images.device)
        blend = as_tensor(transformation["weight_sample"], images.dtype).to(images.device)
        mixed = torch.zeros_like(images)
        for index, chain in enumerate(transformation["chain_transforms"]):
            chained = images
            for step in chain:
                chained = self._run_operation(step["layer_name"], chained)
            mixed = mixed + chained * weights[index]
        out = blend * images + (1 - blend) * mixed
        return out.clamp(self.value_range[0], self.value_range[1])

    def get_config(self) -> dict[str, Any]:
        return self.keras_config(
            value_range=self.value_range,
            num_chains=self.num_chains,
            chain_depth=self.chain_depth,
            factor=self.factor,
            alpha=self.alpha,
            all_ops=self.all_ops,
            interpolation=self.interpolation,
            seed=self.seed,
        )
