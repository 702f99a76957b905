"""TF's attributes on ``torch.Size`` and ``torch.dtype``: ``x.shape.as_list()``, ``x.dtype.name``.

A tensor's ``shape`` is a ``torch.Size`` and ``tf.float32`` *is* ``torch.float32``, so TF programs
stopped at ``x.shape.as_list()``, ``x.shape.rank``, ``x.dtype.name`` or ``dtype.is_floating`` with
an ``AttributeError``. Both are static types of torch's C extension whose attributes Python refuses
to set; importing unison adds TF's missing attributes to their type dictionaries (CPython's
``PyType_Modified`` then drops its attribute cache). Nothing torch defines is replaced (each name
is added only where the type lacks it), so torch's own code sees the types it knows, and a
lookup costs what any attribute lookup costs.

The shape attributes are :class:`~unison.ops.control_flow.TensorShape`'s (an eager shape is fully
known). What stays torch's: ``x.shape == [2, 3]`` is False (a tuple is not a list; TF's
``TensorShape`` compares equal) and ``str(tf.float32)`` is ``"torch.float32"``.

Example:
    >>> import unison as tf
    >>> x = tf.zeros([2, 3])
    >>> x.shape.as_list(), x.shape.rank, x.shape.num_elements()
    ([2, 3], 2, 6)
    >>> x.dtype.name, x.dtype.is_floating, tf.int32.max, tf.uint8.is_unsigned
    ('float32', True, 2147483647, True)
"""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Callable
from typing import Any

import torch

from unison.ops.control_flow import TensorShape

__all__ = ["install"]

# TF's DataType enum (tensorflow/core/framework/types.proto), read by ``dtype.as_datatype_enum``
_ENUMS = {
    torch.float32: 1, torch.float64: 2, torch.int32: 3, torch.uint8: 4, torch.int16: 5, torch.int8: 6,
    torch.complex64: 8, torch.int64: 9, torch.bool: 10, torch.bfloat16: 14, torch.uint16: 17,
    torch.complex128: 18, torch.float16: 19, torch.uint32: 22, torch.uint64: 23,
}  # fmt: skip
_UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def _name(dtype: torch.dtype) -> str:
    """TF's name: ``"float32"``, ``"bfloat16"``, ``"bool"`` (torch's ``str`` without ``torch.``)."""
    return str(dtype).removeprefix("torch.")


def _is_integer(dtype: torch.dtype) -> bool:
    return not dtype.is_floating_point and not dtype.is_complex and dtype is not torch.bool


def _as_numpy_dtype(dtype: torch.dtype) -> type:
    """numpy's scalar type, as TF's ``DType.as_numpy_dtype`` (``np.float32``; bfloat16: ml_dtypes')."""
    if dtype is torch.bfloat16:
        try:
            import ml_dtypes
        except ImportError as exc:  # TF's answer is ml_dtypes' type, which numpy lacks
            raise TypeError(
                "tf.bfloat16.as_numpy_dtype is ml_dtypes.bfloat16, and the ml_dtypes package is not "
                "installed. Install it (pip install ml_dtypes) or convert to float32 first."
            ) from exc
        return ml_dtypes.bfloat16
    return torch.empty(0, dtype=dtype).numpy().dtype.type


def _limit(dtype: torch.dtype, which: str) -> Any:
    if dtype.is_floating_point:
        return float(getattr(torch.finfo(dtype), which))
    if _is_integer(dtype):
        return int(getattr(torch.iinfo(dtype), which))
    raise TypeError(f"Cannot find the {which}imum value of {_name(dtype)} (TF's DType.{which} is for real numbers).")


def _compatible(dtype: torch.dtype, other: Any) -> bool:
    from unison.ops.dtypes import as_dtype

    try:
        return bool(as_dtype(other) == dtype)
    except (TypeError, ValueError):
        return False


_DTYPE_ATTRIBUTES: dict[str, Any] = {
    "name": property(_name),
    "is_floating": property(lambda d: d.is_floating_point),
    "is_integer": property(_is_integer),
    "is_bool": property(lambda d: d is torch.bool),
    "is_unsigned": property(lambda d: d in _UNSIGNED),
    "is_quantized": property(lambda d: False),  # TF's quantized dtypes have no torch counterpart here
    "is_numpy_compatible": property(lambda d: True),
    "as_numpy_dtype": property(_as_numpy_dtype),
    "as_datatype_enum": property(lambda d: _ENUMS.get(d, 0)),
    "size": property(lambda d: d.itemsize),
    "max": property(lambda d: _limit(d, "max")),
    "min": property(lambda d: _limit(d, "min")),
    "limits": lambda d, clip_negative=True: (0 if clip_negative and d in _UNSIGNED else _limit(d, "min"), _limit(d, "max")),
    "base_dtype": property(lambda d: d),
    "real_dtype": property(lambda d: d.to_real() if d.is_complex else d),
    "is_compatible_with": _compatible,
}  # fmt: skip


def _shape_method(name: str) -> Callable[..., Any]:
    def method(self: torch.Size, *args: Any) -> Any:
        return getattr(TensorShape(self), name)(*args)

    method.__name__ = name
    method.__doc__ = getattr(TensorShape, name).__doc__
    return method


_SIZE_ATTRIBUTES: dict[str, Any] = {
    "rank": property(len),
    "ndims": property(len),
    "dims": property(list),
    "as_list": lambda s: list(s),
    **{
        name: _shape_method(name)
        for name in (
            "is_fully_defined", "num_elements", "is_compatible_with", "assert_is_compatible_with",
            "concatenate", "merge_with",
        )
    },
}  # fmt: skip


def _add(cls: type, attributes: dict[str, Any]) -> None:
    """Add ``attributes`` to a static extension type, skipping any name it already has."""
    missing = {name: value for name, value in attributes.items() if not hasattr(cls, name)}
    if not missing:
        return
    # The mapping proxy of cls.__dict__ refers to the type's real dictionary: the one object it holds.
    (namespace,) = (d for d in gc.get_referents(cls.__dict__) if isinstance(d, dict))
    namespace.update(missing)
    ctypes.pythonapi.PyType_Modified(ctypes.py_object(cls))


def install() -> None:
    """Give ``torch.Size`` and ``torch.dtype`` TF's ``TensorShape``/``DType`` attributes (idempotent)."""
    _add(torch.dtype, _DTYPE_ATTRIBUTES)
    _add(torch.Size, _SIZE_ATTRIBUTES)
