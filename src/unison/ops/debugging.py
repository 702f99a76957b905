"""``tf.debugging``: assertions on values, shapes and dtypes, with TF's error classes.

Eager TF 2 checks at once: a value assertion that fails raises
``tf.errors.InvalidArgumentError`` (``assert_equal``, ``assert_less``, ``assert_near``,
``assert_positive``, ``Assert``, ``check_numerics``, ...); a static shape or rank that does not
match raises ``ValueError`` (``assert_rank*``, ``assert_scalar``, ``assert_shapes``); a wrong dtype
raises ``TypeError`` (``assert_type``, ``assert_integer``). Passing assertions return ``None``
(``check_numerics``/``assert_all_finite`` return their tensor). Operands of a binary assertion
must have one dtype and broadcastable shapes, as TF's comparison ops require.

``enable_check_numerics`` and ``set_log_device_placement`` act on every torch operation the
calling thread runs afterwards (a torch function mode): the first checks each floating-point
result for NaN and infinity, the second logs where each operation runs. TF applies them to the
process; torch's function modes belong to a thread.

Example:
    >>> import unison as tf
    >>> tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 2])) is None
    True
    >>> try:
    ...     tf.debugging.assert_less(tf.constant([1, 2]), tf.constant([2, 2]))
    ... except tf.errors.InvalidArgumentError as e:
    ...     print(str(e).splitlines()[0])
    Condition x < y did not hold.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from unison.errors import InvalidArgumentError
from unison.ops.array import convert_to_tensor
from unison.ops.debugging_shapes import assert_shapes
from unison.ops.dtypes import StringDType, as_dtype

_FLOATS = (torch.bfloat16, torch.float16, torch.float32, torch.float64)


def _name(dtype: Any) -> str:
    return "string" if isinstance(dtype, StringDType) else str(dtype).replace("torch.", "")


def _is_string(t: Any) -> bool:
    return not isinstance(t, torch.Tensor)  # convert_to_tensor gives a tensor, or a string tensor


def _tname(t: Any) -> str:
    return _name(t.dtype) if isinstance(t, torch.Tensor) else "string"


def _tensor(value: Any) -> Any:
    return convert_to_tensor(value)


def _array(t: Any) -> np.ndarray:
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def _prefix(message: str | None) -> str:
    return f"{message}\n" if message else ""


def _first(a: np.ndarray, n: int) -> np.ndarray:
    return a.reshape(-1)[:n]


# --- binary assertions ---------------------------------------------------------------------------
def _binary_assert(
    symbol: str,
    op_name: str,
    compare: Callable[[Any, Any], Any],
    x: Any,
    y: Any,
    message: str | None,
    summarize: int | None,
) -> None:
    x, y = _tensor(x), _tensor(y)
    if _tname(x) != _tname(y):
        raise InvalidArgumentError(
            None,
            None,
            f"cannot compute {op_name} as input #1(zero-based) was expected to be a {_tname(x)} tensor but is "
            f"a {_tname(y)} tensor [Op:{op_name}]: tf.debugging's x and y must have one dtype; cast one of them.",
        )
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    except ValueError:
        raise InvalidArgumentError(
            None, None, f"Incompatible shapes: {list(x.shape)} vs. {list(y.shape)} [Op:{op_name}] (x and y)"
        ) from None
    xa, ya = _array(x), _array(y)
    if isinstance(x, torch.Tensor):
        holds = compare(x, y.to(x.device)).cpu().numpy()
    else:
        holds = compare(xa, ya)
    if np.all(holds):
        return
    n = 3 if summarize is None else summarize
    bx, by = np.broadcast_arrays(xa, ya)
    bad = np.argwhere(~np.broadcast_to(holds, bx.shape))[:n] if bx.ndim else np.zeros((1, 0), dtype=np.int64)
    picked = tuple(bad.T) if bx.ndim else ()
    raise InvalidArgumentError(
        None,
        None,
        f"{_prefix(message)}Condition x {symbol} y did not hold.\n"
        f"Indices of first {len(bad)} different values:\n{bad}\n"
        f"Corresponding x values:\n{bx[picked]}\nCorresponding y values:\n{by[picked]}\n"
        f"First {min(n, xa.size)} elements of x:\n{_first(xa, n)}\n"
        f"First {min(n, ya.size)} elements of y:\n{_first(ya, n)}",
    )


def _comparison(
    symbol: str, op_name: str, torch_fn: Callable[..., Any], np_fn: Callable[..., Any]
) -> Callable[..., None]:
    def check(
        x: Any, y: Any, message: str | None = None, summarize: int | None = None, name: str | None = None
    ) -> None:
        def compare(a: Any, b: Any) -> Any:
            return torch_fn(a, b) if isinstance(a, torch.Tensor) else np_fn(a, b)

        _binary_assert(symbol, op_name, compare, x, y, message, summarize)

    check.__name__ = check.__qualname__ = f"assert_{op_name}"
    check.__doc__ = (
        f"``tf.debugging.assert_...``: raise ``InvalidArgumentError`` unless ``x {symbol} y`` holds element-wise."
    )
    return check


assert_equal = _comparison("==", "Equal", torch.eq, np.equal)
assert_none_equal = _comparison("!=", "NotEqual", torch.ne, np.not_equal)
assert_less = _comparison("<", "Less", torch.lt, np.less)
assert_less_equal = _comparison("<=", "LessEqual", torch.le, np.less_equal)
assert_greater = _comparison(">", "Greater", torch.gt, np.greater)
assert_greater_equal = _comparison(">=", "GreaterEqual", torch.ge, np.greater_equal)
for _fn, _n in (
    (assert_equal, "assert_equal"),
    (assert_none_equal, "assert_none_equal"),
    (assert_less, "assert_less"),
    (assert_less_equal, "assert_less_equal"),
    (assert_greater, "assert_greater"),
    (assert_greater_equal, "assert_greater_equal"),
):
    _fn.__name__ = _fn.__qualname__ = _n


def _sign_assert(symbol: str, compare: Callable[[torch.Tensor], torch.Tensor]) -> Callable[..., None]:
    def check(x: Any, message: str | None = None, summarize: int | None = None, name: str | None = None) -> None:
        t = _tensor(x)
        if _is_string(t):
            raise TypeError("tf.debugging: `x` must be numeric, not a string tensor.")
        if bool(compare(t).all()):
            return
        n = 3 if summarize is None else summarize
        raise InvalidArgumentError(
            None,
            None,
            f"{_prefix(message)}Condition {symbol} did not hold element-wise:\n"
            f"x (shape={tuple(t.shape)} dtype={_name(t.dtype)}) = \n{_first(_array(t), n)}",
        )

    return check


assert_negative = _sign_assert("x < 0", lambda t: t < 0)
assert_positive = _sign_assert("x > 0", lambda t: t > 0)
assert_non_negative = _sign_assert("x >= 0", lambda t: t >= 0)
assert_non_positive = _sign_assert("x <= 0", lambda t: t <= 0)
for _fn, _n in (
    (assert_negative, "assert_negative"),
    (assert_positive, "assert_positive"),
    (assert_non_negative, "assert_non_negative"),
    (assert_non_positive, "assert_non_positive"),
):
    _fn.__name__ = _fn.__qualname__ = _n
    _fn.__doc__ = f"``tf.debugging.{_n}``: raise ``InvalidArgumentError`` unless the condition holds element-wise."


def assert_near(
    x: Any,
    y: Any,
    rtol: Any = None,
    atol: Any = None,
    message: str | None = None,
    summarize: int | None = None,
    name: str | None = None,
) -> None:
    """``tf.debugging.assert_near``: ``|x - y| <= atol + rtol * |y|`` element-wise (default tolerances 10 eps).

    Raises:
        ValueError: integer operands (TF takes the tolerance from the float type's epsilon).
        InvalidArgumentError: where the values are not that close (NaN never is).
    """
    x, y = _tensor(x), _tensor(y)
    if not (x.is_floating_point() or x.is_complex()):
        raise ValueError(
            f"data type {_name(x.dtype)} not inexact: tf.debugging.assert_near compares floating-point or complex "
            "tensors; cast `x` and `y` to a float dtype."
        )
    if x.dtype != y.dtype:
        raise InvalidArgumentError(
            None, None, f"cannot compute Sub: `x` is {_name(x.dtype)} but `y` is {_name(y.dtype)}; cast one of them."
        )
    eps = torch.finfo(x.real.dtype if x.is_complex() else x.dtype).eps
    rt = torch.as_tensor(10 * eps if rtol is None else rtol, dtype=x.real.dtype if x.is_complex() else x.dtype)
    at = torch.as_tensor(10 * eps if atol is None else atol, dtype=rt.dtype)
    close = (x - y).abs() <= at + rt * y.abs()
    if bool(close.all()):
        return
    raise InvalidArgumentError(
        None,
        None,
        f"{_prefix(message)}x and y not equal to tolerance rtol = {float(rt)}, atol = {float(at)}\n"
        f"x (shape={tuple(x.shape)} dtype={_name(x.dtype)}) = {_first(_array(x), summarize or 3)}\n"
        f"y (shape={tuple(y.shape)} dtype={_name(y.dtype)}) = {_first(_array(y), summarize or 3)}",
    )


# --- ranks, dtypes --------------------------------------------------------------------------------
def _static_rank(rank: Any, what: str = "Rank") -> int:
    value = np.asarray(rank.numpy() if hasattr(rank, "numpy") else rank)
    if value.ndim != 0:
        raise ValueError(f"{what} must be a scalar. Received: {value.tolist()!r}")
    return int(value)


def _rank_error(x: Any, expectation: str, message: str | None) -> ValueError:
    shape = tuple(x.shape)
    return ValueError(f"{_prefix(message)}Tensor must have {expectation}.  Received rank {len(shape)}, shape {shape}")


def assert_rank(x: Any, rank: Any, message: str | None = None, name: str | None = None) -> None:
    """``tf.debugging.assert_rank``: ``ValueError`` unless ``x`` has rank ``rank``."""
    t, want = _tensor(x), _static_rank(rank)
    if len(t.shape) != want:
        raise _rank_error(t, f"rank {want}", message)


def assert_rank_at_least(x: Any, rank: Any, message: str | None = None, name: str | None = None) -> None:
    """``tf.debugging.assert_rank_at_least``: ``ValueError`` unless ``x`` has rank ``>= rank``."""
    t, want = _tensor(x), _static_rank(rank)
    if len(t.shape) < want:
        raise _rank_error(t, f"rank at least {want}", message)


def assert_rank_in(x: Any, ranks: Sequence[Any], message: str | None = None, name: str | None = None) -> None:
    """``tf.debugging.assert_rank_in``: ``ValueError`` unless ``x``'s rank is one of ``ranks``."""
    t = _tensor(x)
    wanted = tuple(_static_rank(r) for r in ranks)
    if len(t.shape) not in wanted:
        raise _rank_error(t, f"rank in {wanted}", message)


def assert_scalar(tensor: Any, message: str | None = None, name: str | None = None) -> None:
    """``tf.debugging.assert_scalar``: ``ValueError`` unless ``tensor`` is 0-d."""
    shape = tuple(_tensor(tensor).shape)
    if shape:
        raise ValueError(f"{_prefix(message)}Expected scalar shape, saw shape: {shape}.")


def assert_type(tensor: Any, tf_type: Any, message: str | None = None, name: str | None = None) -> None:
    """``tf.debugging.assert_type``: ``TypeError`` unless ``tensor`` has dtype ``tf_type``."""
    want, got = _name(as_dtype(tf_type)), _tname(_tensor(tensor))
    if want != got:
        raise TypeError(f"{_prefix(message)}tensor must be of type tf.{want}; got tf.{got}")


def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> None:
    """``tf.debugging.assert_integer``: ``TypeError`` unless ``x`` has an integer dtype."""
    t = _tensor(x)
    if not isinstance(t, torch.Tensor) or t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f'{_prefix(message)}Expected "x" to be integer type.  Found: tensor of dtype {_tname(t)}')


