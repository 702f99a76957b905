"""``tf.io.SparseFeature``: a sparse value assembled from an index feature and a value feature.

``SparseFeature(index_key, value_key, dtype, size, already_sorted=False)`` reads, from each
``Example``, the ``int64`` list ``index_key`` (one list per dimension when ``index_key`` is a list
of keys, with ``size`` a list as long) and the ``dtype`` list ``value_key``, and pairs them
position by position into a ``SparseTensor`` of dense shape ``[batch] + size`` (``size`` alone for
``parse_single_example``), its entries sorted by index unless ``already_sorted``. As in TF, the
index and value features are parsed as ``VarLenFeature``s underneath (so asking for one of them
with another type is a ``ValueError``), appear in the result only when asked for, and indices are
not checked against ``size``.

Example:
    >>> import unison as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "ix": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 1])),
    ...     "v": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0]))}))
    >>> spec = {"s": tf.io.SparseFeature(index_key="ix", value_key="v", dtype=tf.float32, size=5)}
    >>> s = tf.io.parse_single_example(ex.SerializeToString(), spec)["s"]
    >>> s.indices.tolist(), s.values.tolist(), s.dense_shape.tolist()
    ([[1], [3]], [2.0, 1.0], [5])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from unison.ops.dtypes import as_dtype

__all__ = ["SparseFeature", "assemble_sparse_features", "expand_sparse_features"]


@dataclass(frozen=True)
class SparseFeature:
    """``tf.io.SparseFeature(index_key, value_key, dtype, size, already_sorted=False)``."""

    index_key: Any
    value_key: str
    dtype: Any
    size: Any
    already_sorted: bool = False

    def _index_keys(self) -> list[str]:
        return [self.index_key] if isinstance(self.index_key, str) else list(self.index_key)

    def _sizes(self) -> list[int]:
        keys = self._index_keys()
        sizes = [self.size] if isinstance(self.index_key, str) else self.size
        if isinstance(sizes, int) and not isinstance(self.index_key, str):
            sizes = [sizes]
        if not isinstance(sizes, (list, tuple)) or any(
            not isinstance(s, (int, np.integer)) or isinstance(s, bool) for s in sizes
        ):
            raise TypeError(
                f"vocab_size has to be a Tensor or Python int. Found {type(self.size)}: tf.io.SparseFeature's size is "
                f"the dense size of each index dimension (an int, or a list of ints for a list of index keys). "
                f"Received: size={self.size!r}"
            )
        if len(sizes) != len(keys):
            raise ValueError(
                "sp_ids and vocab_size have to have equal lengths: tf.io.SparseFeature needs one size per index "
                f"key. Received: index_key={self.index_key!r}, size={self.size!r}"
            )
        return [int(s) for s in sizes]


def expand_sparse_features(features: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, SparseFeature]]:
    """The specs with each ``SparseFeature`` replaced by ``VarLenFeature``s of its keys, and those features."""
    from unison.ops.feature_specs import VarLenFeature

    if not isinstance(features, Mapping):
        return features, {}  # the parser's own check names the mistake
    sparse = {k: v for k, v in features.items() if isinstance(v, SparseFeature)}
    if not sparse:
        return dict(features), {}
    plain = {k: v for k, v in features.items() if not isinstance(v, SparseFeature)}
    wanted: dict[str, Any] = {}
    for spec in sparse.values():
        spec._sizes()
        for key, dtype in [*((k, torch.int64) for k in spec._index_keys()), (spec.value_key, as_dtype(spec.dtype))]:
            asked = plain.get(key)
            have = wanted.setdefault(key, dtype)
            if have is not dtype or (asked is not None and getattr(asked, "dtype", dtype) is not dtype):
                other = asked.dtype if asked is not None and getattr(asked, "dtype", dtype) is not dtype else have
                raise ValueError(f"Conflicting type {other} vs {dtype} for feature {key}.")
            if asked is not None and not isinstance(asked, VarLenFeature):
                raise ValueError(
                    f"Conflicting type {type(asked).__name__} vs VarLenFeature for feature {key}: a "
                    "tf.io.SparseFeature reads it as a VarLenFeature."
                )
    return {**{k: VarLenFeature(d) for k, d in wanted.items()}, **plain}, sparse


def assemble_sparse_features(
    parsed: dict[str, Any], sparse: Mapping[str, SparseFeature], asked: Mapping[str, Any], batched: bool, batch: int
) -> dict[str, Any]:
    """Build each ``SparseFeature``'s ``SparseTensor`` from its parsed keys; drop keys not asked for."""
    from unison.ops.sparse_tensor import SparseTensor

    out = {k: v for k, v in parsed.items() if k in asked}
    for name, spec in sparse.items():
        ids = [parsed[k] for k in spec._index_keys()]
        values = parsed[spec.value_key]
        for sp_ids in ids:
            if sp_ids.values.shape[0] != values.values.shape[0]:
                raise ValueError(f"Dimensions {sp_ids.values.shape[0]} and {values.values.shape[0]} are not compatible")
        columns = [ids[0].indices[:, :1]] if batched else []
        columns += [sp_ids.values.reshape(-1, 1).to(torch.int64) for sp_ids in ids]
        indices = torch.cat(columns, dim=1) if columns else torch.zeros((0, 0), dtype=torch.int64)
        vals = values.values
        if not spec.already_sorted and indices.shape[0]:
            order = np.lexsort(indices.numpy().T[::-1])  # by batch row, then each index in turn; stable
            indices = indices[torch.as_tensor(order)]
            vals = vals[torch.as_tensor(order)] if isinstance(vals, torch.Tensor) else vals[order]
        shape = ([batch] if batched else []) + spec._sizes()
        out[name] = SparseTensor(indices, vals, shape)
    return out
