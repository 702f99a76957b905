"""More of ``tf.data`` and ``tf.data.experimental``: record and SQL sources, grouping reducers,
sparse batches, lookup tables from datasets, element access, and the options' classes.

Each follows TF 2.21's documented semantics, compared with TensorFlow by
``tests/conformance/test_vs_tf_data_more.py``.

Example:
    >>> import unison as tf
    >>> ds = tf.data.Dataset.range(10)
    >>> reducer = tf.data.experimental.Reducer(lambda key: 0, lambda s, x: s + x, lambda s: s)
    >>> [int(x) for x in ds.apply(tf.data.experimental.group_by_reducer(lambda x: x % 2, reducer))]
    [20, 25]
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from unison.data.context import IterContext
from unison.data.dataset import Dataset, NumpyIterator, Optional
from unison.data.dataset import Iterator as DatasetIterator
from unison.data.sources import _files
from unison.data.specs import TensorSpec
from unison.data.tfrecord import TFRecordOptions
from unison.data.tfrecord import TFRecordWriter as _RecordFileWriter
from unison.errors import DataLossError, InvalidArgumentError, OutOfRangeError
from unison.ops import tree
from unison.ops.dtypes import as_dtype, string
from unison.ops.parsing import parse_example
from unison.ops.sparse_tensor import SparseTensor

__all__ = [
    "SHARD_HINT",
    "DatasetSpec",
    "FixedLengthRecordDataset",
    "IteratorSpec",
    "NumpyIterator",
    "Reducer",
    "SqlDataset",
    "TFRecordWriter",
    "at",
    "copy_to_device",
    "dense_to_sparse_batch",
    "enable_debug_mode",
    "get_next_as_optional",
    "get_structure",
    "group_by_reducer",
    "pad_to_cardinality",
    "parallel_interleave",
    "parse_example_dataset",
    "prefetch_to_device",
]

SHARD_HINT = -1
"""``tf.data.experimental.SHARD_HINT``: a ``num_shards`` placeholder filled in by a distribution strategy."""


# --- sources ---------------------------------------------------------------------------------------


class FixedLengthRecordDataset(Dataset):
    """``tf.data.FixedLengthRecordDataset``: the ``record_bytes``-long records of binary files.

    Each file is ``header_bytes``, then records, then ``footer_bytes``; a body that is not a whole
    number of records is TF's ``InvalidArgumentError``. Records are ``tf.string`` scalars.
    """

    def __init__(
        self,
        filenames: Any,
        record_bytes: int,
        header_bytes: int | None = None,
        footer_bytes: int | None = None,
        buffer_size: int | None = None,
        compression_type: str | None = None,
        num_parallel_reads: int | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(record_bytes, (int, np.integer)) or record_bytes <= 0:
            raise InvalidArgumentError(
                None,
                None,
                f"FixedLengthRecordDataset: record_bytes must be > 0. Received: record_bytes={record_bytes!r}.",
            )
        if compression_type not in (None, "", "GZIP", "ZLIB"):
            raise ValueError(f"compression_type must be None, '', 'GZIP' or 'ZLIB'. Received: {compression_type!r}")
        self.filenames = _files(filenames)
        self._record = int(record_bytes)
        self._header = int(header_bytes or 0)
        self._footer = int(footer_bytes or 0)
        self._compression = compression_type or ""

    def _read(self, path: str) -> bytes:
        import gzip
        import zlib

        with open(path, "rb") as fh:
            data = fh.read()
        if self._compression == "GZIP":
            return gzip.decompress(data)
        if self._compression == "ZLIB":
            return zlib.decompress(data)
        return data

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        files = self.filenames
        if ctx.file_shard is not None:
            files = files[ctx.file_shard[1] :: ctx.file_shard[0]]
        for path in files:
            data = self._read(path)
            body = len(data) - self._header - self._footer
            if body % self._record:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Excluding the header ({self._header} bytes) and footer ({self._footer} bytes), input file "
                    f'"{path}" has body length {body} bytes, which is not an exact multiple of the record length '
                    f"({self._record} bytes).",
                )
            for start in range(self._header, self._header + body, self._record):
                yield np.asarray(data[start : start + self._record], dtype=object)

    def _spec(self) -> Any:
        return TensorSpec((), "string")


class SqlDataset(Dataset):
    """``tf.data.experimental.SqlDataset``: the rows of an SQL query, one tuple of scalars per row.

    ``driver_name`` must be ``"sqlite"`` (TF's only driver); ``output_types`` gives each column's dtype.
    """

    def __init__(self, driver_name: str, data_source_name: str, query: str, output_types: Any) -> None:
        if driver_name != "sqlite":
            raise InvalidArgumentError(
                None,
                None,
                f"SqlDataset: the only driver is 'sqlite' (as in TF). Received: driver_name={driver_name!r}.",
            )
        self._source = os.fspath(data_source_name)
        self._query = query
        self._single = not isinstance(output_types, (tuple, list))
        self._types = [as_dtype(t) for t in ([output_types] if self._single else output_types)]

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        connection = sqlite3.connect(self._source)
        try:
            cursor = connection.execute(self._query)
            for row in cursor:
                if len(row) != len(self._types):
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"SqlDataset: the query returns {len(row)} columns but output_types names "
                        f"{len(self._types)}. Give one dtype per selected column.",
                    )
                values = [self._cell(v, t) for v, t in zip(row, self._types)]
                yield values[0] if self._single else tuple(values)
        finally:
            connection.close()

    @staticmethod
    def _cell(value: Any, dtype: Any) -> Any:
        if dtype == string:
            text = value if isinstance(value, bytes) else str(value).encode()
            return np.asarray(text, dtype=object)
        return torch.tensor(value, dtype=dtype)

    def _spec(self) -> Any:
        specs = [TensorSpec((), "string" if t == string else t) for t in self._types]
        return specs[0] if self._single else tuple(specs)


class TFRecordWriter:
    """``tf.data.experimental.TFRecordWriter(filename, compression_type)``: ``write(dataset)`` of strings."""

    def __init__(self, filename: str, compression_type: str | None = None) -> None:
        self._filename = filename
        self._options = TFRecordOptions(compression_type or "")

    def write(self, dataset: Dataset) -> None:
        """Writes every element (a ``tf.string`` scalar) of ``dataset`` as one record."""
        spec = dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != "string" or tuple(spec.shape or ()) != ():
            raise TypeError(
                "TFRecordWriter.write takes a dataset of scalar tf.string elements. Received element_spec="
                f"{spec!r}. Serialize each element first (e.g. tf.io.serialize_tensor or Example.SerializeToString)."
            )
        with _RecordFileWriter(self._filename, self._options) as writer:
            for record in dataset:
                writer.write(record.item() if isinstance(record, np.ndarray) else record)


# --- element access and structure ------------------------------------------------------------------


def at(dataset: Dataset, index: Any) -> Any:
    """``tf.data.experimental.at(dataset, index)``: the element at ``index`` (OutOfRangeError past the end)."""
    i = int(index)
    if i < 0:
        raise OutOfRangeError(None, None, f"tf.data.experimental.at: index must be >= 0. Received: index={i}.")
    for position, element in enumerate(dataset):
        if position == i:
            return element
    raise OutOfRangeError(None, None, f"tf.data.experimental.at: index {i} is past the dataset's end.")


def get_structure(dataset_or_iterator: Any) -> Any:
    """``tf.data.experimental.get_structure``: the ``element_spec`` of a dataset or an iterator."""
    spec = getattr(dataset_or_iterator, "element_spec", None)
    if spec is None:
        raise TypeError(
            "tf.data.experimental.get_structure takes a tf.data.Dataset or an iterator over one. "
            f"Received: {type(dataset_or_iterator).__name__}."
        )
    return spec


def get_next_as_optional(iterator: DatasetIterator) -> Optional:
    """``tf.data.experimental.get_next_as_optional(iterator)``: the next element, or an empty Optional."""
    return iterator.get_next_as_optional()


DEBUG_MODE = False  # TF's flag of the same name; unison's pipelines run user functions eagerly either way


def toggle_debug_mode(debug_mode: bool) -> None:
    """Set tf.data's debug mode (TF keeps this one private; its tests turn the mode off with it)."""
    global DEBUG_MODE
    DEBUG_MODE = bool(debug_mode)


def enable_debug_mode() -> None:
    """``tf.data.experimental.enable_debug_mode``: run user functions eagerly, element by element, in order.

    unison's ``map``/``filter``/... call the Python function for every element on every pass
    already (TF's debug mode, less its one extra tracing call), so this records the mode.
    """
    toggle_debug_mode(True)


class DatasetSpec:
    """``tf.data.DatasetSpec``: the type of a dataset, its ``element_spec`` and ``dataset_shape``."""

    def __init__(self, element_spec: Any, dataset_shape: Any = ()) -> None:
        self._element_spec = element_spec
        self._dataset_shape = tuple(dataset_shape)

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    @staticmethod
    def from_value(value: Dataset) -> DatasetSpec:
        """The spec of a dataset."""
        if not isinstance(value, Dataset):
            raise TypeError(f"DatasetSpec.from_value takes a tf.data.Dataset. Received: {type(value).__name__}.")
        return DatasetSpec(value.element_spec)

    @property
    def value_type(self) -> type:
        return Dataset

    def is_compatible_with(self, other: Any) -> bool:
        other_spec = other if isinstance(other, DatasetSpec) else DatasetSpec.from_value(other)
        return bool(tree.flatten(self._element_spec) == tree.flatten(other_spec.element_spec))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DatasetSpec) and self.is_compatible_with(other)

    def __hash__(self) -> int:
        return hash(repr(self._element_spec))

    def __repr__(self) -> str:
        return f"DatasetSpec({self._element_spec!r}, TensorShape({list(self._dataset_shape)}))"


