"""What ``image_dataset_from_directory`` and ``text_dataset_from_directory`` share (Keras's rules),
and ``keras.utils.split_dataset``.

Files are listed per class subfolder in sorted order (class folders sorted by name unless
``class_names`` orders them), shuffled as a whole with ``seed`` when ``shuffle=True``, then the
last ``int(validation_split * n)`` files form the validation subset, as Keras does.

Example:
    >>> import numpy as np
    >>> left, right = split_dataset(np.arange(10), left_size=0.8, shuffle=False)
    >>> [int(v) for v in left], [int(v) for v in right]
    ([0, 1, 2, 3, 4, 5, 6, 7], [8, 9])
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from unison.data import Dataset


def check_validation_split_arg(validation_split: float | None, subset: str | None, shuffle: bool, seed: Any) -> None:
    """Keras's checks of ``validation_split`` / ``subset`` / ``seed``."""
    if validation_split is not None and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1 (exclusive). Received: {validation_split!r}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError(
            "If `subset` is set, `validation_split` must be set, and inversely. Received: "
            f"validation_split={validation_split!r}, subset={subset!r}."
        )
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f'`subset` must be either "training", "validation" or "both". Received: subset={subset!r}')
    if validation_split and shuffle and seed is None:
        raise ValueError(
            "If using `validation_split` and shuffling the data, you must provide a `seed` argument, to make "
            "sure that there is no overlap between the training and validation subset."
        )


def _valid_files(directory: str, follow_links: bool, formats: tuple[str, ...]) -> Iterator[str]:
    walk = sorted(os.walk(directory, followlinks=follow_links), key=lambda entry: entry[0])
    for root, _, files in walk:
        for name in sorted(files):
            if name.lower().endswith(formats):
                yield os.path.join(root, name)


def index_directory(
    directory: str,
    labels: Any,
    formats: tuple[str, ...],
    class_names: Sequence[str] | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    follow_links: bool = False,
    verbose: bool = True,
) -> tuple[list[str], np.ndarray | None, list[str]]:
    """The files of ``directory`` and their labels, in Keras's order.

    Returns:
        ``(file_paths, labels, class_names)``: ``labels`` is an int array, ``None`` for ``labels=None``.
    """
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise ValueError(f"The directory {directory!r} does not exist (or is not a folder). Pass the data's folder.")
    if labels == "inferred":
        subdirs = sorted(d for d in os.listdir(directory) if os.path.isdir(os.path.join(directory, d)))
        if class_names is not None:
            # Keras 3: a subset of the folders is allowed (keras.io's IMDB example leaves `unsup` out this way)
            if not set(class_names).issubset(subdirs):
                raise ValueError(
                    "The `class_names` passed did not match the names of the subdirectories of the target "
                    f"directory. Expected: {subdirs} (or a subset of it). Received: class_names={list(class_names)}"
                )
            subdirs = list(class_names)
        class_names = subdirs
        file_paths: list[str] = []
        index: list[int] = []
        for label, sub in enumerate(subdirs):
            found = list(_valid_files(os.path.join(directory, sub), follow_links, formats))
            file_paths += found
            index += [label] * len(found)
        label_array: np.ndarray | None = np.asarray(index, dtype=np.int64)
    else:
        file_paths = list(_valid_files(directory, follow_links, formats))
        class_names = []
        label_array = None
        if labels is not None:
            label_array = np.asarray(labels)
            if label_array.ndim != 1 or len(label_array) != len(file_paths):
                raise ValueError(
                    "Expected the lengths of `labels` to match the number of files in the target directory. "
                    f"len(labels) is {len(label_array)} while we found {len(file_paths)} files in {directory}."
                )
            if label_array.dtype.kind not in "iu":
                raise ValueError(
                    f"`labels` must be integers (one class id per file, in sorted file order). Received dtype "
                    f"{label_array.dtype}."
                )
            class_names = [str(i) for i in range(int(label_array.max()) + 1)] if len(label_array) else []
    if verbose:
        if label_array is None:
            print(f"Found {len(file_paths)} files.")
        else:
            print(f"Found {len(file_paths)} files belonging to {len(class_names)} classes.")
    if shuffle:
        # Files and labels get the same permutation (one RandomState per list, as Keras).
        seed = seed if seed is not None else int(np.random.randint(1_000_000))
        order = np.random.RandomState(seed).permutation(len(file_paths))
        file_paths = [file_paths[i] for i in order]
        if label_array is not None:
            label_array = label_array[order]
    return file_paths, label_array, list(class_names)


def training_or_validation_split(
    samples: list[Any], labels: np.ndarray | None, validation_split: float | None, subset: str | None
) -> tuple[list[Any], np.ndarray | None]:
    """Keras's split: the last ``int(validation_split * n)`` samples are the validation subset."""
    if not validation_split:
        return samples, labels
    num_val = int(validation_split * len(samples))
    if subset == "training":
        print(f"Using {len(samples) - num_val} files for training.")
        return samples[: len(samples) - num_val], None if labels is None else labels[: len(samples) - num_val]
    if subset == "validation":
        print(f"Using {num_val} files for validation.")
        return samples[len(samples) - num_val :], None if labels is None else labels[len(samples) - num_val :]
    raise ValueError(f'`subset` must be either "training" or "validation". Received: subset={subset!r}')


def labels_to_dataset(labels: np.ndarray, label_mode: str, num_classes: int) -> Dataset:
    """Keras's label encodings: int32 ids, one-hot float32 rows, or float32 ``(1,)`` for binary."""
    if label_mode == "int":
        return Dataset.from_tensor_slices(labels.astype(np.int32))
    if label_mode == "binary":
        return Dataset.from_tensor_slices(labels.astype(np.float32).reshape(-1, 1))
    return Dataset.from_tensor_slices(np.eye(max(num_classes, 1), dtype=np.float32)[labels])


