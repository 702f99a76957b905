"""``Dataset.cache``: keep the elements of the first complete iteration, in memory or in a file.

A file cache is written atomically (``unison.core.atomic_io``) when the first iteration completes, at
``<filename>.unison-cache``; a later iteration, in this or another process, reads it instead of
running the pipeline above it. A partial iteration caches nothing (as TF discards it). The
file holds tensors only (strings as their bytes), so it loads with ``weights_only=True``.

Example:
    >>> from unison.data.sources import Range
    >>> ds = Range(3).cache()
    >>> [int(x) for x in ds] == [int(x) for x in ds]
    True
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from unison.core import atomic_io
from unison.data import nest
from unison.data.context import IterContext
from unison.data.dataset import Dataset, transformation
from unison.ops.ragged_tensor import RaggedTensor
from unison.ops.sparse_tensor import SparseTensor

SUFFIX = ".unison-cache"


def _encode_leaf(leaf: Any, tensors: list[torch.Tensor]) -> Any:
    """The leaf's kind (JSON) with its tensors appended; a sparse or ragged tensor as its components."""
    if isinstance(leaf, nest.COMPOSITES):
        parts = [
            _encode_leaf(np.asarray(c) if not isinstance(c, torch.Tensor) else c, tensors)
            for c in leaf._tree_components()
        ]
        return {"composite": type(leaf).__name__, "parts": parts}
    if isinstance(leaf, torch.Tensor):
        tensors.append(leaf.contiguous())
        return "t"
    tensors.append(torch.frombuffer(bytearray(np.ascontiguousarray(leaf).tobytes()) or bytearray(1), dtype=torch.uint8))
    return {"np": leaf.dtype.str, "shape": list(leaf.shape)}


def _encode(element: Any) -> tuple[str, list[torch.Tensor]]:
    tensors: list[torch.Tensor] = []
    kinds = [_encode_leaf(leaf, tensors) for leaf in nest.flatten(element)]
    return json.dumps({"structure": nest.structure_of(element), "kinds": kinds}), tensors


def _skeleton(structure: Any) -> Any:
    if isinstance(structure, dict) and "dict" in structure:
        return {k: _skeleton(v) for k, v in structure["dict"].items()}
    if isinstance(structure, dict) and "tuple" in structure:
        return tuple(_skeleton(v) for v in structure["tuple"])
    return None


def _decode_leaf(kind: Any, tensors: Iterator[torch.Tensor]) -> Any:
    if kind == "t":
        return next(tensors)
    if "composite" in kind:
        cls = SparseTensor if kind["composite"] == "SparseTensor" else RaggedTensor
        return cls._tree_from_components([_decode_leaf(k, tensors) for k in kind["parts"]])
    t = next(tensors)
    dtype = np.dtype(kind["np"])
    count = int(np.prod(kind["shape"])) if kind["shape"] else 1
    return np.frombuffer(t.numpy().tobytes()[: count * dtype.itemsize], dtype=dtype).reshape(kind["shape"]).copy()


def _decode(meta: str, tensors: list[torch.Tensor]) -> Any:
    info = json.loads(meta)
    stream = iter(tensors)
    leaves = [_decode_leaf(kind, stream) for kind in info["kinds"]]
    return nest.pack_as(_skeleton(info["structure"]), leaves)


@transformation
class Cache(Dataset):
    def __init__(self, input_dataset: Dataset, filename: str | os.PathLike[str] = "") -> None:
        self._inputs = (input_dataset,)
        self._path = os.fspath(filename) + SUFFIX if filename else ""
        self._memory: list[Any] | None = None

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()

    def _load(self) -> list[Any] | None:
        if self._memory is None and self._path and os.path.exists(self._path):
            try:
                saved = torch.load(self._path, weights_only=True)
                self._memory = [_decode(meta, tensors) for meta, tensors in saved["elements"]]
            except (OSError, RuntimeError, ValueError, KeyError, EOFError, pickle.UnpicklingError) as exc:
                first = (str(exc).splitlines() or [""])[0]
                raise ValueError(
                    f"The dataset cache file {self._path} cannot be read ({type(exc).__name__}: "
                    f"{first}). Delete it to rebuild the cache."
                ) from None
        return self._memory

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        cached = self._load()
        if cached is not None:
            yield from cached
            return
        seen: list[Any] = []
        for element in self._inputs[0]._iter(ctx):
            seen.append(element)
            yield element
        if ctx.peek:
            return
        self._memory = seen  # reached the end: the iteration is complete
        if self._path:
            os.makedirs(os.path.dirname(os.path.abspath(self._path)), exist_ok=True)
            atomic_io.atomic_torch_save({"version": 1, "elements": [_encode(e) for e in seen]}, self._path)
