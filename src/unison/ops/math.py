"""``tf.math``: TF's math functions over torch (also exported at the top level, as TF does).

Reductions take TF's ``axis``/``keepdims``; binary functions broadcast and accept Python
numbers; ``reduce_mean`` of integers truncates, as TF's does.

Example:
    >>> import unison as tf
    >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.reduce_sum(x, axis=1).tolist(), tf.math.reduce_mean(x).item()
    ([3.0, 7.0], 2.5)
    >>> tf.argmax(x).tolist()
    [1, 1]
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import torch

from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import as_dtype, to_tensor


def _pair(x: Any, y: Any) -> tuple[torch.Tensor, torch.Tensor]:
    # A Python number takes the tensor's dtype (TF converts it to the other operand's dtype).
    if isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
        return x, to_tensor(y, x.dtype if not isinstance(y, builtins.bool) or x.dtype == torch.bool else None)
    if isinstance(y, torch.Tensor) and not isinstance(x, torch.Tensor):
        return to_tensor(x, y.dtype if not isinstance(x, builtins.bool) or y.dtype == torch.bool else None), y
    return to_tensor(x), to_tensor(y)


def _dims(t: torch.Tensor, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(builtins.range(t.dim()))
    if isinstance(axis, torch.Tensor):
        axis = axis.tolist()
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return (int(axis),)


def _reduction(
    name: str, fn: Callable[[torch.Tensor, tuple[int, ...], builtins.bool], torch.Tensor]
) -> Callable[..., torch.Tensor]:
    def reduce(
        input_tensor: Any, axis: Any = None, keepdims: builtins.bool = False, name: str | None = None
    ) -> torch.Tensor:
        t = to_tensor(input_tensor)
        dims = _dims(t, axis)
        if t.dim() == 0 or not dims:
            return t.clone()
        return fn(t, dims, keepdims)

    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"``tf.{name}(input_tensor, axis=None, keepdims=False)``."
    return reduce


def _mean(t: torch.Tensor, dims: tuple[int, ...], keep: builtins.bool) -> torch.Tensor:
    if t.is_floating_point() or t.is_complex():
        return t.mean(dim=dims, keepdim=keep)
    count = 1
    for d in dims:
        count *= t.shape[d]
    return torch.div(t.sum(dim=dims, keepdim=keep), builtins.max(count, 1), rounding_mode="trunc").to(t.dtype)


def _prod(t: torch.Tensor, dims: tuple[int, ...], keep: builtins.bool) -> torch.Tensor:
    # Highest axis first, so removing it leaves the lower axis numbers valid.
    out = t
    for d in sorted({d % t.dim() for d in dims}, reverse=True):
        out = out.prod(dim=d, keepdim=keep)
    return out


def _keep_dtype(
    op: Callable[..., torch.Tensor],
) -> Callable[[torch.Tensor, tuple[int, ...], builtins.bool], torch.Tensor]:
    # torch sums small ints into int64; TF keeps the input's dtype.
    return lambda t, dims, keep: op(t, dim=dims, keepdim=keep).to(t.dtype)


reduce_sum = _reduction("reduce_sum", _keep_dtype(torch.sum))
reduce_mean = _reduction("reduce_mean", _mean)
reduce_max = _reduction("reduce_max", lambda t, d, k: torch.amax(t, dim=d, keepdim=k))
reduce_min = _reduction("reduce_min", lambda t, d, k: torch.amin(t, dim=d, keepdim=k))
reduce_prod = _reduction("reduce_prod", lambda t, d, k: _prod(t, d, k))
reduce_any = _reduction("reduce_any", lambda t, d, k: torch.any(t.bool(), dim=d, keepdim=k))
reduce_all = _reduction("reduce_all", lambda t, d, k: torch.all(t.bool(), dim=d, keepdim=k))
reduce_logsumexp = _reduction("reduce_logsumexp", lambda t, d, k: torch.logsumexp(t, dim=d, keepdim=k))
reduce_std = _reduction("reduce_std", lambda t, d, k: torch.std(t, dim=d, keepdim=k, correction=0))
reduce_variance = _reduction("reduce_variance", lambda t, d, k: torch.var(t, dim=d, keepdim=k, correction=0))


def add_n(inputs: Sequence[Any], name: str | None = None) -> torch.Tensor:
    """``tf.add_n``: the elementwise sum of tensors of one shape."""
    tensors = [to_tensor(t) for t in inputs]
    if not tensors:
        raise ValueError("tf.add_n needs at least one tensor. Received: inputs=[]")
    out = tensors[0]
    for t in tensors[1:]:
        if t.shape != out.shape:
            raise ValueError(f"tf.add_n: all inputs must have one shape; got {tuple(out.shape)} and {tuple(t.shape)}.")
        out = out + t
    return out


def argmax(input: Any, axis: Any = None, output_type: Any = torch.int64, name: str | None = None) -> torch.Tensor:
    """``tf.argmax``: along ``axis`` (default 0, as in TF)."""
    return torch.argmax(to_tensor(input), dim=int(axis or 0)).to(as_dtype(output_type))


def argmin(input: Any, axis: Any = None, output_type: Any = torch.int64, name: str | None = None) -> torch.Tensor:
    """``tf.argmin``: along ``axis`` (default 0, as in TF)."""
    return torch.argmin(to_tensor(input), dim=int(axis or 0)).to(as_dtype(output_type))


def _binary(name: str, op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Callable[..., torch.Tensor]:
    def binary(x: Any, y: Any, name: str | None = None) -> torch.Tensor:
        a, b = _pair(x, y)
        return op(a, b)

    binary.__name__ = binary.__qualname__ = name
    binary.__doc__ = f"``tf.math.{name}(x, y)``, broadcasting as TF does."
    return binary


def _unary(name: str, op: Callable[[torch.Tensor], torch.Tensor]) -> Callable[..., torch.Tensor]:
    def unary(x: Any, name: str | None = None) -> torch.Tensor:
        return op(to_tensor(x))

    unary.__name__ = unary.__qualname__ = name
    unary.__doc__ = f"``tf.math.{name}(x)``, elementwise."
    return unary


def _float_op(op: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda t: op(t if t.is_floating_point() or t.is_complex() else t.float())


equal = _binary("equal", torch.eq)
not_equal = _binary("not_equal", torch.ne)
greater = _binary("greater", torch.gt)
greater_equal = _binary("greater_equal", torch.ge)
less = _binary("less", torch.lt)
less_equal = _binary("less_equal", torch.le)
add = _binary("add", torch.add)
subtract = _binary("subtract", torch.sub)
multiply = _binary("multiply", torch.mul)
divide = _binary("divide", torch.true_divide)
truediv = _binary("truediv", torch.true_divide)
floordiv = _binary("floordiv", torch.floor_divide)
floormod = mod = _binary("floormod", torch.remainder)
maximum = _binary("maximum", torch.maximum)
minimum = _binary("minimum", torch.minimum)
pow = _binary("pow", torch.pow)
squared_difference = _binary("squared_difference", lambda a, b: (a - b) ** 2)
logical_and = _binary("logical_and", torch.logical_and)
logical_or = _binary("logical_or", torch.logical_or)
divide_no_nan = _binary(
    "divide_no_nan",
    lambda a, b: torch.where(b == 0, torch.zeros((), dtype=a.dtype), a / torch.where(b == 0, torch.ones_like(b), b)),
)

square = _unary("square", torch.square)
sqrt = _unary("sqrt", torch.sqrt)
rsqrt = _unary("rsqrt", torch.rsqrt)
exp = _unary("exp", torch.exp)
log = _unary("log", torch.log)
log1p = _unary("log1p", torch.log1p)
abs = _unary("abs", torch.abs)
negative = _unary("negative", torch.neg)
sign = _unary("sign", torch.sign)
floor = _unary("floor", torch.floor)
ceil = _unary("ceil", torch.ceil)
round = _unary("round", torch.round)
sin = _unary("sin", torch.sin)
cos = _unary("cos", torch.cos)
tanh = _unary("tanh", torch.tanh)
sigmoid = _unary("sigmoid", torch.sigmoid)
reciprocal = _unary("reciprocal", torch.reciprocal)
logical_not = _unary("logical_not", torch.logical_not)
is_nan = _unary("is_nan", torch.isnan)
is_inf = _unary("is_inf", torch.isinf)
is_finite = _unary("is_finite", torch.isfinite)


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> torch.Tensor:
    """``tf.clip_by_value``: clamp every element into ``[clip_value_min, clip_value_max]``."""
    x = to_tensor(t)
    lo, hi = to_tensor(clip_value_min, x.dtype), to_tensor(clip_value_max, x.dtype)
    return torch.minimum(torch.maximum(x, lo), hi)


def matmul(
    a: Any,
    b: Any,
    transpose_a: builtins.bool = False,
    transpose_b: builtins.bool = False,
    adjoint_a: builtins.bool = False,
    adjoint_b: builtins.bool = False,
    a_is_sparse: builtins.bool = False,
    b_is_sparse: builtins.bool = False,
    output_type: Any = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.linalg.matmul``: ``a @ b`` with optional transposes of the last two axes."""
    x, y = to_tensor(a), to_tensor(b)
    if transpose_a or adjoint_a:
        x = x.transpose(-1, -2).conj() if adjoint_a else x.transpose(-1, -2)
    if transpose_b or adjoint_b:
        y = y.transpose(-1, -2).conj() if adjoint_b else y.transpose(-1, -2)
    out = torch.matmul(x, y)
    return out if output_type is None else out.to(as_dtype(output_type))


