"""``keras.ops.core``: conversion, dtypes, shapes, control flow, scatter and slice updates.

Control flow runs eagerly in Python (``cond`` calls one branch, ``while_loop``/``fori_loop``/``scan``
loop), which is what torch does and what Keras's torch backend does; gradients flow through them
like any Python code. ``shape(x)`` is a tuple of ints (``None`` for the batch axis of a symbolic
``keras.Input``), so ``ops.shape(x)[0]`` is a plain number.

Example:
    >>> from unison.keras import ops
    >>> ops.shape(ops.zeros((2, 3))), ops.dtype(ops.ones(2, dtype="int32"))
    ((2, 3), 'int32')
    >>> ops.fori_loop(0, 4, lambda i, total: total + i, 0)
    6
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from unison.keras.ops._convert import shape_tuple, standardize_dtype, tensor, torch_dtype
from unison.keras.ops._core_more import *  # noqa: F403
from unison.keras.ops._core_more import __all__ as _more_names
from unison.ops import control_flow as _tf_control
from unison.ops import nest as _nest
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor


def convert_to_tensor(
    x: Any, dtype: Any = None, sparse: builtins.bool | None = None, ragged: builtins.bool | None = None
) -> Tensor:
    """``keras.ops.convert_to_tensor(x, dtype=None)``: Python ints become int32, floats floatx; tensors pass through."""
    if sparse or ragged:
        raise ValueError("keras.ops.convert_to_tensor: unison has no sparse or ragged tensors. Use sparse=False.")
    return tensor(x, dtype)


def convert_to_numpy(x: Any) -> np.ndarray:
    """``keras.ops.convert_to_numpy(x)``: a numpy array (detached, on the CPU)."""
    if isinstance(x, torch.Tensor):
        t = x.detach().cpu()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.numpy()
    return np.asarray(x)


def is_tensor(x: Any) -> builtins.bool:
    """``keras.ops.is_tensor(x)``: whether ``x`` is a backend (torch) tensor."""
    return isinstance(x, torch.Tensor)


def cast(x: Any, dtype: Any) -> Tensor:
    """``keras.ops.cast(x, dtype)``; float to int truncates toward zero."""
    return tensor(x).to(torch_dtype(dtype))


def saturate_cast(x: Any, dtype: Any) -> Tensor:
    """``keras.ops.saturate_cast(x, dtype)``: values clipped to ``dtype``'s range before the cast."""
    t, target = tensor(x), torch_dtype(dtype)
    info = torch.finfo(target) if target.is_floating_point else torch.iinfo(target)
    if t.is_floating_point() or target.is_floating_point:
        t = torch.clamp(t, builtins.max(info.min, torch.finfo(torch.float64).min), info.max)
    elif t.dtype != torch.bool:  # int to a narrower or unsigned int: clip, never wrap (TF's saturate_cast)
        source = torch.iinfo(t.dtype)
        t = torch.clamp(t, builtins.max(info.min, source.min), builtins.min(info.max, source.max))
    return t.to(target)


def dtype(x: Any) -> str:
    """``keras.ops.dtype(x)``: the dtype's name, such as ``"float32"``."""
    value = getattr(x, "dtype", None)
    if value is None or isinstance(x, (list, tuple, builtins.int, builtins.float)):
        value = tensor(x).dtype
    if value == "string":
        return "string"
    return standardize_dtype(value)


def shape(x: Any) -> tuple[int | None, ...]:
    """``keras.ops.shape(x)``: a tuple of ints (``None`` for the batch axis of a symbolic input)."""
    value = getattr(x, "shape", None)
    if value is None:
        value = tensor(x).shape
    return tuple(None if d is None else int(d) for d in value)


def stop_gradient(variable: Any) -> Tensor:
    """``keras.ops.stop_gradient(x)``: the same values, with no gradient flowing back."""
    return tensor(variable).detach()


def cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]) -> Any:
    """``keras.ops.cond(pred, true_fn, false_fn)``: calls the branch ``pred`` selects (a scalar)."""
    return _tf_control.cond(pred, true_fn, false_fn)


def while_loop(
    cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any, maximum_iterations: int | None = None
) -> Any:
    """``keras.ops.while_loop(cond, body, loop_vars, maximum_iterations=None)``.

    A tuple/list ``loop_vars`` is unpacked into ``cond``/``body`` arguments; a single value is passed as is.
    """
    return _tf_control.while_loop(cond, body, loop_vars, maximum_iterations=maximum_iterations)


def fori_loop(lower: int, upper: int, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """``keras.ops.fori_loop(lower, upper, body_fun, init_val)``: ``val = body_fun(i, val)`` for i in range."""
    value = init_val
    for i in builtins.range(int(tensor(lower)), int(tensor(upper))):
        value = body_fun(i, value)
    return value


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: builtins.bool = False,
    unroll: int = 1,
) -> tuple[Any, Any]:
    """``keras.ops.scan(f, init, xs=None, length=None, reverse=False)``: ``carry, y = f(carry, x)`` along xs.

    Returns ``(final_carry, stacked_ys)``.
    """
    leaves = [] if xs is None else _nest.flatten(xs)
    n = length if xs is None else int(tensor(leaves[0]).shape[0])
    if n is None:
        raise ValueError("keras.ops.scan needs xs or length. Received: xs=None, length=None")
    carry, ys = init, []
    order = builtins.range(n - 1, -1, -1) if reverse else builtins.range(n)
    for i in order:
        x = None if xs is None else _nest.pack_sequence_as(xs, [tensor(leaf)[i] for leaf in leaves])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys or ys[0] is None:
        return carry, None
    stacked = _nest.map_structure(lambda *items: torch.stack([tensor(v) for v in items]), *ys)
    return carry, stacked


