"""``tf.TypeSpec``, ``tf.type_spec_from_value``, ``tf.NoneTensorSpec`` and ``tf.OptionalSpec``:
the types of values, over the specs of ``data`` (TensorSpec, DatasetSpec) and ``ops`` (the composites).

Example:
    >>> import unison as tf
    >>> spec = tf.type_spec_from_value(tf.constant([1, 2]))
    >>> isinstance(spec, tf.TypeSpec), list(spec.shape), spec.dtype
    (True, [2], torch.int32)
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np
import torch

from unison.data.dataset import Dataset, Optional
from unison.data.experimental_more import DatasetSpec, IteratorSpec
from unison.data.specs import TensorSpec
from unison.ops import composite_specs
from unison.ops.dtypes import to_tensor
from unison.ops.ragged import RaggedTensor
from unison.ops.sparse import SparseTensor

__all__ = ["NoneTensorSpec", "OptionalSpec", "TypeSpec", "type_spec_from_value"]


class TypeSpec(abc.ABC):  # noqa: B024 - TF's abstract base of every spec, for isinstance checks
    """``tf.TypeSpec``: the base type of ``tf.TensorSpec``, ``tf.RaggedTensorSpec``, ``tf.data.DatasetSpec``, ..."""


class NoneTensorSpec(TypeSpec):
    """``tf.NoneTensorSpec``: the spec of ``None`` inside a structure of values."""

    @property
    def value_type(self) -> type:
        return type(None)

    def is_compatible_with(self, other: Any) -> bool:
        return other is None or isinstance(other, NoneTensorSpec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoneTensorSpec)

    def __hash__(self) -> int:
        return hash("NoneTensorSpec")

    def __repr__(self) -> str:
        return "NoneTensorSpec()"


class OptionalSpec(TypeSpec):
    """``tf.OptionalSpec(element_spec)``: the spec of a ``tf.experimental.Optional``."""

    def __init__(self, element_spec: Any) -> None:
        self._element_spec = element_spec

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    @property
    def value_type(self) -> type:
        return Optional

    @staticmethod
    def from_value(value: Optional) -> OptionalSpec:
        if not isinstance(value, Optional):
            raise TypeError(
                f"OptionalSpec.from_value takes a tf.experimental.Optional. Received: {type(value).__name__}."
            )
        return OptionalSpec(type_spec_from_value(value.get_value()) if value.has_value() else NoneTensorSpec())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OptionalSpec) and self._element_spec == other._element_spec

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        return f"OptionalSpec({self._element_spec!r})"


for _spec in (
    TensorSpec,
    DatasetSpec,
    IteratorSpec,
    composite_specs.SparseTensorSpec,
    composite_specs.RaggedTensorSpec,
    composite_specs.IndexedSlicesSpec,
    composite_specs.TensorArraySpec,
):
    TypeSpec.register(_spec)


def type_spec_from_value(value: Any) -> Any:
    """``tf.type_spec_from_value``: the spec of a tensor, composite tensor, dataset or convertible value.

    Example:
        >>> type_spec_from_value(3.0).dtype
        torch.float32
    """
    if isinstance(value, TypeSpec):
        raise TypeError(f"Could not build a TypeSpec for {value!r}: it is a spec already.")
    spec = getattr(type(value), "_type_spec", None)
    if isinstance(spec, property):  # an extension type's value: its Spec
        return value._type_spec
    if isinstance(value, Dataset):
        return DatasetSpec.from_value(value)
    if isinstance(value, RaggedTensor):
        return composite_specs.RaggedTensorSpec.from_value(value)
    if isinstance(value, SparseTensor):
        return composite_specs.SparseTensorSpec.from_value(value)
    if isinstance(value, Optional):
        return OptionalSpec.from_value(value)
    if value is None:
        return NoneTensorSpec()
    if isinstance(value, (dict, set)):
        raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type {type(value)}.")
    try:
        tensor = value if isinstance(value, (torch.Tensor, np.ndarray)) else to_tensor(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type {type(value)}.") from error
    return TensorSpec.from_tensor(tensor if isinstance(tensor, torch.Tensor) else to_tensor(tensor))
