"""``tf.io.parse_single_example``/``parse_example`` and their feature specs, ``serialize_tensor``/``parse_tensor``.

A feature spec maps each feature name to how to read it, with TF's results:

- ``FixedLenFeature(shape, dtype, default_value=None)``: exactly ``prod(shape)`` values, as a
  dense value of ``shape`` (``[batch] + shape`` for ``parse_example``); a missing feature takes
  ``default_value`` or is an error;
- ``VarLenFeature(dtype)``: any number of values, as a :class:`~unison.ops.sparse.SparseTensor`
  (``indices`` ``[N, 1]`` and ``dense_shape`` ``[n]`` for one example; ``[N, 2]`` and
  ``[batch, longest]`` for a batch), as TF returns it;
- ``FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)``: a multiple
  of ``prod(shape)`` values, as ``[n] + shape`` (a batch is padded with ``default_value`` or 0 to
  the longest; ``parse_example`` needs ``allow_missing=True``, as in TF).

``dtype`` is ``tf.float32``, ``tf.int64`` or ``tf.string`` (TF's three list types). Numbers come
back as torch tensors, strings as numpy object arrays of ``bytes``. A record that does not match
its spec raises ``tf.errors.InvalidArgumentError`` naming the feature, the expected and the found
type or count, as TF's parser does.

Example:
    >>> import unison as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0]))}))
    >>> out = tf.io.parse_single_example(ex.SerializeToString(), {"x": tf.io.FixedLenFeature([2], tf.float32)})
    >>> out["x"].tolist()
    [1.0, 2.0]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import StringDType, as_dtype, string
from unison.ops.sparse import SparseTensor

_KIND = {torch.float32: "float_list", torch.int64: "int64_list"}
_NP = {torch.float32: np.float32, torch.int64: np.int64}
_TF_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _list_dtype(dtype: Any, who: str) -> Any:
    d = as_dtype(dtype)
    if d is string or d in _KIND:
        return d
    raise ValueError(
        f"{who} supports dtype tf.float32, tf.int64 or tf.string (the value lists of tf.train.Feature). "
        f"Received: dtype={dtype!r}; parse as one of these and tf.cast afterwards."
    )


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int):
        return (shape,)
    dims = tuple(int(d) for d in (shape or ()))
    if any(d < 0 for d in dims):
        raise ValueError(f"A feature shape needs known, non-negative sizes. Received: shape={list(dims)}")
    return dims


@dataclass(frozen=True)
class FixedLenFeature:
    """``tf.io.FixedLenFeature(shape, dtype, default_value=None)``: exactly ``prod(shape)`` values."""

    shape: Any
    dtype: Any
    default_value: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", _shape(self.shape))
        object.__setattr__(self, "dtype", _list_dtype(self.dtype, "FixedLenFeature"))


@dataclass(frozen=True)
class VarLenFeature:
    """``tf.io.VarLenFeature(dtype)``: any number of values, returned as a ``SparseTensor``."""

    dtype: Any

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _list_dtype(self.dtype, "VarLenFeature"))


@dataclass(frozen=True)
class FixedLenSequenceFeature:
    """``tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)``: ``[n] + shape``."""

    shape: Any
    dtype: Any
    allow_missing: bool = False
    default_value: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", _shape(self.shape))
        object.__setattr__(self, "dtype", _list_dtype(self.dtype, "FixedLenSequenceFeature"))


Spec = FixedLenFeature | VarLenFeature | FixedLenSequenceFeature


def _serialized_items(serialized: Any, who: str) -> tuple[list[bytes], bool]:
    """The serialized records as a list of bytes, and whether the input was a single record."""
    if isinstance(serialized, (bytes, str)):
        return [serialized.encode() if isinstance(serialized, str) else serialized], True
    if isinstance(serialized, torch.Tensor):
        raise TypeError(f"{who} takes serialized records (bytes). Received a {serialized.dtype} tensor.")
    arr = np.asarray(serialized, dtype=object)
    items = [v.encode() if isinstance(v, str) else v for v in arr.reshape(-1).tolist()]
    if not all(isinstance(v, bytes) for v in items):
        raise TypeError(
            f"{who} takes serialized records (bytes), e.g. from TFRecordDataset. Received: {serialized!r:.80}"
        )
    return items, arr.ndim == 0


def _decode(data: bytes, index: int) -> Any:
    from google.protobuf.message import DecodeError

    from unison.ops.example import Example

    try:
        return Example.FromString(data)
    except DecodeError as exc:
        raise InvalidArgumentError(
            f"Could not parse example input, value: {data[:40]!r}{'...' if len(data) > 40 else ''} "
            f"(record {index}: {exc}). Pass serialized tf.train.Example records."
        ) from None


def _values(example: Any, key: str, spec: Spec, index: int) -> list[Any] | None:
    """The feature's values as a list, None when absent; a type mismatch is an error naming the feature."""
    features = example.features.feature
    if key not in features:
        return None
    feature = features[key]
    kind = feature.WhichOneof("kind")
    if kind is None:
        return []
    expected = "bytes_list" if spec.dtype is string else _KIND[spec.dtype]
    if kind != expected:
        raise InvalidArgumentError(
            f"Key: {key}.  Data types don't match. Data type: {_TF_NAME[kind]} but expected type: "
            f"{_TF_NAME[expected]} (example {index}). Fix the feature spec's dtype for {key!r}."
        )
    return list(getattr(feature, kind).value)


