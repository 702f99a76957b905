"""Keras 3's conversion and dtype rules for ``keras.ops``, over torch tensors.

Keras names dtypes by strings (``"float32"``); a Python ``int`` becomes ``int32`` and a Python
``float`` becomes ``floatx()`` (torch would pick ``int64`` and its default dtype), numpy arrays keep
their dtype, and tensors (``unison.Variable`` and layer weights included) pass through untouched so
autograd still sees them.

Example:
    >>> tensor([1, 2]).dtype, tensor(1.5).dtype, standardize_dtype(torch.int64)
    (torch.int32, torch.float32, 'int64')
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
import torch

from unison.ops.dtypes import from_numpy

_NAMES: dict[torch.dtype, str] = {
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
    torch.float64: "float64",
    torch.int8: "int8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.uint8: "uint8",
    torch.uint16: "uint16",
    torch.uint32: "uint32",
    torch.uint64: "uint64",
    torch.bool: "bool",
    torch.complex64: "complex64",
    torch.complex128: "complex128",
}
_BY_NAME: dict[str, torch.dtype] = {name: dtype for dtype, name in _NAMES.items()}
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "int": "int32"}


def floatx() -> str:
    """Keras's ``floatx()``: the default float dtype, which is torch's default dtype."""
    return _NAMES[torch.get_default_dtype()]


def standardize_dtype(dtype: Any) -> str:
    """Keras's ``standardize_dtype``: the dtype's name (``"float32"``); ``None`` means ``floatx()``.

    Accepts torch and numpy dtypes, names, Python ``int``/``float``/``bool`` and ``tf.float32``-style
    dtypes. Example: ``standardize_dtype(np.float64)`` is ``"float64"``.
    """
    if dtype is None:
        return floatx()
    if dtype is builtins.int:
        return "int32"
    if dtype is builtins.float:
        return floatx()
    if dtype is builtins.bool:
        return "bool"
    if isinstance(dtype, torch.dtype):
        if dtype in _NAMES:
            return _NAMES[dtype]
    elif isinstance(dtype, str):
        name = _ALIASES.get(dtype, dtype)
        if name in _BY_NAME:
            return name
    else:
        attr = getattr(dtype, "name", None)
        if isinstance(attr, str) and _ALIASES.get(attr, attr) in _BY_NAME:
            return _ALIASES.get(attr, attr)
        try:
            np_name = np.dtype(dtype).name
        except TypeError:
            np_name = ""
        if np_name in _BY_NAME:
            return np_name
    raise ValueError(
        f"Invalid dtype: {dtype!r}. Expected a dtype name such as 'float32', 'int32' or 'bool' "
        f"(one of {sorted(_BY_NAME)}), a torch/numpy dtype, or None for floatx()."
    )


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype for any dtype :func:`standardize_dtype` accepts."""
    if isinstance(dtype, torch.dtype):
        return dtype
    return _BY_NAME[standardize_dtype(dtype)]


def _python_dtype(value: Any) -> torch.dtype | None:
    # Keras: bool -> bool, int -> int32, float -> floatx, for scalars and (nested) lists.
    if isinstance(value, builtins.bool):
        return torch.bool
    if isinstance(value, builtins.int):
        return torch.int32
    if isinstance(value, builtins.float):
        return torch.get_default_dtype()
    if isinstance(value, (list, tuple)):
        found = [_python_dtype(v) for v in value]
        if any(d is not None and d.is_floating_point for d in found):
            return torch.get_default_dtype()
        if found and all(d == torch.int32 for d in found):
            return torch.int32
    return None


def tensor(x: Any, dtype: Any = None) -> torch.Tensor:
    """Keras's ``convert_to_tensor``: ``x`` as a torch tensor (no copy for a tensor of that dtype)."""
    target = None if dtype is None else torch_dtype(dtype)
    if isinstance(x, torch.Tensor):
        return x if target is None or x.dtype == target else x.to(target)
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "OUS":
            raise TypeError(
                f"keras.ops works on numeric tensors. Received a numpy array of dtype {x.dtype} "
                "(strings); encode the text to numbers first (e.g. with layers.TextVectorization)."
            )
        out = _on_default_device(from_numpy(x))
        return out if target is None else out.to(target)
    if isinstance(x, np.generic):
        out = torch.as_tensor(np.asarray(x))
        return out if target is None else out.to(target)
    if hasattr(x, "__array__") and not isinstance(x, (list, tuple)):
        return tensor(np.asarray(x), dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in x):
        return torch.stack([tensor(v, dtype) for v in x])
    if isinstance(x, (list, tuple)) and any(isinstance(v, np.ndarray) for v in x):
        # ops.convert_to_tensor([image]) with numpy images: one array first, keeping numpy's dtype.
        return tensor(np.asarray(x), dtype)
    try:
        return torch.as_tensor(x, dtype=target if target is not None else _python_dtype(x))
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(
            f"keras.ops could not convert {type(x).__name__} {x!r:.80} to a tensor ({exc}). "
            "Pass a tensor, a numpy array, a number or a (nested) list of numbers."
        ) from None


