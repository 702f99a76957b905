"""TF's dtypes (``tf.float32``, ...) as torch dtypes, and TF's rules for turning values into tensors.

``tf.float32`` *is* ``torch.float32``: a value built here is a plain ``torch.Tensor``. TF's
inference differs from torch's in one place that changes results: a Python ``int`` becomes
``int32`` (torch: ``int64``); Python floats become ``float32`` in both; numpy arrays keep their
dtype. torch has no string tensors: ``tf.string`` values are numpy arrays of Python ``str``.

Example:
    >>> import unison as tf
    >>> tf.constant(3).dtype, tf.constant(3.0).dtype, tf.constant([True]).dtype
    (torch.int32, torch.float32, torch.bool)
    >>> tf.constant(["a", "b"]).dtype == tf.string.as_numpy_dtype
    True
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
import torch

float16 = half = torch.float16
float32 = torch.float32
float64 = double = torch.float64
bfloat16 = torch.bfloat16
int8 = torch.int8
int16 = torch.int16
int32 = torch.int32
int64 = torch.int64
uint8 = torch.uint8
# torch keeps few kernels for the wider unsigned types; TF has few too (casts, constants, bit ops)
uint16 = torch.uint16
uint32 = torch.uint32
uint64 = torch.uint64
bool = torch.bool
complex64 = torch.complex64
complex128 = torch.complex128


class StringDType:
    """``tf.string``: strings live in numpy arrays of ``str`` (torch has no string tensors)."""

    name = "string"
    as_numpy_dtype = np.dtype(object)
    # numpy reads a `dtype` attribute when it converts an object to a dtype: so a string
    # tensor's dtype (numpy's object dtype) compares equal to tf.string, and np.dtype(tf.string)
    # is the object dtype.
    dtype = np.dtype(object)

    def __eq__(self, other: object) -> builtins.bool:
        # tf.data's specs spell the dtype "string": `spec.dtype == tf.string` holds, as in TF
        return (
            isinstance(other, StringDType)
            or (isinstance(other, np.dtype) and other == np.dtype(object))
            or (isinstance(other, str) and other == "string")
        )

    def __hash__(self) -> int:
        return hash("tf.string")

    def __repr__(self) -> str:
        return "tf.string"


string = StringDType()


class OpaqueDType:
    """``tf.resource`` / ``tf.variant``: TF's dtypes of handles and of opaque variant values.

    They have no numbers and no numpy form; unison's values never carry them (its variables are
    torch tensors, its composite values Python objects), so these objects exist for programs that
    name or compare them, with TF's attributes.
    """

    is_numpy_compatible = False
    is_floating = is_integer = is_bool = is_complex = is_quantized = is_unsigned = False
    size = 0

    def __init__(self, name: str, number: int) -> None:
        self.name = name
        self.as_datatype_enum = number

    @property
    def base_dtype(self) -> OpaqueDType:
        return self

    @property
    def real_dtype(self) -> OpaqueDType:
        return self

    def __eq__(self, other: object) -> builtins.bool:
        return other is self or (isinstance(other, str) and other == self.name)

    def __hash__(self) -> int:
        return hash(("tf", self.name))

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __str__(self) -> str:
        return f"<dtype: '{self.name}'>"


resource = OpaqueDType("resource", 20)
variant = OpaqueDType("variant", 21)

DType = torch.dtype

_BY_NAME: dict[str, Any] = {
    "float16": float16,
    "half": float16,
    "float32": float32,
    "float": float32,
    "float64": float64,
    "double": float64,
    "bfloat16": bfloat16,
    "int8": int8,
    "int16": int16,
    "int32": int32,
    "int64": int64,
    "uint8": uint8,
    "uint16": uint16,
    "uint32": uint32,
    "uint64": uint64,
    "bool": torch.bool,
    "complex64": complex64,
    "complex128": complex128,
    "string": string,
    "resource": resource,
    "variant": variant,
}


def as_dtype(type_value: Any) -> Any:
    """``tf.as_dtype``: a torch dtype (or ``tf.string``) from a dtype, a numpy dtype or a name."""
    if isinstance(type_value, (torch.dtype, StringDType, OpaqueDType)):
        return type_value
    if isinstance(type_value, str) and type_value in _BY_NAME:
        return _BY_NAME[type_value]
    try:
        np_dtype = np.dtype(type_value)
    except TypeError:
        np_dtype = None
    if np_dtype is not None:
        if np_dtype.kind in "OUS":
            return string
        if np_dtype.name in _BY_NAME:
            return _BY_NAME[np_dtype.name]
    raise TypeError(
        f"Cannot convert {type_value!r} to a dtype. Expected one of tf.float32, tf.int64, "
        f"... or a name among {sorted(_BY_NAME)}."
    )


def _infer(value: Any) -> torch.dtype | None:
    # TF's defaults for Python values: int -> int32, float -> float32 (torch would pick int64).
    if isinstance(value, builtins.bool):
        return torch.bool
    if isinstance(value, int):
        # as TF: int32 unless a value does not fit it (tf.constant(2**40) is int64)
        return torch.int32 if -(2**31) <= value < 2**31 else torch.int64
    if isinstance(value, float):
        return torch.float32
    if isinstance(value, (list, tuple)) and value:
        kinds = {_infer(v) for v in value}
        if torch.float32 in kinds:
            return torch.float32
        if kinds == {torch.int32}:
            return torch.int32
        if kinds <= {torch.int32, torch.int64}:
            return torch.int64
    return None


def is_string_value(value: Any) -> builtins.bool:
    """True for a str/bytes, a (nested) list of them, or a numpy array of strings."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "OUS" and (value.size == 0 or isinstance(value.flat[0], (str, bytes)))
    if isinstance(value, (list, tuple)) and value:
        return is_string_value(value[0])
    return False


