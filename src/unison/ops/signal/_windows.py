"""``tf.signal``'s window functions and mel filterbank, computed as TF's own Python computes them.

Example:
    >>> import unison as tf
    >>> [round(v, 3) for v in tf.signal.hann_window(4).tolist()]
    [0.0, 0.5, 1.0, 0.5]
"""

from __future__ import annotations

import math
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _check(window_length: Any, dtype: Any, op: str) -> tuple[int, torch.dtype]:
    d = as_dtype(dtype)
    if not d.is_floating_point:
        raise ValueError(f"tf.signal.{op}: dtype must be a floating point type. Found {d}.")
    length = to_tensor(window_length)
    if length.dim() != 0:
        raise ValueError(f"tf.signal.{op}: `window_length` must be a scalar. Received shape {list(length.shape)}.")
    n = int(length.item())
    if n < 0:
        raise InvalidArgumentError(f"tf.signal.{op}: `window_length` must be non-negative. Received: window_length={n}")
    return n, d


def _raised_cosine(window_length: Any, periodic: Any, dtype: Any, a: float, b: float, op: str) -> torch.Tensor:
    length, d = _check(window_length, dtype, op)
    if length == 1:
        return torch.ones(1, dtype=d)
    even = 1 - length % 2
    n = length + int(bool(periodic)) * even - 1
    count = torch.arange(length, dtype=d)
    return a - b * torch.cos(2 * math.pi * count / n)


def hann_window(
    window_length: Any, periodic: Any = True, dtype: Any = torch.float32, name: str | None = None
) -> torch.Tensor:
    """``tf.signal.hann_window``: ``0.5 - 0.5 cos(2 pi n / N)`` (``N = length`` when periodic, else ``length - 1``)."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, "hann_window")


def hamming_window(
    window_length: Any, periodic: Any = True, dtype: Any = torch.float32, name: str | None = None
) -> torch.Tensor:
    """``tf.signal.hamming_window``: ``0.54 - 0.46 cos(2 pi n / N)``."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, "hamming_window")


def kaiser_window(
    window_length: Any, beta: Any = 12.0, dtype: Any = torch.float32, name: str | None = None
) -> torch.Tensor:
    """``tf.signal.kaiser_window``: the Kaiser window with shape parameter ``beta``."""
    length, d = _check(window_length, dtype, "kaiser_window")
    if length == 1:
        return torch.ones(1, dtype=d)
    half = (length - 1) / 2.0
    arg = torch.arange(-half, half + 0.1, dtype=torch.float32).to(d)
    b = torch.as_tensor(float(beta), dtype=d)
    num = b * torch.sqrt(torch.relu(1.0 - torch.square(arg / half)))
    return torch.exp(num - b) * (torch.special.i0e(num) / torch.special.i0e(b))


def kaiser_bessel_derived_window(
    window_length: Any, beta: Any = 12.0, dtype: Any = torch.float32, name: str | None = None
) -> torch.Tensor:
    """``tf.signal.kaiser_bessel_derived_window``: the KBD window (length ``2 * (window_length // 2)``)."""
    length, d = _check(window_length, dtype, "kaiser_bessel_derived_window")
    csum = torch.cumsum(kaiser_window(length // 2 + 1, beta, dtype=d), 0)
    half = torch.sqrt(csum[:-1] / csum[-1])
    return torch.cat([half, half.flip(0)])


def vorbis_window(window_length: Any, dtype: Any = torch.float32, name: str | None = None) -> torch.Tensor:
    """``tf.signal.vorbis_window``: ``sin(pi/2 sin(pi (n + 1/2) / N)^2)``, the MDCT's power-complementary window."""
    length, d = _check(window_length, dtype, "vorbis_window")
    if length == 0:
        return torch.zeros(0, dtype=d)
    arg = torch.arange(length, dtype=d)
    return torch.sin(math.pi / 2.0 * torch.pow(torch.sin(math.pi / length * (arg + 0.5)), 2.0))


def _linspace(start: Any, stop: Any, num: int, dtype: torch.dtype) -> torch.Tensor:
    """TF's LinSpace: ``start + i * step`` in ``dtype``, the last value exactly ``stop`` (torch's differs by an ulp)."""
    start_t, stop_t = torch.as_tensor(start, dtype=dtype), torch.as_tensor(stop, dtype=dtype)
    if num == 1:
        return start_t.reshape(1)
    out = start_t + torch.arange(num, dtype=dtype) * ((stop_t - start_t) / (num - 1))
    out[-1] = stop_t
    return out


def _hertz_to_mel(hertz: torch.Tensor) -> torch.Tensor:
    return _MEL_HIGH_FREQUENCY_Q * torch.log(1.0 + hertz / _MEL_BREAK_FREQUENCY_HERTZ)


def linear_to_mel_weight_matrix(
    num_mel_bins: int = 20,
    num_spectrogram_bins: int = 129,
    sample_rate: Any = 8000,
    lower_edge_hertz: float = 125.0,
    upper_edge_hertz: float = 3800.0,
    dtype: Any = torch.float32,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.signal.linear_to_mel_weight_matrix``: ``[num_spectrogram_bins, num_mel_bins]`` triangular mel filters.

    HTK's mel scale; the DC bin's row is zero, as in TF.
    """
    d = as_dtype(dtype)
    rate = float(to_tensor(sample_rate).item()) if not isinstance(sample_rate, (int, float)) else float(sample_rate)
    if num_mel_bins <= 0:
        raise ValueError(f"tf.signal.linear_to_mel_weight_matrix: num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(
            f"tf.signal.linear_to_mel_weight_matrix: lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}"
        )
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(
            f"tf.signal.linear_to_mel_weight_matrix: lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz {upper_edge_hertz:.1f}"
        )
    if rate <= 0.0:
        raise ValueError(f"tf.signal.linear_to_mel_weight_matrix: sample_rate must be positive. Got: {rate}")
    if upper_edge_hertz > rate / 2:
        raise ValueError(
            f"tf.signal.linear_to_mel_weight_matrix: upper_edge_hertz must not be larger than the Nyquist frequency "
            f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: {rate}"
        )
    if not d.is_floating_point:
        raise ValueError(f"tf.signal.linear_to_mel_weight_matrix: dtype must be a floating point type. Got: {d}")
    linear = _linspace(0.0, torch.as_tensor(rate, dtype=d) / 2.0, int(num_spectrogram_bins), d)[1:]
    bins_mel = _hertz_to_mel(linear).unsqueeze(1)
    lo = _hertz_to_mel(torch.tensor(float(lower_edge_hertz), dtype=d))
    hi = _hertz_to_mel(torch.tensor(float(upper_edge_hertz), dtype=d))
    edges = _linspace(lo, hi, int(num_mel_bins) + 2, d)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    lower_slopes = (bins_mel - lower) / (center - lower)
    upper_slopes = (upper - bins_mel) / (upper - center)
    weights = torch.clamp(torch.minimum(lower_slopes, upper_slopes), min=0.0)
    return torch.cat([torch.zeros(1, int(num_mel_bins), dtype=d), weights])