class IteratorSpec:
    """``tf.data.IteratorSpec``: the type of an iterator over a dataset, its ``element_spec``."""

    def __init__(self, element_spec: Any) -> None:
        self._element_spec = element_spec

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    @staticmethod
    def from_value(value: Any) -> IteratorSpec:
        return IteratorSpec(get_structure(value))

    @property
    def value_type(self) -> type:
        return DatasetIterator

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IteratorSpec) and tree.flatten(self._element_spec) == tree.flatten(other.element_spec)

    def __hash__(self) -> int:
        return hash(repr(self._element_spec))

    def __repr__(self) -> str:
        return f"IteratorSpec({self._element_spec!r},)"


# --- transformations (for ds.apply) ----------------------------------------------------------------


class Reducer:
    """``tf.data.experimental.Reducer``: ``init_func(key)``, ``reduce_func(state, element)``, ``finalize_func(state)``."""

    def __init__(
        self,
        init_func: Callable[[Any], Any],
        reduce_func: Callable[[Any, Any], Any],
        finalize_func: Callable[[Any], Any],
    ) -> None:
        for label, fn in (("init_func", init_func), ("reduce_func", reduce_func), ("finalize_func", finalize_func)):
            if not callable(fn):
                raise TypeError(f"Reducer's {label} must be a function. Received: {fn!r}.")
        self.init_func, self.reduce_func, self.finalize_func = init_func, reduce_func, finalize_func


