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
  the longest; ``parse_example`` needs ``allow_missing=True``, as in TF);
- ``SparseFeature(index_key, value_key, dtype, size)``: a ``SparseTensor`` whose indices come from
  one feature and values from another (:mod:`unison.ops.sparse_feature`).

``dtype`` is ``tf.float32``, ``tf.int64`` or ``tf.string`` (TF's three list types). Numbers come
back as torch tensors, strings as numpy object arrays of ``bytes``. A record that does not match
its spec raises :class:`~unison.errors.ExampleParseError` (a ``tf.errors.InvalidArgumentError``)
naming the feature, the expected and the found type or count, as TF's parser does, and the file
and byte offset of a record ``TFRecordDataset`` read (:mod:`unison.ops.record_origin`).
``RaggedFeature`` (in :mod:`unison.ops.feature_specs`) reads
a feature as a ``RaggedTensor``.

How: the records' bytes are read straight into one column per feature, without protobuf messages:
by the compiled reader (:mod:`unison.ops.example_compiled`, C, the GIL released while it walks a
batch) where it was built, else by :mod:`unison.ops.example_wire` (Python and numpy: numbers
decoded for the whole batch at once; a batch of :data:`_BATCH_SCAN_MIN` or more records of varied
layouts scanned in lock-step for all records at once); and
:mod:`unison.ops.feature_columns` shapes the columns. A record in an encoding the byte reader does
not take (unpacked lists, repeated keys, unknown fields: valid protobuf no TF writer produces) or a
damaged one goes through the protobuf runtime instead, which gives the same columns or names the
record it cannot decode.

Example:
    >>> import unison as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0]))}))
    >>> out = tf.io.parse_single_example(ex.SerializeToString(), {"x": tf.io.FixedLenFeature([2], tf.float32)})
    >>> out["x"].tolist()
    [1.0, 2.0]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from unison.errors import ExampleParseError, InvalidArgumentError
from unison.ops import example_compiled
from unison.ops.dtypes import as_dtype, string
from unison.ops.example_batch_wire import batch_columns
from unison.ops.example_wire import (
    BYTES,
    EMPTY,
    FLOAT,
    INT64,
    _Unusual,
    _varint,
    _WrongKind,
    column,
    same_layout_columns,
    scan,
    scan_columns,
    varint_values,
)
from unison.ops.feature_columns import Column, build, type_error
from unison.ops.feature_specs import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    Plan,
    RaggedFeature,
    Spec,
    VarLenFeature,
    check_features,
    known_plan,
    list_kind,
    plan,
)
from unison.ops.record_origin import origin
from unison.ops.sparse_feature import SparseFeature, assemble_sparse_features, expand_sparse_features
from unison.ops.sparse_tensor import SparseTensor
from unison.ops.string_tensor import StringTensor

_WIRE = {string: BYTES, torch.float32: FLOAT, torch.int64: INT64}
_KIND_NAME = {BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}


def _serialized_items(serialized: Any, who: str) -> tuple[list[bytes], bool]:
    """The serialized records as a list of bytes, and whether the input was a single record."""
    if isinstance(serialized, bytes):
        return [serialized], True
    if isinstance(serialized, np.ndarray) and serialized.dtype == object:
        if serialized.ndim == 0 and type(serialized[()]) is bytes:  # one record from TFRecordDataset
            return [serialized[()]], True
        items = serialized.reshape(-1).tolist()
        if all(type(v) is bytes for v in items):
            return items, serialized.ndim == 0
    if isinstance(serialized, str):
        return [serialized.encode()], True
    if isinstance(serialized, torch.Tensor):
        raise TypeError(f"{who} takes serialized records (bytes). Received a {serialized.dtype} tensor.")
    arr = np.asarray(serialized, dtype=object)
    items = [v.encode() if isinstance(v, str) else v for v in arr.reshape(-1).tolist()]
    if not all(isinstance(v, bytes) for v in items):
        raise TypeError(
            f"{who} takes serialized records (bytes), e.g. from TFRecordDataset. Received: {serialized!r:.80}"
        )
    return items, arr.ndim == 0


