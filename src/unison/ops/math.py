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

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops import fastpath
from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.string_tensor import StringTensor


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


_EXTREMA = ("reduce_max", "reduce_min")


def _empty_extremum(
    t: torch.Tensor, dims: tuple[int, ...], keep: builtins.bool, largest: builtins.bool
) -> torch.Tensor:
    # TF's max over nothing is the dtype's lowest value (-inf for floats), its min the highest
    info = torch.finfo(t.dtype) if t.is_floating_point() else torch.iinfo(t.dtype)
    fill = (
        (-float("inf") if largest else float("inf")) if t.is_floating_point() else (info.min if largest else info.max)
    )
    shape = (
        [1 if d in dims else n for d, n in enumerate(t.shape)]
        if keep
        else [n for d, n in enumerate(t.shape) if d not in dims]
    )
    return torch.full(shape, fill, dtype=t.dtype)


def _reduction(
    op_name: str, fn: Callable[[torch.Tensor, tuple[int, ...], builtins.bool], torch.Tensor]
) -> Callable[..., torch.Tensor]:
    def reduce(
        input_tensor: Any, axis: Any = None, keepdims: builtins.bool = False, name: str | None = None
    ) -> torch.Tensor:
        t = to_tensor(input_tensor)
        dims = _dims(t, axis)
        if t.dim() == 0 or not dims:
            return t.clone()
        if op_name in _EXTREMA and builtins.any(t.shape[d] == 0 for d in dims):
            return _empty_extremum(t, dims, keepdims, op_name == "reduce_max")
        return fn(t, dims, keepdims)

    reduce.__name__ = reduce.__qualname__ = op_name
    reduce.__doc__ = f"``tf.{op_name}(input_tensor, axis=None, keepdims=False)``."
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


def _arg_extremum(input: Any, axis: Any, output_type: Any, largest: builtins.bool) -> torch.Tensor:
    t = to_tensor(input)
    dim = int(axis or 0)
    fast = fastpath.argextremum(t, dim, largest)
    if fast is not None:
        return fast.to(as_dtype(output_type))
    pick = torch.argmax if largest else torch.argmin
    index = pick(t, dim=dim)
    if t.is_floating_point():
        # torch lets a NaN win; TF's kernel never does. Only where a NaN won (looked up at the
        # chosen positions, not over the whole tensor) is it computed again with NaN pushed aside.
        chosen = t.gather(dim, index.unsqueeze(dim)) if t.dim() else t
        if builtins.bool(torch.isnan(chosen).any()):
            fill = torch.full((), -float("inf") if largest else float("inf"), dtype=t.dtype)
            index = pick(torch.where(torch.isnan(t), fill, t), dim=dim)
    return index.to(as_dtype(output_type))


def argmax(input: Any, axis: Any = None, output_type: Any = torch.int64, name: str | None = None) -> torch.Tensor:
    """``tf.argmax``: along ``axis`` (default 0, as in TF); NaN never wins, as in TF's kernel."""
    return _arg_extremum(input, axis, output_type, True)


def argmin(input: Any, axis: Any = None, output_type: Any = torch.int64, name: str | None = None) -> torch.Tensor:
    """``tf.argmin``: along ``axis`` (default 0, as in TF); NaN never wins, as in TF's kernel."""
    return _arg_extremum(input, axis, output_type, False)


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


