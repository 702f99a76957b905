"""``keras.ops`` numpy namespace, part 3: the rest of numpy's functions (bitwise, NaN-ignoring
reductions, windows, splits, set and index helpers, special functions).

Keras's dtype rules where torch's differ: float results of integer inputs are floatx, except
``cbrt``/``deg2rad``/``rad2deg``/``i0``/``corrcoef``, which give float64 for int64 (as Keras does);
``nansum``/``nanprod``/``nancumsum`` of bools count in int32; ``nanargmax``/``nanargmin`` give int32.

Example:
    >>> from unison.keras import ops
    >>> ops.nanmean([[1.0, float("nan")], [3.0, 4.0]], axis=1).tolist()
    [1.0, 3.5]
    >>> ops.bitwise_and(ops.convert_to_tensor([12, 10]), 6).tolist(), ops.diff([1, 4, 9]).tolist()
    ([4, 2], [3, 5])
"""

from __future__ import annotations

import builtins
import math as _math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.keras.ops._convert import axes, pair, shape_tuple, standardize_dtype, tensor, torch_dtype
from unison.keras.ops._numpy_array import quantile, split
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor


def _floaty(t: Tensor, int64_to_float64: builtins.bool = False) -> Tensor:
    """``t`` as a float: floats keep their dtype, int64 becomes float64 when Keras says so, others floatx."""
    if t.is_floating_point() or t.is_complex():
        return t
    if int64_to_float64 and t.dtype == torch.int64:
        return t.to(torch.float64)
    return t.to(torch.get_default_dtype())


def _result_float(a: Tensor, b: Tensor) -> torch.dtype:
    """Keras's ``result_type(a, b, float)``: the promoted dtype, floatx for integers and bools,
    float64 when an int64 meets another integer."""
    dtype = torch.promote_types(a.dtype, b.dtype)
    if dtype.is_floating_point or dtype.is_complex:
        return dtype
    return torch.float64 if dtype == torch.int64 else torch.get_default_dtype()


def _check_int(fn: str, *ts: Tensor, kernel: builtins.bool = True) -> None:
    # TF's bitwise kernels reject other dtypes with InvalidArgumentError, which Keras passes on;
    # Keras's own checks (gcd, lcm) raise TypeError.
    for t in ts:
        if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
            message = (
                f"keras.ops.{fn} works on integer tensors. Received a tensor of dtype {standardize_dtype(t.dtype)}; "
                "cast it to an integer dtype first (keras.ops.cast(x, 'int32'))."
            )
            raise InvalidArgumentError(None, None, message) if kernel else TypeError(message)


def _check_not_bool(fn: str, *ts: Tensor) -> None:
    for t in ts:
        if t.dtype == torch.bool:
            raise TypeError(
                f"keras.ops.{fn} does not accept bool tensors. Cast the input to a numeric dtype first "
                "(keras.ops.cast(x, 'int32'))."
            )


# ---------------------------------------------------------------------------------------------
# element-wise


def angle(x: Any) -> Tensor:
    """``keras.ops.angle(x)``: the argument of complex numbers; for reals pi where ``x < 0``, else 0
    (NaN included, as TF's ``angle``); integers give floatx."""
    t = _floaty(tensor(x))
    if t.is_complex():
        return torch.angle(t)
    return torch.where(t < 0, torch.tensor(_math.pi, dtype=t.dtype), torch.zeros((), dtype=t.dtype))


def cbrt(x: Any) -> Tensor:
    """``keras.ops.cbrt(x)``: the real cube root, element-wise (negative inputs give negative roots)."""
    t = _floaty(tensor(x), True)
    return torch.sign(t) * torch.abs(t).pow(1.0 / 3.0)


def deg2rad(x: Any) -> Tensor:
    """``keras.ops.deg2rad(x)``: degrees to radians."""
    return torch.deg2rad(_floaty(tensor(x), True))


def rad2deg(x: Any) -> Tensor:
    """``keras.ops.rad2deg(x)``: radians to degrees."""
    return torch.rad2deg(_floaty(tensor(x), True))


def fabs(x: Any) -> Tensor:
    """``keras.ops.fabs(x)``: the absolute value as a float (integers give floatx)."""
    return torch.abs(_floaty(tensor(x)))


def i0(x: Any) -> Tensor:
    """``keras.ops.i0(x)``: the modified Bessel function of the first kind, order 0."""
    return torch.special.i0(_floaty(tensor(x), True))


def sinc(x: Any) -> Tensor:
    """``keras.ops.sinc(x)``: ``sin(pi x) / (pi x)``, 1 at 0."""
    return torch.sinc(_floaty(tensor(x)))


def signbit(x: Any) -> Tensor:
    """``keras.ops.signbit(x)``: whether the sign bit is set (True for -0.0 and negative NaNs too)."""
    t = tensor(x)
    if t.dtype == torch.bool:
        return torch.zeros_like(t)
    return torch.signbit(t)


def isneginf(x: Any) -> Tensor:
    """``keras.ops.isneginf(x)``: whether each element is negative infinity."""
    t = tensor(x)
    return torch.isneginf(t) if t.is_floating_point() else torch.zeros(t.shape, dtype=torch.bool, device=t.device)


def isposinf(x: Any) -> Tensor:
    """``keras.ops.isposinf(x)``: whether each element is positive infinity."""
    t = tensor(x)
    return torch.isposinf(t) if t.is_floating_point() else torch.zeros(t.shape, dtype=torch.bool, device=t.device)


