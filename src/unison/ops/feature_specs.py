"""The feature specs of ``tf.io.parse_example``: how to read each feature of a ``tf.train.Example``.

- ``FixedLenFeature(shape, dtype, default_value=None)``: exactly ``prod(shape)`` values;
- ``VarLenFeature(dtype)``: any number of values, as a ``SparseTensor``;
- ``FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)``: a multiple
  of ``prod(shape)`` values, as ``[n] + shape``;
- ``RaggedFeature(dtype, value_key=None, partitions=(), row_splits_dtype=tf.int32, validate=False)``:
  any number of values as a ``RaggedTensor`` of the batch (a tensor for one example), cut further by
  ``partitions`` (``RaggedFeature.RowLengths(key)``, ``RowSplits``, ``RowStarts``, ``RowLimits``,
  ``ValueRowIds`` and ``UniformRowLength(length)``, outermost first), as TF reads them.

``dtype`` is ``tf.float32``, ``tf.int64`` or ``tf.string`` (the three value lists of
``tf.train.Feature``). :func:`plan` turns a spec dict into what the parser needs (the names as
bytes, the extra keys the partitions read), once per dict.

Example:
    >>> import unison as tf
    >>> spec = tf.io.RaggedFeature(tf.int64, partitions=[tf.io.RaggedFeature.UniformRowLength(2)])
    >>> spec.partitions
    (UniformRowLength(length=2),)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch

from unison.ops.dtypes import as_dtype, string

_KIND = {torch.float32: "float_list", torch.int64: "int64_list"}


def list_kind(dtype: Any) -> str:
    """The ``tf.train.Feature`` list that holds ``dtype``: ``bytes_list``, ``float_list`` or ``int64_list``."""
    return "bytes_list" if dtype is string else _KIND[dtype]


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


class RowSplits(NamedTuple):
    """A partition read from the int64 feature ``key``: row ``i`` is ``values[splits[i]:splits[i+1]]``."""

    key: str


class RowLengths(NamedTuple):
    """A partition read from the int64 feature ``key``: the length of each row."""

    key: str


class RowStarts(NamedTuple):
    """A partition read from the int64 feature ``key``: where each row starts."""

    key: str


class RowLimits(NamedTuple):
    """A partition read from the int64 feature ``key``: where each row ends."""

    key: str


class ValueRowIds(NamedTuple):
    """A partition read from the int64 feature ``key``: the row of each value (sorted)."""

    key: str


class UniformRowLength(NamedTuple):
    """A partition of rows of ``length`` values each (no feature read)."""

    length: int


Partition = RowSplits | RowLengths | RowStarts | RowLimits | ValueRowIds | UniformRowLength


@dataclass(frozen=True)
class RaggedFeature:
    """``tf.io.RaggedFeature(dtype, value_key=None, partitions=(), row_splits_dtype=tf.int32, validate=False)``.

    The values of ``value_key`` (the spec's own name when None) as a ``RaggedTensor`` whose outer
    rows are the examples, cut further by ``partitions`` (outermost first). unison's row splits
    are int64 whatever ``row_splits_dtype`` says (its ``RaggedTensor`` keeps one splits type).
    """

    dtype: Any
    value_key: str | None = None
    partitions: Any = ()
    row_splits_dtype: Any = torch.int32
    validate: bool = False

    RowSplits = RowSplits
    RowLengths = RowLengths
    RowStarts = RowStarts
    RowLimits = RowLimits
    ValueRowIds = ValueRowIds
    UniformRowLength = UniformRowLength

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _list_dtype(self.dtype, "RaggedFeature"))
        parts = tuple(self.partitions)
        for i, p in enumerate(parts):
            if not isinstance(p, (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds, UniformRowLength)):
                raise TypeError(
                    "RaggedFeature partitions must be RaggedFeature.RowSplits/RowLengths/RowStarts/RowLimits/"
                    f"ValueRowIds/UniformRowLength. Received: partitions[{i}]={p!r}"
                )
            if isinstance(p, UniformRowLength) and i != len(parts) - 1:
                raise ValueError(
                    "unison reads RaggedFeature.UniformRowLength as the innermost partition only (its "
                    f"RaggedTensor has no uniform ragged dimension). Received: partitions={list(parts)}"
                )
        object.__setattr__(self, "partitions", parts)


Spec = FixedLenFeature | VarLenFeature | FixedLenSequenceFeature | RaggedFeature
SPEC_TYPES = (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, RaggedFeature)


@dataclass
class Plan:
    """A spec dict made ready to parse: the outputs and every feature they read, by slot."""

    outputs: list[tuple[str, Any]]
    reads: list[tuple[str, Any]]  # (feature name, dtype) per slot: outputs' keys, then partitions'
    slot: dict[str, int] = field(default_factory=dict)  # a feature has one list type: the name is enough
    wanted: dict[bytes, int] = field(default_factory=dict)
    needs_allow_missing: list[str] = field(default_factory=list)  # FixedLenSequenceFeatures TF refuses
    single: list[tuple[Any, ...]] | None = None  # the one-record parse's recipe (ops/parsing.py), made on first use
    wire: tuple[tuple[bytes, ...], tuple[int, ...]] | None = None  # keys and list kinds by slot, for the C reader
    sparse_slots: tuple[bool, ...] | None = None  # the slots the one-record recipe reads as VarLenFeatures

    def slot_of(self, key: str, dtype: Any) -> int:
        return self.slot[key]


def _source_key(key: str, spec: Spec) -> str:
    return (spec.value_key or key) if isinstance(spec, RaggedFeature) else key


def check_features(features: Any, who: str) -> Mapping[str, Spec]:
    """``features`` checked: a non-empty dict of feature specs."""
    if not isinstance(features, Mapping) or not features:
        raise TypeError(
            f"{who} needs a non-empty dict of feature name -> tf.io.FixedLenFeature/VarLenFeature/"
            f"FixedLenSequenceFeature/RaggedFeature. Received: {features!r:.100}"
        )
    for key, spec in features.items():
        if not isinstance(spec, SPEC_TYPES):
            raise TypeError(
                f"{who}: the spec of {key!r} must be tf.io.FixedLenFeature, VarLenFeature, FixedLenSequenceFeature "
                f"or RaggedFeature. Received: {spec!r}"
            )
    return features


def _make_plan(features: Mapping[str, Spec]) -> Plan:
    plan = Plan(outputs=list(features.items()), reads=[])
    by_name: dict[str, Any] = {}

    def read(key: str, dtype: Any) -> None:
        if by_name.setdefault(key, dtype) is not dtype:
            raise ValueError(
                f"Feature {key!r} is read as both {by_name[key]} and {dtype} by the feature spec; a feature "
                "holds one type of list. Received: " + repr(dict(features))[:200]
            )
        if key not in plan.slot:
            plan.slot[key] = len(plan.reads)
            plan.wanted[key.encode()] = len(plan.reads)
            plan.reads.append((key, dtype))

    roles: dict[str, set[str]] = {"dense": set(), "sparse": set(), "ragged": set()}
    for key, spec in features.items():
        role = "sparse" if isinstance(spec, VarLenFeature) else "ragged" if isinstance(spec, RaggedFeature) else "dense"
        roles[role].add(_source_key(key, spec))
    for a, b in (("dense", "sparse"), ("dense", "ragged"), ("sparse", "ragged")):
        if roles[a] & roles[b]:
            raise ValueError(
                f"{a.capitalize()} and {b} keys must not intersect (as in TF): {sorted(roles[a] & roles[b])} "
                f"is read by a {a} and a {b} feature spec. Read each feature with one spec, and convert "
                "the result (tf.sparse.to_dense, RaggedTensor.to_tensor) for the other."
            )
    for key, spec in features.items():
        read(_source_key(key, spec), spec.dtype)
        if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
            plan.needs_allow_missing.append(key)
        if isinstance(spec, RaggedFeature):
            for p in spec.partitions:
                if not isinstance(p, UniformRowLength):
                    read(p.key, torch.int64)
    return plan


_PLANS: dict[tuple[Any, ...], tuple[Plan, Mapping[str, Spec]]] = {}


def plan(features: Mapping[str, Spec]) -> Plan:
    """The parse plan of a spec dict, remembered per dict content (a map function passes the same one)."""
    key = (*features, *map(id, features.values()))
    hit = _PLANS.get(key)
    if hit is None:
        if len(_PLANS) > 256:
            _PLANS.clear()
        # the dict's specs stay referenced with the plan, so their ids cannot be reused meanwhile
        hit = _PLANS[key] = (_make_plan(features), dict(features))
    return hit[0]


def known_plan(features: Any) -> Plan | None:
    """The plan :func:`plan` made for this dict's content (its keys and spec objects), else None.

    Only checked spec dicts get a plan, so a hit means the dict needs no checks again.
    """
    if type(features) is not dict:
        return None
    hit = _PLANS.get((*features, *map(id, features.values())))
    return None if hit is None else hit[0]


__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "Plan",
    "RaggedFeature",
    "SPEC_TYPES",
    "Spec",
    "VarLenFeature",
    "check_features",
    "known_plan",
    "list_kind",
    "plan",
]
