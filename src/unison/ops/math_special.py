"""The rest of ``tf.math``: more elementwise functions, special functions, segments and scans.

Each follows TF 2.21's documented semantics, checked against TensorFlow itself by
``tests/conformance/test_vs_tf_math.py``: integer inputs to float-only functions are TF's
``InvalidArgumentError``-free casts where TF casts, empty segments hold TF's identity values
(``unsorted_segment_max`` the dtype's lowest value, not ``-inf``), and the ``*_no_nan`` functions
give 0 where TF does.

Example:
    >>> import unison as tf
    >>> tf.math.segment_mean(tf.constant([1.0, 3.0, 5.0]), tf.constant([0, 0, 1])).tolist()
    [2.0, 5.0]
    >>> tf.math.xlogy(tf.constant([0.0, 2.0]), tf.constant([0.0, 1.0])).tolist()
    [0.0, 0.0]
"""

from __future__ import annotations

import builtins
import math as _pymath
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor


def _float(t: torch.Tensor) -> torch.Tensor:
    return t if t.is_floating_point() or t.is_complex() else t.float()


def _pair(x: Any, y: Any) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = to_tensor(x), to_tensor(y)
    if not isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        a = a.to(b.dtype)
    elif not isinstance(y, torch.Tensor) and isinstance(x, torch.Tensor):
        b = b.to(a.dtype)
    return a, b


