"""TF's ragged dispatch: ``tf.*`` math and array functions called on a ``tf.RaggedTensor``.

``RaggedTensor.__unison_tf_op__`` (the hook of :mod:`unison.ops._dispatch`) sends the call here.
Element-wise functions run on the flat values (the other operands: scalars or RaggedTensors of the
same rows) and keep the ragged structure; ``reduce_*`` over the ragged axis are segment
reductions over the rows (``scatter_reduce``), with TF's values for empty rows (0 for sums,
``nan`` for means, the dtype's lowest/highest value for max/min); ``concat`` joins rows
(``axis=0``) or each row (``axis=1``). Anything else is a ``TypeError`` naming the function and
the way out (``rt.to_tensor()`` or ``tf.ragged.map_flat_values``).

The functions here take RaggedTensors by duck type (``row_splits``, ``with_flat_values``): this
module imports nothing of :mod:`unison.ops.ragged_tensor`, which calls it.

Example:
    >>> import unison as tf
    >>> rt = tf.ragged.constant([[1.0, 2.0], [], [3.0]])
    >>> tf.reduce_sum(rt, axis=1).tolist(), tf.math.square(rt).to_list()[2]
    ([3.0, 0.0, 3.0], [9.0])
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

ELEMENTWISE = frozenset(
    """abs negative sqrt rsqrt exp expm1 log log1p sin cos tan tanh sigmoid square round floor ceil sign
    cast reciprocal add subtract multiply divide truediv floordiv floormod mod maximum minimum pow
    squared_difference equal not_equal less less_equal greater greater_equal logical_and logical_or
    logical_not logical_xor where is_nan is_inf is_finite clip_by_value erf softplus""".split()
)
REDUCTIONS = {
    "reduce_sum": "sum",
    "reduce_mean": "mean",
    "reduce_max": "amax",
    "reduce_min": "amin",
    "reduce_prod": "prod",
    "reduce_any": "amax",
    "reduce_all": "amin",
}


def _is_ragged(value: Any) -> bool:
    return hasattr(value, "row_splits") and hasattr(value, "with_flat_values")


def dispatch(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``fn`` (a ``tf.*`` function) on arguments among which is a RaggedTensor."""
    name = fn.__name__
    if name in ELEMENTWISE:
        return _elementwise(fn, args, kwargs)
    if name in REDUCTIONS:
        return _reduce(name, *args, **kwargs)
    if name == "concat":
        return _concat(*args, **kwargs)
    if name in ("embedding_lookup", "gather") and len(args) > 1 and _is_ragged(args[1]) and not _is_ragged(args[0]):
        # TF's ragged dispatch: ragged ids look up their flat values and keep the rows
        ids = args[1]
        return ids.with_flat_values(fn(args[0], ids.flat_values, *args[2:], **kwargs))
    if name == "map_fn" and len(args) > 1 and _is_ragged(args[1]):
        return _map_fn(*args, **kwargs)
    if name == "shape" and _is_ragged(args[0] if args else kwargs.get("input")):
        from unison.ops.ragged_shape import DynamicRaggedShape

        rt = args[0] if args else kwargs["input"]
        out_type = args[1] if len(args) > 1 else kwargs.get("out_type", torch.int32)
        return DynamicRaggedShape.from_tensor(rt, out_type)
    if name == "tile":
        return _tile(*args, **kwargs)
    if name == "reverse":
        return _reverse(*args, **kwargs)
    raise TypeError(
        f"tf.{name} does not take a tf.RaggedTensor in unison. Use rt.to_tensor() first, or "
        f"tf.ragged.map_flat_values(tf.{name}, rt) for a function of the values."
    )