def _compare(op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Callable[..., torch.Tensor]:
    return lambda a, b: fastpath.compare(op, a, b)


def _order(name: str, op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Callable[..., torch.Tensor]:
    def compare(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.dtype == torch.bool or b.dtype == torch.bool:  # TF orders numbers only
            raise InvalidArgumentError(
                f"tf.math.{name}: bool tensors have no order; compare numbers (tf.cast(x, tf.int32)) or use "
                "tf.math.equal/not_equal/logical_*. Received: x and y of dtypes "
                f"{str(a.dtype).replace('torch.', '')} and {str(b.dtype).replace('torch.', '')}."
            )
        return fastpath.compare(op, a, b)

    return compare


def _string_operand(v: Any) -> bool:
    return isinstance(v, (StringTensor, str, bytes)) or (
        isinstance(v, np.ndarray)
        and (v.dtype.kind in "US" or (v.dtype == object and v.size > 0 and isinstance(v.flat[0], (str, bytes))))
    )


def _equality(name: str, op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], negate: bool) -> Callable[..., Any]:
    numeric = _binary(name, _compare(op))

    def equality(x: Any, y: Any, name: str | None = None) -> torch.Tensor:
        # strings compare elementwise as in TF (tf.not_equal(tf.strings.substr(line, 0, 1), "0")):
        # a string operand goes to StringTensor's comparison, "a" and b"a" being the same string
        if _string_operand(x) or _string_operand(y):
            left, right = (x, y) if _string_operand(x) else (y, x)
            strings = left if isinstance(left, StringTensor) else StringTensor(np.asarray(left, dtype=object))
            return (strings != right) if negate else (strings == right)
        return numeric(x, y)

    equality.__name__ = equality.__qualname__ = numeric.__name__
    equality.__doc__ = f"``tf.math.{numeric.__name__}(x, y)``, broadcasting as TF does (numbers or strings)."
    return equality


equal = _equality("equal", torch.eq, negate=False)
not_equal = _equality("not_equal", torch.ne, negate=True)
greater = _binary("greater", _order("greater", torch.gt))
greater_equal = _binary("greater_equal", _order("greater_equal", torch.ge))
less = _binary("less", _order("less", torch.lt))
less_equal = _binary("less_equal", _order("less_equal", torch.le))
add = _binary("add", torch.add)
subtract = _binary("subtract", torch.sub)
multiply = _binary("multiply", torch.mul)


def _true_divide(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # TF divides 8- and 16-bit integers in float32 and 32- and 64-bit ones in float64
    if not (a.is_floating_point() or a.is_complex()) and a.dtype != torch.bool:
        wide = a.dtype in (torch.int32, torch.int64) or b.dtype in (torch.int32, torch.int64)
        a = a.to(torch.float64 if wide else torch.float32)
    return torch.true_divide(a, b)


divide = _binary("divide", _true_divide)
truediv = _binary("truediv", _true_divide)
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
sign = _unary(
    "sign", lambda t: torch.where(torch.isnan(t), t, torch.sign(t)) if t.is_floating_point() else torch.sign(t)
)
floor = _unary("floor", torch.floor)
ceil = _unary("ceil", torch.ceil)
round = _unary("round", torch.round)
sin = _unary("sin", torch.sin)
cos = _unary("cos", torch.cos)
tanh = _unary("tanh", fastpath.tanh)


SIGMOID_LOGITS_ATTR = "_unison_sigmoid_logits"
"""Attribute of a sigmoid output that holds the logits it was computed from (read by Keras's losses)."""


def sigmoid(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.sigmoid`` (``tf.sigmoid``, ``tf.nn.sigmoid``), elementwise.

    The output remembers its input (``SIGMOID_LOGITS_ATTR``), so a Keras binary cross-entropy
    on it computes from the logits, as TF does for a ``Sigmoid`` op's output in graph mode (what
    ``fit`` and ``tf.function`` run): no clipping of saturated probabilities at ``1e-7``.
    """
    t = to_tensor(x)
    out = torch.sigmoid(t)
    if out.is_floating_point():
        setattr(out, SIGMOID_LOGITS_ATTR, t)
    return out


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
    try:
        out = torch.matmul(x, y)
    except RuntimeError as exc:  # TF programs catch tf.errors.InvalidArgumentError here
        raise InvalidArgumentError(
            f"Matrix size-incompatible: In[0]: {list(x.shape)}, In[1]: {list(y.shape)} ({exc})"
        ) from exc
    return out if output_type is None else out.to(as_dtype(output_type))


def cumsum(
    x: Any, axis: int = 0, exclusive: builtins.bool = False, reverse: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.math.cumsum``: the running sum along ``axis`` in the input's dtype (``exclusive`` starts at 0)."""
    t = to_tensor(x)
    if reverse:
        t = t.flip(axis)
    if exclusive and t.shape[axis] > 0:  # shift, not subtract: x - x is not 0 for inf or NaN
        t = torch.cat([torch.zeros_like(t.narrow(axis, 0, 1)), t.narrow(axis, 0, t.shape[axis] - 1)], dim=axis)
    out = t.cumsum(dim=axis, dtype=t.dtype)
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


# --- contractions, norms and clipping (top-level tf.* names) -------------------------------------


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> torch.Tensor:
    """``tf.einsum``: Einstein summation (``"ij,jk->ik"``, ``...`` for broadcast axes), via torch.einsum.

    Example:
        >>> import unison as tf
        >>> tf.einsum("ij,j->i", tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1.0, 1.0])).tolist()
        [3.0, 7.0]
    """
    kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"tf.einsum takes only name= and optimize= as keywords. Received: {sorted(kwargs)}")
    if not isinstance(equation, str):
        raise TypeError(f"tf.einsum: the first argument must be the equation string. Received: {equation!r:.80}")
    return torch.einsum(equation, *(to_tensor(x) for x in inputs))


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> torch.Tensor:
    """``tf.tensordot``: the sum of products of ``a`` and ``b`` over ``axes``.

    ``axes`` is an int N (the last N axes of ``a`` with the first N of ``b``) or a pair
    ``[a_axes, b_axes]``.
    """
    x, y = to_tensor(a), to_tensor(b)
    if isinstance(axes, torch.Tensor):
        axes = axes.tolist()
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"tf.tensordot: an integer axes must be >= 0. Received: axes={axes}")
        return torch.tensordot(x, y, dims=axes)
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError(f"tf.tensordot: axes must be an integer or a pair [a_axes, b_axes]. Received: axes={axes!r}")
    a_axes, b_axes = ([int(v)] if isinstance(v, int) else [int(i) for i in v] for v in axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(
            f"tf.tensordot: a and b need the same number of contraction axes. Received: {a_axes} and {b_axes}"
        )
    return torch.tensordot(x, y, dims=(a_axes, b_axes))


def _is_inf(value: Any) -> builtins.bool:
    return isinstance(value, (int, float)) and not isinstance(value, builtins.bool) and value == float("inf")


def norm(
    tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.norm``: a vector norm (``axis`` None or an int) or a matrix norm (``axis`` a pair).

    ``ord``: ``'euclidean'`` (the Frobenius norm for matrices), ``'fro'`` (matrices), 1, 2,
    ``np.inf``, or any p > 0 for vectors. ``axis=None`` takes the norm of all elements as one vector.

    Example:
        >>> import numpy as np
        >>> import unison as tf
        >>> x = tf.constant([[3.0, -4.0], [0.0, 1.0]])
        >>> tf.norm(x, axis=1).tolist(), tf.norm(x, ord=np.inf, axis=[0, 1]).item()
        ([5.0, 1.0], 7.0)
    """
    t = to_tensor(tensor)
    if not (t.is_floating_point() or t.is_complex()):
        raise TypeError(f"tf.norm takes a float or complex tensor. Received {t.dtype}: cast it first (tf.cast).")
    if isinstance(axis, torch.Tensor):
        axis = axis.tolist()
    matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if matrix:
        dims = (int(axis[0]), int(axis[1]))
        if dims[0] % t.dim() == dims[1] % t.dim():
            raise ValueError(f"tf.norm: a matrix norm needs two different axes. Received: axis={axis!r}")
        if not (ord in ("euclidean", "fro") or ord in (1, 2) or _is_inf(ord)):
            raise ValueError(
                f"tf.norm: a matrix norm (axis of two ints) supports ord 'euclidean', 'fro', 1, 2 or np.inf. Received: ord={ord!r}"
            )
    else:
        if isinstance(axis, (list, tuple)) and len(axis) == 1:
            axis = axis[0]
        if axis is not None and not isinstance(axis, int):
            raise ValueError(f"tf.norm: axis must be None, an int or a pair of ints. Received: axis={axis!r}")
        numeric = isinstance(ord, (int, float)) and not isinstance(ord, builtins.bool)
        if ord != "euclidean" and not (numeric and ord > 0):
            raise ValueError(
                f"tf.norm: a vector norm supports ord 'euclidean', 1, 2, np.inf or any p > 0 ('fro' needs a "
                f"matrix: axis of two ints). Received: ord={ord!r}"
            )
    keep = builtins.bool(keepdims)
    if matrix:
        if ord == 2:
            out = torch.linalg.matrix_norm(t, ord=2, dim=dims, keepdim=keep)
        elif ord in ("euclidean", "fro"):
            out = torch.linalg.matrix_norm(t, ord="fro", dim=dims, keepdim=keep)
        else:
            out = torch.linalg.matrix_norm(t, ord=float("inf") if _is_inf(ord) else 1, dim=dims, keepdim=keep)
        return out
    p = 2.0 if ord == "euclidean" else float(ord)
    if axis is None:
        out = torch.linalg.vector_norm(t, ord=p)
        return out.reshape((1,) * t.dim()) if keep else out
    return torch.linalg.vector_norm(t, ord=p, dim=int(axis), keepdim=keep)


def _sum_of_squares(t: torch.Tensor, dims: tuple[int, ...]) -> torch.Tensor:
    squares = (t * t.conj()).real if t.is_complex() else t * t
    return squares.sum(dim=dims, keepdim=True) if dims else squares


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> torch.Tensor:
    """``tf.clip_by_norm``: ``t`` scaled down so its L2 norm over ``axes`` (default all) is at most ``clip_norm``.

    That is ``t * clip_norm / max(l2norm(t, axes), clip_norm)``: unchanged when already within.
    """
    x = to_tensor(t)
    limit = to_tensor(clip_norm, x.dtype)
    total = _sum_of_squares(x, _dims(x, axes))
    safe = torch.where(total > 0, total, torch.ones_like(total))
    l2 = torch.where(total > 0, torch.sqrt(safe), total)
    return x * limit / torch.maximum(l2, limit)


def global_norm(t_list: Sequence[Any], name: str | None = None) -> torch.Tensor:
    """``tf.linalg.global_norm``: ``sqrt(sum of the squared L2 norms)`` of the tensors (``None`` skipped)."""
    tensors = [to_tensor(t) for t in t_list if t is not None]
    if not tensors:
        return torch.tensor(0.0)
    dtype = tensors[0].dtype
    return torch.sqrt(builtins.sum(((t * t).sum().to(dtype) for t in tensors), torch.zeros((), dtype=dtype)))


def clip_by_global_norm(
    t_list: Sequence[Any], clip_norm: Any, use_norm: Any = None, name: str | None = None
) -> tuple[list[Any], torch.Tensor]:
    """``tf.clip_by_global_norm``: every tensor scaled by ``clip_norm / max(global_norm, clip_norm)``.

    Returns ``(list_clipped, global_norm)``; ``None`` entries stay ``None``. A non-finite global
    norm makes every value NaN, as in TF.

    Example:
        >>> import unison as tf
        >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0]), None, tf.constant([4.0])], 1.0)
        >>> norm.item(), clipped[0].tolist(), clipped[1], clipped[2].tolist()
        (5.0, [0.6000000238418579], None, [0.800000011920929])
    """
    if isinstance(t_list, (str, bytes, torch.Tensor)) or not isinstance(t_list, Sequence):
        raise TypeError(
            f"tf.clip_by_global_norm: t_list must be a list or tuple of tensors. Received: {type(t_list).__name__}. "
            "Wrap a single tensor in a list: tf.clip_by_global_norm([t], clip_norm)."
        )
    values = [None if t is None else to_tensor(t) for t in t_list]
    norm_value = global_norm(values) if use_norm is None else to_tensor(use_norm)
    limit = to_tensor(clip_norm, norm_value.dtype)
    scale = limit * torch.minimum(1.0 / norm_value, 1.0 / limit)
    scale = scale + (norm_value - norm_value)  # NaN when the norm is inf or NaN, as in TF
    return [None if v is None else v * scale.to(v.dtype) for v in values], norm_value


# --- counting and segments ------------------------------------------------------------------------


def _integers(value: Any, what: str, fn: str) -> torch.Tensor:
    t = to_tensor(value)
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"tf.math.{fn}: {what} must be integers. Received a {t.dtype} tensor.")
    return t.long()


def _non_negative(t: torch.Tensor, what: str, fn: str) -> None:
    if t.numel() and builtins.bool((t < 0).any()):
        raise ValueError(f"tf.math.{fn}: {what} must be non-negative. Received {t.min().item()} in {what}.")


def bincount(
    arr: Any,
    weights: Any = None,
    minlength: Any = None,
    maxlength: Any = None,
    dtype: Any = torch.int32,
    name: str | None = None,
    axis: Any = None,
    binary_output: builtins.bool = False,
) -> torch.Tensor:
    """``tf.math.bincount``: how often each value ``0..max(arr)`` occurs (or the sum of its ``weights``).

    The output length is ``max(arr) + 1``, at least ``minlength``, at most ``maxlength`` (larger
    values are dropped). ``axis=-1`` counts each row of the last axis separately.

    Example:
        >>> import unison as tf
        >>> tf.math.bincount([1, 1, 3, 0], minlength=5).tolist()
        [1, 2, 0, 1, 0]
    """
    a = _integers(arr, "arr", "bincount")
    if axis not in (None, 0, -1):
        raise ValueError(f"tf.math.bincount supports axis None, 0 or -1. Received: axis={axis!r}")
    if weights is not None and binary_output:
        raise ValueError("tf.math.bincount: weights and binary_output=True cannot be used together.")
    _non_negative(a, "arr", "bincount")
    length = int(a.max()) + 1 if a.numel() else 0
    if minlength is not None:
        length = builtins.max(length, int(minlength))
    if maxlength is not None:
        length = builtins.min(length, int(maxlength))
    rows = a.reshape(-1, a.shape[-1]) if axis == -1 and a.dim() > 1 else a.reshape(1, -1)
    w = torch.ones(rows.shape, dtype=as_dtype(dtype)) if weights is None else to_tensor(weights)
    if w.numel() != a.numel():
        raise ValueError(
            f"tf.math.bincount: weights must have the shape of arr {list(a.shape)}. Received {list(w.shape)}."
        )
    w = w.reshape(rows.shape)
    keep = rows < length
    offsets = torch.arange(rows.shape[0]).unsqueeze(1) * length
    flat = torch.zeros(rows.shape[0] * length, dtype=w.dtype).index_add(0, (rows + offsets)[keep], w[keep])
    if binary_output:
        flat = (flat > 0).to(w.dtype)
    out = flat.reshape(rows.shape[0], length)
    return out.reshape(*a.shape[:-1], length) if axis == -1 and a.dim() > 1 else out.reshape(length)


def _squeeze_last(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if a.dim() == b.dim() + 1 and a.shape[-1] == 1:
        a = a.squeeze(-1)
    if b.dim() == a.dim() + 1 and b.shape[-1] == 1:
        b = b.squeeze(-1)
    return a, b


def confusion_matrix(
    labels: Any,
    predictions: Any,
    num_classes: Any = None,
    weights: Any = None,
    dtype: Any = torch.int32,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.math.confusion_matrix``: ``[num_classes, num_classes]`` counts, rows are labels, columns predictions.

    Example:
        >>> import unison as tf
        >>> tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]).tolist()[2]
        [0, 0, 1, 0, 0]
    """
    lab, pred = _squeeze_last(
        _integers(labels, "labels", "confusion_matrix"), _integers(predictions, "predictions", "confusion_matrix")
    )
    if lab.dim() != 1 or lab.shape != pred.shape:
        raise ValueError(
            "tf.math.confusion_matrix: labels and predictions must be 1-D of one length. Received shapes "
            f"{list(lab.shape)} and {list(pred.shape)}."
        )
    _non_negative(lab, "labels", "confusion_matrix")
    _non_negative(pred, "predictions", "confusion_matrix")
    if num_classes is None:
        n = int(torch.maximum(lab.max(), pred.max())) + 1 if lab.numel() else 0
    else:
        n = int(to_tensor(num_classes))
        for what, values in (("labels", lab), ("predictions", pred)):
            if values.numel() and int(values.max()) >= n:
                raise ValueError(
                    f"tf.math.confusion_matrix: {what} holds {int(values.max())}, out of range for "
                    f"num_classes={n} (values must be in [0, num_classes)). Pass a larger num_classes."
                )
    out_dtype = as_dtype(dtype)
    w = torch.ones(lab.shape, dtype=out_dtype) if weights is None else to_tensor(weights).to(out_dtype).reshape(-1)
    if w.shape != lab.shape:
        raise ValueError(
            f"tf.math.confusion_matrix: weights must have the shape of predictions {list(pred.shape)}. "
            f"Received {list(w.shape)}."
        )
    flat = torch.zeros(n * n, dtype=out_dtype).index_add(0, lab * n + pred, w)
    return flat.reshape(n, n)


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.unsorted_segment_sum``: ``out[i] = sum of data[j...] where segment_ids[j...] == i``.

    ``segment_ids`` has the shape of a prefix of ``data``'s; negative ids are dropped, as in TF.
    Gradients flow to ``data``.

    Example:
        >>> import unison as tf
        >>> c = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]])
        >>> tf.math.unsorted_segment_sum(c, [0, 1, 0], num_segments=2).tolist()
        [[5, 5, 5, 5], [5, 6, 7, 8]]
    """
    d = to_tensor(data)
    ids = _integers(segment_ids, "segment_ids", "unsorted_segment_sum").to(d.device)
    if tuple(d.shape[: ids.dim()]) != tuple(ids.shape):
        raise ValueError(
            f"tf.math.unsorted_segment_sum: segment_ids' shape {list(ids.shape)} must be a prefix of data's "
            f"shape {list(d.shape)}."
        )
    n = int(to_tensor(num_segments))
    if ids.numel() and int(ids.max()) >= n:
        raise ValueError(
            f"tf.math.unsorted_segment_sum: segment id {int(ids.max())} is out of range [0, {n}). "
            "Pass num_segments larger than every id."
        )
    rest = tuple(d.shape[ids.dim() :])
    flat_ids, flat = ids.reshape(-1), d.reshape((-1, *rest))
    keep = flat_ids >= 0
    return torch.zeros((n, *rest), dtype=d.dtype, device=d.device).index_add(0, flat_ids[keep], flat[keep])


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> torch.Tensor:
    """``tf.math.segment_sum``: sums of the rows of ``data`` sharing a (sorted) segment id.

    Example:
        >>> import unison as tf
        >>> tf.math.segment_sum(tf.constant([1, 2, 3, 4]), [0, 0, 2, 2]).tolist()
        [3, 0, 7]
    """
    d = to_tensor(data)
    ids = _integers(segment_ids, "segment_ids", "segment_sum").to(d.device)
    if ids.dim() != 1 or d.dim() == 0 or ids.shape[0] != d.shape[0]:
        raise ValueError(
            f"tf.math.segment_sum: segment_ids must be 1-D with one id per row of data. Received "
            f"segment_ids of shape {list(ids.shape)} for data of shape {list(d.shape)}."
        )
    _non_negative(ids, "segment_ids", "segment_sum")
    if ids.numel() > 1 and builtins.bool((ids[1:] < ids[:-1]).any()):
        raise ValueError(
            f"tf.math.segment_sum: segment_ids must be sorted in increasing order. Received {ids.tolist()!r:.100}. "
            "Use tf.math.unsorted_segment_sum for unsorted ids."
        )
    n = int(ids[-1]) + 1 if ids.numel() else 0
    return torch.zeros((n, *d.shape[1:]), dtype=d.dtype, device=d.device).index_add(0, ids, d)


def reduce_euclidean_norm(
    input_tensor: Any, axis: Any = None, keepdims: builtins.bool = False, name: str | None = None
) -> torch.Tensor:
    """``tf.math.reduce_euclidean_norm``: ``sqrt(sum(x ** 2))`` over ``axis`` (integers truncate, as in TF)."""
    t = to_tensor(input_tensor)
    dims = _dims(t, axis)
    work = t if t.is_floating_point() or t.is_complex() else t.double()
    if not dims:
        return work.abs().to(t.dtype)
    squares = (work * work.conj()) if work.is_complex() else work * work
    return torch.sqrt(squares.sum(dim=dims, keepdim=keepdims)).to(t.dtype)


def l2_normalize(
    x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None
) -> torch.Tensor:
    """``tf.math.l2_normalize``: ``x / sqrt(max(sum(x ** 2, axis), epsilon))`` (``axis`` default: all)."""
    t = to_tensor(x)
    if not (t.is_floating_point() or t.is_complex()):
        t = t.float()
    total = _sum_of_squares(t, _dims(t, dim if axis is None else axis))
    return t * torch.rsqrt(torch.clamp(total, min=epsilon))


__all__ = [
    "abs",
    "add",
    "add_n",
    "argmax",
    "argmin",
    "bincount",
    "ceil",
    "clip_by_value",
    "confusion_matrix",
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
    "l2_normalize",
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
    "reduce_euclidean_norm",
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
    "segment_sum",
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
    "unsorted_segment_sum",
]
# TF has these at the top level (and in tf.linalg), not in tf.math.
TOP_LEVEL_ONLY = ["clip_by_global_norm", "clip_by_norm", "einsum", "norm", "tensordot"]

from unison.ops import special as special  # noqa: E402  tf.math.special
from unison.ops.math_scipy import approx_max_k, approx_min_k, betainc  # noqa: E402  torch lacks them: SciPy computes them
from unison.ops.math_special import (  # noqa: E402  the rest of tf.math, kept in its own module
    LOGITS_ATTR as LOGITS_ATTR,
)
from unison.ops.math_special import (  # noqa: E402
    accumulate_n,
    acos,
    acosh,
    angle,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bessel_i0,
    bessel_i0e,
    bessel_i1,
    bessel_i1e,
    conj,
    cosh,
    count_nonzero,
    cumprod,
    cumulative_logsumexp,
    digamma,
    erf,
    erfc,
    erfcinv,
    erfinv,
    expm1,
    igamma,
    igammac,
    imag,
    in_top_k,
    invert_permutation,
    is_non_decreasing,
    is_strictly_increasing,
    lbeta,
    lgamma,
    log_sigmoid,
    log_softmax,
    logical_xor,
    multiply_no_nan,
    ndtri,
    nextafter,
    polygamma,
    polyval,
    real,
    reciprocal_no_nan,
    rint,
    scalar_mul,
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    sinh,
    sobol_sample,
    softmax,
    softplus,
    softsign,
    tan,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sqrt_n,
    xdivy,
    xlog1py,
    xlogy,
    zero_fraction,
    zeta,
)

__all__ += [
    "accumulate_n",
    "acos",
    "acosh",
    "angle",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bessel_i0",
    "bessel_i0e",
    "bessel_i1",
    "bessel_i1e",
    "conj",
    "cosh",
    "count_nonzero",
    "cumprod",
    "cumulative_logsumexp",
    "digamma",
    "erf",
    "erfc",
    "erfcinv",
    "erfinv",
    "expm1",
    "igamma",
    "igammac",
    "imag",
    "in_top_k",
    "invert_permutation",
    "is_non_decreasing",
    "is_strictly_increasing",
    "lbeta",
    "lgamma",
    "log_sigmoid",
    "log_softmax",
    "logical_xor",
    "multiply_no_nan",
    "ndtri",
    "nextafter",
    "polygamma",
    "polyval",
    "real",
    "reciprocal_no_nan",
    "rint",
    "scalar_mul",
    "segment_max",
    "segment_mean",
    "segment_min",
    "segment_prod",
    "sinh",
    "sobol_sample",
    "softmax",
    "softplus",
    "softsign",
    "tan",
    "unsorted_segment_max",
    "unsorted_segment_mean",
    "unsorted_segment_min",
    "unsorted_segment_prod",
    "unsorted_segment_sqrt_n",
    "xdivy",
    "xlog1py",
    "xlogy",
    "zero_fraction",
    "zeta",
    "special",
    "approx_max_k",
    "approx_min_k",
    "betainc",
]
wrap_namespace(globals(), __all__ + TOP_LEVEL_ONLY + ["global_norm"])


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.math", name)
