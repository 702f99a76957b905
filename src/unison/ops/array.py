"""TF's array functions (``tf.reshape``, ``tf.concat``, ``tf.one_hot``, ...) over torch.

Each takes TF's argument names and returns a ``torch.Tensor``; Python numbers and numpy
arrays are accepted wherever TF accepts them.

Example:
    >>> import unison as tf
    >>> tf.one_hot([0, 2, -1], depth=3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    >>> tf.concat([tf.zeros([1, 2]), tf.ones([1, 2])], axis=0).shape
    torch.Size([2, 2])
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops import (
    eager_numpy,
    fastpath,
    tensor_methods,
    tensor_operators,
    tensor_repr,
    tensor_slicing,
    torch_type_attributes,
)
from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import StringDType, as_dtype, to_tensor
from unison.ops.ragged_shape import DynamicRaggedShape
from unison.ops.string_tensor import StringTensor

newaxis = None
Tensor = torch.Tensor

# TF's eager tensors always have .numpy(); see unison.ops.eager_numpy for why and what changes.
eager_numpy.install()
# Printed tensors look like TF's (unison.ops.tensor_repr); nothing runs unless one is printed.
tensor_repr.install()
# tensor <op> array/list converts the array to the tensor's dtype, as TF (unison.ops.tensor_operators)
tensor_operators.install()
# t.set_shape([None, 3]) / t.get_shape() as TF's eager tensors (unison.ops.tensor_methods)
tensor_methods.install()
# t[::-1], image[..., ::-1]: negative slice steps as TF's (unison.ops.tensor_slicing)
tensor_slicing.install()
# x.shape.as_list(), x.dtype.name: TF's TensorShape/DType attributes (unison.ops.torch_type_attributes)
torch_type_attributes.install()


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, torch.Tensor):
        return tuple(int(d) for d in shape.reshape(-1).tolist())
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(d) for d in shape)


def _axes(axis: Any) -> Any:
    if isinstance(axis, torch.Tensor):
        axis = axis.tolist()
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return int(axis)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Any:
    """``tf.constant``: a tensor from a value (Python ints become int32, as in TF)."""
    tensor = to_tensor(value, dtype)
    if isinstance(value, np.ndarray) and isinstance(tensor, torch.Tensor):
        tensor = tensor.clone()  # TF copies; torch.from_numpy would share the array's memory
    if shape is not None:
        target = _shape(shape)
        if tensor.numel() == 1:
            return tensor.reshape(()).expand(target).clone()
        try:
            return tensor.reshape(target)
        except RuntimeError:
            raise TypeError(
                f"tf.constant: a value of {tensor.numel()} elements cannot take shape "
                f"{target}. Received: shape={shape!r}"
            ) from None
    return tensor


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: str | None = None) -> Any:
    """``tf.convert_to_tensor``: tensors pass through; other values become tensors.

    A variable (any ``torch.nn.Parameter``) becomes a tensor holding its current value, as TF
    reads a ``tf.Variable``: gradients flow back to it, and a later ``assign`` leaves the tensor as
    it was.
    """
    if isinstance(value, torch.nn.Parameter):
        value = value.clone()
    if dtype is None and dtype_hint is not None and not isinstance(value, torch.Tensor):
        try:
            return to_tensor(value, dtype_hint)
        except (TypeError, ValueError):
            pass
    return to_tensor(value, dtype)


def cast(x: Any, dtype: Any, name: str | None = None) -> torch.Tensor:
    """``tf.cast``: convert ``x`` to ``dtype`` (floats to ints truncate toward zero, as in TF)."""
    return to_tensor(x).to(as_dtype(dtype))


def is_tensor(x: Any) -> bool:
    """``tf.is_tensor``."""
    return isinstance(x, torch.Tensor)


def identity(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.identity``: a copy that gradients flow through."""
    return to_tensor(input).clone()


