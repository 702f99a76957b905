"""``keras.ops.math`` and ``keras.ops.linalg``, part 2: FFTs on (real, imag) pairs, STFT and its
inverse, ``segment_min``/``segment_prod``, complex views, ``erfc``, ``cdist``, ``pinv``,
``matrix_rank``, ``cholesky_inverse`` and ``jvp``.

Keras passes complex numbers as a ``(real, imag)`` tuple of float tensors and returns them the same
way; ``stft``/``istft`` are TF's ``tf.signal.stft``/``inverse_stft`` with a centred (reflect-padded)
signal and a periodic Hann or Hamming window padded to ``fft_length``, as Keras builds them.

Example:
    >>> from unison.keras import ops
    >>> real, imag = ops.fft(([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]))
    >>> real.tolist(), imag.tolist()
    ([1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0])
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import torch

from unison.keras.ops._convert import float_of, tensor
from unison.ops import signal as _tf_signal
from unison.ops._dispatch import wrap_namespace
from unison.ops.linalg import _decomp as _tf_linalg

Tensor = torch.Tensor


def _complex(x: Any, fn: str) -> Tensor:
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(
            f"keras.ops.{fn}: input x should be a tuple of two tensors - real and imaginary. Received: x={x!r:.100}"
        )
    real, imag = tensor(x[0]), tensor(x[1])
    if real.shape != imag.shape:
        raise ValueError(
            f"keras.ops.{fn}: the real and imaginary parts should have the same shape. Received: "
            f"x[0].shape = {tuple(real.shape)}, x[1].shape = {tuple(imag.shape)}"
        )
    if not (real.is_floating_point() and imag.is_floating_point()):
        raise ValueError(
            f"keras.ops.{fn}: at least one tensor in input x is not of type float. Received dtypes "
            f"{real.dtype} and {imag.dtype}; cast them with keras.ops.cast(x, 'float32')."
        )
    dtype = torch.promote_types(real.dtype, imag.dtype)
    return torch.complex(real.to(dtype), imag.to(dtype))


def _batched(fn: Callable[[Tensor], Tensor], c: Tensor, k: int) -> Tensor:
    # torch's FFT (MKL) refuses an empty batch: transform one zero example for the output's shape
    if c.numel() == 0 and c.dim() >= k and all(s > 0 for s in c.shape[c.dim() - k :]):
        out = fn(torch.zeros((1, *c.shape[c.dim() - k :]), dtype=c.dtype, device=c.device))
        return out.new_zeros((*c.shape[: c.dim() - k], *out.shape[1:]))
    return fn(c)


def _pair(c: Tensor) -> tuple[Tensor, Tensor]:
    return torch.real(c).contiguous(), torch.imag(c).contiguous()


def fft(x: tuple[Any, Any]) -> tuple[Tensor, Tensor]:
    """``keras.ops.fft((real, imag))``: the FFT over the last axis, as ``(real, imag)``."""
    return _pair(_batched(lambda c: torch.fft.fft(c, dim=-1), _complex(x, "fft"), 1))


def fft2(x: tuple[Any, Any]) -> tuple[Tensor, Tensor]:
    """``keras.ops.fft2((real, imag))``: the 2-D FFT over the last two axes, as ``(real, imag)``."""
    return _pair(_batched(lambda c: torch.fft.fft2(c, dim=(-2, -1)), _complex(x, "fft2"), 2))


def ifft2(x: tuple[Any, Any]) -> tuple[Tensor, Tensor]:
    """``keras.ops.ifft2((real, imag))``: the inverse 2-D FFT over the last two axes, as ``(real, imag)``."""
    return _pair(_batched(lambda c: torch.fft.ifft2(c, dim=(-2, -1)), _complex(x, "ifft2"), 2))


def rfft(x: Any, fft_length: int | None = None) -> tuple[Tensor, Tensor]:
    """``keras.ops.rfft(x, fft_length=None)``: the FFT of a real signal over its last axis (the
    ``fft_length // 2 + 1`` non-negative frequencies), as ``(real, imag)``."""
    t = float_of(tensor(x))
    return _pair(_batched(lambda c: torch.fft.rfft(c, n=fft_length, dim=-1), t, 1))


def irfft(x: tuple[Any, Any], fft_length: int | None = None) -> Tensor:
    """``keras.ops.irfft((real, imag), fft_length=None)``: the real signal of non-negative frequencies
    (length ``fft_length``, by default ``2 * (n - 1)``)."""
    return _batched(lambda c: torch.fft.irfft(c, n=fft_length, dim=-1), _complex(x, "irfft"), 1)


def _window(window: Any, sequence_length: int, fft_length: int, dtype: torch.dtype) -> Tensor | None:
    if window is None:
        return None
    if isinstance(window, str):
        if window not in ("hann", "hamming"):
            raise ValueError(
                f'If a string is passed to `window`, it must be one of "hann", "hamming". Received: window={window}'
            )
        make = _tf_signal.hann_window if window == "hann" else _tf_signal.hamming_window
        win = tensor(make(sequence_length, periodic=True, dtype=dtype))
    else:
        win = tensor(window).to(dtype)
    if win.dim() != 1 or win.shape[0] != sequence_length:
        raise ValueError(
            f"The shape of `window` must be equal to [sequence_length]. Received: window shape={tuple(win.shape)}"
        )
    left = (fft_length - sequence_length) // 2
    return torch.nn.functional.pad(win, (left, fft_length - sequence_length - left))


def stft(
    x: Any, sequence_length: int, sequence_stride: int, fft_length: int, window: Any = "hann", center: bool = True
) -> tuple[Tensor, Tensor]:
    """``keras.ops.stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True)``:
    the short-time Fourier transform over the last axis, ``(real, imag)`` of shape
    ``(..., frames, fft_length // 2 + 1)``; ``x`` must be float32 or float64."""
    t = tensor(x)
    if t.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"Invalid input type. Expected `float32` or `float64`. Received: input type={t.dtype}")
    if fft_length < sequence_length:
        raise ValueError(
            "`fft_length` must equal or larger than `sequence_length`. "
            f"Received: sequence_length={sequence_length}, fft_length={fft_length}"
        )
    win = _window(window, sequence_length, fft_length, t.dtype)
    if center:
        half = fft_length // 2
        shape = t.shape
        t = torch.nn.functional.pad(t.reshape(-1, 1, shape[-1]), (half, half), mode="reflect").reshape(*shape[:-1], -1)
    window_fn = None if win is None else (lambda length, dtype=None: win)
    out = tensor(_tf_signal.stft(t, fft_length, sequence_stride, fft_length=fft_length, window_fn=window_fn))
    return _pair(out)


