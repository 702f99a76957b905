"""Keras 2's image iterators: ``Iterator`` (the base), ``NumpyArrayIterator`` (``flow``),
``DirectoryIterator`` (``flow_from_directory``) and ``DataFrameIterator`` (``flow_from_dataframe``).

Each is a ``keras.utils.Sequence`` of batches (``it[i]``, ``len(it)``) and a Python iterator that
cycles for ever (``next(it)``), as tf_keras's: the order is reshuffled at each epoch when
``shuffle``; with ``seed`` the batch ``k`` seeds NumPy's global generator with ``seed + k`` first, so
the permutation and the augmentations equal tf_keras's for the same seed. Each image goes through
the generator's ``get_random_transform``, ``apply_transform`` and ``standardize``.

Example:
    >>> import numpy as np
    >>> from unison.keras.preprocessing.image_generator import ImageDataGenerator
    >>> it = NumpyArrayIterator(np.zeros((5, 2, 2, 1)), np.arange(5), ImageDataGenerator(), batch_size=2)
    >>> len(it), it[2][0].shape
    (3, (1, 2, 2, 1))
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from unison.keras.utils.image_utils import array_to_img, img_to_array, load_img
from unison.keras.utils.py_dataset import Sequence

_CLASS_MODES = ("categorical", "binary", "sparse", "input", None)
_COLOR_CHANNELS = {"rgb": 3, "rgba": 4, "grayscale": 1}


class Iterator(Sequence):
    """The base of the image iterators: ``n`` samples in batches, shuffled per epoch."""

    white_list_formats = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")
    data_format = "channels_last"
    save_to_dir: str | None = None
    save_prefix = ""
    save_format = "png"

    def __init__(self, n: int, batch_size: int, shuffle: bool, seed: int | None) -> None:
        super().__init__()
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"`batch_size` must be a positive integer. Received: batch_size={batch_size!r}")
        self.n, self.batch_size, self.seed, self.shuffle = n, batch_size, seed, shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array: np.ndarray | None = None
        self.index_generator = self._flow_index()

    def _set_index_array(self) -> None:
        self.index_array = np.random.permutation(self.n) if self.shuffle else np.arange(self.n)

    def __getitem__(self, idx: int) -> Any:
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length {len(self)}")
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        assert self.index_array is not None
        return self._get_batches_of_transformed_samples(
            self.index_array[self.batch_size * idx : self.batch_size * (idx + 1)]
        )

    def __len__(self) -> int:
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self) -> None:
        """A new order for the next epoch."""
        self._set_index_array()

    def reset(self) -> None:
        """Start the endless iteration (``next``) from the first batch again."""
        self.batch_index = 0

    def _flow_index(self) -> Any:
        self.reset()
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            current = 0 if self.n == 0 else (self.batch_index * self.batch_size) % self.n
            self.batch_index = self.batch_index + 1 if self.n > current + self.batch_size else 0
            self.total_batches_seen += 1
            assert self.index_array is not None
            yield self.index_array[current : current + self.batch_size]

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        with self.lock:
            index_array = next(self.index_generator)
        return self._get_batches_of_transformed_samples(index_array)

    def next(self) -> Any:
        """The next batch (Python 2's spelling, kept by tf_keras)."""
        return self.__next__()

    def _transform(self, generator: Any, x: np.ndarray) -> np.ndarray:
        if generator is None:
            return x
        x = generator.apply_transform(x, generator.get_random_transform(x.shape))
        return generator.standardize(x)

    def _save(self, batch_x: np.ndarray, index_array: np.ndarray) -> None:
        save_to_dir = self.save_to_dir
        if not save_to_dir:
            return
        for i, j in enumerate(index_array):
            img = array_to_img(batch_x[i], self.data_format, scale=True)
            name = f"{self.save_prefix}_{j}_{np.random.randint(int(1e7))}.{self.save_format}"
            img.save(os.path.join(save_to_dir, name))

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement _get_batches_of_transformed_samples")


def _subset(subset: str | None) -> None:
    if subset is not None and subset not in ("training", "validation"):
        raise ValueError(f"Invalid subset name: {subset!r}; expected 'training' or 'validation'")


class NumpyArrayIterator(Iterator):
    """Batches of ``(augmented x, y[, sample_weight])`` from arrays (what ``ImageDataGenerator.flow`` returns)."""

    def __init__(
        self,
        x: Any,
        y: Any,
        image_data_generator: Any,
        batch_size: int = 32,
        shuffle: bool = False,
        sample_weight: Any = None,
        seed: int | None = None,
        data_format: str | None = None,
        save_to_dir: str | None = None,
        save_prefix: str = "",
        save_format: str = "png",
        subset: str | None = None,
        ignore_class_split: bool = False,
        dtype: Any = None,
    ) -> None:
        self.dtype = np.dtype(dtype or "float32")
        x_misc: list[np.ndarray] = []
        if isinstance(x, (tuple, list)):
            x_misc = [np.asarray(xx) for xx in x[1:]]  # extra inputs batched along, not augmented
            x = x[0]
        x = np.asarray(x)
        if y is not None and len(x) != len(y):
            raise ValueError(
                "`x` (images tensor) and `y` (labels) should have the same length. "
                f"Found: x.shape = {x.shape}, y.shape = {np.asarray(y).shape}"
            )
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError(
                "`x` (images tensor) and `sample_weight` should have the same length. "
                f"Found: x.shape = {x.shape}, sample_weight.shape = {np.asarray(sample_weight).shape}"
            )
        _subset(subset)
        if subset is not None:
            split = int(len(x) * image_data_generator._validation_split)
            if (
                y is not None
                and not ignore_class_split
                and not np.array_equal(np.unique(np.asarray(y)[:split]), np.unique(np.asarray(y)[split:]))
            ):
                raise ValueError(
                    "Training and validation subsets have different number of classes after the split. "
                    "If your numpy arrays are sorted by the label, you might want to shuffle them."
                )
            part = slice(None, split) if subset == "validation" else slice(split, None)
            x, x_misc = x[part], [xx[part] for xx in x_misc]
            y = None if y is None else np.asarray(y)[part]
            sample_weight = None if sample_weight is None else np.asarray(sample_weight)[part]
        self.x = np.asarray(x, dtype=self.dtype)
        if self.x.ndim != 4:
            raise ValueError(
                f"Input data in `NumpyArrayIterator` should have rank 4 (images, rows, columns, channels). "
                f"You passed an array with shape {self.x.shape}"
            )
        self.x_misc = x_misc
        self.y = None if y is None else np.asarray(y)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.image_data_generator = image_data_generator
        self.data_format = str(data_format or getattr(image_data_generator, "data_format", "channels_last"))
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        batch_x = np.zeros((len(index_array), *self.x.shape[1:]), dtype=self.dtype)
        for i, j in enumerate(index_array):
            batch_x[i] = self._transform(self.image_data_generator, self.x[j].astype(self.dtype))
        self._save(batch_x, index_array)
        misc = [xx[index_array] for xx in self.x_misc]
        first: Any = [batch_x, *misc] if misc else batch_x
        if self.y is None:
            return first
        if self.sample_weight is not None:
            return first, self.y[index_array], self.sample_weight[index_array]
        return first, self.y[index_array]


class _FileIterator(Iterator):
    """Batches of images loaded from ``self.filepaths`` with labels from ``self.classes``."""

    filepaths: list[str]
    classes: np.ndarray
    class_indices: dict[Any, int]

    def _setup(
        self,
        image_data_generator: Any,
        target_size: Any,
        color_mode: str,
        class_mode: str | None,
        data_format: str | None,
        interpolation: str,
        keep_aspect_ratio: bool,
        dtype: Any,
    ) -> None:
        if color_mode not in _COLOR_CHANNELS:
            raise ValueError(f"Invalid color mode: {color_mode!r}; expected 'rgb', 'rgba', or 'grayscale'.")
        if class_mode not in self._class_modes:
            raise ValueError(f"Invalid class_mode: {class_mode!r}; expected one of: {list(self._class_modes)}")
        self.image_data_generator = image_data_generator
        self.target_size = (int(target_size[0]), int(target_size[1]))
        self.color_mode, self.class_mode = color_mode, class_mode
        self.data_format = data_format or getattr(image_data_generator, "data_format", None) or "channels_last"
        self.interpolation, self.keep_aspect_ratio = interpolation, keep_aspect_ratio
        self.dtype = np.dtype(dtype or "float32")
        channels = _COLOR_CHANNELS[color_mode]
        first = self.data_format == "channels_first"
        self.image_shape = (channels, *self.target_size) if first else (*self.target_size, channels)

    _class_modes: tuple[Any, ...] = _CLASS_MODES

    def _labels(self, index_array: np.ndarray, batch_x: np.ndarray) -> Any:
        if self.class_mode == "input":
            return batch_x.copy()
        if self.class_mode in ("sparse", "binary"):
            return self.classes[index_array].astype(self.dtype)
        batch_y = np.zeros((len(index_array), len(self.class_indices)), dtype=self.dtype)
        batch_y[np.arange(len(index_array)), self.classes[index_array]] = 1.0
        return batch_y

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        batch_x = np.zeros((len(index_array), *self.image_shape), dtype=self.dtype)
        for i, j in enumerate(index_array):
            img = load_img(
                self.filepaths[j], color_mode=self.color_mode, target_size=self.target_size,
                interpolation=self.interpolation, keep_aspect_ratio=self.keep_aspect_ratio,
            )  # fmt: skip
            x = img_to_array(img, data_format=self.data_format)
            if hasattr(img, "close"):
                img.close()
            batch_x[i] = self._transform(self.image_data_generator, x)
        self._save(batch_x, index_array)
        if self.class_mode is None:
            return batch_x
        return batch_x, self._labels(index_array, batch_x)


def _valid_files(directory: str, formats: tuple[str, ...], follow_links: bool) -> list[str]:
    """The image files under ``directory``, walked in sorted order (tf_keras's order)."""
    found = []
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda w: w[0]):
        found += [os.path.join(root, f) for f in sorted(files) if f.lower().endswith(formats)]
    return found