def from_numpy(array: np.ndarray) -> torch.Tensor:
    """A tensor sharing ``array``'s memory when it may, else a copy (no torch warning).

    torch warns (``The given NumPy array is not writable``) on read-only arrays, which are common
    (pandas' ``.values``, ``np.frombuffer``, memory maps): those are copied, as TF copies them.

    Example:
        >>> import numpy as np
        >>> a = np.arange(3.0)
        >>> a.flags.writeable = False
        >>> from_numpy(a).tolist()
        [0.0, 1.0, 2.0]
    """
    array = np.ascontiguousarray(array) if array.ndim else np.array(array)
    if not array.flags.writeable:
        array = array.copy()
    return torch.from_numpy(array)


def as_torch(value: Any, dtype: torch.dtype | None = None, device: Any = None) -> torch.Tensor:
    """``torch.as_tensor(value, dtype, device)``, copying read-only numpy arrays instead of warning."""
    if isinstance(value, np.ndarray):
        tensor = from_numpy(value)
    elif isinstance(value, torch.Tensor):
        tensor = value
    else:
        return torch.as_tensor(value, dtype=dtype, device=device)
    return tensor if dtype is None and device is None else tensor.to(device=device, dtype=dtype)


# TF's registry of conversion functions (a process-wide table in TF too), lowest priority first
_CONVERSIONS: list[tuple[type | builtins.tuple[type, ...], Any]] = []
_PRIORITIES: list[int] = []


def register_tensor_conversion_function(base_type: Any, conversion_func: Any, priority: int = 100) -> None:
    """``tf.register_tensor_conversion_function``: ``conversion_func(value, dtype, name, as_ref)`` converts
    instances of ``base_type`` in ``tf.convert_to_tensor`` (and every op's arguments).

    A function may return ``NotImplemented`` to let the next one try, as in TF. Python numbers,
    numpy values and tensors cannot be given a new conversion (TF refuses them too).

    Example:
        >>> class Meters:
        ...     def __init__(self, v):
        ...         self.v = v
        >>> register_tensor_conversion_function(Meters, lambda x, dtype=None, name=None, as_ref=False: to_tensor(x.v))
        >>> to_tensor(Meters(2.5)).item()
        2.5
    """
    bases = base_type if isinstance(base_type, builtins.tuple) else (base_type,)
    if not all(isinstance(b, type) for b in bases):
        raise TypeError(
            f"register_tensor_conversion_function: base_type must be a type or a tuple of types. Received: {base_type!r}."
        )
    refused = (int, float, complex, np.ndarray, np.generic, torch.Tensor)
    if any(issubclass(b, refused) for b in bases):
        raise TypeError(
            f"Cannot register conversions for Python numeric types, NumPy scalars and arrays or tensors. Received: {base_type!r}."
        )
    if not callable(conversion_func):
        raise TypeError(
            f"register_tensor_conversion_function: conversion_func must be callable. Received: {conversion_func!r}."
        )
    at = builtins.sum(1 for p in _PRIORITIES if p <= priority)
    _PRIORITIES.insert(at, priority)
    _CONVERSIONS.insert(at, (bases, conversion_func))


