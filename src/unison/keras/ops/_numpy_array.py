"""``keras.ops`` numpy namespace, part 2: creating, reshaping, indexing and multiplying arrays.

numpy's semantics where torch's differ: ``transpose`` without ``axes`` reverses every axis,
``split`` takes numpy's ``indices_or_sections``, ``take``/``argsort``/``cumsum`` flatten when
``axis=None``, ``zeros``/``ones`` default to floatx, ``arange`` of Python ints is int32, ``dot``
follows ``numpy.dot``.

Example:
    >>> from unison.keras import ops
    >>> ops.transpose(ops.zeros((2, 3, 4))).shape, ops.arange(3).dtype
    (torch.Size([4, 3, 2]), torch.int32)
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from unison.keras.ops._convert import axes, float_of, pair, same_device, shape_tuple, tensor, torch_dtype
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor


def _dtype_or_floatx(dtype: Any) -> torch.dtype:
    return torch.get_default_dtype() if dtype is None else torch_dtype(dtype)


def _promoted(values: Sequence[Any]) -> list[Tensor]:
    ts = same_device([tensor(v) for v in values])
    if not ts:
        return ts
    dtype = ts[0].dtype
    for t in ts[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    return [t.to(dtype) for t in ts]


# --- creation -----------------------------------------------------------------------------------


def array(x: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.array(x, dtype=None)``: a tensor holding ``x``."""
    return tensor(x, dtype)