def _elementwise(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    ragged = [a for a in list(args) + list(kwargs.values()) if _is_ragged(a)]
    first = ragged[0]
    for other in ragged[1:]:
        for a, b in zip(first.nested_row_splits, other.nested_row_splits):
            if a.shape != b.shape or not bool((a == b).all()):
                from unison.errors import InvalidArgumentError

                raise InvalidArgumentError(
                    None, None, f"tf.{fn.__name__}: the RaggedTensor operands' row splits differ."
                )

    def unwrap(a: Any) -> Any:
        return a.flat_values if _is_ragged(a) else a

    out = fn(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    return first.with_flat_values(out)


def _limits(dtype: torch.dtype) -> tuple[Any, Any]:
    if dtype == torch.bool:
        return False, True
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    return info.min, info.max


def _reduce(op: str, input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Any:
    rt = input_tensor
    how = REDUCTIONS[op]
    values = rt.flat_values
    if axis is None:
        flat = values.reshape(-1)
        return _segment(flat, torch.zeros(len(flat), dtype=torch.int64), 1, how, op)[0]
    rank = len(rt.shape.as_list())
    ax = int(axis)
    if not -rank <= ax < rank:
        raise ValueError(f"axis={ax} out of bounds: expected {-rank}<=axis<{rank}")
    ax %= rank
    if rt.ragged_rank != 1 or (values.dim() != 1 and ax != 1) or ax > 1:
        raise TypeError(
            f"tf.{op}: unison reduces a 2-D RaggedTensor (ragged_rank 1) over axis None, 0 or 1. "
            f"Received shape {rt.shape.as_list()}, axis={axis}; use rt.to_tensor() first."
        )
    rowids = rt.value_rowids()
    if ax == 1:
        groups, size = rowids, rt.nrows_int()
    else:  # axis 0: the k-th item of every row that has one
        groups = torch.arange(len(rowids)) - rt.row_splits[rowids]
        size = int(rt.row_lengths().max()) if rt.nrows_int() else 0
    out = _segment(values, groups, size, how, op)
    return out.unsqueeze(ax) if keepdims else out


def _segment(values: torch.Tensor, groups: torch.Tensor, size: int, how: str, name: str) -> torch.Tensor:
    # uniform inner dimensions (an embedding per word) reduce column by column: the group index
    # is broadcast over them, so one scatter does every column
    shape = (size,) + tuple(values.shape[1:])
    index = groups.reshape((-1,) + (1,) * (values.dim() - 1)).expand(values.shape)
    if name in ("reduce_any", "reduce_all"):
        v = values.to(torch.int8)
        start = 0 if name == "reduce_any" else 1
        out = torch.full(shape, start, dtype=torch.int8).scatter_reduce(0, index, v, how, include_self=True)
        return out.to(torch.bool)
    if how == "mean":
        dtype = values.dtype if values.is_floating_point() else torch.float64
        total = torch.zeros(shape, dtype=dtype).index_add(0, groups, values.to(dtype))
        count = torch.zeros(size, dtype=dtype).index_add(0, groups, torch.ones(len(groups), dtype=dtype))
        return total / count.reshape((size,) + (1,) * (values.dim() - 1))
    if how in ("sum", "prod"):
        start = 0 if how == "sum" else 1
        return torch.full(shape, start, dtype=values.dtype).scatter_reduce(0, index, values, how, include_self=True)
    low, high = _limits(values.dtype)
    fill = low if how == "amax" else high
    return torch.full(shape, fill, dtype=values.dtype).scatter_reduce(0, index, values, how, include_self=True)


def _concat(values: Any, axis: Any, name: Any = None) -> Any:
    parts = list(values)
    rts = [p for p in parts if _is_ragged(p)]
    kind = type(rts[0])
    parts = [p if _is_ragged(p) else kind.from_tensor(p) for p in parts]
    ax = int(axis)
    if ax == 0:
        lengths = torch.cat([p.row_lengths() for p in parts])
        return kind.from_row_lengths(_cat([p.flat_values for p in parts]), lengths)
    rank = len(parts[0].shape.as_list())
    if (ax == 1 or ax == -1 and rank == 2) and builtins.all(p.ragged_rank == 1 for p in parts):
        n = parts[0].nrows_int()
        if any(p.nrows_int() != n for p in parts):
            raise ValueError("tf.concat(axis=1) of RaggedTensors needs the same number of rows.")
        rowids = torch.cat([p.value_rowids() for p in parts])
        order = torch.sort(rowids, stable=True).indices
        flat = _take(_cat([p.flat_values for p in parts]), order)
        lengths = torch.stack([p.row_lengths() for p in parts]).sum(0)
        return kind.from_row_lengths(flat, lengths)
    raise TypeError(f"tf.concat of RaggedTensors: unison joins along axis 0 or 1 (2-D). Received axis={axis}")


def _map_fn(fn: Callable[..., Any], elems: Any, dtype: Any = None, *rest: Any, **kwargs: Any) -> Any:
    """TF's map_fn over a RaggedTensor's rows: a RaggedTensor of the results (the default output
    signature is the input's), or the stacked results for a dense ``fn_output_signature``."""
    signature = kwargs.get("fn_output_signature", dtype)
    results = [fn(row) for row in elems]
    if signature is not None and not hasattr(signature, "ragged_rank"):  # a dtype or a TensorSpec
        from unison.ops.dtypes import to_tensor

        return torch.stack([to_tensor(r) for r in results]) if results else torch.zeros(0)
    if results and builtins.all(_is_ragged(r) for r in results):
        lengths = torch.tensor([r.nrows_int() for r in results], dtype=torch.int64)
        inner = _concat(results, 0)
        return type(elems).from_row_lengths(inner, lengths)
    if builtins.any(getattr(r, "ndim", 0) == 0 for r in results):
        raise ValueError(
            "tf.map_fn over a RaggedTensor: fn returned a scalar where the default output signature (the "
            "input's, a RaggedTensorSpec) needs a row. Pass fn_output_signature=<dtype> for one value per row."
        )
    lengths = torch.tensor([len(r) for r in results], dtype=torch.int64)
    flat = _cat([r if isinstance(r, torch.Tensor) else np.asarray(r, dtype=object) for r in results])
    return type(elems).from_row_lengths(flat, lengths)


def _cat(values: list[Any]) -> Any:
    """Flat values joined: torch tensors, or numpy object arrays of strings."""
    if builtins.any(isinstance(v, np.ndarray) for v in values):
        return np.concatenate([np.asarray(v, dtype=object) for v in values])
    return torch.cat(values)


def _take(values: Any, idx: torch.Tensor) -> Any:
    return values[idx.numpy()] if isinstance(values, np.ndarray) else values[idx]


def _rank1(rt: Any, fn: str) -> None:
    if rt.ragged_rank != 1 or rt.flat_values.ndim != 1:
        raise TypeError(
            f"tf.{fn} of a RaggedTensor: unison handles 2-D RaggedTensors (ragged_rank 1). Received shape "
            f"{rt.shape.as_list()}; use tf.ragged.map_flat_values or rt.to_tensor() first."
        )


def _tile(input: Any, multiples: Any, name: Any = None) -> Any:
    """TF's ragged tile: every row's items repeated ``multiples[1]`` times, the rows ``multiples[0]`` times."""
    rt = input
    _rank1(rt, "tile")
    reps = [int(m) for m in (multiples.tolist() if hasattr(multiples, "tolist") else multiples)]
    if len(reps) != 2 or builtins.any(m < 0 for m in reps):
        raise ValueError(
            f"tf.tile: `multiples` must hold 2 non-negative counts for a 2-D RaggedTensor. Received {reps}"
        )
    lengths = rt.row_lengths()
    new_lengths = lengths * reps[1]
    rowids = torch.repeat_interleave(torch.arange(len(lengths)), new_lengths)
    starts = new_lengths.cumsum(0) - new_lengths
    offset = torch.arange(int(new_lengths.sum())) - starts[rowids]
    src = rt.row_splits[:-1][rowids] + offset % lengths[rowids].clamp(min=1)
    flat = _take(rt.flat_values, src)
    out = type(rt).from_row_lengths(flat, new_lengths)
    return _concat([out] * reps[0], 0) if reps[0] != 1 else out


def _reverse(tensor: Any, axis: Any, name: Any = None) -> Any:
    """TF's ragged reverse: ``axis=0`` reverses the rows' order, ``axis=1`` each row's items."""
    rt = tensor
    _rank1(rt, "reverse")
    axes = sorted({int(a) % 2 for a in (axis.tolist() if hasattr(axis, "tolist") else axis)})
    if 1 in axes:
        rowids = rt.value_rowids()
        pos = torch.arange(len(rowids))
        src = rt.row_splits[1:][rowids] - 1 - (pos - rt.row_splits[:-1][rowids])
        rt = rt.with_flat_values(_take(rt.flat_values, src))
    if 0 in axes:
        lengths = rt.row_lengths().flip(0)
        rowids = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
        starts = lengths.cumsum(0) - lengths
        old = rt.nrows_int() - 1 - rowids
        src = rt.row_splits[:-1][old] + torch.arange(len(rowids)) - starts[rowids]
        rt = type(rt).from_row_lengths(_take(rt.flat_values, src), lengths)
    return rt


__all__ = ["dispatch"]