def check_label_mode(labels: Any, label_mode: Any, class_names: Any) -> None:
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple, np.ndarray)):
        raise ValueError(
            "`labels` argument should be a list/tuple of integer labels, of the same size as the number of files "
            'in the target directory. If you wish to infer the labels from the subdirectory names, pass `labels="'
            'inferred"`. If you wish to get a dataset that only contains the files (no labels), pass `labels=None`.'
            f" Received: labels={labels!r:.80}"
        )
    if class_names is not None and not (isinstance(labels, str) and labels == "inferred"):
        raise ValueError(f'You can only pass `class_names` if `labels="inferred"`. Received: labels={labels!r:.80}')
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(
            '`label_mode` argument must be one of "int", "categorical", "binary", or None. '
            f"Received: label_mode={label_mode!r}"
        )


def check_binary(label_mode: Any, class_names: list[str]) -> None:
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(
            f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
            f"class_names={class_names}. Use label_mode='int' or 'categorical' for more classes."
        )


def check_batch_size(batch_size: Any) -> None:
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"`batch_size` must be a positive integer or None. Received: batch_size={batch_size!r}")


def _rows(dataset: Any) -> list[Any]:
    """The samples of ``dataset``: a unison Dataset (unbatched), an array, or a tuple/list/dict of arrays."""
    if isinstance(dataset, Dataset):
        return list(dataset)
    if isinstance(dataset, (np.ndarray, torch.Tensor)):
        return list(dataset)
    if (
        isinstance(dataset, (tuple, list))
        and dataset
        and all(isinstance(a, (np.ndarray, torch.Tensor)) for a in dataset)
    ):
        lengths = {len(a) for a in dataset}
        if len(lengths) != 1:
            raise ValueError(f"split_dataset: the arrays of the tuple have different lengths {sorted(lengths)}.")
        return [tuple(a[i] for a in dataset) for i in range(lengths.pop())]
    if isinstance(dataset, dict):
        lengths = {len(a) for a in dataset.values()}
        if len(lengths) != 1:
            raise ValueError(f"split_dataset: the arrays of the dict have different lengths {sorted(lengths)}.")
        return [{k: a[i] for k, a in dataset.items()} for i in range(lengths.pop())]
    if isinstance(dataset, list):
        return list(dataset)
    raise TypeError(
        "split_dataset takes a tf.data Dataset, a numpy array or tensor, or a tuple/dict of them. "
        f"Received: {type(dataset).__name__}"
    )


def _sizes(n: int, left_size: Any, right_size: Any) -> tuple[int, int]:
    for what, value in (("left_size", left_size), ("right_size", right_size)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise TypeError(f"`{what}` must be None, an int >= 0 or a float in (0, 1). Received: {what}={value!r}")
        if isinstance(value, float) and not 0 < value < 1:
            raise ValueError(f"`{what}` as a float must be a fraction in (0, 1). Received: {what}={value!r}")
        if isinstance(value, int) and value > n:
            raise ValueError(f"`{what}`={value} is larger than the dataset ({n} samples).")
    if left_size is None and right_size is None:
        raise ValueError("split_dataset: pass left_size, right_size or both.")

    def count(value: Any) -> int | None:
        if value is None:
            return None
        return int(value) if isinstance(value, int) else round(value * n)  # Keras rounds fractions

    left, right = count(left_size), count(right_size)
    if left is None:
        left = n - (right or 0)
    if right is None:
        right = n - left
    if left + right > n:
        raise ValueError(f"left_size + right_size = {left + right} samples, more than the {n} in the dataset.")
    if left == 0 or right == 0:
        raise ValueError(f"split_dataset would make an empty side (left {left}, right {right} of {n} samples).")
    return left, right


def split_dataset(
    dataset: Any,
    left_size: int | float | None = None,
    right_size: int | float | None = None,
    shuffle: bool = False,
    seed: int | None = None,
) -> tuple[Dataset, Dataset]:
    """Split ``dataset`` into two unbatched ``tf.data`` datasets (Keras's ``split_dataset``).

    Args:
        dataset: an unbatched ``tf.data.Dataset``, a numpy array or tensor, or a tuple/dict of them.
        left_size: samples (int) or fraction (float in (0, 1)) in the left part; the rest if ``None``.
        right_size: the same for the right part.
        shuffle: shuffle the samples (with ``seed``) before splitting.
        seed: the shuffling seed.

    Returns:
        ``(left, right)`` datasets.

    Example:
        >>> left, right = split_dataset((np.arange(6), np.arange(6) * 10), right_size=2)
        >>> [int(y) for _, y in right]
        [40, 50]
    """
    rows = _rows(dataset)
    left, right = _sizes(len(rows), left_size, right_size)
    if shuffle:
        seed = seed if seed is not None else int(np.random.randint(1_000_000))
        rows = [rows[i] for i in np.random.RandomState(seed).permutation(len(rows))]
    # as Keras: the right part is the last `right` rows (with both sizes given, rows between are left out)
    return _from_rows(rows[:left]), _from_rows(rows[len(rows) - right :])


def _from_rows(rows: list[Any]) -> Dataset:
    first = rows[0]

    def stack(values: list[Any]) -> Any:
        if isinstance(values[0], torch.Tensor):
            return torch.stack(values)
        return np.stack([np.asarray(v) for v in values])

    if isinstance(first, tuple):
        return Dataset.from_tensor_slices(tuple(stack([r[i] for r in rows]) for i in range(len(first))))
    if isinstance(first, dict):
        return Dataset.from_tensor_slices({k: stack([r[k] for r in rows]) for k in first})
    return Dataset.from_tensor_slices(stack(rows))