def zeros(shape: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.zeros(shape, dtype=None)``: zeros of floatx unless ``dtype`` is given."""
    return torch.zeros(shape_tuple(shape, "zeros"), dtype=_dtype_or_floatx(dtype))


def ones(shape: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.ones(shape, dtype=None)``: ones of floatx unless ``dtype`` is given."""
    return torch.ones(shape_tuple(shape, "ones"), dtype=_dtype_or_floatx(dtype))


def empty(shape: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.empty(shape, dtype=None)``: an uninitialised tensor."""
    return torch.empty(shape_tuple(shape, "empty"), dtype=_dtype_or_floatx(dtype))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.full(shape, fill_value, dtype=None)``: the dtype of ``fill_value`` unless given."""
    value = tensor(fill_value, dtype)
    return torch.broadcast_to(value, shape_tuple(shape, "full")).clone()


def zeros_like(x: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.zeros_like(x, dtype=None)``."""
    t = tensor(x)
    return torch.zeros_like(t, dtype=None if dtype is None else torch_dtype(dtype))


def ones_like(x: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.ones_like(x, dtype=None)``."""
    t = tensor(x)
    return torch.ones_like(t, dtype=None if dtype is None else torch_dtype(dtype))


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.full_like(x, fill_value, dtype=None)``."""
    t = tensor(x)
    return torch.full_like(t, tensor(fill_value).item(), dtype=None if dtype is None else torch_dtype(dtype))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Tensor:
    """``keras.ops.arange(start, stop=None, step=1, dtype=None)``: int32 for ints, floatx if any is a float."""
    if stop is None:
        start, stop = 0, start
    values = [
        tensor(v).item() if isinstance(v, (torch.Tensor, np.ndarray, np.generic)) else v for v in (start, stop, step)
    ]
    if dtype is None:
        dtype = torch.get_default_dtype() if builtins.any(isinstance(v, float) for v in values) else torch.int32
    if values[2] == 0:
        raise ValueError(f"keras.ops.arange: step must not be zero. Received: step={step!r}")
    return torch.arange(values[0], values[1], values[2], dtype=torch_dtype(dtype))


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: builtins.bool = True,
    retstep: builtins.bool = False,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """``keras.ops.linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0)``."""
    if int(num) < 0:
        raise ValueError(f"keras.ops.linspace: num must be non-negative. Received: num={num!r}")
    lo, hi = float_of(tensor(start)).to(torch.float64), float_of(tensor(stop)).to(torch.float64)
    lo, hi = torch.broadcast_tensors(lo, hi)
    div = (num - 1) if endpoint else num
    step = (hi - lo) / builtins.max(div, 1)
    steps = torch.arange(int(num), dtype=torch.float64).reshape((-1,) + (1,) * lo.dim())
    out = lo + steps * step
    if endpoint and num > 1:
        out[-1] = hi
    out = torch.moveaxis(out, 0, axis)
    out = out.to(_dtype_or_floatx(dtype))
    return (out, step.to(out.dtype) if out.is_floating_point() else step) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:
    """``keras.ops.eye(N, M=None, k=0, dtype=None)``: ones on the ``k``-th diagonal."""
    rows, cols = int(N), int(N if M is None else M)
    out = torch.ones(rows, cols, dtype=_dtype_or_floatx(dtype))
    return torch.triu(torch.tril(out, diagonal=k), diagonal=k)


def identity(n: int, dtype: Any = None) -> Tensor:
    """``keras.ops.identity(n, dtype=None)``: the ``n x n`` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:
    """``keras.ops.tri(N, M=None, k=0, dtype=None)``: ones at and below the ``k``-th diagonal."""
    return torch.tril(torch.ones(int(N), int(N if M is None else M), dtype=_dtype_or_floatx(dtype)), diagonal=k)


def meshgrid(*x: Any, indexing: str = "xy") -> list[Tensor]:
    """``keras.ops.meshgrid(*x, indexing="xy")``."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"keras.ops.meshgrid: indexing must be 'xy' or 'ij'. Received: indexing={indexing!r}")
    return list(torch.meshgrid(*[tensor(v) for v in x], indexing=indexing))


# --- shape --------------------------------------------------------------------------------------


def reshape(x: Any, newshape: Any) -> Tensor:
    """``keras.ops.reshape(x, newshape)``: one entry may be ``-1`` (or ``None``, from a symbolic shape)."""
    t = tensor(x)
    if isinstance(newshape, (list, tuple)) and any(d is None for d in newshape):
        # A shape built from ops.shape(symbolic_input) holds None for the batch axis: infer it.
        newshape = [-1 if d is None else d for d in newshape]
    target = shape_tuple(newshape, "reshape")
    try:
        return t.reshape(target)
    except RuntimeError:
        raise ValueError(
            f"keras.ops.reshape cannot reshape a tensor of shape {tuple(t.shape)} ({t.numel()} values) "
            f"to {target}. Received: newshape={newshape!r}; the sizes must multiply to {t.numel()}."
        ) from None


def transpose(x: Any, axes: Any = None) -> Tensor:
    """``keras.ops.transpose(x, axes=None)``: without ``axes`` every axis is reversed, as in numpy."""
    t = tensor(x)
    if axes is None:
        return t.permute(*builtins.range(t.dim() - 1, -1, -1))
    return t.permute(*[int(a) for a in axes])


def expand_dims(x: Any, axis: Any) -> Tensor:
    """``keras.ops.expand_dims(x, axis)``: ``axis`` (an int or tuple) counts in the result's rank."""
    t = tensor(x)
    items = [axis] if isinstance(axis, int) else list(axis)
    out_ndim = t.dim() + len(items)
    for a in sorted(int(a) % out_ndim for a in items):
        t = t.unsqueeze(a)
    return t


def squeeze(x: Any, axis: Any = None) -> Tensor:
    """``keras.ops.squeeze(x, axis=None)``: drops size-1 axes (only those in ``axis`` when given)."""
    t = tensor(x)
    dims = axes(axis, t.dim(), "squeeze")
    if dims is None:
        return t.squeeze()
    for d in dims:
        if t.shape[d] != 1:
            raise ValueError(
                f"keras.ops.squeeze: axis {d} has size {t.shape[d]}, not 1 (shape {tuple(t.shape)}). "
                f"Received: axis={axis!r}; squeeze only size-1 axes."
            )
    return t.squeeze(dims)


def ravel(x: Any) -> Tensor:
    """``keras.ops.ravel(x)``: the values as a 1-D tensor."""
    return tensor(x).reshape(-1)


def moveaxis(x: Any, source: Any, destination: Any) -> Tensor:
    """``keras.ops.moveaxis(x, source, destination)``."""
    return torch.moveaxis(tensor(x), source, destination)


def swapaxes(x: Any, axis1: int, axis2: int) -> Tensor:
    """``keras.ops.swapaxes(x, axis1, axis2)``."""
    return torch.swapaxes(tensor(x), axis1, axis2)


def broadcast_to(x: Any, shape: Any) -> Tensor:
    """``keras.ops.broadcast_to(x, shape)``."""
    return torch.broadcast_to(tensor(x), shape_tuple(shape, "broadcast_to"))


def size(x: Any) -> Tensor:
    """``keras.ops.size(x)``: the number of values, an int32 scalar tensor as Keras on TF gives."""
    return torch.tensor(tensor(x).numel(), dtype=torch.int32)


def ndim(x: Any) -> int:
    """``keras.ops.ndim(x)``: the rank (also of a symbolic ``keras.Input``)."""
    shape = getattr(x, "shape", None)
    return len(shape) if shape is not None else tensor(x).dim()


def copy(x: Any) -> Tensor:
    """``keras.ops.copy(x)``: a copy that autograd still tracks."""
    return tensor(x).clone()


# --- joining and splitting ----------------------------------------------------------------------


def concatenate(xs: Sequence[Any], axis: int = 0) -> Tensor:
    """``keras.ops.concatenate(xs, axis=0)``: dtypes promote as in numpy."""
    if axis is None:
        return torch.cat([t.reshape(-1) for t in _promoted(xs)])
    return torch.cat(_promoted(xs), dim=axis)


def stack(x: Sequence[Any], axis: int = 0) -> Tensor:
    """``keras.ops.stack(x, axis=0)``: a new axis."""
    return torch.stack(_promoted(x), dim=axis)


def hstack(xs: Sequence[Any]) -> Tensor:
    """``keras.ops.hstack(xs)``."""
    return torch.hstack(_promoted(xs))


def vstack(xs: Sequence[Any]) -> Tensor:
    """``keras.ops.vstack(xs)``: Keras on TF concatenates on axis 0, so 1-D inputs stay 1-D (not numpy's rows)."""
    return torch.cat(_promoted(xs), dim=0)


def append(x1: Any, x2: Any, axis: int | None = None) -> Tensor:
    """``keras.ops.append(x1, x2, axis=None)``: without ``axis`` both are flattened first."""
    a, b = _promoted([x1, x2])
    if axis is None:
        return torch.cat([a.reshape(-1), b.reshape(-1)])
    return torch.cat([a, b], dim=axis)


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """``keras.ops.split(x, indices_or_sections, axis=0)``, numpy's meaning.

    An int ``n`` cuts ``n`` equal parts (the axis must divide evenly); a list gives the cut points.
    """
    t = tensor(x)
    length = t.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        n = int(indices_or_sections)
        if n <= 0 or length % n:
            raise ValueError(
                f"keras.ops.split: axis {axis} has size {length}, which does not divide into {n} equal parts. "
                f"Received: indices_or_sections={indices_or_sections!r}. Pass a divisor of {length} or a list of "
                "cut points."
            )
        return list(torch.tensor_split(t, n, dim=axis))
    cuts = tensor(indices_or_sections).tolist() if not isinstance(indices_or_sections, list) else indices_or_sections
    return list(torch.tensor_split(t, [int(c) for c in cuts], dim=axis))


def tile(x: Any, repeats: Any) -> Tensor:
    """``keras.ops.tile(x, repeats)``: numpy's rule for ranks that differ."""
    return torch.tile(tensor(x), shape_tuple(repeats, "tile"))


def repeat(x: Any, repeats: Any, axis: int | None = None) -> Tensor:
    """``keras.ops.repeat(x, repeats, axis=None)``: each value repeated (the flattened x without axis)."""
    t = tensor(x)
    reps = repeats if isinstance(repeats, int) else tensor(repeats).long()
    if axis is None:
        return torch.repeat_interleave(t.reshape(-1), reps)
    return torch.repeat_interleave(t, reps, dim=axis)


# --- indexing -----------------------------------------------------------------------------------


def _wrap(idx: Tensor, size: int) -> Tensor:
    idx = idx.long()
    return torch.where(idx < 0, idx + size, idx)


def take(x: Any, indices: Any, axis: int | None = None) -> Tensor:
    """``keras.ops.take(x, indices, axis=None)``: ``x`` gathered along ``axis`` (flattened without it)."""
    t = tensor(x)
    idx = tensor(indices)
    if idx.is_floating_point():
        raise TypeError(f"keras.ops.take: indices must be integers. Received dtype {idx.dtype}.")
    if axis is None:
        t, axis = t.reshape(-1), 0
    dim = int(axis) % builtins.max(t.dim(), 1)
    flat = _wrap(idx.reshape(-1), t.shape[dim]).to(t.device)
    if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= t.shape[dim]):
        raise IndexError(
            f"keras.ops.take: an index is out of range for axis {dim} of size {t.shape[dim]}. "
            f"Received indices in [{int(idx.min())}, {int(idx.max())}]."
        )
    out = torch.index_select(t, dim, flat)
    return out.reshape(*t.shape[:dim], *idx.shape, *t.shape[dim + 1 :])


def take_along_axis(x: Any, indices: Any, axis: int | None = None) -> Tensor:
    """``keras.ops.take_along_axis(x, indices, axis=None)``: numpy's, with broadcasting."""
    t = tensor(x)
    idx = tensor(indices)
    if axis is None:
        t, idx, axis = t.reshape(-1), idx.reshape(-1), 0
    return torch.take_along_dim(t, _wrap(idx, t.shape[axis]).to(t.device), dim=axis)


def where(condition: Any, x1: Any = None, x2: Any = None) -> Any:
    """``keras.ops.where(condition, x1=None, x2=None)``: pick ``x1`` where true, else ``x2``.

    With only ``condition`` it is ``nonzero(condition)``: a tuple of int32 index tensors.
    """
    cond = tensor(condition)
    if x1 is None and x2 is None:
        return nonzero(cond)
    if x1 is None or x2 is None:
        raise ValueError("keras.ops.where needs both x1 and x2, or neither. Received only one of them.")
    a, b = pair(x1, x2)
    dtype = torch.promote_types(a.dtype, b.dtype)
    cond, a, b = same_device([cond, a, b])
    return torch.where(cond.bool(), a.to(dtype), b.to(dtype))


def nonzero(x: Any) -> tuple[Tensor, ...]:
    """``keras.ops.nonzero(x)``: per axis, the int32 indices of the non-zero values."""
    return tuple(i.to(torch.int32) for i in torch.nonzero(tensor(x), as_tuple=True))


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Tensor:
    """``keras.ops.select(condlist, choicelist, default=0)``: the first choice whose condition holds."""
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"keras.ops.select: condlist and choicelist must have the same length. "
            f"Received {len(condlist)} conditions and {len(choicelist)} choices."
        )
    choices = _promoted(list(choicelist))
    out = torch.broadcast_to(tensor(default).to(choices[0].dtype), choices[0].shape) if choices else tensor(default)
    for cond, choice in zip(reversed(list(condlist)), reversed(choices)):
        out = torch.where(tensor(cond).bool(), choice, out)
    return out