class DirectoryIterator(_FileIterator):
    """Batches of images read from one sub-directory per class (``flow_from_directory``)."""

    def __init__(
        self,
        directory: str,
        image_data_generator: Any,
        target_size: Any = (256, 256),
        color_mode: str = "rgb",
        classes: list[str] | None = None,
        class_mode: str | None = "categorical",
        batch_size: int = 32,
        shuffle: bool = True,
        seed: int | None = None,
        data_format: str | None = None,
        save_to_dir: str | None = None,
        save_prefix: str = "",
        save_format: str = "png",
        follow_links: bool = False,
        subset: str | None = None,
        interpolation: str = "nearest",
        keep_aspect_ratio: bool = False,
        dtype: Any = None,
    ) -> None:
        self._setup(
            image_data_generator, target_size, color_mode, class_mode, data_format, interpolation,
            keep_aspect_ratio, dtype,
        )  # fmt: skip
        if not os.path.isdir(directory):
            raise FileNotFoundError(
                f"flow_from_directory: no directory at {directory!r}; expected one folder per class"
            )
        self.directory = directory
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        _subset(subset)
        split_fraction = getattr(image_data_generator, "_validation_split", 0.0) if subset else 0.0
        bounds = {"validation": (0.0, split_fraction), "training": (split_fraction, 1.0)}.get(subset or "", None)
        if classes is None:
            classes = sorted(d for d in os.listdir(directory) if os.path.isdir(os.path.join(directory, d)))
        self.num_classes = len(classes)
        self.class_indices = dict(zip(classes, range(len(classes))))
        self.filepaths, labels = [], []
        for name in classes:
            files = _valid_files(os.path.join(directory, name), self.white_list_formats, follow_links)
            if bounds is not None:
                files = files[int(bounds[0] * len(files)) : int(bounds[1] * len(files))]
            self.filepaths += files
            labels += [self.class_indices[name]] * len(files)
        self.classes = np.array(labels, dtype="int32")
        self.filenames = [os.path.relpath(p, directory) for p in self.filepaths]
        self.samples = len(self.filepaths)
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def labels(self) -> np.ndarray:
        """The class index of each file, in ``filenames`` order."""
        return self.classes


