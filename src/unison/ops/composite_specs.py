"""The specs of the composite values: ``tf.SparseTensorSpec``, ``tf.RaggedTensorSpec``,
``tf.IndexedSlicesSpec`` and ``tf.TensorArraySpec``.

Each describes a value by dtype and (possibly partial) shape, as TF's do: ``is_compatible_with``
takes a value or a spec, ``from_value`` gives the spec of a value, specs compare equal by content,
and ``tf.function(input_signature=[...])`` checks arguments against them (``_unison_mismatch``).

Example:
    >>> import unison as tf
    >>> spec = tf.RaggedTensorSpec([None, None], tf.int32)
    >>> spec.ragged_rank, spec.is_compatible_with(tf.ragged.constant([[1, 2], [3]]))
    (1, True)
"""

from __future__ import annotations

import abc
from typing import Any

import torch

from unison.ops.control_flow import TensorShape
from unison.ops.dtypes import as_dtype
from unison.ops.indexed_slices import IndexedSlices
from unison.ops.ragged_tensor import RaggedTensor
from unison.ops.sparse_tensor import SparseTensor
from unison.ops.tensor_array import TensorArray


def _dtype_repr(dtype: Any) -> str:
    return "tf." + (dtype.name if hasattr(dtype, "name") and not isinstance(dtype, torch.dtype) else str(dtype)[6:])


def _shapes_fit(want: TensorShape, have: TensorShape) -> bool:
    if want.rank is None or have.rank is None:
        return True
    return want.rank == have.rank and all(
        a is None or b is None or a == b for a, b in zip(want.as_list(), have.as_list())
    )


class _Spec(abc.ABC):
    """What the four specs share: ``shape``, ``dtype``, equality, ``is_compatible_with``."""

    value_type: type = object
    _shape: TensorShape
    _dtype: Any

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> Any:
        return self._dtype

    def _key(self) -> tuple[Any, ...]:
        return (self._shape.as_list() if self._shape.rank is not None else None, str(self._dtype))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Spec) and type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self._key())))

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        """Whether a value (or spec) of the same kind fits this dtype and shape."""
        other = spec_or_value if isinstance(spec_or_value, _Spec) else self._of(spec_or_value)
        return other is not None and type(other) is type(self) and self._fits(other)

    def _fits(self, other: Any) -> bool:
        return other.dtype == self.dtype and _shapes_fit(self.shape, other.shape)

    def _of(self, value: Any) -> Any:
        return type(self).from_value(value) if isinstance(value, self.value_type) else None

    @classmethod
    @abc.abstractmethod
    def from_value(cls, value: Any) -> Any:
        """The spec of ``value``."""

    def _unison_mismatch(self, value: Any) -> str | None:
        """Why ``value`` does not fit (for tf.function's input_signature), or None."""
        if self.is_compatible_with(value):
            return None
        return f"{type(value).__name__} does not match {self!r}"


class SparseTensorSpec(_Spec):
    """``tf.SparseTensorSpec(shape=None, dtype=tf.float32)``."""

    value_type = SparseTensor

    def __init__(self, shape: Any = None, dtype: Any = torch.float32) -> None:
        self._shape, self._dtype = TensorShape(shape), as_dtype(dtype)

    @classmethod
    def from_value(cls, value: Any) -> SparseTensorSpec:
        return cls(value.shape, value.dtype)

    def __repr__(self) -> str:
        return f"SparseTensorSpec({self._shape!r}, {_dtype_repr(self._dtype)})"