def is_numeric_tensor(tensor: Any) -> bool:
    """``tf.debugging.is_numeric_tensor``: a tensor (not an array) of a number dtype (not bool or string)."""
    return isinstance(tensor, torch.Tensor) and tensor.dtype != torch.bool


def assert_proper_iterable(values: Any) -> None:
    """``tf.debugging.assert_proper_iterable``: ``TypeError`` for a tensor, an array, a string or a non-iterable."""
    if isinstance(values, (torch.Tensor, np.ndarray, str, bytes)):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def assert_same_float_dtype(tensors: Iterable[Any] | None = None, dtype: Any = None) -> Any:
    """``tf.debugging.assert_same_float_dtype``: the one float dtype of ``tensors`` (and ``dtype``).

    Returns ``dtype``, else the tensors' dtype, else ``tf.float32``.

    Raises:
        ValueError: dtypes that differ, or one that is not floating point.
    """
    found = as_dtype(dtype) if dtype is not None else None
    first = None
    for t in tensors or ():
        t_dtype = t.dtype
        if found is None:
            found, first = t_dtype, t
        elif t_dtype != found:
            raise ValueError(f"{t!r}, type={_name(t_dtype)}, must be of the same type ({_name(found)}) as {first!r}.")
        first = first if first is not None else t
    if found is None:
        return torch.float32
    if found not in _FLOATS:
        raise ValueError(f"Expected floating point type, got {_name(found)}.")
    return found


