"""``tf.bitwise``: bitwise operations on integer tensors, with TF's dtype rule and shift clamping.

Both operands must have the same integer dtype (a Python number takes the tensor's); shift amounts
are clamped to ``[0, bits - 1]``, as TF's kernels do, so an over-wide shift is never undefined.

Example:
    >>> import unison as tf
    >>> tf.bitwise.bitwise_and(tf.constant([12, 10]), tf.constant([10, 6])).tolist()
    [8, 2]
    >>> tf.bitwise.left_shift(tf.constant([1], tf.int8), tf.constant([9], tf.int8)).tolist()
    [-128]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import to_tensor

_SIGNED = (torch.int8, torch.int16, torch.int32, torch.int64)
_UNSIGNED = {torch.uint8: torch.uint8, torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}
_ALLOWED = "int8, int16, int32, int64, uint8, uint16, uint32, uint64"


def _name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _operand(value: Any, op: str, arg: str, like: torch.Tensor | None = None) -> torch.Tensor:
    if like is not None and not isinstance(value, torch.Tensor):
        t = to_tensor(value, like.dtype)  # TF converts a Python number to the other operand's dtype
    else:
        t = to_tensor(value)
    if t.dtype not in _SIGNED and t.dtype not in _UNSIGNED:
        raise InvalidArgumentError(
            f"tf.bitwise.{op}: `{arg}` has dtype {_name(t.dtype)}, which is not in the list of allowed values: "
            f"{_ALLOWED}. Cast it first (tf.cast(x, tf.int32))."
        )
    return t


def _pair(x: Any, y: Any, op: str) -> tuple[torch.Tensor, torch.Tensor]:
    a = _operand(x, op, "x", None if isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor) else to_tensor(y))
    b = _operand(y, op, "y", a)
    if a.dtype != b.dtype:
        raise InvalidArgumentError(
            f"tf.bitwise.{op}: `x` and `y` must have the same dtype (cannot compute {op} as input #1 was expected "
            f"to be a {_name(a.dtype)} tensor but is a {_name(b.dtype)} tensor). Cast one of them (tf.cast)."
        )
    try:
        torch.broadcast_shapes(a.shape, b.shape)
    except RuntimeError:
        raise InvalidArgumentError(
            f"tf.bitwise.{op}: Incompatible shapes: {list(a.shape)} vs. {list(b.shape)} (`x` and `y` must broadcast)."
        ) from None
    return a, b


def _signed_view(t: torch.Tensor) -> torch.Tensor:
    # torch lacks bitwise kernels for uint16/32/64: the same bits as a signed type compute the same.
    return t.view(_UNSIGNED[t.dtype]) if t.dtype in _UNSIGNED and t.dtype != torch.uint8 else t


def _binary(op: str, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], doc: str) -> Callable[..., torch.Tensor]:
    def function(x: Any, y: Any, name: str | None = None) -> torch.Tensor:
        a, b = _pair(x, y, op)
        out = fn(_signed_view(a), _signed_view(b))
        return out.view(a.dtype) if out.dtype != a.dtype else out

    function.__name__ = function.__qualname__ = op
    function.__doc__ = f"``tf.bitwise.{op}``: {doc} (same integer dtype, broadcasting)."
    return function


bitwise_and = _binary("bitwise_and", torch.bitwise_and, "elementwise ``x & y``")
bitwise_or = _binary("bitwise_or", torch.bitwise_or, "elementwise ``x | y``")
bitwise_xor = _binary("bitwise_xor", torch.bitwise_xor, "elementwise ``x ^ y``")


def _clamped(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    bits = a.element_size() * 8
    return b.clamp(0, bits - 1)


def left_shift(x: Any, y: Any, name: str | None = None) -> torch.Tensor:
    """``tf.bitwise.left_shift``: ``x << y`` with ``y`` clamped to ``[0, bits - 1]`` (bits shifted out are lost)."""
    a, b = _pair(x, y, "left_shift")
    out = torch.bitwise_left_shift(_signed_view(a), _signed_view(_clamped(a, b)))
    return out.view(a.dtype) if out.dtype != a.dtype else out


def right_shift(x: Any, y: Any, name: str | None = None) -> torch.Tensor:
    """``tf.bitwise.right_shift``: ``x >> y`` (arithmetic for signed, logical for unsigned), ``y`` clamped."""
    a, b = _pair(x, y, "right_shift")
    shift = _clamped(a, b)
    if a.dtype in _UNSIGNED and a.dtype != torch.uint8:
        # A logical shift on the signed view: shift arithmetically, then clear the copied sign bits.
        signed, amount = _signed_view(a), _signed_view(shift)
        bits = a.element_size() * 8
        mask = torch.where(amount == 0, -1, (torch.ones_like(signed) << (bits - amount)) - 1)
        return ((signed >> amount) & mask).view(a.dtype)
    return torch.bitwise_right_shift(a, shift)


def invert(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.bitwise.invert``: flip every bit (``~x``; ``255 - x`` for uint8)."""
    a = _operand(x, "invert", "x")
    out = torch.bitwise_not(_signed_view(a))
    return out.view(a.dtype) if out.dtype != a.dtype else out


__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]

wrap_namespace(globals(), __all__)


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.bitwise", name)