def isreal(x: Any) -> Tensor:
    """``keras.ops.isreal(x)``: whether each element has a zero imaginary part (always True for reals)."""
    t = tensor(x)
    return torch.imag(t) == 0 if t.is_complex() else torch.ones(t.shape, dtype=torch.bool, device=t.device)


def _bitwise(name: str, op: Callable[[Tensor, Tensor], Tensor]) -> Callable[[Any, Any], Tensor]:
    def fn(x: Any, y: Any) -> Tensor:
        a, b = pair(x, y)
        _check_int(name, a, b)
        return op(a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``keras.ops.{name}(x, y)``: bit-wise on integer tensors, with broadcasting."
    return fn


bitwise_and = _bitwise("bitwise_and", torch.bitwise_and)
bitwise_or = _bitwise("bitwise_or", torch.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", torch.bitwise_xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", torch.bitwise_left_shift)
bitwise_right_shift = _bitwise("bitwise_right_shift", torch.bitwise_right_shift)
left_shift = _bitwise("left_shift", torch.bitwise_left_shift)
right_shift = _bitwise("right_shift", torch.bitwise_right_shift)


def bitwise_invert(x: Any) -> Tensor:
    """``keras.ops.bitwise_invert(x)``: flips every bit of an integer tensor (``~x``)."""
    t = tensor(x)
    _check_int("bitwise_invert", t)
    return torch.bitwise_not(t)


bitwise_not = bitwise_invert


def _float_binary(name: str, op: Callable[[Tensor, Tensor], Tensor]) -> Callable[[Any, Any], Tensor]:
    def fn(x1: Any, x2: Any) -> Tensor:
        a, b = pair(x1, x2)
        dtype = torch.promote_types(a.dtype, b.dtype)
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = torch.get_default_dtype()
        return op(a.to(dtype), b.to(dtype))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``keras.ops.{name}(x1, x2)``: element-wise, with broadcasting (integers give floatx)."
    return fn


logaddexp2 = _float_binary("logaddexp2", torch.logaddexp2)
nextafter = _float_binary("nextafter", torch.nextafter)


def _numeric_binary(name: str, op: Callable[[Tensor, Tensor], Tensor]) -> Callable[[Any, Any], Tensor]:
    def fn(x1: Any, x2: Any) -> Tensor:
        a, b = pair(x1, x2)
        _check_not_bool(name, a, b)
        dtype = torch.promote_types(a.dtype, b.dtype)
        return op(a.to(dtype), b.to(dtype))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``keras.ops.{name}(x1, x2)``: element-wise, with broadcasting."
    return fn


fmax = _numeric_binary("fmax", torch.fmax)
fmin = _numeric_binary("fmin", torch.fmin)
kron = _numeric_binary("kron", torch.kron)


def fmod(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.fmod(x1, x2)``: the remainder with the sign of ``x1`` (C's ``fmod``); bools count as int32."""
    a, b = pair(x1, x2)
    dtype = torch.promote_types(a.dtype, b.dtype)
    if dtype == torch.bool:
        dtype = torch.int32
    return torch.fmod(a.to(dtype), b.to(dtype))


def gcd(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.gcd(x1, x2)``: the greatest common divisor of integer tensors."""
    a, b = pair(x1, x2)
    _check_int("gcd", a, b, kernel=False)
    dtype = torch.promote_types(a.dtype, b.dtype)
    return torch.gcd(a.to(dtype), b.to(dtype))


def lcm(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.lcm(x1, x2)``: the least common multiple of integer tensors."""
    a, b = pair(x1, x2)
    _check_int("lcm", a, b, kernel=False)
    dtype = torch.promote_types(a.dtype, b.dtype)
    return torch.lcm(a.to(dtype), b.to(dtype))


def heaviside(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.heaviside(x1, x2)``: 0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``."""
    a, b = pair(x1, x2)
    _check_not_bool("heaviside", a, b)
    dtype = _result_float(a, b)
    return torch.heaviside(a.to(dtype), b.to(dtype))


def ldexp(x1: Any, x2: Any) -> Tensor:
    """``keras.ops.ldexp(x1, x2)``: ``x1 * 2**x2``; the exponent ``x2`` must be an integer tensor."""
    a, b = pair(x1, x2)
    if b.is_floating_point() or b.is_complex() or b.dtype == torch.bool:
        raise TypeError(
            f"keras.ops.ldexp: the exponent x2 must be an integer tensor. Received x2 of dtype "
            f"{standardize_dtype(b.dtype)}; cast it with keras.ops.cast(x2, 'int32')."
        )
    dtype = torch.promote_types(a.dtype, b.dtype)
    dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
    return torch.ldexp(a.to(dtype), b).to(dtype)


def allclose(x1: Any, x2: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: builtins.bool = False) -> Tensor:
    """``keras.ops.allclose(x1, x2, rtol=1e-05, atol=1e-08, equal_nan=False)``: whether all elements
    are close (``|x1 - x2| <= atol + rtol * |x2|``), as a bool scalar."""
    a, b = pair(x1, x2)
    dtype = torch.promote_types(a.dtype, b.dtype)
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    return torch.all(torch.isclose(a.to(dtype), b.to(dtype), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isin(x1: Any, x2: Any, assume_unique: builtins.bool = False, invert: builtins.bool = False) -> Tensor:
    """``keras.ops.isin(x1, x2, assume_unique=False, invert=False)``: whether each element of ``x1``
    occurs in ``x2`` (shape of ``x1``)."""
    a, b = pair(x1, x2)
    dtype = torch.promote_types(a.dtype, b.dtype)
    return torch.isin(a.to(dtype), b.to(dtype).reshape(-1), invert=invert)


# ---------------------------------------------------------------------------------------------
# NaN-ignoring reductions


def _nan_input(fn: str, x: Any, axis: Any) -> tuple[Tensor, tuple[int, ...] | None]:
    t = tensor(x)
    return t, axes(axis, t.dim(), fn)


def _dims(ax: tuple[int, ...] | None, t: Tensor) -> tuple[int, ...]:
    return tuple(range(t.dim())) if ax is None else ax


def _keep(out: Tensor, t: Tensor, ax: tuple[int, ...] | None, keepdims: builtins.bool) -> Tensor:
    if not keepdims:
        return out
    if ax is None:
        return out.reshape([1] * t.dim())
    for a in sorted(ax):
        out = out.unsqueeze(a)
    return out


def _sum_dtype(t: Tensor) -> torch.dtype:
    # Keras: bools and small ints sum in int32, uint8/uint16 in uint32.
    if t.dtype in (torch.bool, torch.int8, torch.int16):
        return torch.int32
    if t.dtype in (torch.uint8, torch.uint16):
        return torch.uint32
    return t.dtype


def nansum(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.nansum(x, axis=None, keepdims=False)``: the sum, treating NaNs as 0."""
    t, ax = _nan_input("nansum", x, axis)
    filled = torch.nan_to_num(t, nan=0.0, posinf=_math.inf, neginf=-_math.inf) if t.is_floating_point() else t
    dtype = _sum_dtype(t)
    if dtype == torch.uint32:  # torch sums no uint32: count in int64
        out = filled.to(torch.int64).sum(dim=_dims(ax, t)).to(dtype)
    else:
        out = filled.to(dtype).sum(dim=_dims(ax, t))
    return _keep(out, t, ax, keepdims)


def nanprod(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.nanprod(x, axis=None, keepdims=False)``: the product, treating NaNs as 1."""
    t, ax = _nan_input("nanprod", x, axis)
    filled = torch.where(torch.isnan(t), torch.ones((), dtype=t.dtype), t) if t.is_floating_point() else t
    dtype = _sum_dtype(t)
    work = filled.to(torch.int64 if dtype == torch.uint32 else dtype)
    for d in sorted(_dims(ax, t), reverse=True):
        work = work.prod(dim=d)
    return _keep(work.to(dtype), t, ax, keepdims)


def nanmean(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.nanmean(x, axis=None, keepdims=False)``: the mean of the non-NaN elements (NaN
    where all are NaN); integers give floatx."""
    t, ax = _nan_input("nanmean", x, axis)
    f = _floaty(t)
    return _keep(torch.nanmean(f, dim=_dims(ax, t)), t, ax, keepdims)


def nanvar(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.nanvar(x, axis=None, keepdims=False)``: the variance of the non-NaN elements."""
    t, ax = _nan_input("nanvar", x, axis)
    f = _floaty(t)
    dims = _dims(ax, t)
    mean = torch.nanmean(f, dim=dims, keepdim=True)
    dev = (f - mean).abs().square() if f.is_complex() else (f - mean).square()
    return _keep(torch.nanmean(dev, dim=dims), t, ax, keepdims)


def nanstd(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.nanstd(x, axis=None, keepdims=False)``: the standard deviation of the non-NaN elements."""
    return torch.sqrt(nanvar(x, axis=axis, keepdims=keepdims))


def _nan_extreme(fn: str, largest: builtins.bool) -> Callable[..., Tensor]:
    def reduce(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
        t, ax = _nan_input(fn, x, axis)
        dims = _dims(ax, t)
        if not t.is_floating_point():
            out = t.amax(dim=dims) if largest else t.amin(dim=dims)
            return _keep(out, t, ax, keepdims)
        nan = torch.isnan(t)
        fill = -_math.inf if largest else _math.inf
        filled = torch.where(nan, torch.tensor(fill, dtype=t.dtype), t)
        out = filled.amax(dim=dims) if largest else filled.amin(dim=dims)
        all_nan = nan.all(dim=dims) if t.numel() else torch.zeros(out.shape, dtype=torch.bool)
        out = torch.where(all_nan, torch.tensor(_math.nan, dtype=t.dtype), out)
        return _keep(out, t, ax, keepdims)

    reduce.__name__ = reduce.__qualname__ = fn
    reduce.__doc__ = (
        f"``keras.ops.{fn}(x, axis=None, keepdims=False)``: the {'maximum' if largest else 'minimum'} "
        "ignoring NaNs (NaN where all are NaN)."
    )
    return reduce


nanmax = _nan_extreme("nanmax", True)
nanmin = _nan_extreme("nanmin", False)


def _nan_arg(fn: str, largest: builtins.bool) -> Callable[..., Tensor]:
    def reduce(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
        t = tensor(x)
        if axis is not None:
            axes(axis, t.dim(), fn)
        if t.dtype == torch.bool:
            t = t.to(torch.int32)
        if t.is_floating_point():
            fill = -_math.inf if largest else _math.inf
            t = torch.where(torch.isnan(t), torch.tensor(fill, dtype=t.dtype), t)
        op = torch.argmax if largest else torch.argmin
        if axis is None:
            out = op(t.reshape(-1))
            out = out.reshape([1] * t.dim()) if keepdims else out
        else:
            out = op(t, dim=int(axis), keepdim=keepdims)
        return out.to(torch.int32)

    reduce.__name__ = reduce.__qualname__ = fn
    reduce.__doc__ = (
        f"``keras.ops.{fn}(x, axis=None, keepdims=False)``: the index of the extreme, ignoring NaNs (int32)."
    )
    return reduce


nanargmax = _nan_arg("nanargmax", True)
nanargmin = _nan_arg("nanargmin", False)


def _cum_dtype(t: Tensor, dtype: Any) -> torch.dtype:
    if dtype is not None:
        return torch_dtype(dtype)
    return torch.int32 if t.dtype == torch.bool else t.dtype


def nancumsum(x: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    """``keras.ops.nancumsum(x, axis=None, dtype=None)``: the cumulative sum, NaNs counting as 0
    (flattened when ``axis`` is None)."""
    t = tensor(x)
    out_dtype = _cum_dtype(t, dtype)
    if t.is_floating_point():
        t = torch.where(torch.isnan(t), torch.zeros((), dtype=t.dtype), t)
    if axis is None:
        t, axis = t.reshape(-1), 0
    (ax,) = axes(axis, t.dim(), "nancumsum") or (0,)
    return torch.cumsum(t, dim=ax).to(out_dtype)


def nancumprod(x: Any, axis: Any = None, dtype: Any = None) -> Tensor:
    """``keras.ops.nancumprod(x, axis=None, dtype=None)``: the cumulative product, NaNs counting as 1."""
    t = tensor(x)
    out_dtype = _cum_dtype(t, dtype)
    if t.is_floating_point():
        t = torch.where(torch.isnan(t), torch.ones((), dtype=t.dtype), t)
    if axis is None:
        t, axis = t.reshape(-1), 0
    (ax,) = axes(axis, t.dim(), "nancumprod") or (0,)
    return torch.cumprod(t, dim=ax).to(out_dtype)


def _nan_quantile(t: Tensor, q: Tensor, ax: tuple[int, ...] | None, method: str, keepdims: builtins.bool) -> Tensor:
    # Move the reduced axes last, flatten them, sort NaNs to the end and interpolate per row over its
    # count of valid values.
    dims = _dims(ax, t)
    rest = [d for d in range(t.dim()) if d not in dims]
    moved = t.permute(*rest, *dims).reshape(*[t.shape[d] for d in rest], -1)
    valid = (~torch.isnan(moved)).sum(dim=-1, keepdim=True)
    ordered = torch.sort(moved, dim=-1).values  # torch sorts NaN last
    n = valid.to(t.dtype)
    pos = q.reshape(-1, *([1] * moved.dim())).to(t.dtype) * (n - 1).clamp(min=0)
    lo = torch.floor(pos)
    hi = torch.ceil(pos)
    if method == "lower":
        pick = lo
    elif method == "higher":
        pick = hi
    elif method == "nearest":
        pick = torch.round(pos)  # round half to even, as numpy
    elif method == "midpoint":
        pick = None
    elif method == "linear":
        pick = None
    else:
        raise ValueError(
            f"keras.ops.nanquantile: unknown method {method!r}. "
            "Expected one of 'linear', 'lower', 'higher', 'midpoint', 'nearest'."
        )
    expanded = ordered.unsqueeze(0).expand(q.numel(), *ordered.shape)
    if pick is not None:
        out = torch.gather(expanded, -1, pick.long()).squeeze(-1)
    else:
        lo_v = torch.gather(expanded, -1, lo.long()).squeeze(-1)
        hi_v = torch.gather(expanded, -1, hi.long()).squeeze(-1)
        frac = (pos - lo).squeeze(-1) if method == "linear" else torch.full_like(lo_v, 0.5)
        out = lo_v + (hi_v - lo_v) * frac
    out = torch.where(valid.squeeze(-1) == 0, torch.tensor(_math.nan, dtype=t.dtype), out)
    if keepdims:
        shape = [1 if d in dims else t.shape[d] for d in range(t.dim())]
        out = out.reshape(q.numel(), *shape)
    return out if q.dim() else out[0]


def nanquantile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.nanquantile(x, q, axis=None, method="linear", keepdims=False)``: quantiles of the
    non-NaN elements; ``q`` in [0, 1]; integers give floatx."""
    t = _floaty(tensor(x))
    ax = axes(axis, t.dim(), "nanquantile")
    qt = tensor(q).to(t.dtype)
    if torch.any((qt < 0) | (qt > 1)):
        raise ValueError(f"keras.ops.nanquantile: q must be in [0, 1]. Received: q={q!r}")
    if t.numel() == 0:
        return quantile(t, qt, axis=axis, method=method, keepdims=keepdims)
    return _nan_quantile(t, qt, ax, method, keepdims)


def nanpercentile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.nanpercentile(x, q, ...)``: :func:`nanquantile` with ``q`` in percent."""
    t = _floaty(tensor(x))
    return nanquantile(t, tensor(q).to(t.dtype) / 100.0, axis=axis, method=method, keepdims=keepdims)


def nanmedian(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.nanmedian(x, axis=None, keepdims=False)``: the median of the non-NaN elements."""
    if axis == () or axis == []:
        return tensor(x)
    return nanquantile(x, 0.5, axis=axis, keepdims=keepdims)


def percentile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.percentile(x, q, axis=None, method="linear", keepdims=False)``: :func:`quantile`
    with ``q`` in percent (0 to 100).

    Example: ``percentile([1.0, 2.0, 3.0, 4.0], 50)`` is 2.5.
    """
    t = _floaty(tensor(x))
    qt = tensor(q).to(t.dtype)
    if torch.any((qt < 0) | (qt > 100)):
        raise ValueError(f"keras.ops.percentile: q must be in [0, 100]. Received: q={q!r}")
    return quantile(t, qt / 100.0, axis=axis, method=method, keepdims=keepdims)


def ptp(x: Any, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """``keras.ops.ptp(x, axis=None, keepdims=False)``: peak to peak, ``max - min`` along ``axis``."""
    t, ax = _nan_input("ptp", x, axis)
    _check_not_bool("ptp", t)
    dims = _dims(ax, t)
    return _keep(t.amax(dim=dims) - t.amin(dim=dims), t, ax, keepdims)


# ---------------------------------------------------------------------------------------------
# arrays


def empty_like(x: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.empty_like(x, dtype=None)``: an uninitialised tensor of ``x``'s shape (and dtype)."""
    t = tensor(x)
    return torch.empty_like(t, dtype=t.dtype if dtype is None else torch_dtype(dtype))


def diagflat(x: Any, k: int = 0) -> Tensor:
    """``keras.ops.diagflat(x, k=0)``: a 2-D tensor with the flattened ``x`` on diagonal ``k``."""
    return torch.diagflat(tensor(x), offset=int(k))


def diff(a: Any, n: int = 1, axis: int = -1) -> Tensor:
    """``keras.ops.diff(a, n=1, axis=-1)``: the n-th discrete difference along ``axis``."""
    t = tensor(a)
    if n < 0:
        raise ValueError(f"keras.ops.diff: the order n must be non-negative. Received: n={n}")
    if n == 0:
        return t
    (ax,) = axes(axis, t.dim(), "diff") or (0,)
    return torch.diff(t, n=int(n), dim=ax)


def fliplr(x: Any) -> Tensor:
    """``keras.ops.fliplr(x)``: reverses axis 1 (the tensor needs at least 2 dimensions)."""
    t = tensor(x)
    if t.dim() < 2:
        raise ValueError(f"keras.ops.fliplr: the input must be at least 2-D. Received shape {tuple(t.shape)}.")
    return torch.flip(t, dims=(1,))


def flipud(x: Any) -> Tensor:
    """``keras.ops.flipud(x)``: reverses axis 0."""
    t = tensor(x)
    if t.dim() < 1:
        raise ValueError("keras.ops.flipud: the input must be at least 1-D. Received a scalar.")
    return torch.flip(t, dims=(0,))


def rot90(array: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Tensor:
    """``keras.ops.rot90(array, k=1, axes=(0, 1))``: rotates by 90 degrees ``k`` times in the plane of ``axes``."""
    t = tensor(array)
    if t.dim() < 2:
        raise ValueError(f"keras.ops.rot90: the input must be at least 2-D. Received shape {tuple(t.shape)}.")
    if len(axes) != 2 or axes[0] % t.dim() == axes[1] % t.dim():
        raise ValueError(f"keras.ops.rot90: axes must be two different axes. Received: axes={axes!r}")
    return torch.rot90(t, k=int(k), dims=[int(a) for a in axes])


def dstack(xs: Sequence[Any]) -> Tensor:
    """``keras.ops.dstack(xs)``: stacks along the third axis (1-D and 2-D inputs are made 3-D first)."""
    ts = [tensor(x) for x in xs]
    dtype = ts[0].dtype
    for t in ts[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    return torch.dstack([t.to(dtype) for t in ts])


def array_split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """``keras.ops.array_split(x, indices_or_sections, axis=0)``: like ``split``, but ``n`` sections
    need not divide the axis (the first ones get one more element)."""
    t = tensor(x)
    (ax,) = axes(axis, t.dim(), "array_split") or (0,)
    if not isinstance(indices_or_sections, builtins.int) or isinstance(indices_or_sections, builtins.bool):
        raise TypeError(
            "keras.ops.array_split: indices_or_sections must be an int (the number of sections). "
            f"Received: indices_or_sections={indices_or_sections!r}; use keras.ops.split for split points."
        )
    if indices_or_sections <= 0:
        raise ValueError(
            f"keras.ops.array_split: the number of sections must be positive. Received: {indices_or_sections}"
        )
    return list(torch.tensor_split(t, indices_or_sections, dim=ax))


def hsplit(x: Any, indices_or_sections: Any) -> list[Tensor]:
    """``keras.ops.hsplit(x, indices_or_sections)``: ``split`` along axis 1 (axis 0 for 1-D tensors)."""
    t = tensor(x)
    return split(t, indices_or_sections, axis=1 if t.dim() > 1 else 0)


def vsplit(x: Any, indices_or_sections: Any) -> list[Tensor]:
    """``keras.ops.vsplit(x, indices_or_sections)``: ``split`` along axis 0 (needs 2-D or more)."""
    t = tensor(x)
    if t.dim() < 2:
        raise ValueError(f"keras.ops.vsplit: the input must be at least 2-D. Received shape {tuple(t.shape)}.")
    return split(t, indices_or_sections, axis=0)


def dsplit(x: Any, indices_or_sections: Any) -> list[Tensor]:
    """``keras.ops.dsplit(x, indices_or_sections)``: ``split`` along axis 2 (needs 3-D or more)."""
    t = tensor(x)
    if t.dim() < 3:
        raise ValueError(f"keras.ops.dsplit: the input must be at least 3-D. Received shape {tuple(t.shape)}.")
    return split(t, indices_or_sections, axis=2)


def argpartition(x: Any, kth: int, axis: int = -1) -> Tensor:
    """``keras.ops.argpartition(x, kth, axis=-1)``: indices that partition ``x`` around its ``kth``
    smallest element: the ``kth + 1`` smallest first (ascending), then the others from the largest
    down, as Keras orders them (int32)."""
    t = tensor(x)
    if t.dtype == torch.bool:
        t = t.to(torch.int32)
    (ax,) = axes(axis, t.dim(), "argpartition") or (0,)
    n = t.shape[ax] if t.dim() else 1
    if not -n <= kth < n:
        raise ValueError(f"keras.ops.argpartition: kth={kth} is out of bounds for an axis of size {n}.")
    kth = kth % n
    moved = t.movedim(ax, -1)
    order = torch.sort(moved, dim=-1, stable=True).indices
    bottom = order[..., : kth + 1]
    # the others: descending by value, ties by index (stable sorts), the chosen ones moved last
    chosen = torch.zeros(moved.shape, dtype=torch.int8, device=t.device).scatter(-1, bottom, 1)
    desc = torch.sort(moved, dim=-1, descending=True, stable=True).indices
    last = torch.sort(torch.gather(chosen, -1, desc), dim=-1, stable=True).indices[..., : n - kth - 1]
    rest = torch.gather(desc, -1, last)
    return torch.cat([bottom, rest], dim=-1).movedim(-1, ax).to(torch.int32)


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """``keras.ops.unravel_index(indices, shape)``: flat indices as a tuple of coordinate tensors."""
    t = tensor(indices)
    dims = shape_tuple(shape, "unravel_index")
    out = torch.unravel_index(t.long(), dims)
    return tuple(o.to(t.dtype) for o in out)


def vander(x: Any, N: int | None = None, increasing: builtins.bool = False) -> Tensor:
    """``keras.ops.vander(x, N=None, increasing=False)``: the Vandermonde matrix of a 1-D tensor."""
    t = tensor(x)
    if t.dim() != 1:
        raise ValueError(f"keras.ops.vander: x must be 1-D. Received shape {tuple(t.shape)}.")
    if N is not None and N < 0:
        raise ValueError(f"keras.ops.vander: N must be non-negative. Received: N={N}")
    out = torch.linalg.vander(t, N=N if N is not None else t.shape[0])  # increasing powers
    return out if increasing else out.flip(-1)


def view(x: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.view(x, dtype=None)``: the same bytes read as ``dtype`` (the last axis scales by
    the ratio of item sizes)."""
    t = tensor(x)
    if dtype is None:
        return t
    return t.view(torch_dtype(dtype))


def corrcoef(x: Any) -> Tensor:
    """``keras.ops.corrcoef(x)``: Pearson correlation coefficients of the rows of ``x``."""
    t = _floaty(tensor(x), True)
    return torch.corrcoef(t)


def correlate(x1: Any, x2: Any, mode: str = "valid") -> Tensor:
    """``keras.ops.correlate(x1, x2, mode="valid")``: the cross-correlation of two 1-D tensors
    (``mode`` ``"valid"``, ``"same"`` or ``"full"``, as numpy)."""
    a, b = pair(x1, x2)
    if a.dim() != 1 or b.dim() != 1:
        raise ValueError(
            f"keras.ops.correlate works on 1-D tensors. Received shapes {tuple(a.shape)} and {tuple(b.shape)}."
        )
    if mode not in ("valid", "same", "full"):
        raise ValueError(f"keras.ops.correlate: mode must be 'valid', 'same' or 'full'. Received: mode={mode!r}")
    dtype = _result_float(a, b)
    a, b = a.to(dtype), b.to(dtype)
    n, m = a.shape[0], b.shape[0]
    padded = torch.nn.functional.pad(a.reshape(1, 1, n), (m - 1, m - 1))
    full = torch.nn.functional.conv1d(padded, b.reshape(1, 1, m)).reshape(-1)
    if mode == "full":
        return full
    if mode == "same":
        start = (n + m - 1 - builtins.max(n, m)) // 2
        return full[start : start + builtins.max(n, m)]
    return full[builtins.min(n, m) - 1 : builtins.max(n, m)]


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Tensor:
    """``keras.ops.trapezoid(y, x=None, dx=1.0, axis=-1)``: the integral of ``y`` by the trapezoidal rule."""
    t = _floaty(tensor(y))
    (ax,) = axes(axis, t.dim(), "trapezoid") or (0,)
    if x is None:
        return torch.trapezoid(t, dx=dx, dim=ax)
    return torch.trapezoid(t, tensor(x).to(t.dtype), dim=ax)


def histogram(x: Any, bins: int = 10, range: tuple[float, float] | None = None) -> tuple[Tensor, Tensor]:
    """``keras.ops.histogram(x, bins=10, range=None)``: counts of a 1-D tensor in ``bins`` equal bins
    and the ``bins + 1`` edges (both in ``x``'s dtype, as Keras)."""
    t = tensor(x)
    if t.dim() != 1:
        raise ValueError(f"keras.ops.histogram: x must be 1-D. Received shape {tuple(t.shape)}.")
    if not isinstance(bins, builtins.int) or bins < 1:
        raise ValueError(f"keras.ops.histogram: bins must be a positive int. Received: bins={bins!r}")
    lo, hi = (t.min(), t.max()) if range is None else (torch.tensor(range[0]), torch.tensor(range[1]))
    f = t.to(torch.float64)
    lo_f, hi_f = lo.to(torch.float64), hi.to(torch.float64)
    inside = f[(f >= lo_f) & (f <= hi_f)]
    edges = torch.linspace(float(lo_f), float(hi_f), bins + 1, dtype=torch.float64).to(t.dtype)
    index = torch.searchsorted(edges[1:-1].to(torch.float64).contiguous(), inside.contiguous(), right=True)
    counts = torch.bincount(index, minlength=bins)[:bins].to(t.dtype)
    return counts, edges


def unique(
    x: Any,
    sorted: builtins.bool = True,
    return_index: builtins.bool = False,
    return_inverse: builtins.bool = False,
    return_counts: builtins.bool = False,
    axis: int | None = None,
    size: int | None = None,
    fill_value: Any = None,
) -> Tensor | tuple[Tensor, ...]:
    """``keras.ops.unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False,
    axis=None, size=None, fill_value=None)``: the distinct values (sorted), and optionally the index of
    each one's first occurrence, the inverse map and the counts; ``size`` pads or cuts to a fixed length."""
    t = tensor(x)
    if axis is None:
        t = t.reshape(-1)
        dim = 0
    else:
        (dim,) = axes(axis, t.dim(), "unique") or (0,)
    values, inverse, counts = torch.unique(t, sorted=True, return_inverse=True, return_counts=True, dim=dim)
    results: list[Tensor] = [values]
    if return_index:
        positions = torch.arange(inverse.shape[0], device=t.device)
        first = torch.full((values.shape[dim],), inverse.shape[0], dtype=torch.int64, device=t.device)
        first = first.scatter_reduce(0, inverse.reshape(-1), positions, reduce="amin")
        results.append(first.to(torch.int32))
    if return_inverse:
        results.append(inverse.to(torch.int32))
    if return_counts:
        results.append(counts.to(torch.int32))
    if size is not None:
        n = values.shape[dim]
        padded = []
        for i, r in enumerate(results):
            if i == 1 + builtins.int(return_index) and return_inverse:
                padded.append(r)
                continue
            if n >= size:
                padded.append(r.narrow(dim if i == 0 else 0, 0, size))
            else:
                d = dim if i == 0 else 0
                pad_shape = list(r.shape)
                pad_shape[d] = size - n
                fill = fill_value if (i == 0 and fill_value is not None) else 0
                if i == 0 and fill_value is None:
                    fill = r.min() if r.numel() else 0
                padded.append(torch.cat([r, torch.full(pad_shape, fill, dtype=r.dtype, device=r.device)], dim=d))
        results = padded
    return results[0] if len(results) == 1 else tuple(results)


# ---------------------------------------------------------------------------------------------
# constructors


def _window(name: str, make: Callable[[int], Tensor]) -> Callable[[Any], Tensor]:
    def fn(x: Any) -> Tensor:
        m = int(tensor(x)) if not isinstance(x, builtins.int) else x
        if m < 1:
            return torch.zeros((0,), dtype=torch.get_default_dtype())
        return make(m).to(torch.get_default_dtype())

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``keras.ops.{name}(x)``: numpy's symmetric {name} window of length ``x`` (floatx)."
    return fn


bartlett = _window("bartlett", lambda m: torch.bartlett_window(m, periodic=False, dtype=torch.float64))
blackman = _window("blackman", lambda m: torch.blackman_window(m, periodic=False, dtype=torch.float64))
hamming = _window("hamming", lambda m: torch.hamming_window(m, periodic=False, dtype=torch.float64))
hanning = _window("hanning", lambda m: torch.hann_window(m, periodic=False, dtype=torch.float64))


def kaiser(x: Any, beta: float) -> Tensor:
    """``keras.ops.kaiser(x, beta)``: numpy's Kaiser window of length ``x`` and shape ``beta`` (floatx)."""
    m = int(x)
    if m < 1:
        return torch.zeros((0,), dtype=torch.get_default_dtype())
    return torch.kaiser_window(m, periodic=False, beta=float(beta), dtype=torch.float64).to(torch.get_default_dtype())


def _spaced(start: Any, stop: Any, num: int, endpoint: builtins.bool, axis: int, fn: str) -> Tensor:
    if num < 0:
        raise ValueError(f"keras.ops.{fn}: num must be non-negative. Received: num={num}")
    s, e = tensor(start).to(torch.float64), tensor(stop).to(torch.float64)
    s, e = torch.broadcast_tensors(s, e)
    steps = torch.arange(num, dtype=torch.float64) / builtins.max(num - 1 if endpoint else num, 1)
    shape = (num,) + (1,) * s.dim()
    out = s + (e - s) * steps.reshape(shape)
    if endpoint and num > 1:
        out[-1] = e
    return out.movedim(0, axis) if s.dim() else out


def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: builtins.bool = True,
    base: float = 10,
    dtype: Any = None,
    axis: int = 0,
) -> Tensor:
    """``keras.ops.logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0)``:
    ``base ** linspace(start, stop)`` (floatx unless ``dtype``)."""
    exps = _spaced(start, stop, num, endpoint, axis, "logspace")
    out = torch.pow(torch.tensor(float(base), dtype=torch.float64), exps)
    return out.to(torch_dtype(dtype) if dtype is not None else torch.get_default_dtype())


def geomspace(
    start: Any, stop: Any, num: int = 50, endpoint: builtins.bool = True, dtype: Any = None, axis: int = 0
) -> Tensor:
    """``keras.ops.geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0)``: numbers evenly
    spaced on a log scale from ``start`` to ``stop`` (floatx unless ``dtype``)."""
    s, e = tensor(start).to(torch.float64), tensor(stop).to(torch.float64)
    if torch.any(s == 0) or torch.any(e == 0):
        raise ValueError(
            "keras.ops.geomspace: start and stop must be non-zero (a geometric sequence cannot include 0)."
        )
    sign = torch.sign(s)
    exps = _spaced(torch.log10(s * sign), torch.log10(e * sign), num, endpoint, axis, "geomspace")
    out = sign * torch.pow(torch.tensor(10.0, dtype=torch.float64), exps)
    if num > 0:
        # the endpoints exactly, as numpy
        along = axis if s.dim() else 0
        out.select(along, 0).copy_(s)
        if endpoint and num > 1:
            out.select(along, -1).copy_(e)
    return out.to(torch_dtype(dtype) if dtype is not None else torch.get_default_dtype())


def vectorize(
    pyfunc: Callable[..., Any], *, excluded: Any = None, signature: str | None = None
) -> Callable[..., Tensor]:
    """``keras.ops.vectorize(pyfunc, *, excluded=None, signature=None)``: ``pyfunc`` applied to each
    element (or, with a ``signature`` such as ``"(d)->()"``, each core slice) of broadcast inputs.

    Example: ``vectorize(lambda a, b: a * b + 1)([1.0, 2.0], 3.0)`` gives ``[4.0, 7.0]``.
    """
    excluded_set = set(excluded or ())
    core: list[int] | None = None  # the number of core axes of each input, from the signature
    if signature is not None:
        inputs_part = signature.split("->")[0]
        parts = inputs_part.replace(" ", "").strip("()").split("),(")
        core = [len([d for d in p.split(",") if d]) for p in parts]

    def wrapped(*args: Any, **kwargs: Any) -> Tensor:
        positions = [i for i in builtins.range(len(args)) if i not in excluded_set]
        names = [k for k in kwargs if k not in excluded_set]
        ts = [tensor(args[i]) for i in positions] + [tensor(kwargs[k]) for k in names]
        cores = core if core is not None and len(core) == len(ts) else [0] * len(ts)
        if core is not None and len(core) != len(ts):
            raise ValueError(
                f"keras.ops.vectorize: the signature {signature!r} names {len(core)} inputs, the call passed "
                f"{len(ts)}. Pass one argument per input of the signature (or list the others in excluded=)."
            )
        # numpy's gufunc rule: the loop axes (all but each input's core axes) broadcast together
        loops = [tuple(t.shape[: t.dim() - c]) for t, c in zip(ts, cores)]
        try:
            loop_shape = torch.broadcast_shapes(*loops) if ts else ()
        except RuntimeError:
            raise ValueError(
                f"keras.ops.vectorize: the input shapes {[tuple(t.shape) for t in ts]} cannot be broadcast "
                "together. Pass inputs whose shapes broadcast (numpy's rules), or a signature for core axes."
            ) from None
        ts = [t.expand(*loop_shape, *t.shape[t.dim() - c :]) for t, c in zip(ts, cores)]
        batch_ndim = len(loop_shape)

        def call(*vals: Tensor) -> Tensor:
            new_args = list(args)
            for i, v in zip(positions, vals[: len(positions)]):
                new_args[i] = v
            new_kwargs = dict(kwargs)
            for k, v in zip(names, vals[len(positions) :]):
                new_kwargs[k] = v
            return pyfunc(*new_args, **new_kwargs)

        fn: Callable[..., Tensor] = call
        for _ in builtins.range(batch_ndim):
            fn = torch.vmap(fn)
        return tensor(fn(*ts))

    wrapped.__name__ = getattr(pyfunc, "__name__", "vectorized")
    return wrapped


__all__ = [
    "allclose",
    "angle",
    "argpartition",
    "array_split",
    "bartlett",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "blackman",
    "cbrt",
    "corrcoef",
    "correlate",
    "deg2rad",
    "diagflat",
    "diff",
    "dsplit",
    "dstack",
    "empty_like",
    "fabs",
    "fliplr",
    "flipud",
    "fmax",
    "fmin",
    "fmod",
    "gcd",
    "geomspace",
    "hamming",
    "hanning",
    "heaviside",
    "histogram",
    "hsplit",
    "i0",
    "isin",
    "isneginf",
    "isposinf",
    "isreal",
    "kaiser",
    "kron",
    "lcm",
    "ldexp",
    "left_shift",
    "logaddexp2",
    "logspace",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "nextafter",
    "percentile",
    "ptp",
    "rad2deg",
    "right_shift",
    "rot90",
    "signbit",
    "sinc",
    "trapezoid",
    "unique",
    "unravel_index",
    "vander",
    "view",
    "vsplit",
]
_UNWRAPPED = ["vectorize"]  # takes a Python function, not tensors

# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), __all__)
__all__ = sorted([*__all__, *_UNWRAPPED])