def Assert(condition: Any, data: Sequence[Any], summarize: int | None = None, name: str | None = None) -> None:  # noqa: N802 - TF's name
    """``tf.debugging.Assert``: raise ``InvalidArgumentError`` showing ``data`` when ``condition`` is false."""
    cond = _tensor(condition)
    if bool(cond):
        return None
    n = 3 if summarize is None else summarize
    shown = ", ".join(
        str(d) if isinstance(d, str) else " ".join(map(str, _first(_array(_tensor(d)), n).tolist())) for d in data
    )
    raise InvalidArgumentError(None, None, f"Expected 'condition' to be true. Summarized data: {shown}")


# --- numerics -----------------------------------------------------------------------------------
def check_numerics(tensor: Any, message: str, name: str | None = None) -> Any:
    """``tf.debugging.check_numerics``: ``tensor`` itself, or ``InvalidArgumentError`` naming NaN/Inf."""
    t = _tensor(tensor)
    if not isinstance(t, torch.Tensor) or t.dtype not in _FLOATS:
        raise InvalidArgumentError(
            None,
            None,
            f"Value for attr 'T' of {_tname(t)} is not in the list of allowed values: bfloat16, half, float, "
            "double (tf.debugging.check_numerics checks floating-point `tensor`s).",
        )
    problem = _non_finite(t)
    if problem:
        raise InvalidArgumentError(None, None, f"{message} : Tensor had {problem} values [Op:CheckNumerics]")
    return t