class RaggedTensorSpec(_Spec):
    """``tf.RaggedTensorSpec(shape=None, dtype=tf.float32, ragged_rank=None, row_splits_dtype=tf.int64,
    flat_values_spec=None)``; ``ragged_rank`` defaults to ``rank - 1``."""

    value_type = RaggedTensor

    def __init__(
        self,
        shape: Any = None,
        dtype: Any = torch.float32,
        ragged_rank: int | None = None,
        row_splits_dtype: Any = torch.int64,
        flat_values_spec: Any = None,
    ) -> None:
        self._shape, self._dtype = TensorShape(shape), as_dtype(dtype)
        if ragged_rank is None:
            if self._shape.rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = self._shape.rank - 1
        self._ragged_rank = int(ragged_rank)
        self._row_splits_dtype = as_dtype(row_splits_dtype)
        self._flat_values_spec = flat_values_spec

    @property
    def ragged_rank(self) -> int:
        return self._ragged_rank

    @property
    def row_splits_dtype(self) -> Any:
        return self._row_splits_dtype

    @property
    def flat_values_spec(self) -> Any:
        return self._flat_values_spec

    def _key(self) -> tuple[Any, ...]:
        return super()._key() + (self._ragged_rank,)

    def _fits(self, other: Any) -> bool:
        return super()._fits(other) and other.ragged_rank == self.ragged_rank

    @classmethod
    def from_value(cls, value: Any) -> RaggedTensorSpec:
        return cls(value.shape, value.dtype, value.ragged_rank)

    def __repr__(self) -> str:
        return (
            f"RaggedTensorSpec({self._shape!r}, {_dtype_repr(self._dtype)}, {self._ragged_rank}, "
            f"{_dtype_repr(self._row_splits_dtype)})"
        )


class IndexedSlicesSpec(_Spec):
    """``tf.IndexedSlicesSpec(shape=None, dtype=tf.float32, indices_dtype=tf.int64,
    dense_shape_dtype=None, indices_shape=None)``."""

    value_type = IndexedSlices

    def __init__(
        self,
        shape: Any = None,
        dtype: Any = torch.float32,
        indices_dtype: Any = torch.int64,
        dense_shape_dtype: Any = None,
        indices_shape: Any = None,
    ) -> None:
        self._shape, self._dtype = TensorShape(shape), as_dtype(dtype)
        self._indices_dtype = as_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else as_dtype(dense_shape_dtype)
        self._indices_shape = TensorShape([None] if indices_shape is None else indices_shape)

    @classmethod
    def from_value(cls, value: Any) -> IndexedSlicesSpec:
        dense = None if value.dense_shape is None else value.dense_shape.dtype
        return cls(value.shape, value.dtype, value.indices.dtype, dense, list(value.indices.shape))

    def __repr__(self) -> str:
        dense = "None" if self._dense_shape_dtype is None else _dtype_repr(self._dense_shape_dtype)
        return (
            f"IndexedSlicesSpec({self._shape!r}, {_dtype_repr(self._dtype)}, {_dtype_repr(self._indices_dtype)}, "
            f"{dense}, {self._indices_shape!r})"
        )


class TensorArraySpec(_Spec):
    """``tf.TensorArraySpec(element_shape=None, dtype=tf.float32, dynamic_size=False, infer_shape=True)``."""

    value_type = TensorArray

    def __init__(
        self,
        element_shape: Any = None,
        dtype: Any = torch.float32,
        dynamic_size: bool = False,
        infer_shape: bool = True,
    ) -> None:
        self._shape, self._dtype = TensorShape(element_shape), as_dtype(dtype)
        self._dynamic_size, self._infer_shape = bool(dynamic_size), bool(infer_shape)

    def _key(self) -> tuple[Any, ...]:
        return super()._key() + (self._dynamic_size, self._infer_shape)

    def _fits(self, other: Any) -> bool:
        return super()._fits(other) and other._dynamic_size == self._dynamic_size

    @classmethod
    def from_value(cls, value: Any) -> TensorArraySpec:
        return cls(value.element_shape, value.dtype, value.dynamic_size, value._infer_shape)

    def __repr__(self) -> str:
        return (
            f"TensorArraySpec({self._shape!r}, {_dtype_repr(self._dtype)}, {self._dynamic_size}, {self._infer_shape})"
        )


__all__ = ["IndexedSlicesSpec", "RaggedTensorSpec", "SparseTensorSpec", "TensorArraySpec"]
