"""``tf.data.experimental.make_csv_dataset``: batches of CSV rows as feature dicts, TF's pipeline.

As TF builds it (``tensorflow/python/data/experimental/ops/readers.py``): the files matching
``file_pattern`` (sorted; shuffled when ``shuffle``), column names from the header, column types
inferred from the first ``num_rows_for_inference`` rows (int32, int64, float32, float64 or string,
the least permissive that fits; an inferred column's empty field is 0 or ``""``), one
:class:`~unison.data.csv.CsvDataset` per file interleaved ``num_parallel_reads`` at a time, then
shuffle, repeat ``num_epochs`` times (``None``: forever), batch (the last partial batch dropped only
when repeating forever), map to ``(features, label)`` or ``features``, prefetch.

Example:
    >>> import os, tempfile, unison as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "w").write("x,y\\n1,a\\n2,b\\n")
    >>> ds = tf.data.experimental.make_csv_dataset(path, 2, label_name="y", num_epochs=1, shuffle=False)
    >>> features, label = next(iter(ds))
    >>> features["x"].tolist(), label.numpy().tolist()
    ([1, 2], [b'a', b'b'])
"""

from __future__ import annotations

import csv
import glob
import gzip
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from unison.data.csv_dataset import CsvDataset
from unison.data.dataset import Dataset
from unison.data.options import AUTOTUNE
from unison.ops.string_tensor import StringTensor


def _file_names(file_pattern: Any) -> list[str]:
    patterns = file_pattern if isinstance(file_pattern, list) else [file_pattern]
    if not patterns:
        raise ValueError("Argument `file_pattern` should not be empty.")
    names = sorted(f for p in patterns for f in glob.glob(str(p)))
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return names


def _reader(path: str, compression: str | None, encoding: str) -> Any:
    if compression == "GZIP":
        return gzip.open(path, "rt", encoding=encoding, newline="")
    if compression == "ZLIB":
        raise ValueError(f"`compression_type` {compression} is not supported for probing columns.")
    return open(path, encoding=encoding, newline="")


def _csv_rows(path: str, compression: str | None, encoding: str, delim: str, quoted: bool) -> Iterator[list[str]]:
    with _reader(path, compression, encoding) as fh:
        yield from csv.reader(fh, delimiter=delim, quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE)


def _fits(value: str, dtype: torch.dtype | str) -> bool:
    try:
        if dtype == torch.int32:
            return bool(np.int32(value) == np.int64(value))
        if dtype == torch.int64:
            np.int64(value)
            return True
        if dtype in (torch.float32, torch.float64):
            with np.errstate(over="ignore"):  # a float32 overflow means "not a float32", no warning needed
                return bool((np.float32 if dtype == torch.float32 else np.float64)(value) < np.inf)
    except (ValueError, OverflowError):
        return False
    return True


_ORDER: list[torch.dtype | str] = [torch.int32, torch.int64, torch.float32, torch.float64, "string"]


def _infer(value: str, na: str, previous: Any) -> Any:
    """TF's ``_infer_type``: the least permissive type that fits ``value`` and what came before."""
    if value in ("", na):
        return previous
    for i, dtype in enumerate(_ORDER):
        if _fits(value, dtype) and (previous is None or previous in _ORDER[: i + 1]):
            return dtype
    return "string"


def _infer_defaults(files: list[str], n_cols: int, select: Any, rows_max: Any, args: dict[str, Any]) -> list[Any]:
    select = range(n_cols) if select is None else select
    types: list[Any] = [None] * len(select)
    seen = 0
    for path in files:
        rows = _csv_rows(path, args["compression"], args["encoding"], args["delim"], args["quoted"])
        if args["header"]:
            next(rows, None)
        for number, row in enumerate(rows, 2 if args["header"] else 1):
            if rows_max is not None and seen >= rows_max:
                break
            if len(row) != n_cols:
                raise ValueError(
                    f"Problem inferring types: CSV row {number} has {len(row)} number of fields. Expected: {n_cols}."
                )
            types = [_infer(row[c], args["na"], t) for c, t in zip(select, types)]
            seen += 1
        if rows_max is not None and seen >= rows_max:
            break
    return [
        StringTensor(np.array([b""], dtype=object)) if t in (None, "string") else torch.zeros(1, dtype=t) for t in types
    ]