def cumsum(
    x: Any, axis: int = 0, exclusive: builtins.bool = False, reverse: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.math.cumsum``."""
    t = to_tensor(x)
    if reverse:
        t = t.flip(axis)
    out = t.cumsum(dim=axis)
    if exclusive:
        out = out - t
    return out.flip(axis) if reverse else out


def top_k(input: Any, k: int = 1, sorted: builtins.bool = True, name: str | None = None) -> Any:
    """``tf.math.top_k``: ``(values, indices)`` of the ``k`` largest along the last axis."""
    values, indices = torch.topk(to_tensor(input), int(k), dim=-1, sorted=sorted)
    return TopK(values, indices.to(torch.int32))


class TopK(tuple):
    """``(values, indices)`` with TF's field names."""

    def __new__(cls, values: torch.Tensor, indices: torch.Tensor) -> TopK:
        return super().__new__(cls, (values, indices))

    @property
    def values(self) -> torch.Tensor:
        return self[0]

    @property
    def indices(self) -> torch.Tensor:
        return self[1]


__all__ = [
    "abs",
    "add",
    "add_n",
    "argmax",
    "argmin",
    "ceil",
    "clip_by_value",
    "cos",
    "cumsum",
    "divide",
    "divide_no_nan",
    "equal",
    "exp",
    "floor",
    "floordiv",
    "floormod",
    "greater",
    "greater_equal",
    "is_finite",
    "is_inf",
    "is_nan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "matmul",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "pow",
    "reciprocal",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_std",
    "reduce_sum",
    "reduce_variance",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "sqrt",
    "square",
    "squared_difference",
    "subtract",
    "tanh",
    "top_k",
    "truediv",
]

wrap_namespace(globals(), __all__)


def __getattr__(name: str) -> object:
    from unison._unsupported import unsupported

    raise unsupported("tf.math", name)
