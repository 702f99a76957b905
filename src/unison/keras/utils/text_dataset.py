"""``keras.utils.text_dataset_from_directory``: a folder of ``.txt`` files (one subfolder per
class) as a ``tf.data`` dataset of ``(texts, labels)`` batches.

Texts are the files' bytes, as ``tf.string`` holds them: numpy ``bytes`` arrays (``.numpy()``
-like values ``b"..."``), the form ``TextVectorization`` and ``TextLineDataset`` use. Files are
read lazily, batch by batch. Listing, shuffling and the validation split follow Keras (see
:mod:`unison.keras.utils.dataset_utils`).

Example:
    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> for cls, text in (("neg", "bad film"), ("pos", "great film")):
    ...     os.makedirs(os.path.join(root, cls))
    ...     with open(os.path.join(root, cls, "1.txt"), "w") as f:
    ...         _ = f.write(text)
    >>> ds = text_dataset_from_directory(root, batch_size=2, shuffle=False)
    Found 2 files belonging to 2 classes.
    >>> texts, labels = next(iter(ds))
    >>> texts.tolist(), labels.tolist(), ds.class_names
    ([b'bad film', b'great film'], [0, 1], ['neg', 'pos'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from unison.data import Dataset
from unison.keras.utils import dataset_utils as du


def text_dataset_from_directory(
    directory: str,
    labels: Any = "inferred",
    label_mode: str | None = "int",
    class_names: Sequence[str] | None = None,
    batch_size: int | None = 32,
    max_length: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    validation_split: float | None = None,
    subset: str | None = None,
    follow_links: bool = False,
    verbose: bool = True,
) -> Any:
    """A ``tf.data.Dataset`` of the ``.txt`` files under ``directory`` (Keras 3's arguments and rules).

    Args:
        directory: with ``labels="inferred"`` one subfolder per class (sorted names = class ids).
        labels: ``"inferred"``, ``None`` (texts only) or a list of int labels in sorted path order.
        label_mode: ``"int"``, ``"categorical"``, ``"binary"`` or ``None``.
        class_names: the order of the class subfolders (``labels="inferred"`` only).
        batch_size: texts per batch; ``None`` gives single texts.
        max_length: keep at most this many bytes of each text.
        shuffle: shuffle the files (and the batches' order with a buffer of ``8 * batch_size``).
        seed: shuffling seed; required with ``validation_split`` and ``shuffle``.
        validation_split: fraction of the files kept for validation (the last ones after shuffling).
        subset: ``"training"``, ``"validation"`` or ``"both"`` (returns ``[train, validation]``).
        follow_links: follow symbolic links to folders.
        verbose: print how many files were found.

    Returns:
        A ``Dataset`` of ``(texts, labels)`` (or ``texts``) with ``class_names`` and ``file_paths``.
    """
    du.check_label_mode(labels, label_mode, class_names)
    du.check_batch_size(batch_size)
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1):
        raise ValueError(f"`max_length` must be a positive integer or None. Received: max_length={max_length!r}")
    du.check_validation_split_arg(validation_split, subset, shuffle, seed)
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    if seed is None:
        seed = int(np.random.randint(1_000_000))
    paths, label_ids, names = du.index_directory(
        directory, labels, (".txt",), class_names, shuffle, seed, follow_links, verbose
    )
    du.check_binary(label_mode, names)
    subsets = ("training", "validation") if subset == "both" else (subset,)
    parts = []
    for which in subsets:
        p, y = du.training_or_validation_split(paths, label_ids, validation_split, which)
        if not p:
            raise ValueError(f"No text files found in directory {directory}. Allowed format: .txt")
        parts.append(_dataset(p, y, label_mode, names, max_length, batch_size, shuffle, seed))
    return parts if subset == "both" else parts[0]


def _dataset(
    paths: list[str],
    label_ids: np.ndarray | None,
    label_mode: str | None,
    class_names: list[str],
    max_length: int | None,
    batch_size: int | None,
    shuffle: bool,
    seed: int,
) -> Any:
    def read(path: Any) -> np.ndarray:
        name = np.asarray(path).item()
        with open(name.decode() if isinstance(name, bytes) else str(name), "rb") as f:
            data = f.read()
        return np.array(data[:max_length] if max_length is not None else data, dtype=np.bytes_)

    texts = Dataset.from_tensor_slices(np.asarray(paths)).map(read)
    dataset = texts
    if label_mode is not None and label_ids is not None:
        dataset = Dataset.zip((texts, du.labels_to_dataset(label_ids, label_mode, len(class_names))))
    if shuffle:
        dataset = dataset.shuffle(buffer_size=(batch_size or 128) * 8, seed=seed)
    if batch_size is not None:
        dataset = dataset.batch(batch_size)
    dataset = dataset.prefetch(-1)
    # Keras's attributes on the returned dataset
    setattr(dataset, "class_names", class_names)  # noqa: B010
    setattr(dataset, "file_paths", list(paths))  # noqa: B010
    return dataset


__all__ = ["text_dataset_from_directory"]