_BATCH_SCAN_MIN = 192  # below this many records the one-pass scan costs less than numpy's per-call overhead


def _wire(the_plan: Plan) -> tuple[tuple[bytes, ...], tuple[int, ...]]:
    """The plan's feature keys and list kinds by slot, as the compiled reader takes them (made once)."""
    if the_plan.wire is None:
        the_plan.wire = (tuple(the_plan.wanted), tuple(_WIRE[dtype] for _, dtype in the_plan.reads))
    return the_plan.wire


def _columns_wire(records: list[bytes], plan: Plan) -> list[Column]:
    """Every feature the plan reads, as columns, from the records' bytes (:mod:`example_compiled`, else
    :mod:`example_wire`)."""
    wanted, n = plan.wanted, len(plan.reads)
    kinds = [_WIRE[dtype] for _, dtype in plan.reads]
    none = np.full(len(records), -1, dtype=np.int64)
    if n <= example_compiled.BATCH_KEYS and example_compiled.available():
        try:
            return [Column(*c) for c in example_compiled.columns(records, *_wire(plan))]
        except _WrongKind:
            pass  # the per-record scan below names the error in TF's order (feature, then record)
        try:
            found = [scan(r, wanted, n) for r in records]
        except IndexError:
            raise _Unusual("truncated record") from None
        return _columns_found(records, plan, found)
    try:
        same = same_layout_columns(records, wanted, kinds) if len(records) > 1 else None
        if same is not None:
            return [Column([], none) if c is None else Column(*c) for c in same]
        if len(records) >= _BATCH_SCAN_MIN:
            try:
                batch = batch_columns(records, wanted, kinds)
            except _WrongKind as wrong:
                key, dtype = plan.reads[wrong.slot]
                raise type_error(key, wrong.index, _KIND_NAME[wrong.kind], dtype) from None
            return [Column([], none) if c is None else Column(*c) for c in batch]
        try:
            return [Column(*c) for c in scan_columns(records, wanted, kinds)]
        except _WrongKind:
            pass  # the per-record scan below names the error in TF's order (feature, then record)
        found = [scan(r, wanted, n) for r in records]
    except IndexError:
        raise _Unusual("truncated record") from None
    return _columns_found(records, plan, found)


def _columns_found(records: list[bytes], plan: Plan, found: list[list[Any]]) -> list[Column]:
    """The columns from each record's :func:`scan`: the path that names a wrong list type as TF does."""
    cols = []
    for slot, (key, dtype) in enumerate(plan.reads):
        kind = _WIRE[dtype]
        where = [f[slot] for f in found]
        if None not in where and all(w[0] == kind for w in where):
            values, counts = column(records, where, kind)
            cols.append(Column(values, counts))
            continue
        rows = []
        for i, w in enumerate(where):
            if w is not None:
                if w[0] != kind and w[0] != EMPTY:
                    raise type_error(key, i, _KIND_NAME[w[0]], dtype)
                rows.append(i)
        values, got = column([records[i] for i in rows], [where[i] for i in rows], kind)
        counts = np.full(len(records), -1, dtype=np.int64)
        counts[rows] = got
        cols.append(Column(values, counts))
    return cols


def _decode(data: bytes, index: int) -> Any:
    from google.protobuf.message import DecodeError

    from unison.ops.example import Example

    try:
        return Example.FromString(data)
    except DecodeError as exc:
        raise ExampleParseError(
            f"Could not parse example input, value: {data[:40]!r}{'...' if len(data) > 40 else ''} "
            f"(record {index}: {exc}). Pass serialized tf.train.Example records.",
            index=index,
        ) from None


