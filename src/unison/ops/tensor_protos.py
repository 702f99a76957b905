"""``tf.make_tensor_proto`` and ``tf.make_ndarray``: values to TF's ``TensorProto`` and back.

The proto is :data:`unison.ops.example.TensorProto`, wire-compatible with TF's, filled by TF's
rules (``tensor_util.make_tensor_proto``): Python floats become float32 and Python ints int32
(int64 when they do not fit); arrays of more than one element of a numeric type go into
``tensor_content`` as raw bytes; scalars, booleans, strings and complex numbers go into the typed
``*_val`` fields; a ``shape`` larger than the values repeats the last value when read back.

Example:
    >>> import unison as tf
    >>> proto = tf.make_tensor_proto([1.0, 2.0])
    >>> proto.dtype, tf.make_ndarray(proto).tolist()
    (1, [1.0, 2.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.ops.dtypes import as_dtype, string

__all__ = ["make_ndarray", "make_tensor_proto"]

# TF's DataType numbers for the numpy dtypes a TensorProto carries
_ENUM: dict[np.dtype[Any], int] = {
    np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3, np.dtype(np.uint8): 4,
    np.dtype(np.int16): 5, np.dtype(np.int8): 6, np.dtype(object): 7, np.dtype(np.complex64): 8,
    np.dtype(np.int64): 9, np.dtype(np.bool_): 10, np.dtype(np.complex128): 18, np.dtype(np.float16): 19,
    np.dtype(np.uint16): 17, np.dtype(np.uint32): 22, np.dtype(np.uint64): 23,
}  # fmt: skip
_NUMPY: dict[int, np.dtype[Any]] = {v: k for k, v in _ENUM.items()}
# the types TF writes as raw bytes when the values fill the shape and are more than one
_CONTENT = {1, 2, 3, 4, 5, 6, 9, 17, 19, 22, 23}
_INT_VAL = {3, 4, 5, 6, 17}


def _numpy_dtype(dtype: Any) -> np.dtype:
    d = as_dtype(dtype)
    if d is string:
        return np.dtype(object)
    if d == torch.bfloat16 or not isinstance(d, torch.dtype):
        raise TypeError(f"tf.make_tensor_proto: dtype {dtype!r} has no TensorProto form in unison.")
    return torch.empty(0, dtype=d).numpy().dtype


def _is_strings(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "USO"


def make_tensor_proto(
    values: Any, dtype: Any = None, shape: Any = None, verify_shape: bool = False, allow_broadcast: bool = False
) -> Any:
    """``tf.make_tensor_proto``: a ``TensorProto`` holding ``values`` (see the module notes).

    Example:
        >>> make_tensor_proto(3).int_val[:]
        [3]
    """
    from unison.ops.example import TensorProto

    if isinstance(values, TensorProto):
        return values
    np_dt = _numpy_dtype(dtype) if dtype is not None else None
    given_array = isinstance(values, (np.ndarray, np.generic, torch.Tensor)) or hasattr(values, "numpy")
    if values is None:
        raise ValueError("None values not supported.")
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    elif hasattr(values, "numpy") and not isinstance(values, (np.ndarray, np.generic)):
        values = values.numpy()
    if given_array:
        nparray = np.asarray(values)
        if np_dt is not None and nparray.dtype != np_dt:
            nparray = nparray.astype(np_dt)
    elif shape is not None and int(np.prod(shape, dtype=np.int64)) == 0:
        nparray = np.empty([int(d) for d in shape], dtype=np_dt)
    else:
        probe = np.asarray(values, dtype=object)
        if probe.size and all(isinstance(v, (str, bytes)) for v in probe.reshape(-1).tolist()):
            nparray = probe
        else:
            try:
                nparray = np.array(values, dtype=np_dt)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"tf.make_tensor_proto: cannot convert {values!r} to a tensor ({exc}).") from None
    if not given_array:
        if dtype is None and nparray.dtype == np.float64:  # Python floats are float32 in TF
            nparray = nparray.astype(np.float32)
        elif dtype is None and nparray.dtype == np.int64:  # ints are int32 unless they do not fit
            small = nparray.astype(np.int32)
            if np.array_equal(small, nparray):
                nparray = small
    if _is_strings(nparray):
        nparray = np.asarray(nparray, dtype=object)
    if nparray.dtype not in _ENUM:
        raise TypeError(f"Unrecognized data type: {nparray.dtype}")
    if np_dt is not None and nparray.dtype != np_dt:
        raise TypeError(f"`dtype` {dtype} is not compatible with {values!r} of dtype {nparray.dtype}.")
    number = _ENUM[nparray.dtype]
    if shape is None:
        dims = list(nparray.shape)
        same_size, size = True, nparray.size
    else:
        dims = [int(d) for d in shape]
        size = int(np.prod(dims, dtype=np.int64))
        same_size = size == nparray.size
        if allow_broadcast:
            if nparray.shape not in ((1,), ()) and nparray.size != size:
                raise TypeError(
                    f"Expected Tensor's shape: {tuple(dims)}, but got {nparray.shape}. Give values of that shape, "
                    "or a single value to broadcast."
                )
        else:
            if verify_shape and nparray.shape != tuple(dims):
                raise TypeError(f"Expected Tensor's shape: {tuple(dims)}, but got {nparray.shape}.")
            if nparray.size > size:
                raise ValueError(f"Too many elements provided. Takes at most {size}, but got {nparray.size}.")
    proto = TensorProto(dtype=number)
    proto.tensor_shape.SetInParent()
    for d in dims:
        proto.tensor_shape.dim.add(size=d)
    if same_size and number in _CONTENT and size > 1:
        proto.tensor_content = np.ascontiguousarray(nparray).astype(nparray.dtype.newbyteorder("<")).tobytes()
        return proto
    flat = nparray.reshape(-1)
    if number == 7:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode("utf-8") for v in flat.tolist())
    elif number == 1:
        proto.float_val.extend(flat.tolist())
    elif number == 2:
        proto.double_val.extend(flat.tolist())
    elif number in _INT_VAL:
        proto.int_val.extend(int(v) for v in flat.tolist())
    elif number == 9:
        proto.int64_val.extend(int(v) for v in flat.tolist())
    elif number == 10:
        proto.bool_val.extend(bool(v) for v in flat.tolist())
    elif number == 19:
        proto.half_val.extend(int(v) for v in flat.view(np.uint16).tolist())
    elif number == 22:
        proto.uint32_val.extend(int(v) for v in flat.tolist())
    elif number == 23:
        proto.uint64_val.extend(int(v) for v in flat.tolist())
    else:  # complex: real and imaginary parts interleaved
        parts = [p for v in flat.tolist() for p in (v.real, v.imag)]
        (proto.scomplex_val if number == 8 else proto.dcomplex_val).extend(parts)
    return proto


def make_ndarray(tensor: Any) -> np.ndarray:
    """``tf.make_ndarray``: the numpy array a ``TensorProto`` holds (short values repeat the last one).

    Example:
        >>> make_ndarray(make_tensor_proto(7, shape=[3])).tolist()
        [7, 7, 7]
    """
    shape = [d.size for d in tensor.tensor_shape.dim]
    count = int(np.prod(shape, dtype=np.int64))
    if tensor.dtype not in _NUMPY:
        raise TypeError(f"Unsupported tensor type: {tensor.dtype}. See TF's DataType numbers.")
    dtype = _NUMPY[tensor.dtype]
    if tensor.tensor_content:
        return np.frombuffer(tensor.tensor_content, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    number = tensor.dtype
    if number == 7:
        strings = list(tensor.string_val)
        if count > len(strings):
            strings += [strings[-1] if strings else b""] * (count - len(strings))
        out = np.empty(len(strings), dtype=object)
        out[:] = strings
        return out.reshape(shape)
    if number == 19:
        values = np.array(list(tensor.half_val), dtype=np.uint16).view(np.float16)
    elif number in (8, 18):
        parts = list(tensor.scomplex_val if number == 8 else tensor.dcomplex_val)
        values = np.array([complex(parts[i], parts[i + 1]) for i in range(0, len(parts), 2)], dtype=dtype)
    else:
        field = {1: "float_val", 2: "double_val", 9: "int64_val", 10: "bool_val", 22: "uint32_val", 23: "uint64_val"}
        values = np.array(list(getattr(tensor, field.get(number, "int_val"))), dtype=dtype)
    if values.size == 0:
        return np.zeros(shape, dtype)
    if values.size != count:
        values = np.pad(values, (0, count - values.size), "edge")
    return values.reshape(shape)