def get_item(x: Any, key: Any) -> Tensor:
    """``keras.ops.get_item(x, key)``: ``x[key]``."""
    return tensor(x)[key]


def sort(x: Any, axis: int | None = -1) -> Tensor:
    """``keras.ops.sort(x, axis=-1)``: ascending (the flattened x with ``axis=None``)."""
    t = tensor(x)
    if axis is None:
        t, axis = t.reshape(-1), 0
    return torch.sort(t, dim=axis).values


def argsort(x: Any, axis: int | None = -1) -> Tensor:
    """``keras.ops.argsort(x, axis=-1)``: int32 indices that sort ``x`` (stable, like numpy's)."""
    t = tensor(x)
    if axis is None:
        t, axis = t.reshape(-1), 0
    return torch.sort(t, dim=axis, stable=True).indices.to(torch.int32)


def flip(x: Any, axis: Any = None) -> Tensor:
    """``keras.ops.flip(x, axis=None)``: reversed along ``axis`` (every axis by default)."""
    t = tensor(x)
    dims = axes(axis, t.dim(), "flip")
    return torch.flip(t, dims=tuple(builtins.range(t.dim())) if dims is None else dims)


def roll(x: Any, shift: Any, axis: Any = None) -> Tensor:
    """``keras.ops.roll(x, shift, axis=None)``: values shifted cyclically (the flattened x without axis)."""
    t = tensor(x)
    if axis is None:
        return torch.roll(t.reshape(-1), shift).reshape(t.shape)
    return torch.roll(t, shift, dims=axis)


