"""``tf.signal``'s framing, short-time transforms, DCTs, MDCTs and MFCCs, as TF composes them.

Example:
    >>> import unison as tf
    >>> tf.signal.frame(tf.range(6), 3, 2).tolist()
    [[0, 1, 2], [2, 3, 4]]
    >>> tf.signal.stft(tf.zeros([2, 100]), 16, 8).shape
    torch.Size([2, 11, 9])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor
from unison.ops.signal._fft import irfft, rfft
from unison.ops.signal._windows import hann_window, vorbis_window


def _int(value: Any, what: str, op: str) -> int:
    t = to_tensor(value)
    if t.dim() != 0 or t.is_floating_point() or t.is_complex():
        raise ValueError(f"tf.signal.{op}: `{what}` must be an integer scalar. Received: {what}={value!r}")
    return int(t.item())


def frame(
    signal: Any,
    frame_length: Any,
    frame_step: Any,
    pad_end: bool = False,
    pad_value: Any = 0,
    axis: int = -1,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.signal.frame``: overlapping frames of ``frame_length`` every ``frame_step`` samples along ``axis``.

    The axis becomes ``[num_frames, frame_length]``; ``pad_end`` pads the end with ``pad_value`` so
    that a frame starts at every step (``ceil(len / frame_step)`` frames).
    """
    t = to_tensor(signal)
    length, step = _int(frame_length, "frame_length", "frame"), _int(frame_step, "frame_step", "frame")
    if not isinstance(t, torch.Tensor):  # strings: the same frames, gathered from the NumPy array
        return _frame_strings(t, length, step, pad_end, pad_value, axis)
    if t.dim() == 0:
        raise ValueError("tf.signal.frame: `signal` must have rank >= 1. Received a scalar.")
    if length <= 0 or step <= 0:
        raise ValueError(
            f"tf.signal.frame: frame_length and frame_step must be positive. Received {length} and {step}."
        )
    dim = axis % t.dim()
    n = t.shape[dim]
    if pad_end:
        frames = -(-n // step)
        extra = max(0, length + step * (frames - 1) - n)
        if extra:
            pad_shape = list(t.shape)
            pad_shape[dim] = extra
            t = torch.cat([t, torch.full(pad_shape, pad_value, dtype=t.dtype, device=t.device)], dim)
    else:
        frames = max(0, 1 + (n - length) // step)
    if frames == 0:
        shape = list(t.shape)
        shape[dim : dim + 1] = [0, length]
        return torch.zeros(shape, dtype=t.dtype, device=t.device)
    return t.unfold(dim, length, step).movedim(-1, dim + 1).contiguous()


def _frame_strings(t: Any, length: int, step: int, pad_end: bool, pad_value: Any, axis: int) -> Any:
    from unison.ops.string_tensor import StringTensor

    arr = np.asarray(t, dtype=object)
    if arr.ndim == 0:
        raise ValueError("tf.signal.frame: `signal` must have rank >= 1. Received a scalar.")
    dim = axis % arr.ndim
    n = arr.shape[dim]
    frames = -(-n // step) if pad_end else max(0, 1 + (n - length) // step)
    extra = max(0, length + step * (frames - 1) - n) if frames else 0
    if extra:
        pad_shape = list(arr.shape)
        pad_shape[dim] = extra
        if not isinstance(pad_value, (str, bytes)):
            raise TypeError(
                f"tf.signal.frame: Cannot convert {pad_value!r} to EagerTensor of dtype string: give a string pad_value."
            )
        fill = pad_value.encode() if isinstance(pad_value, str) else pad_value
        arr = np.concatenate([arr, np.full(pad_shape, fill, dtype=object)], axis=dim)
    index = (np.arange(frames)[:, None] * step + np.arange(length)).reshape(-1)
    taken = np.take(arr, index.astype(np.int64), axis=dim)
    shape = list(arr.shape)
    shape[dim : dim + 1] = [frames, length]
    return StringTensor(taken.reshape(shape))


def overlap_and_add(signal: Any, frame_step: Any, name: str | None = None) -> torch.Tensor:
    """``tf.signal.overlap_and_add``: sum frames ``[..., frames, frame_length]`` placed ``frame_step`` apart."""
    t = to_tensor(signal)
    step = _int(frame_step, "frame_step", "overlap_and_add")
    if t.dim() < 2:
        raise ValueError(f"tf.signal.overlap_and_add: `signal` must have rank >= 2. Received shape {list(t.shape)}.")
    if t.dtype == torch.bool:
        raise InvalidArgumentError(
            "tf.signal.overlap_and_add: `signal` must be numeric (bool is not in the list of allowed values). Cast it first."
        )
    frames, length = t.shape[-2], t.shape[-1]
    out_len = max(0, length + step * (frames - 1))
    out = torch.zeros((*t.shape[:-2], out_len), dtype=t.dtype, device=t.device)
    index = (
        torch.arange(frames, device=t.device).unsqueeze(-1) * step + torch.arange(length, device=t.device)
    ).reshape(-1)
    return out.index_add_(-1, index, t.reshape(*t.shape[:-2], -1))


def _enclosing_power_of_two(value: int) -> int:
    return int(2 ** math.ceil(math.log2(value))) if value > 0 else 1


def stft(
    signals: Any,
    frame_length: Any,
    frame_step: Any,
    fft_length: Any = None,
    window_fn: Callable[..., Any] | None = hann_window,
    pad_end: bool = False,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.signal.stft``: the short-time Fourier transform ``[..., frames, fft_length // 2 + 1]`` of real signals."""
    t = to_tensor(signals)
    length = _int(frame_length, "frame_length", "stft")
    n_fft = _enclosing_power_of_two(length) if fft_length is None else _int(fft_length, "fft_length", "stft")
    framed = frame(t, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * to_tensor(window_fn(length, dtype=framed.dtype)).to(framed.device)
    return rfft(framed, [n_fft])


def inverse_stft_window_fn(
    frame_step: Any, forward_window_fn: Callable[..., Any] = hann_window, name: str | None = None
) -> Callable[..., torch.Tensor]:
    """``tf.signal.inverse_stft_window_fn``: the window that makes ``inverse_stft`` invert ``stft``'s ``forward_window_fn``."""
    step = _int(frame_step, "frame_step", "inverse_stft_window_fn")

    def inverse_stft_window_fn_inner(frame_length: Any, dtype: Any) -> torch.Tensor:
        length = int(frame_length)
        forward = to_tensor(forward_window_fn(length, dtype=dtype))
        overlaps = -(-length // step)
        denom = torch.nn.functional.pad(torch.square(forward), (0, overlaps * step - length))
        denom = denom.reshape(overlaps, step).sum(0, keepdim=True).tile(overlaps, 1).reshape(-1)[:length]
        return torch.where(denom == 0.0, torch.zeros_like(forward), forward / denom)

    return inverse_stft_window_fn_inner


def inverse_stft(
    stfts: Any,
    frame_length: Any,
    frame_step: Any,
    fft_length: Any = None,
    window_fn: Callable[..., Any] | None = hann_window,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.signal.inverse_stft``: overlap-add of the windowed inverse real DFTs of ``stfts``.

    It inverts ``stft`` when ``window_fn`` is ``inverse_stft_window_fn(frame_step)``.
    """
    t = to_tensor(stfts)
    if t.dim() < 2:
        raise ValueError(f"tf.signal.inverse_stft: `stfts` must have rank >= 2. Received shape {list(t.shape)}.")
    length = _int(frame_length, "frame_length", "inverse_stft")
    n_fft = _enclosing_power_of_two(length) if fft_length is None else _int(fft_length, "fft_length", "inverse_stft")
    real = irfft(t, [n_fft])[..., :length]
    if real.shape[-1] < length:
        real = torch.nn.functional.pad(real, (0, length - real.shape[-1]))
    if window_fn is not None:
        real = real * to_tensor(window_fn(length, dtype=real.dtype)).to(real.device)
    return overlap_and_add(real, frame_step)


# --- DCT, MDCT, MFCC -----------------------------------------------------------------------------


def _ortho_weights(n: int, first: float, rest: float, like: torch.Tensor) -> torch.Tensor:
    weights = torch.full((n,), rest, dtype=like.dtype, device=like.device)
    weights[0] = first
    return weights


def _dct_by_fft(t: torch.Tensor, kind: int, ortho: bool) -> torch.Tensor:
    """TF's own DCT algorithm (through a real FFT of twice the length), step for step, so that float32
    results round as TF's do and a long axis costs O(N log N), not an N x N matrix."""
    n = t.shape[-1]
    nf = torch.tensor(float(n), dtype=t.dtype, device=t.device)
    k = torch.arange(n, dtype=t.dtype, device=t.device)
    if kind == 1:
        return rfft(torch.cat([t, t[..., 1:-1].flip(-1)], dim=-1)).real
    if kind == 2:
        scale = 2.0 * torch.exp(torch.complex(torch.zeros_like(k), -k * math.pi * 0.5 / nf))
        out = (rfft(t, [2 * n])[..., :n] * scale).real
        if ortho:
            first = float(0.5 * torch.rsqrt(nf))
            out = out * _ortho_weights(n, first, first * math.sqrt(2.0), out)
        return out
    if kind == 3:
        if ortho:
            first = float(torch.sqrt(nf))
            t = t * _ortho_weights(n, first, first * math.sqrt(0.5), t)
        else:
            t = t * nf
        scale = 2.0 * torch.exp(torch.complex(torch.zeros_like(k), k * math.pi * 0.5 / nf))
        return irfft(scale * torch.complex(t, torch.zeros_like(t)), [2 * n])[..., :n]
    doubled = torch.nn.functional.pad(t, (0, n))
    out = _dct_by_fft(doubled, 2, False)[..., 1::2]
    return out * (math.sqrt(0.5) * torch.rsqrt(nf)) if ortho else out


def _dct(input: Any, kind: int, n: Any, axis: int, norm: Any, op: str) -> torch.Tensor:
    t = to_tensor(input)
    if t.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"tf.signal.{op}: `input` must be float32 or float64. Received dtype {t.dtype}: cast it first.")
    if axis != -1:
        raise NotImplementedError(f"tf.signal.{op}: axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError(f"tf.signal.{op}: n should be a positive integer or None. Received: n={n}")
    if kind not in (1, 2, 3, 4):
        raise ValueError(f"tf.signal.{op}: Types I, II, III and IV (I)DCT are supported. Received: type={kind}")
    if norm not in (None, "ortho"):
        raise ValueError(f"tf.signal.{op}: Unknown normalization. Expected None or 'ortho', got: {norm}")
    if kind == 1 and norm == "ortho":
        raise ValueError(f"tf.signal.{op}: Normalization is not supported for the Type-I DCT.")
    if kind == 1 and t.dim() and t.shape[-1] < 2:
        raise ValueError(f"tf.signal.{op}: Type-I DCT requires the dimension to be greater than one.")
    if n is not None:
        size = t.shape[-1]
        t = t[..., :n] if n <= size else torch.nn.functional.pad(t, (0, n - size))
    try:
        return _dct_by_fft(t, kind, norm == "ortho")
    except InvalidArgumentError as exc:  # an empty batch fails TF's RFFT length check, as it does in TF
        raise InvalidArgumentError(f"tf.signal.{op} of `input` with shape {list(t.shape)}: {exc}") from None


def dct(
    input: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.signal.dct``: the DCT of type 1-4 over the last axis (``norm="ortho"`` for types 2-4; ``n`` crops or pads)."""
    return _dct(input, type, n, axis, norm, "dct")


def idct(
    input: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.signal.idct``: the DCT of the inverse type (2 and 3 swap); exact inverse with ``norm="ortho"``."""
    inverse = {1: 1, 2: 3, 3: 2, 4: 4}.get(type, type)
    return _dct(input, inverse, n, axis, norm, "idct")


def mdct(
    signals: Any,
    frame_length: Any,
    window_fn: Callable[..., Any] | None = vorbis_window,
    pad_end: bool = False,
    norm: Any = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.signal.mdct``: the modified DCT of frames half-overlapping (``frame_length`` a multiple of 4)."""
    t = to_tensor(signals)
    length = _int(frame_length, "frame_length", "mdct")
    if length % 4:
        raise ValueError(f"tf.signal.mdct: The frame length must be a multiple of 4. Received: frame_length={length}")
    framed = frame(t, length, length // 2, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * to_tensor(window_fn(length, dtype=framed.dtype)).to(framed.device)
    else:
        framed = framed * (1.0 / math.sqrt(2))
    a, b, c, d = torch.split(framed, length // 4, dim=-1)
    rearranged = torch.cat([-c.flip(-1) - d, a - b.flip(-1)], dim=-1)
    return dct(rearranged, type=4, norm=norm)


def inverse_mdct(
    mdcts: Any, window_fn: Callable[..., Any] | None = vorbis_window, norm: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.signal.inverse_mdct``: overlap-add of the windowed inverse MDCTs (inverts ``mdct`` with matching windows)."""
    t = to_tensor(mdcts)
    if t.dim() < 2:
        raise ValueError(f"tf.signal.inverse_mdct: `mdcts` must have rank >= 2. Received shape {list(t.shape)}.")
    half = t.shape[-1]
    if norm is None:
        result = (0.5 / half) * dct(t, type=4)
    elif norm == "ortho":
        result = dct(t, type=4, norm="ortho")
    else:
        raise ValueError(f"tf.signal.inverse_mdct: Unknown normalization. Expected None or 'ortho', got: {norm}")
    first, second = torch.split(result, half // 2, dim=-1)
    real = torch.cat([second, -second.flip(-1), -first.flip(-1), -first], dim=-1)
    if window_fn is not None:
        real = real * to_tensor(window_fn(2 * half, dtype=t.dtype)).to(t.device)
    else:
        real = real * (1.0 / math.sqrt(2))
    return overlap_and_add(real, half)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms: Any, name: str | None = None) -> torch.Tensor:
    """``tf.signal.mfccs_from_log_mel_spectrograms``: the orthonormal-scaled DCT-II of log-mel spectrograms."""
    t = to_tensor(log_mel_spectrograms)
    bins = t.shape[-1] if t.dim() else 0
    if bins == 0:
        raise ValueError(
            f"tf.signal.mfccs_from_log_mel_spectrograms: num_mel_bins must be positive. Got shape {list(t.shape)}."
        )
    return dct(t, type=2) * torch.rsqrt(torch.tensor(bins * 2.0, dtype=t.dtype, device=t.device))