def map(f: Callable[[Any], Any], xs: Any) -> Any:
    """``keras.ops.map(f, xs)``: ``f`` applied to each slice of ``xs`` along axis 0, results stacked."""
    leaves = _nest.flatten(xs)
    n = int(tensor(leaves[0]).shape[0])
    outs = [f(_nest.pack_sequence_as(xs, [tensor(leaf)[i] for leaf in leaves])) for i in builtins.range(n)]
    return _nest.map_structure(lambda *items: torch.stack([tensor(v) for v in items]), *outs)


def vectorized_map(function: Callable[[Any], Any], elements: Any) -> Any:
    """``keras.ops.vectorized_map(function, elements)``: like :func:`map` (run per element)."""
    return map(function, elements)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``keras.ops.switch(index, branches, *operands)``: ``branches[index](*operands)``, index clamped."""
    i = builtins.min(builtins.max(int(tensor(index)), 0), len(branches) - 1)
    return branches[i](*operands)


def unstack(x: Any, num: int | None = None, axis: int = 0) -> list[Tensor]:
    """``keras.ops.unstack(x, num=None, axis=0)``: the slices along ``axis``."""
    t = tensor(x)
    if num is not None and t.shape[axis] != num:
        raise ValueError(f"keras.ops.unstack: axis {axis} has size {t.shape[axis]}, not num={num}.")
    return list(torch.unbind(t, dim=axis))


def _index_rows(indices: Any, rank: int, fn: str) -> tuple[Tensor, ...]:
    idx = tensor(indices)
    if idx.is_floating_point() or idx.dim() < 1 or idx.shape[-1] > rank:
        raise ValueError(
            f"keras.ops.{fn}: indices must be integers of shape (..., k) with k <= {rank} (the target's rank). "
            f"Received indices of shape {tuple(idx.shape)} and dtype {idx.dtype}."
        )
    flat = idx.reshape(-1, idx.shape[-1]).long()
    return tuple(flat[:, j] for j in builtins.range(flat.shape[1]))


def scatter(indices: Any, values: Any, shape: Any) -> Tensor:
    """``keras.ops.scatter(indices, values, shape)``: zeros of ``shape`` with ``values`` added at ``indices``.

    Repeated indices accumulate, as in Keras (and ``tf.scatter_nd``).
    """
    v = tensor(values)
    out = torch.zeros(shape_tuple(shape, "scatter"), dtype=v.dtype, device=v.device)
    rows = _index_rows(indices, out.dim(), "scatter")
    return out.index_put(rows, v.reshape(-1, *out.shape[len(rows) :]), accumulate=True)


def scatter_update(inputs: Any, indices: Any, updates: Any) -> Tensor:
    """``keras.ops.scatter_update(inputs, indices, updates)``: a copy of ``inputs`` with ``updates`` written at ``indices``."""
    t = tensor(inputs)
    rows = _index_rows(indices, t.dim(), "scatter_update")
    u = tensor(updates).to(t.dtype).reshape(-1, *t.shape[len(rows) :])
    return t.index_put(rows, u)


def _starts(start_indices: Any, rank: int, fn: str) -> list[int]:
    starts = [int(v) for v in (tensor(start_indices).reshape(-1).tolist())]
    if len(starts) != rank:
        raise ValueError(
            f"keras.ops.{fn}: start_indices needs one entry per axis ({rank}). Received: start_indices={start_indices!r}"
        )
    return starts


def slice(inputs: Any, start_indices: Any, shape: Any) -> Tensor:
    """``keras.ops.slice(inputs, start_indices, shape)``: the block of ``shape`` starting at ``start_indices``."""
    t = tensor(inputs)
    starts = _starts(start_indices, t.dim(), "slice")
    sizes = shape_tuple(shape, "slice")
    index = tuple(
        builtins.slice(s, s + (t.shape[i] - s if n == -1 else n)) for i, (s, n) in enumerate(zip(starts, sizes))
    )
    return t[index]


def slice_update(inputs: Any, start_indices: Any, updates: Any) -> Tensor:
    """``keras.ops.slice_update(inputs, start_indices, updates)``: a copy with ``updates`` written at the block."""
    t = tensor(inputs)
    u = tensor(updates).to(t.dtype)
    starts = _starts(start_indices, t.dim(), "slice_update")
    index = tuple(builtins.slice(s, s + n) for s, n in zip(starts, u.shape))
    out = t.clone()
    out[index] = u
    return out


__all__ = [
    "cast",
    "cond",
    "convert_to_numpy",
    "convert_to_tensor",
    "dtype",
    "fori_loop",
    "is_tensor",
    "map",
    "saturate_cast",
    "scan",
    "scatter",
    "scatter_update",
    "shape",
    "slice",
    "slice_update",
    "stop_gradient",
    "switch",
    "unstack",
    "vectorized_map",
    "while_loop",
]


# Symbolic keras.Input tensors defer these to the functional graph; shape/dtype/control flow read them directly.
wrap_namespace(
    globals(),
    [
        "cast",
        "convert_to_tensor",
        "saturate_cast",
        "scatter",
        "scatter_update",
        "slice",
        "slice_update",
        "stop_gradient",
    ],
)
__all__ = sorted([*__all__, *_more_names])  # wrapped in their own module