def tril(x: Any, k: int = 0) -> Tensor:
    """``keras.ops.tril(x, k=0)``: zeros above the ``k``-th diagonal."""
    return torch.tril(tensor(x), diagonal=k)


def triu(x: Any, k: int = 0) -> Tensor:
    """``keras.ops.triu(x, k=0)``: zeros below the ``k``-th diagonal."""
    return torch.triu(tensor(x), diagonal=k)


def diag(x: Any, k: int = 0) -> Tensor:
    """``keras.ops.diag(x, k=0)``: a diagonal matrix from a vector, or a matrix's diagonal."""
    return torch.diag(tensor(x), diagonal=k)


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """``keras.ops.diagonal(x, offset=0, axis1=0, axis2=1)``."""
    return torch.diagonal(tensor(x), offset=offset, dim1=axis1, dim2=axis2)


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """``keras.ops.trace(x, offset=0, axis1=0, axis2=1)``: sums of the diagonals."""
    return torch.diagonal(tensor(x), offset=offset, dim1=axis1, dim2=axis2).sum(-1)


def _pad_index(size: int, before: int, after: int, mode: str) -> np.ndarray:
    # Index of the source value for each padded position, for the modes numpy shares with Keras.
    pos = np.arange(-before, size + after)
    if mode == "edge":
        return np.clip(pos, 0, size - 1)
    if mode == "wrap":
        return pos % size
    if mode == "reflect":
        period = 2 * (size - 1) if size > 1 else 1
        m = pos % period
        return np.where(m < size, m, period - m)
    period = 2 * size  # symmetric: the edge value is repeated
    m = pos % period
    return np.where(m < size, m, period - 1 - m)


