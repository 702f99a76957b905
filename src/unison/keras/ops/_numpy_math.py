"""``keras.ops`` numpy namespace, part 1: element-wise math, comparisons and reductions.

Keras's rules where torch's differ: ``divide``/``true_divide``, ``sqrt``, ``exp``, ``log`` and
``mean``/``var``/``std`` of integers give floatx (torch keeps or rejects ints); ``argmax``/``argmin``
give int32; a Python number takes the other operand's kind (:func:`~._convert.pair`).

Example:
    >>> from unison.keras import ops
    >>> ops.divide(ops.convert_to_tensor([3, 4]), 2).tolist(), ops.mean([[1, 2], [3, 5]], axis=0).tolist()
    ([1.5, 2.0], [2.0, 3.5])
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import torch

from unison.keras.ops._convert import axes, float_of, pair, tensor, torch_dtype
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor


def _binary(name: str, op: Callable[[Tensor, Tensor], Tensor]) -> Callable[[Any, Any], Tensor]:
    def fn(x1: Any, x2: Any) -> Tensor:
        a, b = pair(x1, x2)
        return op(a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``keras.ops.{name}(x1, x2)``: element-wise, with broadcasting."
    return fn


def _unary(name: str, op: Callable[[Tensor], Tensor], to_float: builtins.bool = False) -> Callable[[Any], Tensor]:
    def fn(x: Any) -> Tensor:
        t = tensor(x)
        return op(float_of(t) if to_float else t)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``keras.ops.{name}(x)``: element-wise" + (" (integers give floatx)." if to_float else ".")
    return fn


def _true_divide(a: Tensor, b: Tensor) -> Tensor:
    if not (a.is_floating_point() or a.is_complex() or b.is_floating_point() or b.is_complex()):
        a, b = float_of(a), float_of(b)
    return torch.true_divide(a, b)


add = _binary("add", torch.add)
subtract = _binary("subtract", torch.sub)
multiply = _binary("multiply", torch.mul)
divide = _binary("divide", _true_divide)
true_divide = _binary("true_divide", _true_divide)
floor_divide = _binary("floor_divide", torch.floor_divide)
mod = _binary("mod", torch.remainder)
power = _binary("power", torch.pow)
maximum = _binary("maximum", torch.maximum)
minimum = _binary("minimum", torch.minimum)
arctan2 = _binary("arctan2", lambda a, b: torch.atan2(float_of(a), float_of(b)))
logaddexp = _binary("logaddexp", lambda a, b: torch.logaddexp(float_of(a), float_of(b)))
hypot = _binary("hypot", lambda a, b: torch.hypot(float_of(a), float_of(b)))
copysign = _binary("copysign", lambda a, b: torch.copysign(float_of(a), b))
equal = _binary("equal", torch.eq)
not_equal = _binary("not_equal", torch.ne)
greater = _binary("greater", torch.gt)
greater_equal = _binary("greater_equal", torch.ge)
less = _binary("less", torch.lt)
less_equal = _binary("less_equal", torch.le)
logical_and = _binary("logical_and", torch.logical_and)
logical_or = _binary("logical_or", torch.logical_or)
logical_xor = _binary("logical_xor", torch.logical_xor)
divide_no_nan = _binary(
    "divide_no_nan", lambda a, b: torch.where(b == 0, torch.zeros((), dtype=float_of(a).dtype), _true_divide(a, b))
)

abs = absolute = _unary("abs", torch.abs)
negative = _unary("negative", torch.neg)
sign = _unary(
    "sign", lambda t: torch.where(torch.isnan(t), t, torch.sign(t)) if t.is_floating_point() else torch.sign(t)
)  # NaN stays NaN (TF)
square = _unary("square", torch.square)
sqrt = _unary("sqrt", torch.sqrt, to_float=True)
rsqrt = _unary("rsqrt", torch.rsqrt, to_float=True)
reciprocal = _unary("reciprocal", torch.reciprocal, to_float=True)
exp = _unary("exp", torch.exp, to_float=True)
exp2 = _unary("exp2", torch.exp2, to_float=True)
expm1 = _unary("expm1", torch.expm1, to_float=True)
log = _unary("log", torch.log, to_float=True)
log1p = _unary("log1p", torch.log1p, to_float=True)
log2 = _unary("log2", torch.log2, to_float=True)
log10 = _unary("log10", torch.log10, to_float=True)
sin = _unary("sin", torch.sin, to_float=True)
cos = _unary("cos", torch.cos, to_float=True)
tan = _unary("tan", torch.tan, to_float=True)
arcsin = _unary("arcsin", torch.asin, to_float=True)
arccos = _unary("arccos", torch.acos, to_float=True)
arctan = _unary("arctan", torch.atan, to_float=True)
sinh = _unary("sinh", torch.sinh, to_float=True)
cosh = _unary("cosh", torch.cosh, to_float=True)
tanh = _unary("tanh", torch.tanh, to_float=True)
arcsinh = _unary("arcsinh", torch.asinh, to_float=True)
arccosh = _unary("arccosh", torch.acosh, to_float=True)
arctanh = _unary("arctanh", torch.atanh, to_float=True)
floor = _unary("floor", lambda t: torch.floor(t) if t.is_floating_point() else t)
ceil = _unary("ceil", lambda t: torch.ceil(t) if t.is_floating_point() else t)
trunc = _unary("trunc", lambda t: torch.trunc(t) if t.is_floating_point() else t)
logical_not = _unary("logical_not", torch.logical_not)
isnan = _unary("isnan", torch.isnan)
isinf = _unary("isinf", torch.isinf)
isfinite = _unary("isfinite", torch.isfinite)
real = _unary("real", lambda t: torch.real(t) if t.is_complex() else t)
imag = _unary("imag", lambda t: torch.imag(t) if t.is_complex() else torch.zeros_like(t))
conjugate = conj = _unary("conjugate", torch.conj)


def round(x: Any, decimals: int = 0) -> Tensor:
    """``keras.ops.round(x, decimals=0)``: half to even, like numpy."""
    t = tensor(x)
    if not t.is_floating_point():
        return t
    return torch.round(t, decimals=decimals)


def clip(x: Any, x_min: Any, x_max: Any) -> Tensor:
    """``keras.ops.clip(x, x_min, x_max)``: values limited to ``[x_min, x_max]``."""
    t = tensor(x)
    if t.dtype == torch.bool:
        t = t.to(torch.int32)
    # Python bounds stay numbers (torch.clamp takes them as scalars); tensor bounds take x's dtype.
    lo: Any = x_min if isinstance(x_min, (builtins.int, builtins.float)) else tensor(x_min).to(t.dtype)
    hi: Any = x_max if isinstance(x_max, (builtins.int, builtins.float)) else tensor(x_max).to(t.dtype)
    return torch.clamp(t, lo, hi)


def isclose(x1: Any, x2: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: builtins.bool = False) -> Tensor:
    """``keras.ops.isclose``: ``|x1 - x2| <= atol + rtol * |x2|`` element-wise."""
    a, b = pair(x1, x2)
    dtype = torch.promote_types(a.dtype, b.dtype)
    return torch.isclose(a.to(dtype), b.to(dtype), rtol=rtol, atol=atol, equal_nan=equal_nan)


def nan_to_num(x: Any, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """``keras.ops.nan_to_num``: NaN and infinities replaced by finite numbers."""
    return torch.nan_to_num(tensor(x), nan=nan, posinf=posinf, neginf=neginf)


# --- reductions ---------------------------------------------------------------------------------


def _reduce(
    x: Any, axis: Any, keepdims: builtins.bool, fn: str, op: Callable[[Tensor, tuple[int, ...], builtins.bool], Tensor]
) -> Tensor:
    t = tensor(x)
    dims = axes(axis, t.dim(), fn)
    if t.dim() == 0:
        return op(t.reshape(1), (0,), False)
    if dims is None:
        dims = tuple(builtins.range(t.dim()))
    if not dims:
        return t
    return op(t, dims, keepdims)


def mean(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.mean(x, axis=None, keepdims=False)``; integers average to floatx, unlike ``tf.reduce_mean``."""
    return _reduce(x, axis, keepdims, "mean", lambda t, d, k: float_of(t).mean(dim=d, keepdim=k))