def assert_all_finite(x: Any, message: str, name: str | None = None) -> Any:
    """``tf.debugging.assert_all_finite``: :func:`check_numerics` under its other name."""
    return check_numerics(x, message, name)


def _non_finite(t: torch.Tensor) -> str:
    if bool(torch.isnan(t).any()):
        return "NaN" if not bool(torch.isinf(t).any()) else "NaN and Inf"
    return "Inf" if bool(torch.isinf(t).any()) else ""


class _CheckNumericsMode(TorchFunctionMode):
    """Every floating-point result the thread computes is checked for NaN and Inf."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.dtype in _FLOATS and out.numel():
            problem = _non_finite(out)
            if problem:
                op = getattr(func, "__name__", str(func))
                raise InvalidArgumentError(
                    None,
                    None,
                    f"!!! Detected Infinity or NaN in output of op {op!r}: the result had {problem} values "
                    "(tf.debugging.enable_check_numerics is on; tf.debugging.disable_check_numerics turns it off).",
                )
        return out


class _LogPlacementMode(TorchFunctionMode):
    """Log the device of each operation's result, as TF's ``log_device_placement`` does."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor):
            device = out.device
            kind = "GPU" if device.type == "cuda" else device.type.upper()
            sys.stderr.write(
                f"Executing op {getattr(func, '__name__', func)} in device /device:{kind}:{device.index or 0}\n"
            )
        return out


