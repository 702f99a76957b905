"""Where elements come from: arrays, one element, a generator, a range, text files.

Example:
    >>> [int(x) for x in Range(1, 7, 2)]
    [1, 3, 5]
"""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from unison.data import nest
from unison.data.context import IterContext
from unison.data.dataset import Dataset, transformation
from unison.data.options import UNKNOWN_CARDINALITY
from unison.data.specs import TensorSpec
from unison.ops import tree


def _columns_of(tensors: Any) -> Any:
    if isinstance(tensors, Dataset):
        raise TypeError(
            "from_tensor_slices takes arrays or tensors, not a Dataset. Received: a Dataset; "
            "use it directly (or .unbatch() it)."
        )
    return nest.as_element(tensors)


@transformation
class TensorSlices(Dataset):
    """``from_tensor_slices``: row ``i`` of every component is element ``i`` (index-backed)."""

    def __init__(self, tensors: Any) -> None:
        self._cols = _columns_of(tensors)
        leaves = nest.flatten(self._cols)
        sizes = [nest.leaf_rows(leaf) for leaf in leaves]
        if len(set(sizes)) > 1:
            shapes = [tuple(leaf.shape) for leaf in leaves]
            raise ValueError(
                "from_tensor_slices needs every component to have the same first dimension (the number "
                f"of elements). Received components of shapes {shapes}. Slice or pad them to one length."
            )
        self._n = sizes[0]
        self.file_names = False  # True for list_files: FILE sharding splits these names

    def _columns(self) -> Any:
        return self._cols

    def _index_chunks(self, ctx: IterContext) -> Iterator[np.ndarray]:
        if self._n:
            rows = np.arange(self._n, dtype=np.int64)
            if self.file_names and ctx.file_shard is not None:  # list_files under FILE sharding
                rows = rows[ctx.file_shard[1] :: ctx.file_shard[0]]
            yield rows

    def _cardinality(self) -> int:
        return self._n

    def _spec(self) -> Any:
        return tree.map_structure(lambda c: TensorSpec.from_tensor(c).without_leading(), self._cols, lists=False)


@transformation
class Range(Dataset):
    """``Dataset.range``: int64 scalars (index-backed: the values are their own rows)."""

    def __init__(self, *args: int, dtype: Any = torch.int64) -> None:
        if not 1 <= len(args) <= 3:
            raise TypeError(f"Dataset.range takes (stop), (start, stop) or (start, stop, step). Received: {args}")
        ints = [int(a) for a in args]
        if len(ints) == 3 and ints[2] == 0:
            raise ValueError("Dataset.range's step must not be 0. Received: step=0")
        self._range = range(*ints)
        resolved = dtype if isinstance(dtype, torch.dtype) else TensorSpec(None, dtype).dtype
        if not isinstance(resolved, torch.dtype):
            raise TypeError(f"Dataset.range needs a numeric dtype. Received: dtype={dtype!r}")
        self._dtype: torch.dtype = resolved
        self._values = torch.tensor(list(self._range), dtype=self._dtype) if len(self._range) < 1 << 22 else None

    def _columns(self) -> Any:
        return self._values

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        if self._values is not None:
            yield from super()._iter(ctx)
            return
        for v in self._range:
            yield torch.tensor(v, dtype=self._dtype)

    def _index_chunks(self, ctx: IterContext) -> Iterator[np.ndarray]:
        if len(self._range):
            yield np.arange(len(self._range), dtype=np.int64)

    def _cardinality(self) -> int:
        return len(self._range)

    def _spec(self) -> Any:
        return TensorSpec((), self._dtype)


@transformation
class FromTensors(Dataset):
    """``from_tensors``: one element."""

    def __init__(self, tensors: Any) -> None:
        self._element = nest.as_element(tensors)

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        yield self._element

    def _cardinality(self) -> int:
        return 1


def _signature(output_types: Any, output_shapes: Any, output_signature: Any) -> Any:
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError("from_generator takes output_signature or output_types/output_shapes, not both.")
        bad = [s for s in nest.flatten(output_signature) if not isinstance(s, TensorSpec)]
        if bad:
            raise TypeError(f"output_signature must be a nest of tf.TensorSpec. Received: {bad[0]!r}")
        return output_signature
    if output_types is None:
        raise TypeError(
            "from_generator needs output_signature (a nest of tf.TensorSpec), or the older "
            "output_types (and output_shapes)."
        )
    if output_shapes is None:
        return tree.map_structure(lambda t: TensorSpec(None, t), output_types, lists=False)
    return tree.map_structure(lambda t, s: TensorSpec(s, t), output_types, output_shapes, lists=False, strict=False)