def _pad_widths(pad_width: Any, ndim: int) -> np.ndarray:
    raw = pad_width.tolist() if isinstance(pad_width, torch.Tensor) else pad_width
    try:
        w = np.asarray(raw, dtype=np.int64)
    except (TypeError, ValueError):
        w = np.zeros((0,), dtype=np.int64)
    if w.ndim == 0 or w.shape == (1,):
        return np.full((ndim, 2), int(w.reshape(-1)[0]))
    if w.shape in ((2,), (1, 2)):
        return np.broadcast_to(w.reshape(1, 2), (ndim, 2))
    if w.shape == (ndim, 2):
        return w
    raise ValueError(
        f"keras.ops.pad: pad_width must be one int, one (before, after) pair or {ndim} pairs (one per axis). "
        f"Received: pad_width={pad_width!r}"
    )


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = None) -> Tensor:
    """``keras.ops.pad(x, pad_width, mode="constant", constant_values=None)``, numpy's ``pad_width``.

    ``pad_width`` is ``((before, after), ...)`` per axis, one ``(before, after)`` pair for every axis,
    or one int. Modes: constant, edge, reflect, symmetric, wrap.
    """
    t = tensor(x)
    if mode not in _PAD_MODES:
        raise ValueError(f"keras.ops.pad: mode must be one of {list(_PAD_MODES)}. Received: mode={mode!r}")
    width = _pad_widths(pad_width, t.dim())
    if (width < 0).any():
        raise ValueError(f"keras.ops.pad: pad widths must be non-negative. Received: pad_width={pad_width!r}")
    if mode == "constant":
        flat = [int(v) for pair_ in reversed(width.tolist()) for v in pair_]
        value = 0 if constant_values is None else tensor(constant_values).item()
        return torch.nn.functional.pad(t, flat, mode="constant", value=value)
    if constant_values is not None:
        raise ValueError(f"keras.ops.pad: constant_values is only for mode='constant'. Received: mode={mode!r}")
    out = t
    for dim, (before, after) in enumerate(width.tolist()):
        if before or after:
            if out.shape[dim] == 0:
                raise ValueError(f"keras.ops.pad: mode={mode!r} cannot pad the empty axis {dim}.")
            index = torch.from_numpy(_pad_index(out.shape[dim], before, after, mode)).to(out.device)
            out = torch.index_select(out, dim, index)
    return out