_MODES: dict[str, TorchFunctionMode] = {}


def _switch(key: str, on: bool, make: Callable[[], TorchFunctionMode]) -> None:
    if on and key not in _MODES:
        mode = make()
        mode.__enter__()
        _MODES[key] = mode
    elif not on and key in _MODES:
        _MODES.pop(key).__exit__(None, None, None)


def enable_check_numerics(stack_height_limit: int = 30, path_length_limit: int = 50) -> None:
    """``tf.debugging.enable_check_numerics``: every float result of this thread is checked for NaN/Inf."""
    _switch("check_numerics", True, _CheckNumericsMode)


def disable_check_numerics() -> None:
    """``tf.debugging.disable_check_numerics``: stop checking (a no-op when it was off)."""
    _switch("check_numerics", False, _CheckNumericsMode)


def set_log_device_placement(enabled: bool) -> None:
    """``tf.debugging.set_log_device_placement``: log the device each operation of this thread runs on."""
    _switch("log_device_placement", bool(enabled), _LogPlacementMode)


def get_log_device_placement() -> bool:
    """``tf.debugging.get_log_device_placement``."""
    return "log_device_placement" in _MODES


# --- traceback filtering (TF hides its own frames; unison's frames are the library's code) --------
_TRACEBACK_FILTERING = [True]


def enable_traceback_filtering() -> None:
    """``tf.debugging.enable_traceback_filtering``: record the setting (TF's default: on)."""
    _TRACEBACK_FILTERING[0] = True


def disable_traceback_filtering() -> None:
    """``tf.debugging.disable_traceback_filtering``: record the setting."""
    _TRACEBACK_FILTERING[0] = False


def is_traceback_filtering_enabled() -> bool:
    """``tf.debugging.is_traceback_filtering_enabled``."""
    return _TRACEBACK_FILTERING[0]


class _Experimental:
    """``tf.debugging.experimental``: TF's debugger (tfdbg v2) dump files are not built."""

    def __getattr__(self, name: str) -> Any:
        from unison.ops._unsupported import unsupported

        if name in ("enable_dump_debug_info", "disable_dump_debug_info"):
            return _no_dump(name)
        raise unsupported("tf.debugging.experimental", name)


def _no_dump(name: str) -> Any:
    raise AttributeError(
        f"unison does not implement tf.debugging.experimental.{name}: TensorFlow's debugger (tfdbg v2 dump "
        "files for TensorBoard's Debugger V2) has no torch counterpart here. Use tf.debugging.enable_check_numerics "
        "to stop at the first NaN/Inf, or torch.autograd.set_detect_anomaly(True) for gradients."
    )


experimental = _Experimental()

__all__ = [
    "Assert",
    "assert_all_finite",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_integer",
    "assert_less",
    "assert_less_equal",
    "assert_near",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_proper_iterable",
    "assert_rank",
    "assert_rank_at_least",
    "assert_rank_in",
    "assert_same_float_dtype",
    "assert_scalar",
    "assert_shapes",
    "assert_type",
    "check_numerics",
    "disable_check_numerics",
    "disable_traceback_filtering",
    "enable_check_numerics",
    "enable_traceback_filtering",
    "experimental",
    "get_log_device_placement",
    "is_numeric_tensor",
    "is_traceback_filtering_enabled",
    "set_log_device_placement",
]
