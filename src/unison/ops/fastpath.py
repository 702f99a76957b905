"""Fast paths for the CPU ops where torch's own kernel is slower than TF's by a wide margin.

Measured on this project's CPUs (one intra-op thread, 256x256 float32; ``benchmarks/ops_vs_tf.py``):
torch's CPU ``tanh`` takes about 5x NumPy's vectorised ``np.tanh`` and 3x TF's Eigen kernel, its
comparisons and ``argmax`` several times NumPy's, and ``torch.where`` on a mask about 4x a bitwise
select of the same bytes. Each function here computes the same values (bit for bit for the
selects, comparisons and arg-extrema; within NumPy's few-ulp ``tanh`` for it) and falls back to
torch wherever the fast path could change anything: autograd (an input that needs a gradient
under grad mode), tensor subclasses, non-CPU devices, torch transforms and tracing (vmap,
``torch.jit``, ``torch.compile``, dispatch modes such as FakeTensor), and sizes torch would split
over several threads (NumPy's ufuncs run on one).

Example:
    >>> import torch
    >>> from unison.ops import fastpath
    >>> fastpath.select(torch.tensor([True, False]), torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])).tolist()
    [1.0, 4.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

# torch's own Tensor.numpy (unison's eager_numpy makes the public one give NumPy scalars for 0-d tensors)
from unison.ops.eager_numpy import _TORCH_NUMPY

__all__ = ["argextremum", "compare", "gather_nd", "numpy_ok", "select", "tanh", "tanh_autograd"]

# torch's elementwise grain size: below it torch's kernels run on one thread, as NumPy's ufuncs do
_GRAIN = 32768
_FLOATS = (torch.float32, torch.float64)
_REAL = frozenset(
    {
        torch.float32,
        torch.float64,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.bool,
    }
)
# integer views of the same width, for the bitwise select
_BITS = {
    1: torch.uint8,
    2: torch.int16,
    4: torch.int32,
    8: torch.int64,
}


def _eager() -> bool:
    """No torch transform, tracer or dispatch mode is watching (each would see NumPy's work as opaque)."""
    return not (
        torch._C._are_functorch_transforms_active()
        or torch._C._len_torch_dispatch_stack()
        or torch.jit.is_tracing()
        or torch.compiler.is_compiling()
    )


def numpy_ok(*tensors: torch.Tensor, grad: bool = False) -> bool:
    """Whether NumPy may compute on ``tensors`` in torch's place.

    ``grad=True`` for a differentiable op: then no input may need a gradient under grad mode.
    """
    size = 0
    for t in tensors:
        if type(t) is not torch.Tensor or t.device.type != "cpu" or t.dtype not in _REAL or t.is_neg():
            return False
        if grad and t.requires_grad and torch.is_grad_enabled():
            return False
        size = max(size, t.numel())
    if size > _GRAIN and torch.get_num_threads() > 1:
        return False
    return _eager()


def _np(t: torch.Tensor) -> np.ndarray:
    return _TORCH_NUMPY(t.detach() if t.requires_grad else t)


def tanh(t: torch.Tensor) -> torch.Tensor:
    """``torch.tanh``, through NumPy's vectorised kernel for float32/float64 CPU tensors without autograd."""
    if t.dtype in _FLOATS and numpy_ok(t, grad=True):
        return torch.from_numpy(np.asarray(np.tanh(_np(t))))
    return torch.tanh(t)


class _NumpyTanh(torch.autograd.Function):
    """``tanh`` under autograd: NumPy's forward kernel, torch's backward formula ``g * (1 - y * y)``."""

    @staticmethod
    def forward(ctx: Any, t: torch.Tensor) -> torch.Tensor:
        y = torch.from_numpy(np.asarray(np.tanh(_np(t))))
        ctx.save_for_backward(t, y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        t, y = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True: a second derivative needs y as a function of t
            y = torch.tanh(t)
            return grad * (1 - y * y)
        return torch.ops.aten.tanh_backward(grad, y)  # torch's own fused kernel for TanhBackward


def tanh_autograd(t: torch.Tensor) -> torch.Tensor:
    """``torch.tanh`` that keeps NumPy's 7x faster forward kernel when ``t`` needs a gradient too.

    Example:
        >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
        >>> [round(g, 6) for g in torch.autograd.grad(tanh_autograd(x).sum(), x)[0].tolist()]  # 1 - tanh(x)**2
        [1.0, 0.419974]
    """
    if t.dtype in _FLOATS and t.requires_grad and torch.is_grad_enabled() and numpy_ok(t):
        return _NumpyTanh.apply(t)
    return tanh(t)


_NP_COMPARE: dict[Callable[..., Any], Callable[..., Any]] = {
    torch.eq: np.equal,
    torch.ne: np.not_equal,
    torch.gt: np.greater,
    torch.ge: np.greater_equal,
    torch.lt: np.less,
    torch.le: np.less_equal,
}


def compare(op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``op(a, b)`` for a torch comparison (``torch.eq``...), through NumPy for one real dtype.

    Mixed dtypes go to torch: its promotion of a 0-d operand differs from NumPy's, and with it
    which value is compared. Broadcasting is the same in both.
    """
    if a.dtype == b.dtype and numpy_ok(a, b):
        return torch.from_numpy(np.asarray(_NP_COMPARE[op](_np(a), _np(b))))
    return op(a, b)


def select(condition: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``torch.where(condition, x, y)``; same shapes and dtype without autograd: a bitwise select.

    ``y ^ ((x ^ y) & -condition)`` on the integer view of the bytes picks ``x``'s or ``y``'s bits
    exactly (NaN payloads and signed zeros included) in a few vectorised passes.
    """
    bits = _BITS.get(x.element_size())
    if (
        bits is not None
        and x.dtype == y.dtype
        and not x.is_complex()
        and condition.dtype == torch.bool
        and condition.shape == x.shape == y.shape
        and type(x) is type(y) is type(condition) is torch.Tensor
        and x.device == y.device == condition.device
        and not ((x.requires_grad or y.requires_grad) and torch.is_grad_enabled())
        and _eager()
    ):
        xi, yi = x.view(bits), y.view(bits)
        mask = condition.to(bits).neg_()  # all ones where True
        return (xi ^ yi).bitwise_and_(mask).bitwise_xor_(yi).view(x.dtype)
    return torch.where(condition, x, y)


def argextremum(t: torch.Tensor, dim: int, largest: bool) -> torch.Tensor | None:
    """``argmax``/``argmin`` along ``dim`` through NumPy (int64), or ``None`` where torch must do it.

    ``None`` too where a NaN won (NumPy, like torch, lets a NaN win; TF's kernel never does): the
    caller's torch path handles that case.
    """
    if t.dim() == 0 or t.numel() == 0 or not numpy_ok(t):
        return None
    a = _np(t)
    index = (np.argmax if largest else np.argmin)(a, axis=dim)
    if a.dtype.kind == "f":
        chosen = np.take_along_axis(a, np.expand_dims(index, dim), axis=dim)
        if np.isnan(chosen).any():
            return None
    return torch.from_numpy(np.asarray(index, dtype=np.int64))


def gather_nd(params: torch.Tensor, indices: torch.Tensor) -> torch.Tensor | None:
    """``tf.gather_nd`` without batch dims through NumPy's fancy indexing, or ``None`` for torch's path.

    ``None`` also when an index is out of range: the caller's torch path raises TF's error for it.
    """
    k = indices.shape[-1] if indices.dim() else 0
    if k == 0 or not numpy_ok(params, indices, grad=True):
        return None
    a, flat = _np(params), _np(indices).reshape(-1, k)
    if flat.size and ((flat < 0).any() or (flat >= np.asarray(params.shape[:k])).any()):
        return None
    out = np.ascontiguousarray(a[tuple(flat.T)])
    return torch.from_numpy(out).reshape(tuple(indices.shape[:-1]) + tuple(params.shape[k:]))
