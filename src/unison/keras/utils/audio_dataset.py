"""``keras.utils.audio_dataset_from_directory``: a folder of ``.wav`` files (one subfolder per class)
as a ``tf.data`` dataset of ``(audio, labels)`` batches.

Each file is decoded as ``tf.audio.decode_wav`` does (16-bit PCM to float32 in [-1, 1), shape
``(samples, channels)``), cut or zero-padded to ``output_sequence_length`` when given; batches of
files of different lengths are zero-padded to the longest one (``padded_batch``), or kept ragged
with ``ragged=True``. Listing, shuffling and the validation split are Keras's (see
:mod:`unison.keras.utils.dataset_utils`).

Example:
    >>> import os, tempfile, wave
    >>> root = tempfile.mkdtemp()
    >>> for cls in ("no", "yes"):
    ...     os.makedirs(os.path.join(root, cls))
    ...     with wave.open(os.path.join(root, cls, "a.wav"), "wb") as w:
    ...         w.setnchannels(1); w.setsampwidth(2); w.setframerate(8000)
    ...         w.writeframes(b"\\x00\\x40" * 3)
    >>> ds = audio_dataset_from_directory(root, batch_size=2, shuffle=False)
    Found 2 files belonging to 2 classes.
    >>> audio, labels = next(iter(ds))
    >>> tuple(audio.shape), labels.tolist(), ds.class_names
    ((2, 3, 1), [0, 1], ['no', 'yes'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from unison.data import Dataset
from unison.keras.utils import dataset_utils as du
from unison.ops.audio import decode_wav
from unison.ops.ragged_tensor import RaggedTensor

ALLOWED_FORMATS = (".wav",)


def audio_dataset_from_directory(
    directory: str,
    labels: Any = "inferred",
    label_mode: str | None = "int",
    class_names: Sequence[str] | None = None,
    batch_size: int | None = 32,
    sampling_rate: int | None = None,
    output_sequence_length: int | None = None,
    ragged: bool = False,
    shuffle: bool = True,
    seed: int | None = None,
    validation_split: float | None = None,
    subset: str | None = None,
    follow_links: bool = False,
    verbose: bool = True,
) -> Any:
    """A ``tf.data.Dataset`` of the ``.wav`` files under ``directory`` (Keras's arguments and rules).

    Args:
        directory: with ``labels="inferred"`` one subfolder per class (sorted names = class ids).
        labels: ``"inferred"``, ``None`` (audio only) or a list of int labels in sorted path order.
        label_mode: ``"int"``, ``"categorical"``, ``"binary"`` or ``None``.
        class_names: the order of the class subfolders (``labels="inferred"`` only).
        batch_size: files per batch; ``None`` gives single files.
        sampling_rate: resampling, which Keras does through ``tensorflow-io``: not supported here.
        output_sequence_length: cut or zero-pad every file to this many samples.
        ragged: batches of ragged tensors instead of zero-padded ones.
        shuffle: shuffle the files (and the batches' order with a buffer of ``8 * batch_size``).
        seed: shuffling seed; required with ``validation_split`` and ``shuffle``.
        validation_split: fraction of the files kept for validation (the last ones after shuffling).
        subset: ``"training"``, ``"validation"`` or ``"both"`` (returns ``(train, validation)``).
        follow_links: follow symbolic links to folders.
        verbose: print how many files were found.

    Returns:
        A ``Dataset`` of ``(audio, labels)`` (or ``audio``) with ``class_names``; audio batches are
        ``(batch, samples, channels)`` float32.

    Raises:
        ValueError: a bad argument (Keras's messages), or no ``.wav`` file in the folder.
        NotImplementedError: ``sampling_rate`` was given.
    """
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError(
            "The `labels` argument should be a list/tuple of integer labels, of the same size as the number of "
            'audio files in the target directory, "inferred" (labels from the subfolder names) or None (audio '
            f"only). Received: labels={labels}"
        )
    du.check_label_mode(labels, label_mode, class_names)
    du.check_batch_size(batch_size)
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if sampling_rate is not None:
        if isinstance(sampling_rate, bool) or not isinstance(sampling_rate, int):
            raise ValueError(f"`sampling_rate` should have an integer value. Received: sampling_rate={sampling_rate}")
        if sampling_rate <= 0:
            raise ValueError(f"`sampling_rate` should be higher than 0. Received: sampling_rate={sampling_rate}")
        raise NotImplementedError(
            f"audio_dataset_from_directory(sampling_rate={sampling_rate}): Keras resamples with tensorflow-io, "
            "which unison does not use. Resample the files beforehand (e.g. with torchaudio or scipy.signal) "
            "and leave sampling_rate=None."
        )
    du.check_validation_split_arg(validation_split, subset, shuffle, seed)
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    if seed is None:
        seed = int(np.random.randint(1_000_000))
    paths, label_ids, names = du.index_directory(
        directory, labels, ALLOWED_FORMATS, class_names, shuffle, seed, follow_links, verbose
    )
    du.check_binary(label_mode, names)
    subsets = ("training", "validation") if subset == "both" else (subset,)
    parts = []
    for which in subsets:
        p, y = du.training_or_validation_split(paths, label_ids, validation_split, which)
        if not p:
            kind = f"{which} " if subset == "both" else ""
            raise ValueError(
                f"No {kind}audio files found in directory {directory}. Allowed format(s): {ALLOWED_FORMATS}"
            )
        # Keras shuffles the validation half of subset="both" no further
        keep_shuffling = shuffle and not (subset == "both" and which == "validation")
        parts.append(
            _dataset(p, y, label_mode, names, output_sequence_length, ragged, batch_size, keep_shuffling, seed)
        )
    return tuple(parts) if subset == "both" else parts[0]


def _dataset(
    paths: list[str],
    label_ids: np.ndarray | None,
    label_mode: str | None,
    class_names: list[str],
    output_sequence_length: int | None,
    ragged: bool,
    batch_size: int | None,
    shuffle: bool,
    seed: int,
) -> Any:
    samples = -1 if output_sequence_length is None else int(output_sequence_length)

    def read(path: Any) -> Any:
        name = np.asarray(path).item()
        with open(name.decode() if isinstance(name, bytes) else str(name), "rb") as f:
            return decode_wav(f.read(), desired_samples=samples).audio

    audio = Dataset.from_tensor_slices(np.asarray(paths)).map(read)
    if ragged:
        audio = audio.map(RaggedTensor.from_tensor)
    dataset = audio
    if label_mode is not None and label_ids is not None:
        dataset = Dataset.zip((audio, du.labels_to_dataset(label_ids, label_mode, len(class_names))))
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        if output_sequence_length is None and not ragged:
            dataset = dataset.padded_batch(batch_size)
        else:
            dataset = dataset.batch(batch_size)
    elif shuffle:
        dataset = dataset.shuffle(buffer_size=1024, seed=seed)
    dataset = dataset.prefetch(-1)
    setattr(dataset, "class_names", class_names)  # noqa: B010  (Keras's attribute on the dataset)
    return dataset


__all__ = ["audio_dataset_from_directory"]