def _on_default_device(t: torch.Tensor) -> torch.Tensor:
    # Inside `with torch.device("cuda")` (Keras's torch backend places new tensors on the default
    # device) numpy data follows; torch.from_numpy itself always gives CPU tensors.
    device = torch.get_default_device()
    return t if device.type == "cpu" else t.to(device)


def same_device(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """``tensors`` with CPU ones moved to the device of the first accelerator tensor (numpy operands
    meeting GPU tensors), as Keras converts every operand to the backend's device."""
    device = next((t.device for t in tensors if t.device.type != "cpu"), None)
    if device is None:
        return tensors
    return [t if t.device == device or t.dim() == 0 and t.device.type == "cpu" else t.to(device) for t in tensors]


def pair(x1: Any, x2: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """Two operands as tensors; a Python number is 'weak' and takes the other operand's kind.

    ``int32 tensor + 2`` stays int32 and ``int32 tensor + 2.5`` becomes floatx, as in Keras.
    """
    a_weak = isinstance(x1, (builtins.int, builtins.float)) and not isinstance(x1, builtins.bool)
    b_weak = isinstance(x2, (builtins.int, builtins.float)) and not isinstance(x2, builtins.bool)
    if a_weak and not b_weak:
        b = tensor(x2)
        return _weak(x1, b), b
    if b_weak and not a_weak:
        a = tensor(x1)
        return a, _weak(x2, a)
    a, b = same_device([tensor(x1), tensor(x2)])
    return a, b


def _weak(value: builtins.int | builtins.float, other: torch.Tensor) -> torch.Tensor:
    if isinstance(value, builtins.float) and not (other.is_floating_point() or other.is_complex()):
        return torch.tensor(value, dtype=torch.get_default_dtype(), device=other.device)
    if other.dtype == torch.bool:
        return torch.tensor(value, dtype=torch.int32 if isinstance(value, builtins.int) else None, device=other.device)
    return torch.tensor(value, dtype=other.dtype, device=other.device)


def float_of(t: torch.Tensor) -> torch.Tensor:
    """``t`` itself when it is float or complex, else ``t`` as floatx (Keras's rule for ``mean``, ``sqrt``...)."""
    return t if t.is_floating_point() or t.is_complex() else t.to(torch.get_default_dtype())


def axes(axis: Any, ndim: int, fn: str) -> tuple[int, ...] | None:
    """An ``axis=`` argument (None, an int or a sequence) as a tuple of non-negative ints, checked."""
    if axis is None:
        return None
    if isinstance(axis, torch.Tensor):
        axis = axis.tolist()
    items = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    out = []
    for a in items:
        if isinstance(a, builtins.bool) or not isinstance(a, (builtins.int, np.integer)):
            raise TypeError(f"keras.ops.{fn}: axis must be an int or a tuple of ints. Received: axis={axis!r}")
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise ValueError(
                f"keras.ops.{fn}: axis {a} is out of range for a tensor of rank {ndim}. "
                f"Received: axis={axis!r}; expected values in [{-ndim}, {ndim})."
            )
        out.append(int(a) % builtins.max(ndim, 1))
    return tuple(out)


def shape_tuple(shape: Any, fn: str) -> tuple[int, ...]:
    """A shape argument (an int, a sequence or a 1-D tensor) as a tuple of ints."""
    if isinstance(shape, torch.Tensor):
        shape = shape.tolist()
    if isinstance(shape, (builtins.int, np.integer)) and not isinstance(shape, builtins.bool):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise TypeError(
            f"keras.ops.{fn}: shape must be an int or a sequence of ints. Received: shape={shape!r}"
        ) from None