def _columns_proto(records: list[bytes], plan: Plan) -> list[Column]:
    """The same columns through the protobuf runtime: any valid encoding, and the decode errors."""
    maps = [_decode(r, i).features.feature for i, r in enumerate(records)]
    cols = []
    for key, dtype in plan.reads:
        expected = list_kind(dtype)
        flat: list[Any] = []
        counts = np.full(len(records), -1, dtype=np.int64)
        for i, features in enumerate(maps):
            if key not in features:
                continue
            feature = features[key]
            kind = feature.WhichOneof("kind")
            if kind is None:
                counts[i] = 0
                continue
            if kind != expected:
                raise type_error(key, i, kind, dtype)
            values = getattr(feature, kind).value
            counts[i] = len(values)
            flat.extend(values)
        cols.append(Column(flat, counts))
    return cols


def _one_list(data: bytes, kind: int, start: int, end: int, shape: tuple[int, ...] | None) -> Any:
    """One record's list as a numpy array (float32, int64, or object of bytes), shaped ``shape``
    (None: 1-D); None when the count does not fit ``shape``."""
    if kind == BYTES:
        if start < end and data[start] == 0x0A and data[start + 1] < 0x80 and start + 2 + data[start + 1] == end:
            values = [data[start + 2 : end]]  # the usual single bytes value
        else:
            values, _ = column([data], [(kind, start, end)], kind)
        out = np.empty(len(values), dtype=object)
        out[:] = values
        if shape is None:
            return out
        return out.reshape(shape) if len(values) == math.prod(shape) else None
    arr: np.ndarray
    if start == end:
        arr = np.zeros(0, dtype=np.float32 if kind == FLOAT else np.int64)
    else:
        if data[start] != 0x0A:
            raise _Unusual("unpacked list")
        length = data[start + 1]
        pos = start + 2
        if length >= 0x80:
            length, pos = _varint(data, start + 1)
        if pos + length != end:
            raise _Unusual("list in pieces")
        if kind == FLOAT:
            if length & 3:
                raise _Unusual("FloatList size")
            arr = np.frombuffer(data, "<f4", length >> 2, pos).astype(np.float32)
        elif length == 1 and data[pos] < 0x80 and shape == ():  # the usual label
            return np.array(data[pos], dtype=np.int64)
        else:
            arr = varint_values(data[pos:end])
    if shape is not None:
        if arr.size != math.prod(shape):
            return None
        arr = arr.reshape(shape)
    return arr


_I64 = np.dtype(np.int64)
_NUMPY: dict[int, np.dtype[Any]] = {FLOAT: np.dtype("<f4"), INT64: np.dtype("<i8")}
_TORCH = {FLOAT: torch.float32, INT64: torch.int64}


def _objects(values: list[bytes]) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


def _parse_one_compiled(data: bytes, the_plan: Plan, recipe: list[tuple[Any, ...]]) -> dict[str, Any] | None:
    """:func:`_parse_one` through the compiled reader: its buffers become tensors without copies."""
    keys, kinds = _wire(the_plan)
    sparse = the_plan.sparse_slots
    if sparse is None:
        flags = [False] * len(keys)
        for _, role, slot, *_rest in recipe:
            flags[slot] = role == _VAR
        sparse = the_plan.sparse_slots = tuple(flags)
    lists = example_compiled.record_lists(data, keys, kinds, sparse)
    if lists is None:
        return None
    out: dict[str, Any] = {}
    for key, role, slot, kind, shape, inner in recipe:
        raw = lists[slot]
        if role == _VAR:
            values, indices, dense_shape = raw
            n = len(indices) >> 3
            if kind == BYTES:
                tensor: Any = StringTensor(_objects(values))
            else:
                tensor = torch.frombuffer(values, dtype=_TORCH[kind]) if n else torch.empty(0, dtype=_TORCH[kind])
            out[key] = SparseTensor._from_parts(
                torch.from_numpy(np.ndarray((n, 1), _I64, indices)),
                tensor,
                torch.frombuffer(dense_shape, dtype=torch.int64),
            )
            continue
        dense = _dense_output(
            _objects(raw) if kind == BYTES else np.frombuffer(raw, dtype=_NUMPY[kind]), kind, shape, inner
        )
        if dense is None:
            return None
        out[key] = dense
    return out