# --- products -----------------------------------------------------------------------------------


def matmul(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.matmul(x1, x2)``: numpy's matmul (batched, broadcasting); dtypes promote."""
    a, b = _promoted([x1, x2])
    if a.dim() == 0 or b.dim() == 0:
        raise ValueError(
            f"keras.ops.matmul does not take scalars (shapes {tuple(a.shape)} and {tuple(b.shape)}). "
            "Use keras.ops.multiply."
        )
    try:
        return torch.matmul(a, b)
    except RuntimeError:
        raise ValueError(
            f"keras.ops.matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not match: the last axis of x1 "
            "must equal the second-to-last axis of x2."
        ) from None


def dot(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.dot(x1, x2)``: ``numpy.dot`` (scalars multiply; N-D x M-D sums x1's last axis with x2's
    second-to-last)."""
    a, b = _promoted([x1, x2])
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    if b.dim() == 1:
        return torch.tensordot(a, b, dims=([a.dim() - 1], [0]))
    return torch.tensordot(a, b, dims=([a.dim() - 1], [b.dim() - 2]))


def einsum(subscripts: str, *operands: Any) -> Tensor:
    """``keras.ops.einsum(subscripts, *operands)``."""
    return torch.einsum(subscripts, *_promoted(list(operands)))


def tensordot(x1: Any, x2: Any, axes: Any = 2) -> Tensor:
    """``keras.ops.tensordot(x1, x2, axes=2)``."""
    a, b = _promoted([x1, x2])
    if isinstance(axes, (list, tuple)) and len(axes) == 2 and builtins.all(isinstance(v, int) for v in axes):
        axes = ([axes[0]], [axes[1]])
    return torch.tensordot(a, b, dims=axes)


def outer(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.outer(x1, x2)``: of the flattened inputs."""
    a, b = _promoted([x1, x2])
    return torch.outer(a.reshape(-1), b.reshape(-1))


def inner(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.inner(x1, x2)``: sums over the last axes."""
    a, b = _promoted([x1, x2])
    return torch.inner(a, b)


def vdot(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.vdot(x1, x2)``: the dot product of the flattened inputs."""
    a, b = _promoted([x1, x2])
    return torch.vdot(a.reshape(-1), b.reshape(-1))


def cross(x1: Any, x2: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Tensor:
    """``keras.ops.cross(x1, x2, ...)``: the 3-vector cross product along the last axis (or ``axis``)."""
    a, b = _promoted([x1, x2])
    if axis is not None:
        axisa = axisb = axisc = axis
    out = torch.linalg.cross(torch.moveaxis(a, axisa, -1), torch.moveaxis(b, axisb, -1))
    return torch.moveaxis(out, -1, axisc)


# --- statistics and bins ------------------------------------------------------------------------


def quantile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.quantile(x, q, axis=None, method="linear", keepdims=False)``."""
    t = float_of(tensor(x))
    qs = tensor(q).to(t.dtype)
    if axis is None:
        out = torch.quantile(t.reshape(-1), qs, interpolation=method)
        # keepdims without an axis keeps every axis as 1 (after q's own axis), as Keras
        return out.reshape(*qs.shape, *([1] * t.dim())) if keepdims else out
    return torch.quantile(t, qs, dim=int(axis), keepdim=keepdims, interpolation=method)


def median(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.median(x, axis=None, keepdims=False)``: numpy's (the mean of the two middle values)."""
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left") -> Tensor:
    """``keras.ops.searchsorted(sorted_sequence, values, side="left")``: int32 insertion points."""
    if side not in ("left", "right"):
        raise ValueError(f"keras.ops.searchsorted: side must be 'left' or 'right'. Received: side={side!r}")
    seq, vals = _promoted([sorted_sequence, values])
    return torch.searchsorted(seq, vals, side=side).to(torch.int32)


def digitize(x: Any, bins: Any) -> Tensor:
    """``keras.ops.digitize(x, bins)``: int32 bin numbers, ``bins[i-1] <= x < bins[i]``."""
    t, b = _promoted([x, bins])
    return torch.bucketize(t, b, right=True).to(torch.int32)


def bincount(x: Any, weights: Any = None, minlength: int = 0, sparse: builtins.bool = False) -> Tensor:
    """``keras.ops.bincount(x, weights=None, minlength=0)``: counts of each non-negative int (per row of 2-D x)."""
    t = tensor(x)
    if t.is_floating_point() or (t.numel() and int(t.min()) < 0):
        raise ValueError("keras.ops.bincount needs non-negative integers. Received negative values or floats.")
    w = None if weights is None else tensor(weights)
    length = builtins.max(int(minlength), int(t.max()) + 1 if t.numel() else 0)
    if t.dim() == 2:
        rows = [torch.bincount(r, weights=None if w is None else w[i], minlength=length) for i, r in enumerate(t)]
        return torch.stack(rows)
    out = torch.bincount(t.reshape(-1), weights=None if w is None else w.reshape(-1), minlength=length)
    return out if w is not None else out.to(torch.int32)


__all__ = [
    "append",
    "arange",
    "argsort",
    "array",
    "bincount",
    "broadcast_to",
    "concatenate",
    "copy",
    "cross",
    "diag",
    "diagonal",
    "digitize",
    "dot",
    "einsum",
    "empty",
    "expand_dims",
    "eye",
    "flip",
    "full",
    "full_like",
    "get_item",
    "hstack",
    "identity",
    "inner",
    "linspace",
    "matmul",
    "median",
    "meshgrid",
    "moveaxis",
    "ndim",
    "nonzero",
    "ones",
    "ones_like",
    "outer",
    "pad",
    "quantile",
    "ravel",
    "repeat",
    "reshape",
    "roll",
    "searchsorted",
    "select",
    "size",
    "sort",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "take",
    "take_along_axis",
    "tensordot",
    "tile",
    "trace",
    "transpose",
    "tri",
    "tril",
    "triu",
    "vdot",
    "vstack",
    "where",
    "zeros",
    "zeros_like",
]


# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), [n for n in __all__ if n not in ("ndim", "size")])