def istft(
    x: tuple[Any, Any],
    sequence_length: int,
    sequence_stride: int,
    fft_length: int,
    length: int | None = None,
    window: Any = "hann",
    center: bool = True,
) -> Tensor:
    """``keras.ops.istft((real, imag), sequence_length, sequence_stride, fft_length, length=None,
    window="hann", center=True)``: the inverse of :func:`stft` (overlap-add with the dual window)."""
    c = _complex(x, "istft")
    dtype = torch.real(c).dtype
    frames = c.shape[-2]
    expected = fft_length + sequence_stride * (frames - 1)
    win = _window(window, sequence_length, fft_length, dtype)
    window_fn = None
    if win is not None:
        window_fn = _tf_signal.inverse_stft_window_fn(sequence_stride, lambda length, dtype=None: win)
    out = tensor(_tf_signal.inverse_stft(c, fft_length, sequence_stride, fft_length=fft_length, window_fn=window_fn))
    start = fft_length // 2 if center else 0
    if length is not None:
        return out[..., start : start + length]
    if center:
        return out[..., start : -(fft_length // 2)] if fft_length // 2 else out[..., start:]
    return out[..., start:expected]


def _segments(
    data: Any, segment_ids: Any, num_segments: int | None, sorted: bool, fn: str
) -> tuple[Tensor, Tensor, int]:
    d, ids = tensor(data), tensor(segment_ids)
    if ids.is_floating_point() or ids.dim() != 1 or (d.dim() and ids.shape[0] != d.shape[0]):
        raise ValueError(
            f"keras.ops.{fn}: segment_ids must be a 1-D integer tensor with one id per row of data. "
            f"Received segment_ids of shape {tuple(ids.shape)} ({ids.dtype}) for data of shape {tuple(d.shape)}."
        )
    if sorted and num_segments is not None:
        raise ValueError(
            "Argument `num_segments` cannot be set when sorted is True when using the tensorflow backend. "
            f"Received: num_segments={num_segments}, sorted={sorted}."
        )
    n = int(num_segments) if num_segments is not None else (int(ids.max()) + 1 if ids.numel() else 0)
    return d, ids.long().to(d.device), n


def _segment_reduce(data: Any, segment_ids: Any, num_segments: int | None, sorted: bool, fn: str, how: str) -> Tensor:
    d, ids, n = _segments(data, segment_ids, num_segments, sorted, fn)
    keep = (ids >= 0) & (ids < n)
    rows, values = ids[keep], d[keep]
    if how == "prod":
        start: float | int = 1
    elif d.is_floating_point():
        start = torch.finfo(d.dtype).max
    else:
        start = torch.iinfo(d.dtype).max
    out = torch.full((n, *d.shape[1:]), start, dtype=d.dtype, device=d.device)
    index = rows.reshape(-1, *([1] * (d.dim() - 1))).expand_as(values)
    return out.scatter_reduce(0, index, values, reduce=how, include_self=True)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None, sorted: builtins.bool = False) -> Tensor:
    """``keras.ops.segment_min(data, segment_ids, num_segments=None, sorted=False)``: minima of rows
    per id (empty segments hold the dtype's largest value)."""
    return _segment_reduce(data, segment_ids, num_segments, sorted, "segment_min", "amin")


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None, sorted: builtins.bool = False) -> Tensor:
    """``keras.ops.segment_prod(data, segment_ids, num_segments=None, sorted=False)``: products of
    rows per id (empty segments hold 1)."""
    return _segment_reduce(data, segment_ids, num_segments, sorted, "segment_prod", "prod")


