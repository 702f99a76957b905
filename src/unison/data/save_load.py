"""``tf.data.experimental.save`` / ``load``: a dataset's elements written to a folder and read back.

The folder holds ``elements.tfrecord`` (each element's tensors as ``tf.io.serialize_tensor``
records, one record per tensor, in element order) and ``element_spec.json``. This is unison's own
layout: TF's snapshot format is not written, so a folder saved by TF is not read here (nor the
reverse). ``compression="GZIP"`` compresses the records.

Example:
    >>> import tempfile
    >>> import unison as tf
    >>> path = tempfile.mkdtemp()
    >>> tf.data.experimental.save(tf.data.Dataset.range(3), path)
    >>> [int(x) for x in tf.data.experimental.load(path)]
    [0, 1, 2]
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from unison.data.context import IterContext
from unison.data.dataset import Dataset
from unison.data.specs import TensorSpec
from unison.data.tfrecord import TFRecordDataset, TFRecordOptions, TFRecordWriter
from unison.errors import NotFoundError
from unison.ops import tree
from unison.ops.dtypes import as_dtype
from unison.ops.parsing import parse_tensor, serialize_tensor

__all__ = ["load", "save"]

_RECORDS = "elements.tfrecord"
_SPEC = "element_spec.json"


def _dtype_name(dtype: Any) -> str:
    return "string" if dtype == "string" else str(dtype).replace("torch.", "")


def save(
    dataset: Dataset, path: str, compression: str | None = None, shard_func: Callable[..., Any] | None = None,
    checkpoint_args: Any = None,
) -> None:  # fmt: skip
    """``tf.data.experimental.save``: writes every element of ``dataset`` under the folder ``path``."""
    specs = tree.flatten(dataset.element_spec)
    if not all(isinstance(s, TensorSpec) for s in specs):
        raise TypeError("tf.data.experimental.save supports datasets of tensors (no ragged or sparse components).")
    os.makedirs(path, exist_ok=True)
    structure = tree.map_structure(lambda s: None, dataset.element_spec)
    meta = {
        "structure": json.dumps(_describe(structure)),
        "specs": [{"shape": None if s.shape is None else list(s.shape), "dtype": _dtype_name(s.dtype)} for s in specs],
        "compression": compression or "",
    }
    with TFRecordWriter(os.path.join(path, _RECORDS), TFRecordOptions(compression or "")) as writer:
        for element in dataset:
            for leaf in tree.flatten(element):
                writer.write(serialize_tensor(leaf).item())
    with open(os.path.join(path, _SPEC), "w", encoding="utf-8") as fh:
        json.dump(meta, fh)


def _describe(structure: Any) -> Any:
    if isinstance(structure, dict):
        # tree.flatten orders a dict's leaves by sorted key: describe (and rebuild) in that order
        return {"dict": {k: _describe(structure[k]) for k in sorted(structure)}}
    if isinstance(structure, (tuple, list)):
        return {"tuple": [_describe(v) for v in structure]}
    return None


def _rebuild(description: Any, leaves: Iterator[Any]) -> Any:
    if description is None:
        return next(leaves)
    if "dict" in description:
        return {k: _rebuild(v, leaves) for k, v in description["dict"].items()}
    return tuple(_rebuild(v, leaves) for v in description["tuple"])


class _Loaded(Dataset):
    def __init__(self, path: str, compression: str | None) -> None:
        with open(os.path.join(path, _SPEC), encoding="utf-8") as fh:
            meta = json.load(fh)
        self._path = path
        self._compression = compression if compression is not None else meta["compression"]
        self._structure = json.loads(meta["structure"])
        self._specs = [
            TensorSpec(s["shape"], "string" if s["dtype"] == "string" else as_dtype(s["dtype"])) for s in meta["specs"]
        ]

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        records = TFRecordDataset(os.path.join(self._path, _RECORDS), self._compression or None)
        width = len(self._specs)
        buffer: list[Any] = []
        for record in records._iter(ctx):
            spec = self._specs[len(buffer)]
            buffer.append(
                parse_tensor(np.asarray(record, dtype=object), "string" if spec.dtype == "string" else spec.dtype)
            )
            if len(buffer) == width:
                yield _rebuild(self._structure, iter(buffer))
                buffer = []

    def _spec(self) -> Any:
        return _rebuild(self._structure, iter(self._specs))


def load(path: str, element_spec: Any = None, compression: str | None = None, reader_func: Any = None) -> Dataset:
    """``tf.data.experimental.load``: the dataset saved under ``path`` by :func:`save`."""
    if not os.path.exists(os.path.join(path, _SPEC)):
        raise NotFoundError(
            None, None, f"tf.data.experimental.load: no dataset saved by unison under {path!r} ({_SPEC} is missing)."
        )
    return _Loaded(path, compression)
