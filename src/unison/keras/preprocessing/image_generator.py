"""Keras 2's ``ImageDataGenerator``: real-time augmentation and standardisation of image batches.

As tf_keras's: ``get_random_transform`` draws one image's parameters from NumPy's global
generator in tf_keras's order (rotation, height and width shift, shear, zoom, flips, channel
shift, brightness), ``apply_transform`` applies them (``image_transforms.py``),
``standardize`` rescales and centres/normalises (sample-wise, or feature-wise and ZCA after
``fit``), and ``flow`` / ``flow_from_directory`` / ``flow_from_dataframe`` iterate batches
(``image_iterators.py``). Images are channels-last unless ``data_format="channels_first"``.

Example:
    >>> import numpy as np
    >>> gen = ImageDataGenerator(rescale=0.5, horizontal_flip=False)
    >>> x, y = next(gen.flow(np.ones((4, 2, 2, 1)), np.arange(4), batch_size=4, shuffle=False))
    >>> float(x.max()), y.tolist()
    (0.5, [0, 1, 2, 3])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from unison.keras.ops._config import image_data_format
from unison.keras.preprocessing.image_iterators import DataFrameIterator, DirectoryIterator, NumpyArrayIterator
from unison.keras.preprocessing.image_transforms import (
    apply_affine_transform,
    apply_brightness_shift,
    apply_channel_shift,
)


def _shift(value: Any, size: int) -> float:
    """tf_keras's shift draw: one of a list's values (random sign), or uniform in ``[-v, v]``."""
    try:
        shift = float(np.random.choice(value)) * float(np.random.choice([-1, 1]))
    except ValueError:  # a float: NumPy refuses it as a population
        shift = np.random.uniform(-value, value)
    if np.max(value) < 1:
        shift *= size
    return float(shift)


class ImageDataGenerator:
    """Generate batches of augmented image data (tf_keras's ``ImageDataGenerator``).

    Args mirror tf_keras's: ``featurewise_center``, ``samplewise_center``, ``featurewise_std_normalization``,
    ``samplewise_std_normalization``, ``zca_whitening``, ``zca_epsilon``, ``rotation_range`` (degrees),
    ``width_shift_range`` / ``height_shift_range`` (fraction if < 1, else pixels; a list: choices),
    ``brightness_range``, ``shear_range`` (degrees), ``zoom_range`` (``z`` or ``[low, high]``),
    ``channel_shift_range``, ``fill_mode``, ``cval``, ``horizontal_flip``, ``vertical_flip``,
    ``rescale``, ``preprocessing_function``, ``data_format``, ``validation_split``,
    ``interpolation_order``, ``dtype``.
    """

    def __init__(
        self,
        featurewise_center: bool = False,
        samplewise_center: bool = False,
        featurewise_std_normalization: bool = False,
        samplewise_std_normalization: bool = False,
        zca_whitening: bool = False,
        zca_epsilon: float = 1e-6,
        rotation_range: float = 0,
        width_shift_range: Any = 0.0,
        height_shift_range: Any = 0.0,
        brightness_range: Any = None,
        shear_range: float = 0.0,
        zoom_range: Any = 0.0,
        channel_shift_range: float = 0.0,
        fill_mode: str = "nearest",
        cval: float = 0.0,
        horizontal_flip: bool = False,
        vertical_flip: bool = False,
        rescale: float | None = None,
        preprocessing_function: Callable[[np.ndarray], np.ndarray] | None = None,
        data_format: str | None = None,
        validation_split: float = 0.0,
        interpolation_order: int = 1,
        dtype: Any = None,
    ) -> None:
        data_format = data_format or image_data_format()
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(
                "`data_format` should be `'channels_last'` (channel after row and column) or "
                f"`'channels_first'` (channel before row and column). Received: {data_format!r}"
            )
        if validation_split and not 0 < validation_split < 1:
            raise ValueError(f"`validation_split` must be strictly between 0 and 1.  Received: {validation_split}")
        if fill_mode not in ("constant", "nearest", "reflect", "wrap"):
            raise ValueError(
                f"`fill_mode` must be one of 'constant', 'nearest', 'reflect', 'wrap'. Received: fill_mode={fill_mode!r}"
            )
        if isinstance(zoom_range, (float, int)):
            self.zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif isinstance(zoom_range, (tuple, list)) and len(zoom_range) == 2:
            self.zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(f"`zoom_range` should be a float or a tuple or list of two floats. Received: {zoom_range}")
        if brightness_range is not None and (
            not isinstance(brightness_range, (tuple, list, np.ndarray)) or len(brightness_range) != 2
        ):
            raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
        self.featurewise_center, self.samplewise_center = featurewise_center, samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening, self.zca_epsilon = zca_whitening, zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range, self.height_shift_range = width_shift_range, height_shift_range
        self.shear_range, self.channel_shift_range = shear_range, channel_shift_range
        self.brightness_range = brightness_range
        self.fill_mode, self.cval = fill_mode, cval
        self.horizontal_flip, self.vertical_flip = horizontal_flip, vertical_flip
        self.rescale, self.preprocessing_function = rescale, preprocessing_function
        self.dtype = np.dtype(dtype or "float32")
        self.interpolation_order = interpolation_order
        self.data_format = data_format
        self.channel_axis, self.row_axis, self.col_axis = (3, 1, 2) if data_format == "channels_last" else (1, 2, 3)
        self._validation_split = validation_split
        self.mean: np.ndarray | None = None
        self.std: np.ndarray | None = None
        self.zca_whitening_matrix: np.ndarray | None = None
        if zca_whitening and (featurewise_center is False or featurewise_std_normalization):
            if not featurewise_center:
                self.featurewise_center = True
                warnings.warn("This ImageDataGenerator specifies `zca_whitening`, which overrides setting of "
                              "`featurewise_center`.", stacklevel=2)  # fmt: skip
            if featurewise_std_normalization:
                self.featurewise_std_normalization = False
                warnings.warn("This ImageDataGenerator specifies `zca_whitening` which overrides setting of"
                              "`featurewise_std_normalization`.", stacklevel=2)  # fmt: skip
        if samplewise_std_normalization and not samplewise_center:
            self.samplewise_center = True
            warnings.warn("This ImageDataGenerator specifies `samplewise_std_normalization`, which overrides "
                          "setting of `samplewise_center`.", stacklevel=2)  # fmt: skip

    # --- iterators ------------------------------------------------------------------------------
    def flow(self, x: Any, y: Any = None, batch_size: int = 32, shuffle: bool = True, sample_weight: Any = None,
             seed: int | None = None, save_to_dir: str | None = None, save_prefix: str = "",
             save_format: str = "png", ignore_class_split: bool = False, subset: str | None = None) -> NumpyArrayIterator:  # fmt: skip
        """Batches of augmented ``x`` (with ``y`` and ``sample_weight`` when given)."""
        return NumpyArrayIterator(
            x, y, self, batch_size=batch_size, shuffle=shuffle, sample_weight=sample_weight, seed=seed,
            data_format=self.data_format, save_to_dir=save_to_dir, save_prefix=save_prefix,
            save_format=save_format, ignore_class_split=ignore_class_split, subset=subset, dtype=self.dtype,
        )  # fmt: skip

    def flow_from_directory(self, directory: str, target_size: Any = (256, 256), color_mode: str = "rgb",
                            classes: list[str] | None = None, class_mode: str | None = "categorical",
                            batch_size: int = 32, shuffle: bool = True, seed: int | None = None,
                            save_to_dir: str | None = None, save_prefix: str = "", save_format: str = "png",
                            follow_links: bool = False, subset: str | None = None, interpolation: str = "nearest",
                            keep_aspect_ratio: bool = False) -> DirectoryIterator:  # fmt: skip
        """Batches of augmented images read from ``directory/<class>/`` folders."""
        return DirectoryIterator(
            directory, self, target_size=target_size, color_mode=color_mode, classes=classes,
            class_mode=class_mode, data_format=self.data_format, batch_size=batch_size, shuffle=shuffle,
            seed=seed, save_to_dir=save_to_dir, save_prefix=save_prefix, save_format=save_format,
            follow_links=follow_links, subset=subset, interpolation=interpolation,
            keep_aspect_ratio=keep_aspect_ratio, dtype=self.dtype,
        )  # fmt: skip

    def flow_from_dataframe(self, dataframe: Any, directory: str | None = None, x_col: str = "filename",
                            y_col: Any = "class", weight_col: str | None = None, target_size: Any = (256, 256),
                            color_mode: str = "rgb", classes: list[str] | None = None,
                            class_mode: str | None = "categorical", batch_size: int = 32, shuffle: bool = True,
                            seed: int | None = None, save_to_dir: str | None = None, save_prefix: str = "",
                            save_format: str = "png", subset: str | None = None, interpolation: str = "nearest",
                            validate_filenames: bool = True, **kwargs: Any) -> DataFrameIterator:  # fmt: skip
        """Batches of augmented images named by a pandas DataFrame (``x_col``), labelled by ``y_col``."""
        if kwargs:
            raise TypeError(f"flow_from_dataframe got unexpected keyword arguments: {sorted(kwargs)}")
        return DataFrameIterator(
            dataframe, directory, self, x_col=x_col, y_col=y_col, weight_col=weight_col, target_size=target_size,
            color_mode=color_mode, classes=classes, class_mode=class_mode, data_format=self.data_format,
            batch_size=batch_size, shuffle=shuffle, seed=seed, save_to_dir=save_to_dir, save_prefix=save_prefix,
            save_format=save_format, subset=subset, interpolation=interpolation, dtype=self.dtype,
            validate_filenames=validate_filenames,
        )  # fmt: skip

    # --- one image --------------------------------------------------------------------------------
    def standardize(self, x: np.ndarray) -> np.ndarray:
        """Rescale, centre and normalise one image (or a batch) as configured, in place when it can."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        if self.featurewise_center:
            if self.mean is not None:
                x -= self.mean
            else:
                warnings.warn("This ImageDataGenerator specifies `featurewise_center`, but it hasn't been fit on "
                              "any training data. Fit it first by calling `.fit(numpy_data)`.", stacklevel=2)  # fmt: skip
        if self.featurewise_std_normalization:
            if self.std is not None:
                x /= self.std + 1e-6
            else:
                warnings.warn("This ImageDataGenerator specifies `featurewise_std_normalization`, but it hasn't "
                              "been fit on any training data. Fit it first by calling `.fit(numpy_data)`.",
                              stacklevel=2)  # fmt: skip
        if self.zca_whitening:
            if self.zca_whitening_matrix is not None:
                flat = x.reshape(-1, int(np.prod(x.shape[-3:])))
                x = np.reshape(flat @ self.zca_whitening_matrix, x.shape)
            else:
                warnings.warn("This ImageDataGenerator specifies `zca_whitening`, but it hasn't been fit on any "
                              "training data. Fit it first by calling `.fit(numpy_data)`.", stacklevel=2)  # fmt: skip
        return x

    def get_random_transform(self, img_shape: Any, seed: int | None = None) -> dict[str, Any]:
        """One image's random parameters (``theta``, ``tx``, ``ty``, ``shear``, ``zx``, ``zy``, flips, ...)."""
        row, col = self.row_axis - 1, self.col_axis - 1
        if seed is not None:
            np.random.seed(seed)
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) if self.rotation_range else 0
        tx = _shift(self.height_shift_range, img_shape[row]) if self.height_shift_range else 0
        ty = _shift(self.width_shift_range, img_shape[col]) if self.width_shift_range else 0
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1.0, 1.0
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_horizontal = (np.random.random() < 0.5) * self.horizontal_flip
        flip_vertical = (np.random.random() < 0.5) * self.vertical_flip
        channel_shift_intensity = None
        if self.channel_shift_range != 0:
            channel_shift_intensity = np.random.uniform(-self.channel_shift_range, self.channel_shift_range)
        brightness = None
        if self.brightness_range is not None:
            brightness = np.random.uniform(self.brightness_range[0], self.brightness_range[1])
        return {
            "theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy,
            "flip_horizontal": flip_horizontal, "flip_vertical": flip_vertical,
            "channel_shift_intensity": channel_shift_intensity, "brightness": brightness,
        }  # fmt: skip

    def apply_transform(self, x: np.ndarray, transform_parameters: dict[str, Any]) -> np.ndarray:
        """Apply ``get_random_transform``'s parameters (any subset of them) to one image."""
        row, col, channel = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        p = transform_parameters
        x = apply_affine_transform(
            x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0), p.get("shear", 0), p.get("zx", 1), p.get("zy", 1),
            row_axis=row, col_axis=col, channel_axis=channel, fill_mode=self.fill_mode, cval=self.cval,
            order=self.interpolation_order,
        )  # fmt: skip
        if p.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, p["channel_shift_intensity"], channel)
        if p.get("flip_horizontal", False):
            x = np.flip(x, col)
        if p.get("flip_vertical", False):
            x = np.flip(x, row)
        if p.get("brightness") is not None:
            x = apply_brightness_shift(x, p["brightness"], False)
        return x

    def random_transform(self, x: np.ndarray, seed: int | None = None) -> np.ndarray:
        """``apply_transform`` with freshly drawn parameters."""
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x: Any, augment: bool = False, rounds: int = 1, seed: int | None = None) -> None:
        """Compute the feature-wise mean, std and ZCA matrix of ``x`` (a rank-4 batch) for ``standardize``."""
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"Input to `.fit()` should have rank 4. Got array with shape: {x.shape}")
        if seed is not None:
            np.random.seed(seed)
        x = np.copy(x)
        if self.rescale:
            x *= self.rescale
        if augment:
            x = np.stack([self.random_transform(x[i]) for _ in range(rounds) for i in range(x.shape[0])]).astype(
                self.dtype
            )
        broadcast = [1, 1, 1]
        broadcast[self.channel_axis - 1] = x.shape[self.channel_axis]
        axes = (0, self.row_axis, self.col_axis)
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=axes), broadcast)
            x -= self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=axes), broadcast)
            x /= self.std + 1e-6
        if self.zca_whitening:
            flat = np.reshape(x, (x.shape[0], -1))
            # the thin SVD of the data itself: u's columns span the images, s their singular values
            u, s, _ = np.linalg.svd(flat.T, full_matrices=False)
            self.zca_whitening_matrix = (u * (np.sqrt(flat.shape[0]) / (s + self.zca_epsilon))) @ u.T


__all__ = ["ImageDataGenerator"]
