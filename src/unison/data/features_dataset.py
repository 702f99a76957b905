"""``tf.data.experimental.make_batched_features_dataset``: batches of parsed ``tf.train.Example`` s from files.

The pipeline is TF's: the files matching ``file_pattern`` (``Dataset.list_files``, shuffled with
``shuffle``), read one after another by ``reader`` (``TFRecordDataset`` by default), shuffled and
repeated ``num_epochs`` times (forever when ``None``), batched (the last partial batch dropped with
``drop_final_batch`` or when repeating forever), parsed with ``features`` and, with ``label_key``,
split into ``(features, label)``.

Example:
    >>> import os, tempfile
    >>> import unison as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
    >>> with tf.io.TFRecordWriter(path) as w:
    ...     for i in range(3):
    ...         w.write(tf.train.Example(features=tf.train.Features(feature={
    ...             "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))})).SerializeToString())
    >>> ds = tf.data.experimental.make_batched_features_dataset(
    ...     path, 2, {"x": tf.io.FixedLenFeature([], tf.int64)}, num_epochs=1, shuffle=False)
    >>> [b["x"].tolist() for b in ds]
    [[0, 1], [2]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from unison.data.dataset import Dataset
from unison.data.options import AUTOTUNE

__all__ = ["make_batched_features_dataset"]


def make_batched_features_dataset(
    file_pattern: Any, batch_size: int, features: dict[str, Any], reader: Callable[..., Dataset] | None = None,
    label_key: str | None = None, reader_args: list[Any] | None = None, num_epochs: int | None = None,
    shuffle: bool = True, shuffle_buffer_size: int = 10000, shuffle_seed: int | None = None,
    prefetch_buffer_size: int | None = None, reader_num_threads: int | None = None,
    parser_num_threads: int | None = None, sloppy_ordering: bool = False, drop_final_batch: bool = False,
) -> Dataset:  # fmt: skip
    """``tf.data.experimental.make_batched_features_dataset`` (see the module notes)."""
    from unison.data.experimental_more import parse_example_dataset
    from unison.data.tfrecord import TFRecordDataset

    if label_key is not None and label_key not in features:
        raise ValueError(f"The `label_key` provided ({label_key}) must be one of the `features` keys.")
    make_reader = reader if reader is not None else TFRecordDataset
    args = list(reader_args or [])
    files = Dataset.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    cycle = 1 if reader_num_threads is None else int(reader_num_threads)
    dataset = files.interleave(lambda filename: make_reader(filename, *args), cycle_length=cycle, block_length=1)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    dataset = dataset.apply(parse_example_dataset(features))
    if label_key is not None:
        dataset = dataset.map(lambda x: (x, x.pop(label_key)))
    return dataset.prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)
