"""``tf.experimental``: the names of TF's experimental namespace unison implements.

``Optional`` is tf.data's (``tf.data.experimental.Optional`` is the same class); the float8 dtypes
are torch's. ``async_scope``, ``async_clear_error`` and ``function_executor_type`` concern TF's
asynchronous eager executor: unison's ops run synchronously, which is what a program observes
from TF after the scope ends (TF waits for pending ops on exit and raises their errors).

Example:
    >>> import unison as tf
    >>> with tf.experimental.async_scope():
    ...     y = tf.constant(2.0) * 3
    >>> float(y), tf.experimental.Optional.from_value(y).has_value()
    (6.0, True)
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator
from typing import Any

from unison._faces.dispatch import (
    dispatch_for_api,
    dispatch_for_binary_elementwise_apis,
    dispatch_for_unary_elementwise_apis,
    unregister_dispatch_for,
)
from unison._faces.dtypes import float8_e4m3fn, float8_e5m2
from unison._faces.extension_type import ExtensionType, ExtensionTypeSpec
from unison._faces.extension_type import as_dict as _as_dict
from unison.data.dataset import Optional
from unison.ops.ragged_shape import DynamicRaggedShape
from unison.ops.row_partition import RowPartition

__all__ = [
    "DynamicRaggedShape",
    "ExtensionType",
    "ExtensionTypeSpec",
    "Optional",
    "RowPartition",
    "async_clear_error",
    "dlpack",
    "async_scope",
    "dispatch_for_api",
    "dispatch_for_binary_elementwise_apis",
    "dispatch_for_unary_elementwise_apis",
    "extension_type",
    "unregister_dispatch_for",
    "float8_e4m3fn",
    "float8_e5m2",
    "function_executor_type",
]


def to_dlpack(tf_tensor: Any) -> Any:
    """``tf.experimental.dlpack.to_dlpack``: a DLPack capsule sharing the tensor's memory (torch's)."""
    import torch.utils.dlpack

    return torch.utils.dlpack.to_dlpack(tf_tensor)


def from_dlpack(dlcapsule: Any) -> Any:
    """``tf.experimental.dlpack.from_dlpack``: the tensor of a DLPack capsule (sharing its memory)."""
    import torch.utils.dlpack

    return torch.utils.dlpack.from_dlpack(dlcapsule)


dlpack = types.SimpleNamespace(to_dlpack=to_dlpack, from_dlpack=from_dlpack)
extension_type = types.SimpleNamespace(as_dict=_as_dict)  # tf.experimental.extension_type


@contextlib.contextmanager
def async_scope() -> Iterator[None]:
    """``tf.experimental.async_scope``: ops inside may run asynchronously; all are done on exit.

    unison runs each op when called, so every op is done (and has raised its error) on exit, as in TF.
    """
    yield


def async_clear_error() -> None:
    """``tf.experimental.async_clear_error``: forget a pending asynchronous error (unison has none)."""


@contextlib.contextmanager
def function_executor_type(executor_type: Any) -> Iterator[None]:
    """``tf.experimental.function_executor_type``: the executor of ``tf.function`` calls inside.

    unison's functions run the Python function; TF's executor choice does not change results.
    """
    if executor_type is not None and not isinstance(executor_type, str):
        raise TypeError(
            f"function_executor_type expects a string naming the executor or None. Received: {executor_type!r}."
        )
    yield
