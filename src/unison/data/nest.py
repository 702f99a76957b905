"""Nested elements as TF nests them: tuples and dicts of tensors (torch) or strings (numpy).

A *leaf* is a ``torch.Tensor`` or a ``numpy.ndarray`` (strings stay numpy arrays of ``str`` or
``bytes``; torch has no string tensors), or a composite tensor: a ``tf.SparseTensor`` or a
``tf.RaggedTensor``, kept whole, batched and unbatched as TF's ``tf.data`` does it (a batch of
sparse tensors is one sparse tensor with a batch dimension and the largest dense shape; a batch of
ragged tensors is a ragged tensor with one more ragged dimension). Tuples (namedtuples too) and
dicts are structure; a list given to a source is one tensor, as in TF.

Example:
    >>> import torch
    >>> el = as_element((1, {"a": [1.0, 2.0]}))
    >>> el[0].dtype, el[1]["a"].shape  # a Python int is int32 and a float float32, as in TF
    (torch.int32, torch.Size([2]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from unison.errors import BatchShapeError
from unison.ops import tree
from unison.ops.dtypes import from_numpy
from unison.ops.ragged_tensor import RaggedTensor
from unison.ops.sparse_tensor import SparseTensor
from unison.ops.string_tensor import as_string_tensor

Leaf = torch.Tensor | np.ndarray | SparseTensor | RaggedTensor
COMPOSITES = (SparseTensor, RaggedTensor)


def is_leaf(obj: Any) -> bool:
    return isinstance(obj, (torch.Tensor, np.ndarray, SparseTensor, RaggedTensor))


def _rebuild(obj: tuple[Any, ...], items: list[Any]) -> tuple[Any, ...]:
    return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)


def flatten(obj: Any) -> list[Any]:
    """The leaves of ``obj`` in a fixed order (dict keys sorted, as TF's nest does; a list is a leaf)."""
    return tree.flatten(obj, lists=False)


def structure_of(obj: Any) -> Any:
    """A JSON-able description of the nesting (used to check and to store structures)."""
    if isinstance(obj, dict):
        return {"dict": {str(k): structure_of(v) for k, v in sorted(obj.items())}}
    if isinstance(obj, tuple):
        return {"tuple": [structure_of(v) for v in obj]}
    return "leaf"


def same_structure(a: Any, b: Any) -> bool:
    return structure_of(a) == structure_of(b)


def pack_as(structure: Any, leaves: list[Any]) -> Any:
    """Inverse of :func:`flatten` for a ``structure`` example (a nest of anything)."""
    return tree.pack_sequence_as(structure, leaves, lists=False)


def _fits_int32(arr: np.ndarray) -> bool:
    return arr.size == 0 or bool(arr.min() >= -(2**31) and arr.max() < 2**31)


def as_leaf(value: Any) -> Leaf:
    """A value as a leaf: numbers become torch tensors, strings stay numpy arrays."""
    if isinstance(value, torch.Tensor):
        return value.detach() if value.requires_grad else value  # no new alias per element
    if isinstance(value, COMPOSITES):
        return value
    if type(value) is np.ndarray and value.dtype == object and value.ndim == 0 and type(value[()]) is bytes:
        return value  # one string (a record, a parsed bytes feature): nothing to convert or check
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):  # tensors of other libraries
        value = value.numpy()
    arr = np.asarray(value)
    # numpy's dtype stays for arrays and array-likes (a pandas Series of int64 is int64 in TF too);
    # Python numbers and lists of them take TF's defaults
    python = not isinstance(value, (np.ndarray, np.generic)) and not hasattr(type(value), "__array__")
    if arr.dtype == np.float64 and python:
        arr = arr.astype(np.float32)  # a Python float is float32 in TF (numpy float64 stays float64)
    elif arr.dtype == np.int64 and python and _fits_int32(arr):
        arr = arr.astype(np.int32)  # a Python int is int32 in TF (int64 only beyond its range)
    if arr.dtype.kind in "USO":
        if arr.dtype.kind == "O" and not all(isinstance(v, (str, bytes)) for v in arr.reshape(-1)):
            raise TypeError(
                "An element must be made of numbers, booleans or strings (nested in tuples and dicts). "
                f"Received a value of type {type(value).__name__}: {value!r:.200}"
            )
        return arr
    if arr.dtype == np.float16 or arr.dtype.kind in "biuf" or arr.dtype == np.bool_:
        # ascontiguousarray would make a 0-d array 1-d
        return from_numpy(arr)
    raise TypeError(f"Cannot make a tensor of a value of dtype {arr.dtype}. Received: {value!r:.200}")


