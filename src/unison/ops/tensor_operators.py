"""Operators between a tensor and a numpy array or list, as TF's: ``y_np - pred`` is a tensor.

TF converts the other operand of ``+ - * / // % ** @ < <= > >= == !=`` to a tensor of the tensor's
dtype (``float32 tensor + float64 array`` is float32; an int32 tensor takes an array's values
as int32), whichever side the tensor is on. torch does neither: ``array + tensor`` raised a
TypeError ("Concatenation operation is not implemented for NumPy arrays"), ``tensor < array``
too, ``tensor == [1, 2]`` was the single ``False`` of Python's identity fallback (TF compares
elementwise), and ``tensor - array`` ran through numpy, which kept numpy's dtype and silently cut the
gradient (a loss ``tf.reduce_mean((model(x) - y_np) ** 2)`` had none). Importing unison makes
these operators of ``torch.Tensor`` convert an ``np.ndarray``, ``list`` or ``tuple`` operand first
(``tf.Variable`` already did); every other operand goes to torch's operator unchanged, so a
symbolic Keras tensor's reflected operator still runs.

Example:
    >>> import numpy as np, unison as tf
    >>> w = tf.Variable([1.0, 2.0])
    >>> with tf.GradientTape() as tape:
    ...     loss = tf.reduce_sum((w * 2 - np.array([0.0, 1.0])) ** 2)
    >>> tape.gradient(loss, w).numpy()
    array([ 8., 12.], dtype=float32)
    >>> (np.array([1, 2]) + tf.constant([0.5, 0.5])).dtype
    torch.float32
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from unison.ops.dtypes import to_tensor

_OPERATORS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
    "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__",
    "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
)  # fmt: skip
_ORIGINALS: dict[str, Callable[..., Any]] = {}


def _operand(other: Any, tensor: torch.Tensor) -> Any:
    """``other`` as a tensor of ``tensor``'s dtype and device (TF's convert_to_tensor(y, dtype=x.dtype))."""
    converted = to_tensor(other, tensor.dtype)
    if isinstance(converted, torch.Tensor) and converted.device != tensor.device:
        converted = converted.to(tensor.device)
    return converted


def _converting(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def operator(self: torch.Tensor, other: Any) -> Any:
        if isinstance(other, (np.ndarray, list, tuple)) and not isinstance(self, np.ndarray):
            try:
                other = _operand(other, self)
            except (TypeError, ValueError):
                pass  # not numbers (strings, ragged lists): torch's own operator says why
        return original(self, other)

    operator.__name__ = operator.__qualname__ = name
    operator.__doc__ = getattr(original, "__doc__", None)
    operator.__module__ = __name__
    return operator


def install() -> None:
    """Make tensors' arithmetic and comparison operators take arrays and lists (idempotent)."""
    for name in _OPERATORS:
        current = getattr(torch.Tensor, name)
        if getattr(current, "__module__", None) == __name__:
            continue
        _ORIGINALS[name] = current
        setattr(torch.Tensor, name, _converting(name, current))
