"""``tf.io.parse_sequence_example`` and ``parse_single_sequence_example``: ``tf.train.SequenceExample``.

A ``SequenceExample`` holds ``context`` (a ``Features`` message, read like an ``Example``'s: its
bytes are an ``Example``'s with one more field) and ``feature_lists``: per name, one ``Feature``
per time step. Sequence features read them as TF does:

- ``FixedLenSequenceFeature(shape, dtype)``: ``prod(shape)`` values per step, ``[T] + shape``
  (``[batch, longest T] + shape`` padded with ``default_value`` or 0, and each record's ``T`` in
  the third result of ``parse_sequence_example``); a missing list is an error unless
  ``allow_missing``;
- ``VarLenFeature``: a ``SparseTensor`` with indices ``[t, j]`` (``[b, t, j]`` for a batch);
- ``RaggedFeature`` (no partitions): a ``RaggedTensor`` with one row per step (per record, then
  per step, for a batch).

The sequence part goes through the protobuf runtime (the context through
:func:`unison.ops.parsing.parse_example`).

Example:
    >>> import unison as tf
    >>> fl = tf.train.FeatureList(feature=[tf.train.Feature(int64_list=tf.train.Int64List(value=[i])) for i in (1, 2)])
    >>> se = tf.train.SequenceExample(feature_lists=tf.train.FeatureLists(feature_list={"s": fl}))
    >>> _, seq = tf.io.parse_single_sequence_example(
    ...     se.SerializeToString(), sequence_features={"s": tf.io.FixedLenSequenceFeature([], tf.int64)})
    >>> seq["s"].tolist()
    [1, 2]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.feature_columns import Column, _array, _output, build_sequence, type_error
from unison.ops.feature_specs import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    VarLenFeature,
    check_features,
    list_kind,
)
from unison.ops.parsing import _parse, _serialized_items


def _decode(data: bytes, index: int) -> Any:
    from google.protobuf.message import DecodeError

    from unison.ops.example import SequenceExample

    try:
        return SequenceExample.FromString(data)
    except DecodeError as exc:
        raise InvalidArgumentError(
            f"Could not parse example input, value: {data[:40]!r} (record {index}: {exc}). Pass serialized "
            "tf.train.SequenceExample records."
        ) from None


def _steps(lists: list[Any], key: str, dtype: Any) -> tuple[list[Any], list[list[int]], list[bool]]:
    """Every record's steps of one feature list: the values (flat), the count per step, presence."""
    expected = list_kind(dtype)
    flat: list[Any] = []
    counts: list[list[int]] = []
    present: list[bool] = []
    for i, feature_lists in enumerate(lists):
        if key not in feature_lists:
            counts.append([])
            present.append(False)
            continue
        present.append(True)
        row = []
        for feature in feature_lists[key].feature:
            kind = feature.WhichOneof("kind")
            if kind is None:
                row.append(0)
                continue
            if kind != expected:
                raise type_error(key, i, kind, dtype)
            values = getattr(feature, kind).value
            row.append(len(values))
            flat.extend(values)
        counts.append(row)
    return flat, counts, present


