"""``tf.data.experimental``: the names TF programs still reach there.

Example:
    >>> AUTOTUNE == -1 and AutoShardPolicy.DATA.name == "DATA"
    True
"""

from typing import Any

from unison.data.csv_dataset import CsvDataset
from unison.data.csv_make import make_csv_dataset
from unison.data.dataset import Optional
from unison.data.experimental_more import (
    SHARD_HINT,
    Reducer,
    SqlDataset,
    TFRecordWriter,
    at,
    copy_to_device,
    dense_to_sparse_batch,
    enable_debug_mode,
    get_next_as_optional,
    get_structure,
    group_by_reducer,
    pad_to_cardinality,
    parallel_interleave,
    parse_example_dataset,
    prefetch_to_device,
)
from unison.data.features_dataset import make_batched_features_dataset
from unison.data.options import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    AutoShardPolicy,
    AutotuneAlgorithm,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    ThreadingOptions,
)
from unison.data.ragged_batch import dense_to_ragged_batch
from unison.data.resampling import RandomDataset, ignore_errors, rejection_resample, snapshot
from unison.data.save_load import load, save
from unison.data.tables import DatasetInitializer, index_table_from_dataset, table_from_dataset


def cardinality(dataset: Any) -> Any:
    """``tf.data.experimental.cardinality(ds)``: same as ``ds.cardinality()``."""
    return dataset.cardinality()


def assert_cardinality(expected_cardinality: int) -> Any:
    """A transformation (for ``ds.apply``) that checks the dataset has ``expected_cardinality`` elements."""

    def apply(dataset: Any) -> Any:
        found = int(dataset.cardinality())
        if found >= 0 and found != expected_cardinality:
            raise ValueError(
                f"Input dataset was expected to contain {expected_cardinality} elements but contained {found}."
            )
        return dataset

    return apply


def scan(initial_state: Any, scan_func: Any) -> Any:
    """For ``ds.apply``: ``ds.scan(initial_state, scan_func)``."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def take_while(predicate: Any) -> Any:
    """For ``ds.apply``: ``ds.take_while(predicate)``."""
    return lambda dataset: dataset.take_while(predicate)


def unique() -> Any:
    """For ``ds.apply``: ``ds.unique()``."""
    return lambda dataset: dataset.unique()


def unbatch() -> Any:
    """For ``ds.apply``: ``ds.unbatch()``."""
    return lambda dataset: dataset.unbatch()


def enumerate_dataset(start: int = 0) -> Any:
    """For ``ds.apply``: ``ds.enumerate(start)``."""
    return lambda dataset: dataset.enumerate(start)


def group_by_window(key_func: Any, reduce_func: Any, window_size: Any = None, window_size_func: Any = None) -> Any:
    """For ``ds.apply``: ``ds.group_by_window(...)``."""
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size, window_size_func)


def bucket_by_sequence_length(
    element_length_func: Any,
    bucket_boundaries: Any,
    bucket_batch_sizes: Any,
    padded_shapes: Any = None,
    padding_values: Any = None,
    pad_to_bucket_boundary: bool = False,
    no_padding: bool = False,
    drop_remainder: bool = False,
) -> Any:
    """For ``ds.apply``: ``ds.bucket_by_sequence_length(...)``."""
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func,
        bucket_boundaries,
        bucket_batch_sizes,
        padded_shapes,
        padding_values,
        pad_to_bucket_boundary,
        no_padding,
        drop_remainder,
    )


def shuffle_and_repeat(buffer_size: int, count: int | None = None, seed: int | None = None) -> Any:
    """For ``ds.apply``: ``ds.shuffle(buffer_size, seed).repeat(count)`` (reshuffled every epoch)."""
    return lambda dataset: dataset.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(
    map_func: Any,
    batch_size: int,
    num_parallel_batches: int | None = None,
    drop_remainder: bool = False,
    num_parallel_calls: int | None = None,
) -> Any:
    """For ``ds.apply``: ``ds.map(map_func).batch(batch_size, drop_remainder)``."""
    return lambda dataset: dataset.map(map_func, num_parallel_calls=num_parallel_calls).batch(
        batch_size, drop_remainder=drop_remainder
    )


def get_single_element(dataset: Any) -> Any:
    """``tf.data.experimental.get_single_element(ds)``: ``ds.get_single_element()``."""
    return dataset.get_single_element()


def sample_from_datasets(
    datasets: Any, weights: Any = None, seed: int | None = None, stop_on_empty_dataset: bool = False
) -> Any:
    """``Dataset.sample_from_datasets`` under its older name."""
    from unison.data.dataset import Dataset

    return Dataset.sample_from_datasets(
        datasets, weights=weights, seed=seed, stop_on_empty_dataset=stop_on_empty_dataset
    )


def choose_from_datasets(datasets: Any, choice_dataset: Any, stop_on_empty_dataset: bool = True) -> Any:
    """``Dataset.choose_from_datasets`` under its older name."""
    from unison.data.dataset import Dataset

    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=stop_on_empty_dataset)


def from_list(elements: Any, name: str | None = None) -> Any:
    """``tf.data.experimental.from_list``: one element per list item."""
    from unison.data.dataset import _build

    return _build("FromList", elements)


def Counter(start: int = 0, step: int = 1, dtype: Any = None) -> Any:  # noqa: N802 - TF's name
    """``tf.data.experimental.Counter``: ``Dataset.counter`` (int64 unless ``dtype``)."""
    from unison.data.dataset import Dataset

    return Dataset.counter(start, step) if dtype is None else Dataset.counter(start, step, dtype)


__all__ = [
    "AUTOTUNE",
    "RandomDataset",
    "ignore_errors",
    "rejection_resample",
    "snapshot",
    "Counter",
    "CsvDataset",
    "make_csv_dataset",
    "make_batched_features_dataset",
    "bucket_by_sequence_length",
    "choose_from_datasets",
    "enumerate_dataset",
    "from_list",
    "get_single_element",
    "group_by_window",
    "map_and_batch",
    "sample_from_datasets",
    "scan",
    "shuffle_and_repeat",
    "take_while",
    "unbatch",
    "unique",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "AutoShardPolicy",
    "DistributeOptions",
    "assert_cardinality",
    "cardinality",
    "AutotuneAlgorithm",
    "AutotuneOptions",
    "DatasetInitializer",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "Optional",
    "Reducer",
    "SHARD_HINT",
    "SqlDataset",
    "TFRecordWriter",
    "ThreadingOptions",
    "at",
    "copy_to_device",
    "dense_to_ragged_batch",
    "load",
    "save",
    "dense_to_sparse_batch",
    "enable_debug_mode",
    "get_next_as_optional",
    "get_structure",
    "group_by_reducer",
    "index_table_from_dataset",
    "pad_to_cardinality",
    "parallel_interleave",
    "parse_example_dataset",
    "prefetch_to_device",
    "table_from_dataset",
]