def _dense(values: Sequence[Any], shape: tuple[int, ...], dtype: Any) -> Any:
    if isinstance(dtype, StringDType):
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out.reshape(shape)
    return torch.tensor(list(values), dtype=dtype).reshape(shape)


def _default(spec: FixedLenFeature, key: str, index: int) -> list[Any]:
    if spec.default_value is None:
        raise InvalidArgumentError(
            f"Feature: {key} (data type: {_TF_NAME['bytes_list' if spec.dtype is string else _KIND[spec.dtype]]}) "
            f"is required but could not be found (example {index}). Give the spec a default_value, or use "
            "VarLenFeature for an optional feature."
        )
    value = spec.default_value
    flat = np.asarray(value.numpy() if isinstance(value, torch.Tensor) else value, dtype=object).reshape(-1).tolist()
    n = math.prod(spec.shape)
    if len(flat) == 1 and n != 1:
        flat = flat * n
    if len(flat) != n:
        raise ValueError(
            f"The default_value of {key!r} must have {n} values (shape {list(spec.shape)}). Received: {value!r}"
        )
    return [v.encode() if isinstance(v, str) else v for v in flat]


def _fixed(values: list[Any] | None, spec: FixedLenFeature, key: str, index: int) -> list[Any]:
    if values is None:
        return _default(spec, key, index)
    n = math.prod(spec.shape)
    if len(values) != n:
        raise InvalidArgumentError(
            f"Key: {key}.  Can't parse serialized Example: Number of values != expected. Values size: "
            f"{len(values)} but output shape: {list(spec.shape)} (example {index}). Fix the shape of "
            f"{key!r}'s FixedLenFeature, or use VarLenFeature for a varying count."
        )
    return values


def _sequence(
    values: list[Any] | None, spec: FixedLenSequenceFeature, key: str, index: int, batched: bool
) -> list[Any]:
    if values is None:
        if not spec.allow_missing:
            raise InvalidArgumentError(
                f"Feature: {key} is required but could not be found (example {index}). Pass "
                "FixedLenSequenceFeature(..., allow_missing=True) to read a missing feature as empty."
            )
        return []
    step = math.prod(spec.shape)
    if step and len(values) % step:
        raise InvalidArgumentError(
            f"Key: {key}.  Number of values is not a multiple of the inner shape {list(spec.shape)}: "
            f"{len(values)} values (example {index})."
        )
    return values