def _sequence_outputs(
    records: list[bytes], features: Mapping[str, Any], batched: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    from unison.ops.ragged_tensor import RaggedTensor
    from unison.ops.sparse_tensor import SparseTensor

    lists = [_decode(r, i).feature_lists.feature_list for i, r in enumerate(records)]
    out: dict[str, Any] = {}
    lengths: dict[str, Any] = {}
    for key, spec in features.items():
        if isinstance(spec, FixedLenFeature):
            raise ValueError(
                f"sequence_features take FixedLenSequenceFeature, VarLenFeature or RaggedFeature. Received a "
                f"FixedLenFeature for {key!r}; read a per-record value through context_features."
            )
        source = (spec.value_key or key) if isinstance(spec, RaggedFeature) else key
        flat, counts, present = _steps(lists, source, spec.dtype)
        steps = np.array([len(c) for c in counts], dtype=np.int64)
        if isinstance(spec, FixedLenSequenceFeature):
            n = math.prod(spec.shape)
            for i, row in enumerate(counts):
                if not present[i] and not spec.allow_missing:
                    raise InvalidArgumentError(
                        f"Name: <unknown>, Feature list '{key}' is required but could not be found (record {i}). "
                        "Pass FixedLenSequenceFeature(..., allow_missing=True) to read a missing list as empty."
                    )
                bad = next((t for t, c in enumerate(row) if c != n), None)
                if bad is not None:
                    raise InvalidArgumentError(
                        f"Key: {key}, Index: {i}.  Number of values != expected at step {bad}: {row[bad]} values, "
                        f"shape {list(spec.shape)}. Fix the feature's shape or the record."
                    )
            column = Column(flat, steps * max(n, 1))
            wide = FixedLenSequenceFeature(spec.shape, spec.dtype, True, spec.default_value)
            out[key] = build_sequence(key, wide, column, batched)
            lengths[key] = torch.from_numpy(steps)
            continue
        step_counts = np.array([c for row in counts for c in row], dtype=np.int64)
        values = _output(_array(flat, spec.dtype), spec.dtype)
        if isinstance(spec, RaggedFeature):
            if spec.partitions:
                raise ValueError(
                    f"unison reads sequence RaggedFeatures without partitions. Received partitions "
                    f"{list(spec.partitions)} for {key!r}; read the lists and build the RaggedTensor in a map()."
                )
            per_step = RaggedTensor.from_row_lengths(values, torch.from_numpy(step_counts))
            out[key] = RaggedTensor.from_row_lengths(per_step, torch.from_numpy(steps)) if batched else per_step
            continue
        if isinstance(values, np.ndarray):
            from unison.ops.string_tensor import StringTensor

            values = StringTensor(values)
        step_index = np.repeat(np.arange(len(step_counts), dtype=np.int64), step_counts)
        within = np.arange(len(flat), dtype=np.int64) - np.repeat(np.cumsum(step_counts) - step_counts, step_counts)
        starts = np.cumsum(steps) - steps
        record_of_step = np.repeat(np.arange(len(records), dtype=np.int64), steps)
        t = step_index - starts[record_of_step[step_index]] if len(step_index) else step_index
        widest = int(step_counts.max()) if len(step_counts) else 0
        if batched:
            indices = np.stack([record_of_step[step_index], t, within], axis=1)
            shape = [len(records), int(steps.max()) if len(steps) else 0, widest]
        else:
            indices, shape = np.stack([t, within], axis=1), [int(steps[0]), widest]
        out[key] = SparseTensor._from_parts(
            torch.from_numpy(indices.reshape(-1, len(shape))), values, torch.tensor(shape, dtype=torch.int64)
        )
    return out, lengths


def _check(context_features: Any, sequence_features: Any, who: str) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    if not context_features and not sequence_features:
        raise ValueError(f"{who}: pass context_features, sequence_features or both (dicts of feature specs).")
    context = check_features(context_features, who) if context_features else {}
    sequence = check_features(sequence_features, who) if sequence_features else {}
    for key, spec in sequence.items():
        if isinstance(spec, (FixedLenFeature,)):
            continue  # named by _sequence_outputs
        if not isinstance(spec, (FixedLenSequenceFeature, VarLenFeature, RaggedFeature)):
            raise TypeError(f"{who}: unsupported sequence feature spec for {key!r}: {spec!r}")
    return context, sequence


def parse_sequence_example(
    serialized: Any,
    context_features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
    example_names: Any = None,
    name: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``tf.io.parse_sequence_example``: a batch of ``SequenceExample`` records.

    Returns:
        ``(context, feature_lists, feature_list_lengths)``: batched context values, batched
        sequence values, and each ``FixedLenSequenceFeature``'s number of steps per record.
    """
    who = "tf.io.parse_sequence_example"
    context_spec, sequence_spec = _check(context_features, sequence_features, who)
    records, _ = _serialized_items(serialized, who)
    # a SequenceExample's bytes read as an Example give its context (the feature lists are field 2,
    # which the byte reader leaves to protobuf: no warning for that here)
    context = _parse(records, context_spec, batched=True, warn=False) if context_spec else {}
    sequence, lengths = _sequence_outputs(records, sequence_spec, batched=True) if sequence_spec else ({}, {})
    return context, sequence, lengths


def parse_single_sequence_example(
    serialized: Any,
    context_features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
    example_name: Any = None,
    name: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``tf.io.parse_single_sequence_example``: one ``SequenceExample`` as ``(context, feature_lists)``."""
    who = "tf.io.parse_single_sequence_example"
    context_spec, sequence_spec = _check(context_features, sequence_features, who)
    records, scalar = _serialized_items(serialized, who)
    if not scalar and len(records) != 1:
        raise ValueError(f"{who} takes one serialized record. Received {len(records)}; use parse_sequence_example.")
    context = _parse(records, context_spec, batched=False, warn=False) if context_spec else {}
    sequence, _ = _sequence_outputs(records, sequence_spec, batched=False) if sequence_spec else ({}, {})
    return context, sequence


__all__ = ["parse_sequence_example", "parse_single_sequence_example"]
