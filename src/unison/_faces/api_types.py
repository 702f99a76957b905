"""``tf.types.experimental``: the abstract types TF programs check values against.

``isinstance(f, tf.types.experimental.PolymorphicFunction)`` holds for a ``tf.function``,
``ConcreteFunction`` for what its ``get_concrete_function`` returns, ``TraceType`` for the specs
(``tf.TensorSpec`` & co), ``SupportsTracingProtocol`` for objects with ``__tf_tracing_type__``, and
``TensorLike`` (a ``typing.Union``) for what converts to a tensor. ``FunctionType`` is TF's signature
type, an ``inspect.Signature``.

Example:
    >>> import unison as tf
    >>> isinstance(tf.function(lambda x: x), tf.types.experimental.PolymorphicFunction)
    True
"""

from __future__ import annotations

import abc
import inspect
import types
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np
import torch

from unison.core.function import ConcreteFunction as _EagerConcrete
from unison.core.function import Function
from unison.data.specs import TensorSpec
from unison.distribute.values import Mirrored as _Mirrored
from unison.distribute.values import PerReplica as _PerReplica
from unison.ops import composite_specs

__all__ = ["experimental"]


class Callable(abc.ABC):  # noqa: B024 - an abstract type for isinstance checks, as TF's
    """``tf.types.experimental.Callable``: a TF callable (a ``tf.function`` or a concrete function)."""


class GenericFunction(Callable):
    """``tf.types.experimental.GenericFunction``: a function that traces per input signature."""


class PolymorphicFunction(GenericFunction):
    """``tf.types.experimental.PolymorphicFunction``: what ``tf.function`` returns."""


class ConcreteFunction(Callable):
    """``tf.types.experimental.ConcreteFunction``: what ``get_concrete_function`` returns."""


class AtomicFunction(Callable):
    """``tf.types.experimental.AtomicFunction``: TF's single-graph function (unison has none to offer)."""


class FunctionType(inspect.Signature):
    """``tf.types.experimental.FunctionType``: a function's parameters, an ``inspect.Signature``."""


class TraceType(abc.ABC):  # noqa: B024
    """``tf.types.experimental.TraceType``: the type of a traced value (TF's specs are trace types)."""


@runtime_checkable
class SupportsTracingProtocol(Protocol):
    """``tf.types.experimental.SupportsTracingProtocol``: objects with ``__tf_tracing_type__(context)``."""

    def __tf_tracing_type__(self, context: Any) -> TraceType: ...


TensorLike = Union[torch.Tensor, int, float, bool, str, bytes, complex, tuple, list, np.ndarray, np.generic]  # noqa: UP007 - isinstance needs a typing.Union

PolymorphicFunction.register(Function)
ConcreteFunction.register(_EagerConcrete)
for _spec in (
    TensorSpec,
    composite_specs.SparseTensorSpec,
    composite_specs.RaggedTensorSpec,
    composite_specs.IndexedSlicesSpec,
    composite_specs.TensorArraySpec,
):
    TraceType.register(_spec)

experimental = types.SimpleNamespace(
    AtomicFunction=AtomicFunction,
    Callable=Callable,
    ConcreteFunction=ConcreteFunction,
    FunctionType=FunctionType,
    GenericFunction=GenericFunction,
    PolymorphicFunction=PolymorphicFunction,
    SupportsTracingProtocol=SupportsTracingProtocol,
    TensorLike=TensorLike,
    TraceType=TraceType,
    # the interfaces of TF's per-replica containers; unison's strategies hand out plain tensors
    # (one process per replica, see unison.distribute.values), as TF does with one replica
    distributed=types.SimpleNamespace(Mirrored=_Mirrored, PerReplica=_PerReplica),
)