def _sorted_columns(select_columns: Any, names: list[str]) -> list[int]:
    index = {n: i for i, n in enumerate(names)}
    out = []
    for v in select_columns:
        if isinstance(v, int):
            if v < 0 or v >= len(names):
                raise ValueError(f"Column index {v} specified in `select_columns` should be >= 0 and < {len(names)}.")
            out.append(v)
        elif v not in index:
            raise ValueError(f"Column {v} specified in `select_columns` must be one of the columns: {list(names)}.")
        else:
            out.append(index[v])
    if len(set(out)) != len(out):
        raise ValueError(f"The `select_columns` argument contains duplicate columns: {select_columns}.")
    return sorted(out)


def make_csv_dataset(
    file_pattern: Any,
    batch_size: int,
    column_names: list[str] | None = None,
    column_defaults: list[Any] | None = None,
    label_name: str | None = None,
    select_columns: list[Any] | None = None,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    na_value: str = "",
    header: bool = True,
    num_epochs: int | None = None,
    shuffle: bool = True,
    shuffle_buffer_size: int = 10000,
    shuffle_seed: int | None = None,
    prefetch_buffer_size: int | None = None,
    num_parallel_reads: int | None = None,
    sloppy: bool = False,
    num_rows_for_inference: int | None = 100,
    compression_type: str | None = None,
    ignore_errors: bool = False,
    encoding: str = "utf-8",
) -> Dataset:
    """``tf.data.experimental.make_csv_dataset`` (see the module notes for the pipeline).

    Returns:
        A dataset of ``(features, label)`` batches (``features`` an ordered dict of column name to
        a batch tensor), or of ``features`` when ``label_name`` is ``None``.
    """
    files = _file_names(file_pattern)
    args: dict[str, Any] = {"compression": compression_type, "encoding": encoding, "delim": field_delim}
    args.update(quoted=use_quote_delim, na=na_value, header=header)
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        heads = [next(_csv_rows(f, compression_type, encoding, field_delim, use_quote_delim), None) for f in files]
        if heads[0] is None:
            raise ValueError(f"Failed when reading the header line of {files[0]}. Is it an empty file?")
        column_names = heads[0]
        for f, h in zip(files[1:], heads[1:]):
            if h != column_names:
                raise ValueError(
                    f"All input CSV files should have the same column names in the header row. File {f} has different column names."
                )
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError(
            f"Either `column_names` argument or CSV header row contains duplicate column names: {column_names}."
        )
    select = None if select_columns is None else _sorted_columns(select_columns, column_names)
    if column_defaults is None:
        column_defaults = _infer_defaults(files, len(column_names), select, num_rows_for_inference, args)
    if select is not None and len(column_defaults) != len(select):
        raise ValueError(
            f"If specified, `column_defaults` and `select_columns` must have the same length: `column_defaults` "
            f"has length {len(column_defaults)}, `select_columns` has length {len(select)}."
        )
    if select is not None and len(column_names) > len(select):
        column_names = [column_names[i] for i in select]
    if label_name is not None and label_name not in column_names:
        raise ValueError(f"`label_name` provided must be one of the columns: {column_names}. Received: {label_name}.")

    def read(filename: Any) -> Dataset:
        path = filename.numpy() if hasattr(filename, "numpy") else filename
        ds = CsvDataset(
            path.decode() if isinstance(path, bytes) else str(path),
            column_defaults,
            compression_type=compression_type,
            header=header,
            field_delim=field_delim,
            use_quote_delim=use_quote_delim,
            na_value=na_value,
            select_cols=select,
        )
        ds._ignore_errors = ignore_errors
        return ds

    names = list(column_names)

    def to_dict(*columns: Any) -> Any:
        features = OrderedDict(zip(names, columns))
        if label_name is not None:
            return features, features.pop(label_name)
        return features

    dataset = Dataset.from_tensor_slices(np.array(files, dtype=object))
    if shuffle:
        dataset = dataset.shuffle(len(files), shuffle_seed)
    cycle = 1 if num_parallel_reads is None else num_parallel_reads
    dataset = dataset.interleave(read, cycle_length=cycle if cycle != AUTOTUNE else len(files), block_length=1)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    return dataset.map(to_dict).prefetch(AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size)


__all__ = ["make_csv_dataset"]