def _unary(name: str, fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[..., torch.Tensor]:
    def unary(x: Any, name: str | None = None) -> torch.Tensor:
        return fn(to_tensor(x))

    unary.__name__ = unary.__qualname__ = name
    unary.__doc__ = f"``tf.math.{name}(x)``, elementwise."
    return unary


def _binary(name: str, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Callable[..., torch.Tensor]:
    def binary(x: Any, y: Any, name: str | None = None) -> torch.Tensor:
        return fn(*_pair(x, y))

    binary.__name__ = binary.__qualname__ = name
    binary.__doc__ = f"``tf.math.{name}(x, y)``, elementwise, broadcasting as TF does."
    return binary


def _f(fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda t: fn(_float(t))


def _softplus(t: torch.Tensor) -> torch.Tensor:
    # log(1 + exp(x)) without overflow; F.softplus's threshold switch differs from TF's by an ulp
    return torch.logaddexp(t, torch.zeros((), dtype=t.dtype))


def _reciprocal_no_nan(t: torch.Tensor) -> torch.Tensor:
    return torch.where(t == 0, torch.zeros((), dtype=t.dtype), 1 / torch.where(t == 0, torch.ones_like(t), t))


def _erfcinv(t: torch.Tensor) -> torch.Tensor:
    return -torch.special.ndtri(t / 2) / _pymath.sqrt(2.0)


expm1 = _unary("expm1", _f(torch.expm1))
rint = _unary("rint", _f(torch.round))  # round half to even, as TF's rint
tan = _unary("tan", _f(torch.tan))
sinh = _unary("sinh", _f(torch.sinh))
cosh = _unary("cosh", _f(torch.cosh))
asin = _unary("asin", _f(torch.asin))
acos = _unary("acos", _f(torch.acos))
atan = _unary("atan", _f(torch.atan))
asinh = _unary("asinh", _f(torch.asinh))
acosh = _unary("acosh", _f(torch.acosh))
atanh = _unary("atanh", _f(torch.atanh))
log_sigmoid = _unary("log_sigmoid", _f(F.logsigmoid))
softplus = _unary("softplus", _f(_softplus))
softsign = _unary("softsign", _f(lambda t: t / (1 + t.abs())))
erf = _unary("erf", _f(torch.erf))
erfc = _unary("erfc", _f(torch.erfc))
erfinv = _unary("erfinv", _f(torch.erfinv))
erfcinv = _unary("erfcinv", _f(_erfcinv))
ndtri = _unary("ndtri", _f(torch.special.ndtri))
lgamma = _unary("lgamma", _f(torch.lgamma))
digamma = _unary("digamma", _f(lambda t: torch.where((t <= 0) & (t == torch.floor(t)), torch.nan, torch.digamma(t))))
reciprocal_no_nan = _unary("reciprocal_no_nan", _f(_reciprocal_no_nan))
bessel_i0 = _unary("bessel_i0", _f(torch.special.i0))
bessel_i0e = _unary("bessel_i0e", _f(torch.special.i0e))
bessel_i1 = _unary("bessel_i1", _f(torch.special.i1))
bessel_i1e = _unary("bessel_i1e", _f(torch.special.i1e))
bessel_j0 = _unary("bessel_j0", _f(torch.special.bessel_j0))
bessel_j1 = _unary("bessel_j1", _f(torch.special.bessel_j1))


def _positive_domain(
    fn: Callable[[torch.Tensor], torch.Tensor], limit: float
) -> Callable[[torch.Tensor], torch.Tensor]:
    # Y and K are singular at 0 and undefined below: TF answers their limit at 0+ for every x <= 0
    return _f(lambda t: torch.where(t <= 0, torch.full((), limit, dtype=t.dtype), fn(t)))


bessel_y0 = _unary("bessel_y0", _positive_domain(torch.special.bessel_y0, -_pymath.inf))
bessel_y1 = _unary("bessel_y1", _positive_domain(torch.special.bessel_y1, -_pymath.inf))
bessel_k0 = _unary("bessel_k0", _positive_domain(torch.special.modified_bessel_k0, _pymath.inf))
bessel_k1 = _unary("bessel_k1", _positive_domain(torch.special.modified_bessel_k1, _pymath.inf))
bessel_k0e = _unary("bessel_k0e", _positive_domain(torch.special.scaled_modified_bessel_k0, _pymath.inf))
bessel_k1e = _unary("bessel_k1e", _positive_domain(torch.special.scaled_modified_bessel_k1, _pymath.inf))


def _no_nan_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.where(b == 0, torch.zeros((), dtype=torch.result_type(a, b)), a * b)


def _xdivy(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.where(a == 0, torch.zeros((), dtype=torch.result_type(a, b)), a / b)


def _polygamma(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    a, x = torch.broadcast_tensors(_float(a), _float(x))
    out = torch.full_like(x, torch.nan)
    for order in torch.unique(a).tolist():  # TF takes a float order per element; torch one int per call
        if order >= 0 and order == int(order):
            where = a == order
            out = torch.where(where, torch.special.polygamma(int(order), x), out)
    return out


atan2 = _binary("atan2", lambda a, b: torch.atan2(_float(a), _float(b)))
multiply_no_nan = _binary("multiply_no_nan", _no_nan_product)
xdivy = _binary("xdivy", _xdivy)
xlogy = _binary("xlogy", lambda a, b: torch.special.xlogy(_float(a), _float(b)))
xlog1py = _binary("xlog1py", lambda a, b: torch.special.xlog1py(_float(a), _float(b)))
nextafter = _binary("nextafter", torch.nextafter)
igamma = _binary("igamma", lambda a, x: torch.special.gammainc(_float(a), _float(x)))
igammac = _binary("igammac", lambda a, x: torch.special.gammaincc(_float(a), _float(x)))
zeta = _binary("zeta", lambda x, q: torch.special.zeta(_float(x), _float(q)))
polygamma = _binary("polygamma", _polygamma)
logical_xor = _binary("logical_xor", torch.logical_xor)


def count_nonzero(
    input: Any,
    axis: Any = None,
    keepdims: builtins.bool | None = None,
    dtype: Any = torch.int64,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.math.count_nonzero``: how many entries are not zero (int64 by default), over ``axis``."""
    t = to_tensor(input) != 0
    dims = tuple(range(t.dim())) if axis is None else tuple(axis) if isinstance(axis, (list, tuple)) else (int(axis),)
    return t.sum(dim=dims, keepdim=builtins.bool(keepdims)).to(as_dtype(dtype))


def _scan(
    t: torch.Tensor, axis: int, exclusive: builtins.bool, reverse: builtins.bool, fn: Callable, identity: float
) -> torch.Tensor:
    if reverse:
        t = t.flip(axis)
    if exclusive and t.shape[axis] > 0:
        pad = torch.full_like(t.narrow(axis, 0, 1), identity)
        t = torch.cat([pad, t.narrow(axis, 0, t.shape[axis] - 1)], dim=axis)
    out = fn(t, axis)
    return out.flip(axis) if reverse else out


def cumprod(
    x: Any, axis: int = 0, exclusive: builtins.bool = False, reverse: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.math.cumprod``: the running product along ``axis`` (``exclusive`` starts at 1)."""
    t = to_tensor(x)
    return _scan(t, int(axis), exclusive, reverse, lambda v, a: torch.cumprod(v, dim=a), 1.0)


def cumulative_logsumexp(
    x: Any, axis: int = 0, exclusive: builtins.bool = False, reverse: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.math.cumulative_logsumexp``: ``log(cumsum(exp(x)))`` computed stably (exclusive starts at -inf)."""
    t = _float(to_tensor(x))
    return _scan(t, int(axis), exclusive, reverse, lambda v, a: torch.logcumsumexp(v, dim=a), -_pymath.inf)


def _lowest(dtype: torch.dtype) -> float | int:
    return torch.finfo(dtype).min if dtype.is_floating_point else torch.iinfo(dtype).min


def _highest(dtype: torch.dtype) -> float | int:
    return torch.finfo(dtype).max if dtype.is_floating_point else torch.iinfo(dtype).max


def _segments(data: torch.Tensor, ids: torch.Tensor, num: int, reduce: str, empty: float | int) -> torch.Tensor:
    keep = ids >= 0  # TF drops negative ids
    data, ids = data[keep], ids[keep].long()
    shape = (num, *data.shape[1:])
    if reduce == "sum":
        out = torch.zeros(shape, dtype=data.dtype).index_add_(0, ids, data)
        return out
    out = torch.full(shape, empty, dtype=data.dtype)
    return out.index_reduce_(0, ids, data, reduce, include_self=False)


def _segment_ids(segment_ids: Any, data: torch.Tensor, fn: str) -> torch.Tensor:
    ids = to_tensor(segment_ids)
    if ids.dtype.is_floating_point or ids.dim() != 1 or ids.shape[0] != data.shape[0]:
        raise InvalidArgumentError(
            f"tf.math.{fn}: `segment_ids` must be a 1-D integer tensor with one id per row of `data` "
            f"({data.shape[0]} rows). Received: segment_ids of shape {list(ids.shape)} and dtype {ids.dtype}."
        )
    return ids


def _sorted(fn: str, reduce: str, empty: float) -> Callable[..., torch.Tensor]:
    def segment(data: Any, segment_ids: Any, name: str | None = None) -> torch.Tensor:
        values = to_tensor(data)
        ids = _segment_ids(segment_ids, values, fn)
        if ids.numel() > 1 and builtins.bool((ids[1:] < ids[:-1]).any()):
            raise InvalidArgumentError(f"tf.math.{fn}: `segment_ids` must be sorted in ascending order.")
        num = int(ids.max()) + 1 if ids.numel() else 0
        return _segments(values, ids, num, reduce, empty)

    segment.__name__ = segment.__qualname__ = fn
    segment.__doc__ = f"``tf.math.{fn}``: reduce rows with the same (sorted) id; an empty segment gives {empty}."
    return segment


def _unsorted(fn: str, reduce: str) -> Callable[..., torch.Tensor]:
    def segment(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> torch.Tensor:
        values = to_tensor(data)
        ids = _segment_ids(segment_ids, values, fn)
        empty = {"amax": _lowest(values.dtype), "amin": _highest(values.dtype), "prod": 1}.get(reduce, 0)
        return _segments(values, ids, int(num_segments), reduce, empty)

    segment.__name__ = segment.__qualname__ = fn
    segment.__doc__ = f"``tf.math.{fn}``: reduce rows by id into ``num_segments`` rows (negative ids dropped)."
    return segment


segment_mean = _sorted("segment_mean", "mean", 0)
segment_max = _sorted("segment_max", "amax", 0)
segment_min = _sorted("segment_min", "amin", 0)
segment_prod = _sorted("segment_prod", "prod", 1)
unsorted_segment_mean = _unsorted("unsorted_segment_mean", "mean")
unsorted_segment_max = _unsorted("unsorted_segment_max", "amax")
unsorted_segment_min = _unsorted("unsorted_segment_min", "amin")
unsorted_segment_prod = _unsorted("unsorted_segment_prod", "prod")


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.unsorted_segment_sqrt_n``: each segment's sum divided by the square root of its size."""
    values = to_tensor(data)
    ids = _segment_ids(segment_ids, values, "unsorted_segment_sqrt_n")
    total = _segments(values, ids, int(num_segments), "sum", 0)
    counts = _segments(torch.ones(values.shape[0], dtype=values.dtype), ids, int(num_segments), "sum", 0)
    counts = counts.reshape(-1, *([1] * (values.dim() - 1)))
    return total / torch.sqrt(torch.clamp(counts, min=1))


def in_top_k(targets: Any, predictions: Any, k: int, name: str | None = None) -> torch.Tensor:
    """``tf.math.in_top_k(targets, predictions, k)``: whether each target's score is among the top ``k``.

    Ties straddling the k-th place all count as in the top k; a non-finite target score never does.
    """
    scores, target = to_tensor(predictions), to_tensor(targets).long()
    chosen = scores.gather(1, target.reshape(-1, 1))
    better = (scores > chosen).sum(dim=1, keepdim=True)
    return ((better < int(k)) & torch.isfinite(chosen)).reshape(-1)


def accumulate_n(
    inputs: Sequence[Any], shape: Any = None, tensor_dtype: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.math.accumulate_n``: the elementwise sum of tensors of one shape (as ``add_n``)."""
    tensors = [to_tensor(t) for t in inputs]
    out = tensors[0].clone()
    for t in tensors[1:]:
        out = out + t
    return out


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.scalar_mul``: ``scalar * x``, keeping ``x``'s dtype."""
    t = to_tensor(x)
    return t * torch.as_tensor(to_tensor(scalar), dtype=t.dtype)


def conj(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.conj``: the complex conjugate (real input is returned as is)."""
    t = to_tensor(x)
    return t.conj().resolve_conj() if t.is_complex() else t


def real(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.real``: the real part (real input is returned as is)."""
    t = to_tensor(input)
    return t.real.clone() if t.is_complex() else t


def imag(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.imag``: the imaginary part (zeros for real input)."""
    t = to_tensor(input)
    return t.imag.clone() if t.is_complex() else torch.zeros_like(t)


def angle(input: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.angle``: the argument of complex input; pi for negative real input, else 0."""
    return torch.angle(to_tensor(input))


def lbeta(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.lbeta``: ``log(|Beta(x)|)`` over the last axis (an empty axis gives -inf, as in TF)."""
    t = _float(to_tensor(x))
    return torch.lgamma(t).sum(dim=-1) - torch.lgamma(t.sum(dim=-1))


def polyval(coeffs: Sequence[Any], x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.polyval``: ``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` by Horner's rule."""
    t = to_tensor(x)
    out = torch.zeros_like(t)
    for c in coeffs:
        out = out * t + to_tensor(c).to(t.dtype)
    return out


def zero_fraction(value: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.zero_fraction``: the fraction of entries equal to zero, as float32 (NaN when empty)."""
    t = to_tensor(value)
    return (t == 0).sum().float() / float(t.numel()) if t.numel() else torch.tensor(_pymath.nan)


def invert_permutation(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.invert_permutation``: ``y[x[i]] = i``."""
    t = to_tensor(x)
    if t.dim() != 1 or builtins.bool((torch.sort(t).values != torch.arange(t.numel(), dtype=t.dtype)).any()):
        raise InvalidArgumentError(
            f"tf.math.invert_permutation: `x` must be a permutation of 0..n-1. Received: {t.tolist()}"
        )
    out = torch.empty_like(t)
    out[t.long()] = torch.arange(t.numel(), dtype=t.dtype)
    return out


def is_non_decreasing(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.is_non_decreasing``: whether the flattened ``x`` never decreases (True when empty)."""
    t = to_tensor(x).reshape(-1)
    return (t[1:] >= t[:-1]).all()


def is_strictly_increasing(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.is_strictly_increasing``: whether the flattened ``x`` always increases."""
    t = to_tensor(x).reshape(-1)
    return (t[1:] > t[:-1]).all()


def sobol_sample(
    dim: int, num_results: int, skip: int = 0, dtype: Any = torch.float32, name: str | None = None
) -> torch.Tensor:
    """``tf.math.sobol_sample``: points of the unscrambled Sobol sequence, from index ``skip + 1`` as TF."""
    engine = torch.quasirandom.SobolEngine(int(dim), scramble=False)
    engine.fast_forward(int(skip) + 1)  # TF leaves out the all-zero first point
    return engine.draw(int(num_results), dtype=torch.float64).to(as_dtype(dtype))


LOGITS_ATTR = "_unison_logits"
"""Attribute of a softmax output that holds the logits it was computed from (read by Keras's losses)."""


def softmax(logits: Any, axis: int | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.math.softmax`` (``tf.nn.softmax``) along ``axis`` (default the last).

    Over the last axis the output remembers its logits (``LOGITS_ATTR``), so a Keras categorical
    cross-entropy on it computes from them, as TF does for a ``Softmax`` op's output in graph mode.
    """
    t = to_tensor(logits)
    out = F.softmax(t, dim=-1 if axis is None else axis)
    if axis is None or axis in (-1, t.dim() - 1):
        setattr(out, LOGITS_ATTR, t)
    return out


def log_softmax(logits: Any, axis: int | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.math.log_softmax`` (``tf.nn.log_softmax``) along ``axis`` (default the last)."""
    return F.log_softmax(to_tensor(logits), dim=-1 if axis is None else axis)


SPECIAL = [
    "bessel_i0",
    "bessel_i0e",
    "bessel_i1",
    "bessel_i1e",
    "bessel_j0",
    "bessel_j1",
    "bessel_k0",
    "bessel_k0e",
    "bessel_k1",
    "bessel_k1e",
    "bessel_y0",
    "bessel_y1",
]
"""The names of ``tf.math.special`` unison has (dawsn, expint, fresnel_*, spence are not built)."""

MATH = [
    "accumulate_n", "acos", "acosh", "angle", "asin", "asinh", "atan", "atan2",
    "atanh", "bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "conj", "cosh", "count_nonzero", "cumprod",
    "cumulative_logsumexp", "digamma", "erf", "erfc", "erfcinv", "erfinv", "expm1", "igamma", "igammac", "imag",
    "in_top_k", "invert_permutation", "is_non_decreasing", "is_strictly_increasing", "lbeta", "lgamma",
    "log_sigmoid", "log_softmax", "logical_xor", "multiply_no_nan", "ndtri", "nextafter", "polygamma", "polyval",
    "real", "reciprocal_no_nan", "rint", "scalar_mul", "segment_max", "segment_mean", "segment_min", "segment_prod",
    "sinh", "sobol_sample", "softmax", "softplus", "softsign", "tan", "unsorted_segment_max",
    "unsorted_segment_mean", "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sqrt_n", "xdivy",
    "xlog1py", "xlogy", "zero_fraction", "zeta",
]  # fmt: skip
"""The names this module adds to ``tf.math``."""