def _dense_output(value: np.ndarray, kind: int, shape: tuple[int, ...] | None, inner: tuple[int, ...] | None) -> Any:
    """One record's list as TF returns it: ``shape`` for a FixedLenFeature, ``[n] + inner`` for a
    FixedLenSequenceFeature, else 1-D; None when its count does not fit (the batch path raises TF's error)."""
    if shape is not None:
        if value.size != math.prod(shape):
            return None
        value = value.reshape(shape)
    elif inner is not None:
        step = max(math.prod(inner), 1)
        if value.shape[0] % step:
            return None
        value = value.reshape((value.shape[0] // step,) + inner)
    return StringTensor(value) if kind == BYTES else torch.from_numpy(value)


_VAR, _FIXED, _SEQUENCE, _RAGGED = range(4)
_ROLE = {VarLenFeature: _VAR, FixedLenFeature: _FIXED, FixedLenSequenceFeature: _SEQUENCE, RaggedFeature: _RAGGED}


def _single_recipe(the_plan: Plan) -> list[tuple[Any, ...]]:
    """Per output of a one-record parse: (key, role, slot, list kind, shape to read, inner shape);
    empty when an output needs the batch path (ragged partitions). Made once per plan."""
    recipe: list[tuple[Any, ...]] = []
    for key, spec in the_plan.outputs:
        role = _ROLE[type(spec)]
        if role == _RAGGED and spec.partitions:
            return []
        slot = the_plan.slot[key if role != _RAGGED else (spec.value_key or key)]
        shape = spec.shape if role == _FIXED else None
        inner = spec.shape if role == _SEQUENCE else None
        recipe.append((key, role, slot, _WIRE[spec.dtype], shape, inner))
    return recipe


def _parse_one(data: bytes, the_plan: Plan) -> dict[str, Any] | None:
    """One record without batch bookkeeping (``map(parse_single_example)`` calls this per element).

    Returns None for what it leaves to the batch path: a missing feature, a type or count that
    does not match (that path raises TF's error), ragged partitions.
    """
    recipe = the_plan.single
    if recipe is None:
        recipe = the_plan.single = _single_recipe(the_plan)
    if not recipe:
        return None
    if example_compiled.use and len(the_plan.reads) <= example_compiled.ONE_RECORD_KEYS:
        return _parse_one_compiled(data, the_plan, recipe)
    found = scan(data, the_plan.wanted, len(the_plan.reads))
    out: dict[str, Any] = {}
    for key, role, slot, kind, shape, inner in recipe:
        where = found[slot]
        if where is None or where[0] != kind:
            return None
        value = _one_list(data, kind, where[1], where[2], shape)
        if value is None:
            return None
        if role == _VAR:
            n = value.shape[0]
            out[key] = SparseTensor._from_parts(
                torch.from_numpy(np.arange(n, dtype=np.int64).reshape(n, 1)),
                StringTensor(value) if kind == BYTES else torch.from_numpy(value),
                torch.from_numpy(np.array([n], dtype=np.int64)),
            )
            continue
        dense = _dense_output(value, kind, shape, inner)
        if dense is None:
            return None
        out[key] = dense
    return out


def _located(error: ExampleParseError, records: list[bytes]) -> ExampleParseError:
    """``error`` naming the TFRecord file and byte offset of its record, when the reader noted them."""
    where = origin(records[error.index]) if error.index is not None and error.index < len(records) else None
    if where is None:
        return error
    path, offset = where
    feature = f"feature {error.feature!r} of " if error.feature is not None else ""
    return ExampleParseError(
        f"{error.message} (In {feature}the record at byte offset {offset} of {path!r}.)",
        feature=error.feature,
        index=error.index,
        path=path,
        offset=offset,
    )


def _parse(records: list[bytes], specs: Mapping[str, Spec], batched: bool, warn: bool = True) -> dict[str, Any]:
    try:
        return _parse_records(records, specs, batched, warn)
    except ExampleParseError as error:
        located = _located(error, records)
        if located is error:
            raise
        raise located from None


def _parse_records(records: list[bytes], specs: Mapping[str, Spec], batched: bool, warn: bool) -> dict[str, Any]:
    the_plan = plan(specs)
    if the_plan.needs_allow_missing:
        raise ValueError(
            "Unsupported: FixedLenSequenceFeature requires allow_missing to be True (as in TF). Received: "
            f"{the_plan.needs_allow_missing!r} without it; pass allow_missing=True."
        )
    if not batched:
        try:
            one = _parse_one(records[0], the_plan)
        except (_Unusual, IndexError):
            one = None
        if one is not None:
            return one
    try:
        cols = _columns_wire(records, the_plan)
    except _Unusual as why:  # an encoding the byte reader leaves to protobuf (or a damaged record: it names it)
        cols = _columns_proto(records, the_plan)
        if warn:
            warnings.warn(  # Python shows it once per place: a dataset of such records warns once
                f"tf.io.parse_example: records in an encoding unison's byte reader does not take ({why}: valid "
                "protobuf that TF's writers do not produce) are parsed through the protobuf runtime, several "
                "times slower. Rewrite them with tf.io.TFRecordWriter and tf.train.Example.SerializeToString.",
                RuntimeWarning,
                stacklevel=4,
            )
    return {key: build(key, spec, the_plan, cols, batched) for key, spec in the_plan.outputs}


def parse_example(
    serialized: Any, features: Mapping[str, Spec], example_names: Any = None, name: str | None = None
) -> dict[str, Any]:
    """``tf.io.parse_example``: parse a batch of serialized ``Example`` records into batched values.

    ``FixedLenFeature`` gives ``[batch] + shape``, ``VarLenFeature`` a ``SparseTensor`` of dense
    shape ``[batch, longest]``, ``FixedLenSequenceFeature`` ``[batch, longest] + shape`` padded,
    ``RaggedFeature`` a ``RaggedTensor`` with one row per record.
    """
    expanded, sparse = expand_sparse_features(features)
    specs = check_features(expanded, "tf.io.parse_example")
    records, _ = _serialized_items(serialized, "tf.io.parse_example")
    parsed = _parse(records, specs, batched=True)
    return assemble_sparse_features(parsed, sparse, features, True, len(records)) if sparse else parsed


def parse_single_example(
    serialized: Any, features: Mapping[str, Spec], example_names: Any = None, name: str | None = None
) -> dict[str, Any]:
    """``tf.io.parse_single_example``: parse one serialized ``Example`` into a dict of values."""
    # map(parse_single_example) calls this per record with the same spec dict: once its plan is known
    # (the dict was checked), a record from TFRecordDataset goes straight to the one-record reader
    the_plan = known_plan(features)
    if the_plan is not None and not the_plan.needs_allow_missing and isinstance(serialized, np.ndarray):
        data = serialized.item() if serialized.shape == () and serialized.dtype == object else None
        if type(data) is bytes:
            try:
                one = _parse_one(data, the_plan)
            except (_Unusual, IndexError):
                one = None
            if one is not None:
                return one
    expanded, sparse = expand_sparse_features(features)
    specs = check_features(expanded, "tf.io.parse_single_example")
    records, scalar = _serialized_items(serialized, "tf.io.parse_single_example")
    if not scalar and len(records) != 1:
        raise ValueError(
            f"tf.io.parse_single_example takes one serialized record. Received {len(records)}; use "
            "tf.io.parse_example for a batch."
        )
    parsed = _parse(records, specs, batched=False)
    return assemble_sparse_features(parsed, sparse, features, False, 1) if sparse else parsed


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
    "RaggedFeature",
    "SparseFeature",
    "VarLenFeature",
    "decode_raw",
    "parse_example",
    "parse_single_example",
    "parse_tensor",
    "serialize_tensor",
]