def _check_features(features: Any, who: str) -> Mapping[str, Spec]:
    if not isinstance(features, Mapping) or not features:
        raise TypeError(f"{who} needs a non-empty dict of feature name -> tf.io.FixedLenFeature/VarLenFeature/...")
    for key, spec in features.items():
        if not isinstance(spec, (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature)):
            raise TypeError(
                f"{who}: the spec of {key!r} must be tf.io.FixedLenFeature, VarLenFeature or "
                f"FixedLenSequenceFeature. Received: {spec!r}"
            )
    return features


def parse_example(
    serialized: Any, features: Mapping[str, Spec], example_names: Any = None, name: str | None = None
) -> dict[str, Any]:
    """``tf.io.parse_example``: parse a batch of serialized ``Example`` records into batched values.

    ``FixedLenFeature`` gives ``[batch] + shape``, ``VarLenFeature`` a ``SparseTensor`` of dense
    shape ``[batch, longest]``, ``FixedLenSequenceFeature`` ``[batch, longest] + shape`` padded.
    """
    specs = _check_features(features, "tf.io.parse_example")
    records, _ = _serialized_items(serialized, "tf.io.parse_example")
    return _parse(records, specs, batched=True)


def parse_single_example(
    serialized: Any, features: Mapping[str, Spec], example_names: Any = None, name: str | None = None
) -> dict[str, Any]:
    """``tf.io.parse_single_example``: parse one serialized ``Example`` into a dict of values."""
    specs = _check_features(features, "tf.io.parse_single_example")
    records, scalar = _serialized_items(serialized, "tf.io.parse_single_example")
    if not scalar and len(records) != 1:
        raise ValueError(
            f"tf.io.parse_single_example takes one serialized record. Received {len(records)}; use "
            "tf.io.parse_example for a batch."
        )
    return _parse(records, specs, batched=False)


def _fixed_fast(maps: list[Any], key: str, spec: FixedLenFeature, batched: bool) -> Any:
    """A ``FixedLenFeature`` present with the right type and count in every record, in one conversion; else None.

    The common case of a batch (``parse_example`` after ``batch``): the values go from protobuf's
    containers into one numpy array (one tensor per feature per batch, no per-record lists); any
    record that is not this case sends the feature to the checked path, which names the problem.
    """
    kind = "bytes_list" if spec.dtype is string else _KIND[spec.dtype]
    n = math.prod(spec.shape)
    if n == 0:
        return None  # an empty list of the wrong type would pass the count check: let the checked path look
    columns = []
    for features in maps:
        if key not in features:
            return None
        values = getattr(features[key], kind).value
        if len(values) != n:
            return None
        columns.append(values)
    shape = ((len(columns),) if batched else ()) + spec.shape
    flat = itertools.chain.from_iterable(columns)
    if spec.dtype is string:
        out = np.empty(n * len(columns), dtype=object)
        out[:] = list(flat)
        return out.reshape(shape)
    return torch.from_numpy(np.fromiter(flat, _NP[spec.dtype], count=n * len(columns)).reshape(shape))