class DataFrameIterator(_FileIterator):
    """Batches of images named in a pandas DataFrame's ``x_col``, labelled by ``y_col``."""

    _class_modes = ("categorical", "binary", "sparse", "input", "raw", None)

    def __init__(
        self,
        dataframe: Any,
        directory: str | None,
        image_data_generator: Any,
        x_col: str = "filename",
        y_col: Any = "class",
        weight_col: str | None = None,
        target_size: Any = (256, 256),
        color_mode: str = "rgb",
        classes: list[str] | None = None,
        class_mode: str | None = "categorical",
        batch_size: int = 32,
        shuffle: bool = True,
        seed: int | None = None,
        data_format: str | None = None,
        save_to_dir: str | None = None,
        save_prefix: str = "",
        save_format: str = "png",
        subset: str | None = None,
        interpolation: str = "nearest",
        keep_aspect_ratio: bool = False,
        dtype: Any = None,
        validate_filenames: bool = True,
    ) -> None:
        self._setup(
            image_data_generator, target_size, color_mode, class_mode, data_format, interpolation,
            keep_aspect_ratio, dtype,
        )  # fmt: skip
        for column in (x_col,) + ((y_col,) if class_mode not in ("input", None) and isinstance(y_col, str) else ()):
            if column not in dataframe.columns:
                raise KeyError(
                    f"flow_from_dataframe: the dataframe has no column {column!r}. Columns: {list(dataframe.columns)}"
                )
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        df = dataframe.copy()
        paths = [os.path.join(directory, f) if directory else f for f in df[x_col].astype(str)]
        if validate_filenames:
            keep = [os.path.isfile(p) and p.lower().endswith(self.white_list_formats) for p in paths]
            df, paths = df[keep], [p for p, k in zip(paths, keep) if k]
        _subset(subset)
        if subset is not None:
            split = int(len(df) * image_data_generator._validation_split)
            part = slice(None, split) if subset == "validation" else slice(split, None)
            df, paths = df.iloc[part], paths[part]
        self.filepaths, self.filenames = paths, list(df[x_col].astype(str))
        if class_mode in ("categorical", "binary", "sparse"):
            labels = df[y_col].astype(str).tolist()
            classes = sorted(set(labels)) if classes is None else list(classes)
            self.class_indices = dict(zip(classes, range(len(classes))))
            self.classes = np.array([self.class_indices[c] for c in labels], dtype="int32")
        else:
            self.class_indices = {}
            self.classes = df[y_col].to_numpy() if class_mode == "raw" else np.zeros(len(df), dtype="int32")
        self.sample_weight = df[weight_col].to_numpy() if weight_col else None
        self.samples = len(self.filepaths)
        print(
            f"Found {self.samples} validated image filenames"
            + (f" belonging to {len(self.class_indices)} classes." if self.class_indices else ".")
        )
        super().__init__(self.samples, batch_size, shuffle, seed)

    def _labels(self, index_array: np.ndarray, batch_x: np.ndarray) -> Any:
        if self.class_mode == "raw":
            return self.classes[index_array]
        return super()._labels(index_array, batch_x)

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        out = super()._get_batches_of_transformed_samples(index_array)
        if self.sample_weight is not None and isinstance(out, tuple):
            return (*out, self.sample_weight[index_array])
        return out


__all__ = ["DataFrameIterator", "DirectoryIterator", "Iterator", "NumpyArrayIterator"]
