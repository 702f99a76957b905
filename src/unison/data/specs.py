"""``TensorSpec``: the shape and dtype of one component of an element (TF's ``tf.TensorSpec``).

A dimension of ``None`` matches any size. ``dtype`` is a torch dtype, or ``"string"`` for
string components (held as numpy arrays). TF dtype names (``"float32"``, ``"int64"``) are
accepted and turned into torch dtypes.

Example:
    >>> import torch
    >>> spec = TensorSpec(shape=(None, 2), dtype=torch.float32)
    >>> spec.is_compatible_with(torch.zeros(5, 2))
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from unison.ops.composite_specs import RaggedTensorSpec, SparseTensorSpec
from unison.ops.ragged_tensor import RaggedTensor
from unison.ops.sparse_tensor import SparseTensor

STRING = "string"


class DataSparseTensorSpec(SparseTensorSpec):
    """``tf.SparseTensorSpec`` of a dataset component: batching adds a leading dimension."""

    def with_leading(self, size: int | None) -> DataSparseTensorSpec:
        return DataSparseTensorSpec([size, *self.shape.as_list()], self.dtype)

    def without_leading(self) -> DataSparseTensorSpec:
        return DataSparseTensorSpec(self.shape.as_list()[1:], self.dtype)


class DataRaggedTensorSpec(RaggedTensorSpec):
    """``tf.RaggedTensorSpec`` of a dataset component: batching adds an outer ragged dimension."""

    def with_leading(self, size: int | None) -> DataRaggedTensorSpec:
        return DataRaggedTensorSpec([size, *self.shape.as_list()], self.dtype, self.ragged_rank + 1)

    def without_leading(self) -> DataRaggedTensorSpec:
        return DataRaggedTensorSpec(self.shape.as_list()[1:], self.dtype, max(self.ragged_rank - 1, 0))


def composite_spec(value: SparseTensor | RaggedTensor) -> SparseTensorSpec | RaggedTensorSpec:
    """The spec of a sparse or ragged component (its shape as this element has it)."""
    if isinstance(value, SparseTensor):
        return DataSparseTensorSpec(value.shape, value.dtype)
    return DataRaggedTensorSpec(value.shape, value.dtype, value.ragged_rank)


def _dtype(dtype: Any) -> torch.dtype | str:
    if isinstance(dtype, torch.dtype) or dtype == STRING:
        return dtype
    if dtype is str or dtype is bytes:
        return STRING
    name = getattr(dtype, "name", dtype)
    if isinstance(name, str):
        if name in ("string", "str", "bytes"):
            return STRING
        found = getattr(torch, name, None)
        if isinstance(found, torch.dtype):
            return found
    try:
        return torch.from_numpy(np.zeros(0, dtype=np.dtype(dtype))).dtype
    except (TypeError, ValueError):
        raise TypeError(
            f"Unknown dtype {dtype!r}. Expected a torch dtype (torch.float32), a numpy "
            "dtype, a TF dtype name ('float32', 'int64') or 'string'."
        ) from None


class TensorSpec:
    """Describes a tensor: ``shape`` (``None`` = unknown dimension), ``dtype`` and ``name``."""

    def __init__(
        self, shape: Iterable[int | None] | None = None, dtype: Any = torch.float32, name: str | None = None
    ) -> None:
        self.shape = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        self.dtype = _dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, value: Any, name: str | None = None) -> Any:
        """The spec of a tensor or string array; of a ``SparseTensor`` or ``RaggedTensor``, its
        ``tf.SparseTensorSpec``/``tf.RaggedTensorSpec`` (what ``element_spec`` shows, as in TF)."""
        if isinstance(value, (SparseTensor, RaggedTensor)):
            return composite_spec(value)
        if isinstance(value, torch.Tensor):
            return cls(tuple(value.shape), value.dtype, name)
        arr = np.asarray(value)
        return cls(arr.shape, STRING if arr.dtype.kind in "USO" else arr.dtype, name)

    def is_compatible_with(self, value: Any) -> bool:
        """True when ``value`` (a tensor, array or spec) fits this spec's dtype and shape."""
        other = value if isinstance(value, TensorSpec) else TensorSpec.from_tensor(value)
        if other.dtype != self.dtype:
            return False
        if self.shape is None or other.shape is None:
            return True
        return len(self.shape) == len(other.shape) and all(
            a is None or b is None or a == b for a, b in zip(self.shape, other.shape)
        )

    def with_leading(self, size: int | None) -> TensorSpec:
        return TensorSpec(None if self.shape is None else (size, *self.shape), self.dtype, self.name)

    def without_leading(self) -> TensorSpec:
        """The spec of one row (what ``unbatch`` yields)."""
        return TensorSpec(None if self.shape is None else self.shape[1:], self.dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (
            other.shape,
            other.dtype,
            other.name,
        )

    def __hash__(self) -> int:
        return hash((self.shape, str(self.dtype), self.name))

    def __repr__(self) -> str:
        dtype = "tf.string" if self.dtype == STRING else str(self.dtype).replace("torch.", "tf.")
        return f"TensorSpec(shape={self.shape}, dtype={dtype}, name={self.name!r})"