def view_as_complex(x: Any) -> Tensor:
    """``keras.ops.view_as_complex(x)``: a float tensor whose last axis (size 2) holds real and
    imaginary parts, as a complex tensor."""
    t = tensor(x)
    if t.dim() == 0 or t.shape[-1] != 2:
        raise ValueError(f"Last dimension of input must be size 2 (real, imaginary). Received shape: {tuple(t.shape)}")
    t = float_of(t)
    return torch.complex(t[..., 0], t[..., 1])


def view_as_real(x: Any) -> Tensor:
    """``keras.ops.view_as_real(x)``: a complex tensor as floats with a last axis ``(real, imag)``
    (a real tensor gets zero imaginary parts)."""
    t = tensor(x)
    if not t.is_complex():
        t = float_of(t)
        return torch.stack([t, torch.zeros_like(t)], dim=-1)
    return torch.stack([torch.real(t), torch.imag(t)], dim=-1)


def erfc(x: Any) -> Tensor:
    """``keras.ops.erfc(x)``: the complementary error function ``1 - erf(x)``, accurate for large x."""
    return torch.special.erfc(float_of(tensor(x)))


def cdist(x: Any, y: Any) -> Tensor:
    """``keras.ops.cdist(x, y)``: the Euclidean distances between the rows of ``x`` ``(..., n, d)``
    and of ``y`` ``(..., m, d)``, shape ``(..., n, m)``."""
    a, b = float_of(tensor(x)), float_of(tensor(y))
    dtype = torch.promote_types(a.dtype, b.dtype)
    if a.dim() < 2 or b.dim() < 2 or a.shape[-1] != b.shape[-1]:
        raise ValueError(
            "keras.ops.cdist needs x (..., n, d) and y (..., m, d) with the same last axis. "
            f"Received shapes {tuple(a.shape)} and {tuple(b.shape)}."
        )
    # the direct difference, not torch.cdist's matmul shortcut, which rounds small distances badly
    diff = a.to(dtype).unsqueeze(-2) - b.to(dtype).unsqueeze(-3)
    return torch.sqrt(torch.sum(diff * diff, dim=-1))