def _holds_tensor(value: Any) -> builtins.bool:
    """Whether a (nested) list or tuple has a torch tensor among its items."""
    if not isinstance(value, (list, tuple)):
        return False
    return any(isinstance(v, torch.Tensor) or (isinstance(v, (list, tuple)) and _holds_tensor(v)) for v in value)


def to_tensor(value: Any, dtype: Any = None) -> Any:
    """TF's conversion of ``value`` to a tensor (no copy when it already is one of that dtype)."""
    if dtype is not None:
        dtype = as_dtype(dtype)
    if dtype is string or (dtype is None and is_string_value(value)):
        if isinstance(value, torch.Tensor):
            raise TypeError(f"Cannot convert a {value.dtype} tensor to tf.string. Received: {value!r:.80}")
        from unison.ops.string_tensor import StringTensor

        return value if isinstance(value, StringTensor) else StringTensor(np.array(value, dtype=object))
    if isinstance(value, torch.Tensor):
        return value if dtype is None or value.dtype == dtype else value.to(dtype)
    if isinstance(value, np.ndarray):
        tensor = from_numpy(value)
        return tensor if dtype is None else tensor.to(dtype)
    if isinstance(value, np.generic):
        tensor = torch.as_tensor(np.asarray(value))
        return tensor if dtype is None else tensor.to(dtype)
    if isinstance(value, (list, tuple)) and _holds_tensor(value):
        # TF packs a list holding tensors (tf.reduce_mean(batch_losses)), at any depth
        # ([[values[-1]]] in the data-performance guide): stack them, keeping the graph;
        # torch.as_tensor would copy scalars out one by one and drop gradients.
        items = [to_tensor(v, dtype) for v in value]
        common = dtype or next(t.dtype for t, v in zip(items, value) if isinstance(v, torch.Tensor) or _holds_tensor(v))
        return torch.stack([t.to(common) for t in items])
    for base, function in _CONVERSIONS:  # tf.register_tensor_conversion_function's, by priority
        if isinstance(value, base):
            converted = function(value, dtype=dtype, name=None, as_ref=False)
            if converted is not NotImplemented:
                return converted
    convert = getattr(type(value), "__tf_tensor__", None)
    if convert is not None:  # TF's conversion protocol (tf.IndexedSlices becomes its dense tensor)
        return convert(value, dtype)
    if hasattr(value, "__array__") and not isinstance(value, (list, tuple)):
        # An array-like (a pandas DataFrame or Series, a PIL image): TF reads it through numpy,
        # as tf.convert_to_tensor(dataset, dtype=tf.float32) does in the core quickstart
        return to_tensor(np.asarray(value), dtype)
    try:
        tensor = torch.as_tensor(value, dtype=dtype if dtype is not None else _infer(value))
    except (TypeError, ValueError, RuntimeError) as exc:
        if isinstance(value, (list, tuple)):
            # TF's ValueError for a ragged or mixed nested list (tf.constant([[0, 1], [2]]))
            raise ValueError(
                f"Can't convert non-rectangular or mixed-type Python sequence to Tensor: {exc}. Received: "
                f"{value!r:.80}. Give every row the same length (or use tf.ragged.constant for ragged rows)."
            ) from None
        raise TypeError(f"Cannot convert {type(value).__name__} {value!r:.80} to a tensor: {exc}") from None
    return tensor


def is_floating(dtype: Any) -> builtins.bool:
    """Whether ``dtype`` is a floating-point dtype."""
    return isinstance(dtype, torch.dtype) and dtype.is_floating_point


__all__ = [
    "DType",
    "as_dtype",
    "bfloat16",
    "bool",
    "complex64",
    "complex128",
    "double",
    "float16",
    "float32",
    "float64",
    "half",
    "int8",
    "int16",
    "int32",
    "int64",
    "resource",
    "string",
    "variant",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]