@transformation
class FromGenerator(Dataset):
    """``from_generator``: each element the generator yields, checked against the signature."""

    def __init__(
        self,
        generator: Callable[..., Any],
        output_types: Any,
        output_shapes: Any,
        args: Sequence[Any] | None,
        output_signature: Any,
    ) -> None:
        if not callable(generator):
            raise TypeError(
                "from_generator needs a callable that returns an iterator (pass the generator "
                f"function, not the generator). Received: {type(generator).__name__}"
            )
        self._gen, self._args = generator, tuple(args or ())
        self._signature = _signature(output_types, output_shapes, output_signature)

    def _check(self, value: Any, index: int) -> Any:
        sig = self._signature
        if isinstance(sig, tuple) and not isinstance(value, tuple) and isinstance(value, list):
            value = tuple(value)
        # a single TensorSpec takes any array-like value, a tuple included (TF converts the whole
        # value: `yield (i,)` against TensorSpec(shape=(1,)) is the tensor [i])
        if not nest.same_structure(sig, value) and not (isinstance(sig, TensorSpec) and not isinstance(value, dict)):
            raise TypeError(
                f"The generator's element {index} does not match output_signature: expected the structure "
                f"{nest.structure_of(sig)}, received {nest.structure_of(value)} ({value!r:.200}). Yield "
                "elements shaped like output_signature."
            )
        element = tree.map_structure(lambda spec, v: _cast(spec, v, index), sig, value, lists=False, strict=False)
        return element

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        for i, value in enumerate(self._gen(*self._args)):
            yield self._check(value, i)

    def _spec(self) -> Any:
        return self._signature


def _cast(spec: TensorSpec, value: Any, index: int) -> Any:
    leaf = nest.as_leaf(value)
    if spec.dtype == "string":
        ok = isinstance(leaf, np.ndarray)
    else:
        ok = isinstance(leaf, torch.Tensor) and isinstance(spec.dtype, torch.dtype)
        if ok and isinstance(leaf, torch.Tensor) and isinstance(spec.dtype, torch.dtype) and leaf.dtype != spec.dtype:
            # TF converts Python numbers to the declared dtype; a float where an int is declared fails.
            if leaf.is_floating_point() and not spec.dtype.is_floating_point:
                ok = False
            else:
                leaf = leaf.to(spec.dtype)
    if not ok or not spec.is_compatible_with(leaf):
        raise TypeError(
            f"The generator's element {index} does not match output_signature: expected {spec}, received "
            f"{TensorSpec.from_tensor(leaf)}. Yield values of that dtype and shape, or fix output_signature."
        )
    return leaf


def _files(filenames: Any) -> list[str]:
    if isinstance(filenames, Dataset):
        return [
            nest.to_numpy(f).decode() if isinstance(nest.to_numpy(f), bytes) else str(nest.to_numpy(f))
            for f in filenames
        ]
    if isinstance(filenames, (str, bytes, os.PathLike)):
        filenames = [filenames]
    out = [
        os.fsdecode(f) if not isinstance(f, np.ndarray) else str(f)
        for f in np.asarray(filenames, dtype=object).reshape(-1)
    ]
    if not out:
        raise ValueError("A file dataset needs at least one file name. Received: []")
    return out


class TextLineDataset(Dataset):
    """Lines of text files (without the newline), as numpy bytes scalars (TF's ``tf.string``).

    A file-based source: under ``AutoShardPolicy.FILE`` (or ``AUTO``) each worker reads its share
    of ``filenames``.
    """

    def __init__(
        self,
        filenames: Any,
        compression_type: str | None = None,
        buffer_size: int | None = None,
        num_parallel_reads: int | None = None,
        name: str | None = None,
    ) -> None:
        if compression_type not in (None, "", "GZIP"):
            raise ValueError(f"compression_type must be None, '' or 'GZIP'. Received: {compression_type!r}")
        self.filenames = _files(filenames)
        self._gzip = compression_type == "GZIP"

    def _lines(self, ctx: IterContext) -> Iterator[bytes]:
        import gzip

        files = self.filenames
        if ctx.file_shard is not None:
            files = files[ctx.file_shard[1] :: ctx.file_shard[0]]
        for path in files:
            with gzip.open(path, "rb") if self._gzip else open(path, "rb") as fh:
                for line in fh:
                    yield line.rstrip(b"\r\n") if line.endswith(b"\n") else line

    def _iter(self, ctx: IterContext) -> Iterator[Any]:
        for line in self._lines(ctx):
            yield np.asarray(line)

    def _record_batches(self, ctx: IterContext, size: int, drop_remainder: bool) -> Iterator[np.ndarray]:
        """``batch(size)`` of the lines cut straight from the files (``Batch`` asks for this): one
        array per batch, the array that stacking the lines' 0-d arrays gives, without those arrays,
        the per-element structure checks and the stack (60% of a ``TextVectorization`` map's CPU)."""
        lines = self._lines(ctx)
        while True:
            chunk = list(itertools.islice(lines, size))
            if not chunk or (drop_remainder and len(chunk) < size):
                return
            yield np.array(chunk, dtype=np.bytes_)

    def _spec(self) -> Any:
        return TensorSpec((), "string")


@transformation
def list_files(pattern: str | Sequence[str], shuffle: bool | None, seed: int | None) -> Dataset:
    patterns = [pattern] if isinstance(pattern, (str, os.PathLike)) else list(pattern)
    names = sorted({f for p in patterns for f in glob.glob(os.fspath(p))})
    if not names:
        raise ValueError(f"No files matched pattern: {pattern!r}. Check the path and the glob.")
    ds = TensorSlices(np.asarray(names))
    ds.file_names = True
    return ds.shuffle(len(names), seed=seed) if shuffle is not False else ds


__all__ = [
    "UNKNOWN_CARDINALITY",
    "FromGenerator",
    "FromTensors",
    "Range",
    "TensorSlices",
    "TextLineDataset",
    "list_files",
]