class _GroupByReducer(Dataset):
    def __init__(self, input_dataset: Dataset, key_func: Callable[..., Any], reducer: Reducer) -> None:
        self._input, self._inputs = input_dataset, (input_dataset,)
        self._key, self._reducer = key_func, reducer

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        states: dict[int, Any] = {}  # in order of each key's first element, as TF emits them
        for element in self._input._iter(ctx):
            args = element if isinstance(element, tuple) else (element,)
            key = self._key(*args)
            if isinstance(key, torch.Tensor) and (key.numel() != 1 or key.dtype != torch.int64):
                raise TypeError(
                    f"group_by_reducer's key_func must return a scalar int64. Received {key.dtype} {list(key.shape)}."
                )
            k = int(key)
            if k not in states:
                states[k] = self._reducer.init_func(torch.tensor(k, dtype=torch.int64))
            states[k] = self._reducer.reduce_func(states[k], *args)
        for state in states.values():
            final = (
                self._reducer.finalize_func(*state) if isinstance(state, tuple) else self._reducer.finalize_func(state)
            )
            yield tree.map_structure(_as_tensor, final)


def _as_tensor(value: Any) -> Any:
    if isinstance(value, (torch.Tensor, np.ndarray, SparseTensor)):
        return value
    return torch.as_tensor(value, dtype=torch.int64 if isinstance(value, int) and not isinstance(value, bool) else None)


def group_by_reducer(key_func: Callable[..., Any], reducer: Reducer) -> Callable[[Dataset], Dataset]:
    """For ``ds.apply``: one element per key, the key's elements folded by ``reducer``."""
    if not isinstance(reducer, Reducer):
        raise TypeError(f"group_by_reducer takes a tf.data.experimental.Reducer. Received: {type(reducer).__name__}.")
    return lambda dataset: _GroupByReducer(dataset, key_func, reducer)