def _parse(records: list[bytes], specs: Mapping[str, Spec], batched: bool) -> dict[str, Any]:
    examples = [_decode(r, i) for i, r in enumerate(records)]
    maps = [ex.features.feature for ex in examples]
    out: dict[str, Any] = {}
    for key, spec in specs.items():
        if isinstance(spec, FixedLenFeature) and spec.dtype in (string, torch.float32, torch.int64):
            fast = _fixed_fast(maps, key, spec, batched)
            if fast is not None:
                out[key] = fast
                continue
        per = [_values(ex, key, spec, i) for i, ex in enumerate(examples)]
        if isinstance(spec, FixedLenFeature):
            rows = [_fixed(v, spec, key, i) for i, v in enumerate(per)]
            flat = [x for r in rows for x in r]
            out[key] = _dense(flat, ((len(rows),) if batched else ()) + spec.shape, spec.dtype)
        elif isinstance(spec, VarLenFeature):
            rows = [v or [] for v in per]
            flat = [x for r in rows for x in r]
            values = _dense(flat, (len(flat),), spec.dtype)
            if batched:
                idx = [[b, j] for b, r in enumerate(rows) for j in range(len(r))]
                shape = [len(rows), max((len(r) for r in rows), default=0)]
            else:
                idx, shape = [[j] for j in range(len(flat))], [len(flat)]
            out[key] = SparseTensor(np.asarray(idx, dtype=np.int64).reshape(len(flat), len(shape)), values, shape)
        else:
            if batched and not spec.allow_missing:
                raise ValueError(
                    f"tf.io.parse_example: FixedLenSequenceFeature {key!r} needs allow_missing=True in a "
                    "batch (as in TF)."
                )
            rows = [_sequence(v, spec, key, i, batched) for i, v in enumerate(per)]
            step = max(math.prod(spec.shape), 1)
            longest = max((len(r) // step for r in rows), default=0)
            if not batched:
                out[key] = _dense(rows[0], (len(rows[0]) // step,) + spec.shape, spec.dtype)
                continue
            fill = spec.default_value
            if fill is None:
                fill = b"" if spec.dtype is string else 0
            padded = [r + [fill] * (longest * step - len(r)) for r in rows]
            out[key] = _dense([x for r in padded for x in r], (len(rows), longest) + spec.shape, spec.dtype)
    return out


# --- tf.io.serialize_tensor / parse_tensor (TensorProto, TF's DataType numbers) ----------------------
_DT_NUMBER = {
    torch.float32: 1,
    torch.float64: 2,
    torch.int32: 3,
    torch.uint8: 4,
    torch.int16: 5,
    torch.int8: 6,
    torch.complex64: 8,
    torch.int64: 9,
    torch.bool: 10,
    torch.bfloat16: 14,
    torch.complex128: 18,
    torch.float16: 19,
}
_DT_STRING = 7
_NUMBER_DT = {v: k for k, v in _DT_NUMBER.items()}


def serialize_tensor(tensor: Any, name: str | None = None) -> np.ndarray:
    """``tf.io.serialize_tensor``: a tensor as the bytes of TF's ``TensorProto`` (a 0-d bytes array)."""
    from unison.ops.example import TensorProto

    proto = TensorProto()
    if isinstance(tensor, torch.Tensor) or not _is_strings(tensor):
        t = (
            tensor.detach().cpu().contiguous()
            if isinstance(tensor, torch.Tensor)
            else torch.as_tensor(np.asarray(tensor))
        )
        if t.dtype not in _DT_NUMBER:
            raise TypeError(f"tf.io.serialize_tensor does not support dtype {t.dtype}.")
        proto.dtype = _DT_NUMBER[t.dtype]
        raw = t.view(torch.int16) if t.dtype == torch.bfloat16 else t
        proto.tensor_content = raw.numpy().astype(raw.numpy().dtype.newbyteorder("<")).tobytes()
        shape = tuple(t.shape)
    else:
        arr = np.asarray(tensor, dtype=object)
        proto.dtype = _DT_STRING
        proto.string_val.extend(v.encode() if isinstance(v, str) else v for v in arr.reshape(-1).tolist())
        shape = arr.shape
    proto.tensor_shape.SetInParent()
    for d in shape:
        proto.tensor_shape.dim.add(size=int(d))
    out = np.empty((), dtype=object)
    out[()] = proto.SerializeToString()
    return out


def _is_strings(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return True
    arr = np.asarray(value) if not isinstance(value, np.ndarray) else value
    return arr.dtype.kind in "OUS"


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Any:
    """``tf.io.parse_tensor``: the tensor in a serialized ``TensorProto``; ``out_type`` must be its dtype."""
    from google.protobuf.message import DecodeError

    from unison.ops.example import TensorProto

    data = serialized.item() if isinstance(serialized, np.ndarray) else serialized
    if not isinstance(data, bytes):
        raise TypeError(f"tf.io.parse_tensor takes the bytes of a serialized tensor. Received: {type(data).__name__}")
    try:
        proto = TensorProto.FromString(data)
    except DecodeError as exc:
        raise InvalidArgumentError(f"Could not parse `serialized` as TensorProto: {exc}") from None
    want = as_dtype(out_type)
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    if proto.dtype == _DT_STRING:
        if want is not string:
            raise InvalidArgumentError(f"Type mismatch between parsed tensor (string) and dtype ({want})")
        out = np.empty(len(proto.string_val), dtype=object)
        out[:] = list(proto.string_val)
        return out.reshape(shape)
    got = _NUMBER_DT.get(proto.dtype)
    if got is None:
        raise InvalidArgumentError(f"tf.io.parse_tensor: unsupported DataType number {proto.dtype} in the record.")
    if want != got:
        raise InvalidArgumentError(f"Type mismatch between parsed tensor ({got}) and dtype ({want})")
    if proto.tensor_content:
        storage = torch.int16 if got == torch.bfloat16 else got
        np_dtype = torch.empty((), dtype=storage).numpy().dtype.newbyteorder("<")
        t = torch.from_numpy(np.frombuffer(proto.tensor_content, dtype=np_dtype).astype(np_dtype.newbyteorder("=")))
        return (t.view(torch.bfloat16) if got == torch.bfloat16 else t).reshape(shape)
    field_name = {
        torch.float32: "float_val",
        torch.float64: "double_val",
        torch.int64: "int64_val",
        torch.bool: "bool_val",
    }.get(got, "int_val")
    values = list(getattr(proto, field_name))
    n = math.prod(shape)
    if len(values) == 1 and n != 1:
        values = values * n  # TF stores a splat of one value once
    return torch.tensor(values, dtype=got).reshape(shape)


def decode_raw(
    input_bytes: Any,
    out_type: Any,
    little_endian: bool = True,
    fixed_length: int | None = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.io.decode_raw``: reinterpret each string's bytes as numbers of ``out_type`` (``[..., n]``)."""
    dtype = as_dtype(out_type)
    if not isinstance(dtype, torch.dtype) or dtype == torch.bool:
        raise ValueError(f"tf.io.decode_raw needs a number dtype. Received: out_type={out_type!r}")
    arr = (
        np.asarray(input_bytes, dtype=object) if not isinstance(input_bytes, np.ndarray) else input_bytes.astype(object)
    )
    np_dtype = torch.empty((), dtype=dtype).numpy().dtype.newbyteorder("<" if little_endian else ">")
    items = [v if isinstance(v, bytes) else v.encode() for v in arr.reshape(-1).tolist()]
    for item in items:
        if len(item) % np_dtype.itemsize:
            raise InvalidArgumentError(
                f"tf.io.decode_raw: Input to DecodeRaw has length {len(item)} that is not a multiple of "
                f"{np_dtype.itemsize}, the size of out_type={dtype}. Pass strings of whole {dtype} values."
            )
    rows = [np.frombuffer(item, dtype=np_dtype) for item in items]
    if len({len(r) for r in rows}) > 1:
        raise InvalidArgumentError(
            f"tf.io.decode_raw: every string must hold the same number of bytes. Received lengths "
            f"{sorted({len(r) * np_dtype.itemsize for r in rows})}."
        )
    width = len(rows[0]) if rows else 0
    data = np.stack(rows).astype(np_dtype.newbyteorder("=")) if rows else np.zeros((0, 0), np_dtype.newbyteorder("="))
    return torch.from_numpy(data).reshape(tuple(arr.shape) + (width,))


__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "VarLenFeature",
    "decode_raw",
    "parse_example",
    "parse_single_example",
    "parse_tensor",
    "serialize_tensor",
]