def as_element(value: Any) -> Any:
    """Any nest of arrays, lists and numbers -> the same nest with leaves from :func:`as_leaf`."""
    if value is None:
        raise TypeError("An element cannot contain None (TF cannot make a tensor of it). Received: None")
    if type(value) is torch.Tensor and not value.requires_grad:
        return value  # the common leaf, as is
    if isinstance(value, dict):
        return {k: as_element(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return _rebuild(value, [as_element(v) for v in value])
    return as_leaf(value)


def _same(a: Any, b: Any) -> bool:
    """``same_structure`` without building descriptions (called once per element of a batch)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    return not isinstance(b, (dict, tuple))


def stack(elements: list[Any], ragged: frozenset[int] = frozenset()) -> Any:
    """Stack same-structured elements along a new first dimension (one batch).

    ``ragged``: the positions (in flattened order) of components whose spec is a
    ``RaggedTensorSpec`` although the elements hold plain tensors (rows of a ragged tensor, as
    TF's ``from_tensor_slices``/``unbatch`` give them): they batch into a ``RaggedTensor``.
    """
    first = elements[0]
    flat_dict = type(first) is dict and all(is_leaf(v) for v in first.values())
    for i, e in enumerate(elements):
        if flat_dict and type(e) is dict and e.keys() == first.keys():
            if all(is_leaf(v) for v in e.values()):
                continue
        if not _same(first, e) and not same_structure(first, e):
            raise ValueError(
                f"Cannot batch elements of different structures: element 0 is "
                f"{structure_of(first)}, element {i} is {structure_of(e)}."
            )
    if type(first) is tuple and all(type(v) is torch.Tensor for v in first):
        columns: Any = zip(*elements)  # a flat tuple of tensors, the usual (x, y) element
    elif type(first) is dict and all(is_leaf(v) for v in first.values()):
        # a flat dict (parsed features): columns by sorted key, as flatten orders them
        columns = [[e[k] for e in elements] for k in sorted(first)]
    elif is_leaf(first):
        columns = [elements]  # one component (a dataset of records, of labels): nothing to walk
    else:
        columns = zip(*(flatten(e) for e in elements))
    cols: list[Any] = []
    for k, parts in enumerate(columns):
        if k in ragged:
            cols.append(ragged_rows(list(parts)))
            continue
        if isinstance(parts[0], COMPOSITES) or isinstance(parts[-1], COMPOSITES):
            cols.append(stack_composites(list(parts)))
            continue
        head = parts[0]
        if type(head) is np.ndarray and head.ndim == 0 and head.dtype == object:
            # 0-d strings (serialized records): one object array, without np.stack's per-part copies
            if all(type(p) is np.ndarray and p.ndim == 0 for p in parts):
                col = np.empty(len(parts), dtype=object)
                col[:] = [p[()] for p in parts]
                cols.append(col)
                continue
        try:
            cols.append(torch.stack(parts) if isinstance(parts[0], torch.Tensor) else np.stack(parts))
        except (RuntimeError, ValueError) as exc:
            shapes = {tuple(p.shape) for p in parts}
            if len(shapes) > 1:
                raise BatchShapeError(
                    f"Cannot batch tensors with different shapes in one component: {sorted(shapes)}. "
                    "Use padded_batch() to pad them to a common shape, or map() them to one shape first."
                ) from None
            raise exc
    return pack_as(first, cols)


def _values_cat(parts: list[Any]) -> Any:
    """Concatenate values along the first axis: torch tensors, string arrays or ragged tensors."""
    if isinstance(parts[0], RaggedTensor):
        return RaggedTensor.from_row_lengths(
            _values_cat([p.values for p in parts]), torch.cat([p.row_lengths() for p in parts])
        )
    if isinstance(parts[0], torch.Tensor):
        return torch.cat(parts)
    return np.concatenate([np.asarray(p, dtype=object) for p in parts])


def stack_composites(parts: list[Any]) -> Any:
    """A batch of sparse or ragged tensors, as TF's ``batch`` makes it.

    Sparse: indices get the batch position in front, the dense shape is the largest of each
    dimension (elements of different dense shapes batch; their ranks must agree). Ragged: one more
    ragged dimension whose rows are the elements.
    """
    kinds = {type(p) for p in parts}
    if len(kinds) != 1:
        raise TypeError(
            "Cannot batch a component that is a SparseTensor or RaggedTensor in some elements and not in "
            f"others. Received types {sorted(k.__name__ for k in kinds)}; map() every element to one kind."
        )
    if isinstance(parts[0], RaggedTensor):
        ranks = {p.ragged_rank for p in parts}
        if len(ranks) != 1:
            raise ValueError(f"Cannot batch RaggedTensors of different ragged ranks {sorted(ranks)}.")
        return RaggedTensor.from_row_lengths(
            _values_cat(parts), torch.tensor([p.nrows_int() for p in parts], dtype=torch.int64)
        )
    ranks = {len(p.dense_shape) for p in parts}
    if len(ranks) != 1:
        raise ValueError(
            f"Cannot batch SparseTensors of different ranks {sorted(ranks)} in one component: TF batches "
            "sparse tensors of one rank (their dense shapes may differ). Reshape them to one rank first."
        )
    counts = torch.tensor([len(p.indices) for p in parts], dtype=torch.int64)
    rows = torch.repeat_interleave(torch.arange(len(parts), dtype=torch.int64), counts)
    indices = torch.cat([rows.reshape(-1, 1), torch.cat([p.indices for p in parts])], dim=1)
    shape = torch.stack([p.dense_shape for p in parts]).amax(dim=0)
    values = _values_cat([p.values for p in parts])
    return SparseTensor._from_parts(indices, values, torch.cat([torch.tensor([len(parts)]), shape]))


def _sparse_row(leaf: SparseTensor, i: int) -> SparseTensor:
    mask = leaf.indices[:, 0] == i
    values = leaf.values[mask] if isinstance(leaf.values, torch.Tensor) else np.asarray(leaf.values)[mask.numpy()]
    return SparseTensor(leaf.indices[mask][:, 1:], values, leaf.dense_shape[1:])


def ragged_rows(rows: list[Any]) -> RaggedTensor:
    """Rows (tensors, string arrays or ragged tensors) as the rows of one ``RaggedTensor``."""
    lengths = [leaf_rows(r) if isinstance(r, COMPOSITES) else len(r) for r in rows]
    return RaggedTensor.from_row_lengths(_values_cat(rows), torch.tensor(lengths, dtype=torch.int64))


def _gather_composite(leaf: SparseTensor | RaggedTensor, index: np.ndarray) -> Any:
    """Rows ``index`` of a sparse or ragged tensor, as one tensor of that kind (a batch of its rows)."""
    rows = [row(leaf, i) for i in index.tolist()]
    if isinstance(leaf, SparseTensor):
        if not rows:
            return SparseTensor(
                leaf.indices[:0], leaf.values[:0], torch.cat([torch.zeros(1, dtype=torch.int64), leaf.dense_shape[1:]])
            )
        out = stack_composites(rows)
        out.dense_shape[1:] = leaf.dense_shape[1:]  # TF keeps the sliced tensor's row shape
        return out
    if not rows:
        return RaggedTensor.from_row_lengths(leaf.values[:0], torch.zeros(0, dtype=torch.int64))
    return ragged_rows(rows)


def leaf_rows(leaf: Leaf) -> int:
    if isinstance(leaf, RaggedTensor):
        return leaf.nrows_int()
    if isinstance(leaf, SparseTensor):
        if len(leaf.dense_shape) == 0:
            raise ValueError("Cannot slice a scalar SparseTensor: it needs a first dimension.")
        return int(leaf.dense_shape[0])
    if leaf.ndim == 0:
        raise ValueError(
            "Cannot slice a scalar: every component must have a first dimension. "
            f"Received a scalar of dtype {leaf.dtype}."
        )
    return int(leaf.shape[0])


def row(leaf: Leaf, i: int) -> Leaf:
    """Row ``i`` of a leaf; a string row stays a numpy array (0-d for a 1-D column); a sparse
    tensor's row is a sparse tensor of one rank less, a ragged tensor's row its values."""
    if isinstance(leaf, torch.Tensor):
        return leaf[i]
    if isinstance(leaf, SparseTensor):
        return _sparse_row(leaf, i)
    if isinstance(leaf, RaggedTensor):
        return leaf[i]
    return np.asarray(leaf[i])


def gather_all(leaves: list[Leaf], index: np.ndarray) -> list[Leaf]:
    """Rows ``index`` (numpy int64) of every leaf, one index operation each; the index becomes a
    tensor once for all of them (a batch loop runs this once per step)."""
    rows: torch.Tensor | None = None
    out: list[Leaf] = []
    for leaf in leaves:
        if isinstance(leaf, COMPOSITES):
            out.append(_gather_composite(leaf, index))
        elif isinstance(leaf, torch.Tensor):
            if rows is None:
                rows = torch.from_numpy(index)
            out.append(leaf.index_select(0, rows))
        else:
            out.append(leaf[index])
    return out


def packer(structure: Any) -> Callable[[list[Any]], Any]:
    """A function ``leaves -> element`` shaped as ``structure`` (:func:`pack_as`, made once).

    The common shapes (one leaf, a flat tuple of leaves) skip the recursive rebuild, which a
    batch loop would otherwise pay on every step.
    """
    if is_leaf(structure):
        return lambda leaves: leaves[0]
    if type(structure) is tuple and all(is_leaf(v) for v in structure):
        return tuple
    return lambda leaves: pack_as(structure, leaves)


def concat(parts: list[Leaf]) -> Leaf:
    if isinstance(parts[0], COMPOSITES):
        return stack_composites([row(p, i) for p in parts for i in range(leaf_rows(p))])
    if isinstance(parts[0], torch.Tensor):
        return torch.cat([p for p in parts if isinstance(p, torch.Tensor)])
    return np.concatenate([p for p in parts if isinstance(p, np.ndarray)])


def user_element(element: Any) -> Any:
    """An element as the user sees it: string leaves become string tensors (``.numpy()``...)."""
    if type(element) is torch.Tensor or (type(element) is tuple and all(type(v) is torch.Tensor for v in element)):
        return element  # the usual numeric element: nothing to look at
    return tree.map_structure(as_string_tensor, element, lists=False)


def to_numpy(leaf: Leaf) -> Any:
    """A leaf as numpy (a scalar becomes a numpy scalar, as ``as_numpy_iterator`` gives); a
    composite tensor stays itself (its parts are tensors with ``.numpy()``)."""
    if isinstance(leaf, COMPOSITES):
        return leaf
    arr = leaf.numpy() if isinstance(leaf, torch.Tensor) else np.asarray(leaf)  # string tensors: plain numpy
    return arr[()] if arr.ndim == 0 else arr