def stop_gradient(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.stop_gradient``: the same values, no gradient."""
    return to_tensor(input).detach()


def reshape(tensor: Any, shape: Any, name: str | None = None) -> torch.Tensor:
    """``tf.reshape`` (one ``-1`` is inferred); a size that does not fit is TF's InvalidArgumentError."""
    if isinstance(shape, DynamicRaggedShape):  # TF: the values cut into the ragged shape's rows
        return shape._build(lambda inner: _reshape_to(tensor, inner))
    value, target = to_tensor(tensor), _shape(shape)
    try:
        return value.reshape(target)
    except RuntimeError as exc:  # TF programs catch tf.errors.InvalidArgumentError here
        raise InvalidArgumentError(
            f"tf.reshape: the input `tensor` has {value.numel()} values (shape {list(value.shape)}), but the "
            f"requested `shape` {list(target)} does not hold that many. Pass a shape whose sizes multiply to "
            f"{value.numel()}, with at most one -1 to infer."
        ) from exc


def expand_dims(input: Any, axis: int, name: str | None = None) -> torch.Tensor:
    """``tf.expand_dims``: insert a length-1 axis at ``axis``."""
    value = to_tensor(input)
    if isinstance(value, np.ndarray):  # strings (TF's text pipelines expand a batch of them to (N, 1))
        return StringTensor(np.expand_dims(value, int(axis)))  # type: ignore[return-value]
    return value.unsqueeze(int(axis))


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> torch.Tensor:
    """``tf.squeeze``: remove length-1 axes (all, or those in ``axis``; others are an error)."""
    t = to_tensor(input)
    if axis is None:
        return t.squeeze()
    axes = _axes(axis)
    axes = axes if isinstance(axes, tuple) else (axes,)
    for a in axes:
        if t.shape[a] != 1:
            raise InvalidArgumentError(
                f"Can not squeeze dim[{a}], expected a dimension of 1, got {t.shape[a]} (shape {tuple(t.shape)})."
            )
    return t.squeeze(axes)


def concat(values: Sequence[Any], axis: int, name: str | None = None) -> torch.Tensor:
    """``tf.concat`` along ``axis``."""
    parts = [to_tensor(v) for v in values]
    if parts and all(isinstance(p, np.ndarray) for p in parts):  # string tensors
        return StringTensor(np.concatenate(parts, axis=int(axis)))  # type: ignore[return-value]
    _no_mixed_strings(parts, "concat")
    try:
        return torch.cat(parts, dim=int(axis))
    except RuntimeError as exc:  # TF programs catch tf.errors.InvalidArgumentError here
        raise InvalidArgumentError(
            f"tf.concat: every tensor must have the same shape except along axis {axis}. Received shapes "
            f"{[list(p.shape) for p in parts]}."
        ) from exc


def stack(values: Sequence[Any], axis: int = 0, name: str = "stack") -> torch.Tensor:
    """``tf.stack`` along a new ``axis``."""
    parts = [to_tensor(v) for v in values]
    if parts and all(isinstance(p, np.ndarray) for p in parts):  # string tensors
        return StringTensor(np.stack(parts, axis=int(axis)))  # type: ignore[return-value]
    _no_mixed_strings(parts, "stack")
    return torch.stack(parts, dim=int(axis))


def _no_mixed_strings(parts: list[Any], fn: str) -> None:
    if any(isinstance(p, np.ndarray) for p in parts):
        raise TypeError(
            f"tf.{fn}: cannot mix string and numeric tensors (TF requires one dtype). Received dtypes "
            f"{[('string' if isinstance(p, np.ndarray) else str(p.dtype)) for p in parts]}; convert with "
            "tf.strings.as_string or tf.strings.to_number first."
        )


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list[torch.Tensor]:
    """``tf.unstack``: the slices along ``axis``."""
    return list(torch.unbind(to_tensor(value), dim=int(axis)))


def split(
    value: Any, num_or_size_splits: Any, axis: int = 0, num: int | None = None, name: str = "split"
) -> list[torch.Tensor]:
    """``tf.split``: into ``n`` equal parts, or parts of the given sizes (one may be ``-1``)."""
    t = to_tensor(value)
    length = t.shape[int(axis)]
    if isinstance(num_or_size_splits, int):
        n = num_or_size_splits
        if n < 1 or length % n:
            raise ValueError(
                f"tf.split: dimension {axis} of size {length} cannot be split into "
                f"{n} equal parts. Received: num_or_size_splits={n}"
            )
        return list(torch.split(t, length // n, dim=int(axis)))
    sizes = [int(s) for s in _shape(num_or_size_splits)]
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = length - (builtins.sum(sizes) + 1)
    if builtins.sum(sizes) != length or builtins.min(sizes) < 0:
        raise ValueError(
            f"tf.split: sizes {list(_shape(num_or_size_splits))} do not add up to the "
            f"size {length} of dimension {axis}."
        )
    return list(torch.split(t, sizes, dim=int(axis)))


def one_hot(
    indices: Any,
    depth: int,
    on_value: Any = None,
    off_value: Any = None,
    axis: int | None = None,
    dtype: Any = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.one_hot``: out-of-range (e.g. negative) indices give a row of ``off_value``, as in TF."""
    idx = to_tensor(indices).long()
    out_dtype = (
        as_dtype(dtype) if dtype is not None else (to_tensor(on_value).dtype if on_value is not None else torch.float32)
    )
    hot = idx.unsqueeze(-1) == torch.arange(int(depth), device=idx.device)
    on = torch.as_tensor(1 if on_value is None else on_value, dtype=out_dtype, device=idx.device)
    off = torch.as_tensor(0 if off_value is None else off_value, dtype=out_dtype, device=idx.device)
    out = torch.where(hot, on, off)
    if axis is not None and axis != -1:
        out = out.movedim(-1, int(axis))
    return out


def _reshape_to(tensor: Any, inner: list[int]) -> Any:
    """``tensor``'s values in the shape ``inner`` (strings too), or TF's error naming both sizes."""
    values = tensor if isinstance(tensor, np.ndarray) else to_tensor(tensor)
    have, want = int(np.prod(values.shape)), int(np.prod(inner))
    if have != want:
        raise InvalidArgumentError(
            None, None, f"Input to reshape is a tensor with {have} values, but the requested shape has {want}"
        )
    return values.reshape(inner)


def zeros(shape: Any, dtype: Any = torch.float32, name: str | None = None) -> Any:
    """``tf.zeros``; of ``tf.string``, empty strings (TF's zero string).

    ``tf.zeros([0, 1], tf.string)`` starts an accumulator that ``tf.concat`` grows."""
    if isinstance(shape, DynamicRaggedShape):
        return shape._build(lambda inner: zeros(inner, dtype))
    resolved = as_dtype(dtype)
    if isinstance(resolved, StringDType):
        return StringTensor(np.full(_shape(shape), b"", dtype=object))
    return torch.zeros(_shape(shape), dtype=resolved)


def ones(shape: Any, dtype: Any = torch.float32, name: str | None = None) -> torch.Tensor:
    """``tf.ones``."""
    if isinstance(shape, DynamicRaggedShape):
        return shape._build(lambda inner: ones(inner, dtype))
    resolved = as_dtype(dtype)
    if isinstance(resolved, StringDType):  # TF's TypeError: a string has no "one"
        raise TypeError(
            "tf.ones: tf.string has no value one. Use tf.fill(shape, 'text') for a string tensor of one value, "
            "or tf.zeros(shape, tf.string) for empty strings."
        )
    return torch.ones(_shape(shape), dtype=resolved)


def zeros_like(input: Any, dtype: Any = None, name: str | None = None) -> Any:
    """``tf.zeros_like``; of a string tensor, empty strings as in TF."""
    t = to_tensor(input)
    if isinstance(t, StringTensor) and (dtype is None or isinstance(as_dtype(dtype), StringDType)):
        return StringTensor(np.full(t.shape, b"", dtype=object))
    return torch.zeros_like(t, dtype=as_dtype(dtype) if dtype is not None else t.dtype)


def ones_like(input: Any, dtype: Any = None, name: str | None = None) -> torch.Tensor:
    """``tf.ones_like``."""
    t = to_tensor(input)
    return torch.ones_like(t, dtype=as_dtype(dtype) if dtype is not None else t.dtype)


def fill(dims: Any, value: Any, name: str | None = None) -> torch.Tensor:
    """``tf.fill``: a tensor of shape ``dims`` holding ``value`` (its dtype as TF infers it)."""
    if isinstance(dims, DynamicRaggedShape):
        return dims._build(lambda inner: fill(inner, value))
    v = to_tensor(value)
    if isinstance(v, np.ndarray):  # a string: TF fills a string tensor
        from unison.ops.string_tensor import StringTensor

        out = np.empty(_shape(dims), dtype=object)
        out[...] = v.item()
        return StringTensor(out)  # type: ignore[return-value]
    return torch.full(_shape(dims), v.item(), dtype=v.dtype)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range") -> torch.Tensor:
    """``tf.range``: ints give int32 and floats float32, as in TF."""
    if limit is None:
        start, limit = 0, start
    values = [to_tensor(v) for v in (start, limit, delta)]
    if dtype is None:
        dtype = torch.float32 if builtins.any(v.is_floating_point() for v in values) else torch.int32
    first, last, step = (v.item() for v in values)
    if step == 0 or (step > 0 and first > last) or (step < 0 and first < last):
        raise InvalidArgumentError(
            f"tf.range: Requires start <= limit when delta > 0 (start >= limit when delta < 0, delta != 0). "
            f"Received: start={first}, limit={last}, delta={step}."
        )
    return torch.arange(first, last, step, dtype=as_dtype(dtype))


def shape(input: Any, out_type: Any = torch.int32, name: str | None = None) -> torch.Tensor:
    """``tf.shape``: the dynamic shape as a 1-D int32 tensor."""
    return torch.tensor(list(to_tensor(input).shape), dtype=as_dtype(out_type))


def size(input: Any, out_type: Any = torch.int32, name: str | None = None) -> torch.Tensor:
    """``tf.size``: the number of elements, a 0-d tensor."""
    value = to_tensor(input)
    count = value.size if isinstance(value, np.ndarray) else value.numel()
    return torch.tensor(count, dtype=as_dtype(out_type))


def rank(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.rank``: the number of dimensions, a 0-d int32 tensor."""
    return torch.tensor(to_tensor(input).ndim, dtype=torch.int32)


def transpose(a: Any, perm: Any = None, conjugate: bool = False, name: str = "transpose") -> torch.Tensor:
    """``tf.transpose``: default reverses the axes."""
    t = to_tensor(a)
    order = _axes(perm) if perm is not None else tuple(builtins.range(t.dim() - 1, -1, -1))
    out = t.permute(order)
    return out.conj() if conjugate else out


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> torch.Tensor:
    """``tf.where``: elementwise choice, or with only ``condition`` the int64 coordinates of Trues."""
    cond = to_tensor(condition).bool()
    if x is None and y is None:
        return torch.nonzero(cond)
    if x is None or y is None:
        raise ValueError("tf.where takes both x and y, or neither. Received only one of them.")
    xt, yt = to_tensor(x), to_tensor(y)
    return fastpath.select(
        cond, xt, yt.to(xt.dtype) if xt.dtype != yt.dtype and not isinstance(y, torch.Tensor) else yt
    )


def tile(input: Any, multiples: Any, name: str | None = None) -> Any:
    """``tf.tile``: repeat ``input`` ``multiples[i]`` times along axis ``i`` (numbers or strings)."""
    value = to_tensor(input)
    reps = _shape(multiples)
    if isinstance(value, StringTensor):  # numpy's ndarray.repeat is not a tile: tile the string array
        if len(reps) != value.ndim:
            raise InvalidArgumentError(
                f"tf.tile: multiples must have one entry per dimension of input. Received multiples={list(reps)} "
                f"for input of shape {list(value.shape)}."
            )
        return StringTensor(np.tile(value.view(np.ndarray), reps))
    return value.repeat(reps)


def gather(
    params: Any, indices: Any, axis: int | None = None, batch_dims: int = 0, name: str | None = None
) -> torch.Tensor:
    """``tf.gather``: the slices of ``params`` at ``indices`` along ``axis``, per batch row with ``batch_dims``.

    An index outside ``[0, params.shape[axis])`` is TF's InvalidArgumentError, naming it.
    """
    p, i = to_tensor(params), to_tensor(indices).long()
    b = int(batch_dims) % (i.dim() + 1) if batch_dims else 0
    ax = (int(axis) if axis is not None else b) % p.dim()
    if i.numel() and (builtins.bool((i < 0).any()) or builtins.bool((i >= p.shape[ax]).any())):
        flat = i.reshape(-1)
        k = int(torch.nonzero((flat < 0) | (flat >= p.shape[ax]))[0])
        raise InvalidArgumentError(
            f"tf.gather: indices[{k}] = {int(flat[k])} is not in [0, {p.shape[ax]}) (axis {ax} of params "
            f"with shape {list(p.shape)})."
        )
    if not b:
        out = p.index_select(ax, i.reshape(-1))
        return out.reshape(p.shape[:ax] + i.shape + p.shape[ax + 1 :])
    if ax < b or p.shape[:b] != i.shape[:b]:
        raise InvalidArgumentError(
            f"tf.gather: with batch_dims={b} the first {b} axes of params {list(p.shape)} and indices "
            f"{list(i.shape)} must match, and axis ({ax}) must be >= batch_dims."
        )
    batch, inner = p.shape[:b], i.shape[b:]
    rows = p.reshape(-1, *p.shape[b:])  # [N, pre..., A, post...]
    at = ax - b + 1
    pre, post = rows.shape[1:at], rows.shape[at + 1 :]
    moved = rows.movedim(at, 1).reshape(rows.shape[0], p.shape[ax], -1)  # [N, A, pre*post]
    idx = i.reshape(rows.shape[0], -1, 1).expand(-1, -1, moved.shape[-1])  # [N, K, pre*post]
    out = moved.gather(1, idx).reshape(rows.shape[0], *inner, *pre, *post)
    k = len(inner)
    out = out.movedim(list(builtins.range(1, 1 + k)), list(builtins.range(1 + len(pre), 1 + len(pre) + k)))
    return out.reshape(*batch, *out.shape[1:])


__all__ = [
    "cast",
    "concat",
    "constant",
    "convert_to_tensor",
    "expand_dims",
    "fill",
    "gather",
    "identity",
    "is_tensor",
    "one_hot",
    "ones",
    "ones_like",
    "range",
    "rank",
    "reshape",
    "shape",
    "size",
    "split",
    "squeeze",
    "stack",
    "stop_gradient",
    "tile",
    "transpose",
    "unstack",
    "where",
    "zeros",
    "zeros_like",
]
__all__ += ["Tensor", "newaxis"]

wrap_namespace(globals(), __all__)