def sum(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.sum(x, axis=None, keepdims=False)``; booleans count as int32."""

    def op(t: Tensor, d: tuple[int, ...], k: builtins.bool) -> Tensor:
        out = t.sum(dim=d, keepdim=k)
        return out.to(t.dtype) if t.dtype not in (torch.bool, torch.uint8, torch.int8, torch.int16) else out.int()

    return _reduce(x, axis, keepdims, "sum", op)


def prod(x: Any, axis: Any = None, keepdims: builtins.bool = False, dtype: Any = None) -> Tensor:
    """``keras.ops.prod(x, axis=None, keepdims=False, dtype=None)``."""

    def op(t: Tensor, d: tuple[int, ...], k: builtins.bool) -> Tensor:
        out = t if dtype is None else t.to(torch_dtype(dtype))
        for dim in sorted(d, reverse=True):
            out = out.prod(dim=dim, keepdim=k)
        return out

    return _reduce(x, axis, keepdims, "prod", op)


def _extreme(name: str, op: Callable[..., Tensor], pick: Callable[[Tensor, Tensor], Tensor]) -> Callable[..., Tensor]:
    def fn(x: Any, axis: Any = None, keepdims: builtins.bool = False, initial: Any = None) -> Tensor:
        t = tensor(x)
        if t.numel() == 0 and initial is None:
            raise ValueError(
                f"keras.ops.{name} of an empty tensor (shape {tuple(t.shape)}) has no value. "
                "Pass initial= or check the input's size first."
            )
        out = _reduce(t, axis, keepdims, name, lambda u, d, k: op(u, dim=d, keepdim=k))
        if initial is not None:
            out = pick(out, torch.as_tensor(initial, dtype=out.dtype))
        return out

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``keras.ops.{name}(x, axis=None, keepdims=False, initial=None)``."
    return fn


max = amax = _extreme("max", torch.amax, torch.maximum)
min = amin = _extreme("min", torch.amin, torch.minimum)


def any(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.any(x, axis=None, keepdims=False)``: logical OR over ``axis``."""
    return _reduce(x, axis, keepdims, "any", lambda t, d, k: torch.any(t.bool(), dim=d, keepdim=k))


def all(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.all(x, axis=None, keepdims=False)``: logical AND over ``axis``."""
    return _reduce(x, axis, keepdims, "all", lambda t, d, k: torch.all(t.bool(), dim=d, keepdim=k))


def var(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.var(x, axis=None, keepdims=False)``: the population variance (numpy's ``ddof=0``)."""
    return _reduce(x, axis, keepdims, "var", lambda t, d, k: torch.var(float_of(t), dim=d, keepdim=k, correction=0))


def std(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.std(x, axis=None, keepdims=False)``: the population standard deviation."""
    return _reduce(x, axis, keepdims, "std", lambda t, d, k: torch.std(float_of(t), dim=d, keepdim=k, correction=0))


def logsumexp(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.logsumexp(x, axis=None, keepdims=False)``: ``log(sum(exp(x)))``, computed stably."""
    return _reduce(x, axis, keepdims, "logsumexp", lambda t, d, k: torch.logsumexp(float_of(t), dim=d, keepdim=k))


def count_nonzero(x: Any, axis: Any = None) -> Tensor:
    """``keras.ops.count_nonzero(x, axis=None)``: int32 counts."""
    return _reduce(x, axis, False, "count_nonzero", lambda t, d, k: torch.count_nonzero(t, dim=d).int())


def average(x: Any, axis: Any = None, weights: Any = None) -> Tensor:
    """``keras.ops.average(x, axis=None, weights=None)``: the (weighted) mean along ``axis``."""
    t = float_of(tensor(x))
    if weights is None:
        return mean(t, axis=axis)
    w = tensor(weights).to(t.dtype)
    if w.dim() == 1 and t.dim() > 1:
        if axis is None or isinstance(axis, (list, tuple)):
            raise ValueError(
                f"keras.ops.average: 1-D weights need one int axis. Received: axis={axis!r}, x.shape={tuple(t.shape)}"
            )
        shape = [1] * t.dim()
        shape[int(axis)] = w.shape[0]
        w = w.reshape(shape)
    return sum(t * w, axis=axis) / sum(torch.broadcast_to(w, t.shape), axis=axis)


def _arg(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def fn(x: Any, axis: int | None = None, keepdims: builtins.bool = False) -> Tensor:
        t = tensor(x)
        if axis is None:
            out = op(t.reshape(-1), dim=0)
            if keepdims:
                out = out.reshape([1] * t.dim())
            return out.to(torch.int32)
        (dim,) = axes(axis, t.dim(), name) or (0,)
        return op(t, dim=dim, keepdim=keepdims).to(torch.int32)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``keras.ops.{name}(x, axis=None, keepdims=False)``: int32 indices (of the flattened x without axis)."
    return fn


argmax = _arg("argmax", torch.argmax)
argmin = _arg("argmin", torch.argmin)


def cumsum(x: Any, axis: int | None = None, dtype: Any = None) -> Tensor:
    """``keras.ops.cumsum(x, axis=None, dtype=None)``: running sums (of the flattened x without axis)."""
    t = tensor(x)
    if axis is None:
        t, axis = t.reshape(-1), 0
    out = torch.cumsum(t, dim=int(axis))
    return (
        out.to(torch_dtype(dtype)) if dtype is not None else out.to(t.dtype if t.dtype != torch.bool else torch.int32)
    )


def cumprod(x: Any, axis: int | None = None, dtype: Any = None) -> Tensor:
    """``keras.ops.cumprod(x, axis=None, dtype=None)``: running products."""
    t = tensor(x)
    if axis is None:
        t, axis = t.reshape(-1), 0
    out = torch.cumprod(t, dim=int(axis))
    return (
        out.to(torch_dtype(dtype)) if dtype is not None else out.to(t.dtype if t.dtype != torch.bool else torch.int32)
    )


__all__ = [
    "abs",
    "absolute",
    "add",
    "all",
    "amax",
    "amin",
    "any",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "argmax",
    "argmin",
    "average",
    "ceil",
    "clip",
    "conj",
    "conjugate",
    "copysign",
    "cos",
    "cosh",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "divide",
    "divide_no_nan",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "floor_divide",
    "greater",
    "greater_equal",
    "hypot",
    "imag",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "logsumexp",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "multiply",
    "nan_to_num",
    "negative",
    "not_equal",
    "power",
    "prod",
    "real",
    "reciprocal",
    "round",
    "rsqrt",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "std",
    "subtract",
    "sum",
    "tan",
    "tanh",
    "true_divide",
    "trunc",
    "var",
]


# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), __all__)