class _SparseBatch(Dataset):
    def __init__(self, input_dataset: Dataset, batch_size: int, row_shape: Any) -> None:
        self._input, self._inputs = input_dataset, (input_dataset,)
        self._batch, self._row_shape = int(batch_size), [int(d) for d in row_shape]

    def _sparse(self, rows: list[torch.Tensor]) -> SparseTensor:
        indices, values = [], []
        for b, row in enumerate(rows):
            if row.dim() != len(self._row_shape) or any(n > cap for n, cap in zip(row.shape, self._row_shape)):
                raise DataLossError(  # TF's class for an element larger than the row shape
                    None,
                    None,
                    f"dense_to_sparse_batch: an element of shape {list(row.shape)} does not fit row_shape "
                    f"{self._row_shape}. Give a row_shape at least as large as every element.",
                )
            where = (
                torch.nonzero(torch.ones(row.shape, dtype=torch.bool))
                if row.numel()
                else torch.zeros(0, row.dim(), dtype=torch.int64)
            )
            indices.append(torch.cat([torch.full((len(where), 1), b, dtype=torch.int64), where.to(torch.int64)], 1))
            values.append(row.reshape(-1))
        return SparseTensor(torch.cat(indices), torch.cat(values), [len(rows), *self._row_shape])

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        rows: list[torch.Tensor] = []
        for element in self._input._iter(ctx):
            rows.append(torch.as_tensor(element))
            if len(rows) == self._batch:
                yield self._sparse(rows)
                rows = []
        if rows:
            yield self._sparse(rows)


def dense_to_sparse_batch(batch_size: int, row_shape: Any) -> Callable[[Dataset], Dataset]:
    """For ``ds.apply``: batches of ``batch_size`` elements as one ``SparseTensor`` of ``[batch] + row_shape``."""
    if int(batch_size) <= 0:
        raise InvalidArgumentError(
            None, None, f"dense_to_sparse_batch: batch_size must be > 0. Received: {batch_size}."
        )
    return lambda dataset: _SparseBatch(dataset, batch_size, row_shape)


def pad_to_cardinality(cardinality: int, mask_key: str = "valid") -> Callable[[Dataset], Dataset]:
    """For ``ds.apply``: a dataset of dicts padded with zero elements to ``cardinality``, with a mask.

    Each element gains ``mask_key``: True for the dataset's own elements, False for the padding.
    """

    def apply(dataset: Dataset) -> Dataset:
        spec = dataset.element_spec
        if not isinstance(spec, dict):
            raise ValueError(f"pad_to_cardinality takes a dataset of dicts. Received element_spec={spec!r}.")
        if mask_key in spec:
            raise ValueError(
                f"pad_to_cardinality: the elements already have the key {mask_key!r}. Pass another mask_key."
            )
        count = int(dataset.cardinality())
        if count < 0:
            raise ValueError("pad_to_cardinality needs a dataset of known, finite cardinality.")
        if count > cardinality:
            raise ValueError(
                f"pad_to_cardinality: the dataset has {count} elements, more than cardinality={cardinality}."
            )
        zero = {
            k: (np.asarray(b"", dtype=object) if s.dtype == "string" else torch.zeros(s.shape, dtype=s.dtype))
            for k, s in spec.items()
        }
        padded = dataset.map(lambda x: {**x, mask_key: torch.tensor(True)})
        padding = Dataset.from_tensors({**zero, mask_key: torch.tensor(False)}).repeat(cardinality - count)
        return padded.concatenate(padding)

    return apply


def parallel_interleave(
    map_func: Callable[..., Dataset],
    cycle_length: int,
    block_length: int = 1,
    sloppy: bool = False,
    buffer_output_elements: int | None = None,
    prefetch_input_elements: int | None = None,
) -> Callable[[Dataset], Dataset]:
    """For ``ds.apply``: ``ds.interleave(map_func, cycle_length, block_length)`` (TF's older spelling)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length, deterministic=not sloppy)


def parse_example_dataset(
    features: Any, num_parallel_calls: int = 1, deterministic: bool | None = None
) -> Callable[[Dataset], Dataset]:
    """For ``ds.apply`` on batches of serialized ``Example`` strings: ``tf.io.parse_example`` of each."""
    if not features:
        raise ValueError("parse_example_dataset needs a non-empty features dict.")
    return lambda dataset: dataset.map(lambda serialized: parse_example(serialized, features))


def _on_device(device: str) -> Callable[[Any], Any]:
    from unison.ops.control_flow import device as tf_device

    def move(*components: Any) -> Any:
        # map() spreads a tuple element over the arguments: gather it back
        element = components[0] if len(components) == 1 else components
        with tf_device(device):
            target = torch.empty(0).device
        return tree.map_structure(lambda t: t.to(target) if isinstance(t, torch.Tensor) else t, element)

    return move


def copy_to_device(target_device: str, source_device: str = "/cpu:0") -> Callable[[Dataset], Dataset]:
    """For ``ds.apply``: the elements, copied to ``target_device``."""
    return lambda dataset: dataset.map(_on_device(target_device))


def prefetch_to_device(device: str, buffer_size: int | None = None) -> Callable[[Dataset], Dataset]:
    """For ``ds.apply``: the elements on ``device``, ``buffer_size`` of them prepared ahead."""
    return lambda dataset: dataset.map(_on_device(device)).prefetch(buffer_size if buffer_size is not None else 1)