def pinv(x: Any, rcond: Any = None) -> Tensor:
    """``keras.ops.pinv(x, rcond=None)``: the Moore-Penrose pseudo-inverse (TF's default cutoff
    ``10 * max(m, n) * eps`` relative to the largest singular value)."""
    return tensor(_tf_linalg.pinv(float_of(tensor(x)), rcond=rcond))


def matrix_rank(x: Any, tol: Any = None) -> Tensor:
    """``keras.ops.matrix_rank(x, tol=None)``: the number of singular values above ``tol`` (by
    default ``max(singular values) * max(m, n) * eps``), int64 as TF's."""
    return tensor(_tf_linalg.matrix_rank(float_of(tensor(x)), tol=tol))


def cholesky_inverse(x: Any, upper: builtins.bool = False) -> Tensor:
    """``keras.ops.cholesky_inverse(x, upper=False)``: the inverse of ``A`` from its Cholesky factor
    ``x`` (``A = x x^T``, or ``x^T x`` when ``upper``)."""
    t = float_of(tensor(x))
    if t.dim() < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"keras.ops.cholesky_inverse needs square matrices. Received shape {tuple(t.shape)}.")
    eye = torch.eye(t.shape[-1], dtype=t.dtype, device=t.device).expand_as(t)
    inv = torch.linalg.solve_triangular(t, eye, upper=upper)
    return inv @ inv.transpose(-1, -2) if upper else inv.transpose(-1, -2) @ inv


def jvp(fun: Callable[..., Any], primals: Any, tangents: Any, has_aux: builtins.bool = False) -> tuple[Any, ...]:
    """``keras.ops.jvp(fun, primals, tangents, has_aux=False)``: ``fun(*primals)`` and its
    Jacobian-vector product with ``tangents`` (forward mode), plus ``fun``'s auxiliary output when
    ``has_aux``.

    Example: ``jvp(lambda x: x * x, (3.0,), (1.0,))`` gives ``(9.0, 6.0)``.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "keras.ops.jvp: primals and tangents must be tuples (or lists) of tensors, one per argument of fun. "
            f"Received: primals={type(primals).__name__}, tangents={type(tangents).__name__}"
        )
    if len(primals) != len(tangents):
        raise ValueError(
            f"keras.ops.jvp: primals and tangents must have the same length. Received {len(primals)} and {len(tangents)}."
        )
    ps = tuple(float_of(tensor(p)) for p in primals)
    ts = tuple(tensor(t).to(p.dtype) for p, t in zip(ps, tangents))
    return tuple(torch.func.jvp(fun, ps, ts, has_aux=has_aux))


MATH_NAMES = [
    "cdist",
    "erfc",
    "fft",
    "fft2",
    "ifft2",
    "irfft",
    "istft",
    "rfft",
    "segment_min",
    "segment_prod",
    "stft",
    "view_as_complex",
    "view_as_real",
]
LINALG_NAMES = ["cholesky_inverse", "jvp", "matrix_rank", "pinv"]
__all__ = [*MATH_NAMES, *LINALG_NAMES]

# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), [n for n in __all__ if n != "jvp"])
