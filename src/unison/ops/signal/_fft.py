"""``tf.signal``'s discrete Fourier transforms over ``torch.fft``, with TF's dtype rules and ``fft_length``.

``fft``/``ifft`` (and 2-D, 3-D) take complex tensors only, transforming the innermost 1, 2 or 3
axes; ``rfft*`` take float32/float64 and crop or zero-pad the innermost axes to ``fft_length``;
``irfft*`` infer ``fft_length`` as ``2 * (n - 1)`` on the last axis, as TF does.

Example:
    >>> import unison as tf
    >>> tf.signal.rfft(tf.constant([1.0, 2.0, 3.0, 4.0])).tolist()
    [(10+0j), (-2+2j), (-2+0j)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor

_COMPLEX = (torch.complex64, torch.complex128)
_REAL = (torch.float32, torch.float64)


def _complex_input(input: Any, op: str, rank: int) -> torch.Tensor:
    t = to_tensor(input)
    if t.dtype not in _COMPLEX:
        raise InvalidArgumentError(
            f"tf.signal.{op}: `input` must be complex64 or complex128 (Value for attr 'Tcomplex' of "
            f"{str(t.dtype).replace('torch.', '')} is not in the list of allowed values). Cast it first "
            f"(tf.cast(x, tf.complex64))."
        )
    if t.dim() < rank:
        raise InvalidArgumentError(
            f"tf.signal.{op}: `input` must have rank of at least {rank}. Received shape {list(t.shape)}."
        )
    return t


def _complex_transform(fn: Callable[..., torch.Tensor], op: str, rank: int) -> Callable[..., torch.Tensor]:
    dims = tuple(range(-rank, 0))

    def transform(input: Any, name: str | None = None) -> torch.Tensor:
        t = _complex_input(input, op, rank)
        if t.numel() == 0:
            return t.clone()
        return fn(t, dim=dims)

    transform.__name__ = transform.__qualname__ = op
    transform.__doc__ = f"``tf.signal.{op}``: the {'inverse ' if op.startswith('i') else ''}DFT over the innermost {rank} axes of a complex tensor."
    return transform


fft = _complex_transform(torch.fft.fftn, "fft", 1)
ifft = _complex_transform(torch.fft.ifftn, "ifft", 1)
fft2d = _complex_transform(torch.fft.fftn, "fft2d", 2)
ifft2d = _complex_transform(torch.fft.ifftn, "ifft2d", 2)
fft3d = _complex_transform(torch.fft.fftn, "fft3d", 3)
ifft3d = _complex_transform(torch.fft.ifftn, "ifft3d", 3)


def _lengths(fft_length: Any, rank: int, op: str) -> list[int] | None:
    if fft_length is None:
        return None
    lengths = [int(v) for v in to_tensor(fft_length).reshape(-1).tolist()]
    if len(lengths) != rank:
        raise ValueError(f"tf.signal.{op}: `fft_length` must have {rank} entries. Received: fft_length={lengths}")
    return lengths


def _real_transform(rank: int, inverse: bool) -> Callable[..., torch.Tensor]:
    op = f"{'i' if inverse else ''}rfft{'' if rank == 1 else f'{rank}d'}"
    dims = tuple(range(-rank, 0))

    def transform(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> torch.Tensor:
        t = to_tensor(input_tensor)
        allowed = _COMPLEX if inverse else _REAL
        if t.dtype not in allowed:
            kind = (
                "IRFFT requires tf.complex64 or tf.complex128" if inverse else "RFFT requires tf.float32 or tf.float64"
            )
            raise ValueError(f"tf.signal.{op}: {kind} inputs. Received dtype {str(t.dtype).replace('torch.', '')}.")
        if t.dim() < rank:
            raise ValueError(
                f"tf.signal.{op}: `input_tensor` must have rank >= {rank}. Received shape {list(t.shape)}."
            )
        lengths = _lengths(fft_length, rank, op)
        if lengths is None:
            lengths = list(t.shape[-rank:])
            if inverse:
                lengths[-1] = max(0, 2 * (lengths[-1] - 1))
        if t.numel() == 0:
            # TF's kernel checks the input against fft_length even when there is nothing to transform.
            needed = [*lengths[:-1], lengths[-1] // 2 + 1] if inverse else lengths
            for i, (have, need) in enumerate(zip(t.shape[-rank:], needed)):
                if 0 not in t.shape[-rank:] and have < need:
                    raise InvalidArgumentError(
                        f"tf.signal.{op}: Input dimension {t.dim() - rank + i} must have length of at least {need} "
                        f"(fft_length={lengths}), but got {have}."
                    )
        if inverse:
            out_dtype = torch.float32 if t.dtype == torch.complex64 else torch.float64
            if t.numel() == 0 or 0 in lengths:
                return torch.zeros((*t.shape[:-rank], *lengths), dtype=out_dtype, device=t.device)
            return torch.fft.irfftn(t, s=lengths, dim=dims)
        if t.numel() == 0 or 0 in lengths:
            # TF's kernel does not run on an empty input; a zero fft_length gives zero bins.
            bins = lengths[-1] // 2 + 1 if lengths[-1] else 0
            complex_dtype = torch.complex64 if t.dtype == torch.float32 else torch.complex128
            return torch.zeros((*t.shape[:-rank], *lengths[:-1], bins), dtype=complex_dtype, device=t.device)
        return torch.fft.rfftn(t, s=lengths, dim=dims)

    transform.__name__ = transform.__qualname__ = op
    transform.__doc__ = (
        f"``tf.signal.{op}``: the {'inverse ' if inverse else ''}real DFT over the innermost {rank} axes "
        f"({'complex in, float out' if inverse else 'float in, complex out'}; ``fft_length`` crops or zero-pads)."
    )
    return transform


rfft = _real_transform(1, inverse=False)
irfft = _real_transform(1, inverse=True)
rfft2d = _real_transform(2, inverse=False)
irfft2d = _real_transform(2, inverse=True)
rfft3d = _real_transform(3, inverse=False)
irfft3d = _real_transform(3, inverse=True)


def _shift(x: Any, axes: Any, inverse: bool) -> torch.Tensor:
    t = to_tensor(x)
    if axes is None:
        dims = list(range(t.dim()))
    elif isinstance(axes, int):
        dims = [axes]
    else:
        dims = [int(a) for a in to_tensor(axes).reshape(-1).tolist()]
    shifts = [(-(t.shape[d] // 2) if inverse else t.shape[d] // 2) for d in dims]
    return torch.roll(t, shifts, dims) if dims else t


def fftshift(x: Any, axes: Any = None, name: str | None = None) -> torch.Tensor:
    """``tf.signal.fftshift``: move the zero frequency to the centre (all axes unless ``axes``), as numpy does."""
    return _shift(x, axes, inverse=False)


def ifftshift(x: Any, axes: Any = None, name: str | None = None) -> torch.Tensor:
    """``tf.signal.ifftshift``: the inverse of ``fftshift``."""
    return _shift(x, axes, inverse=True)
