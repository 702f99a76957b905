"""Keras 3's ``MelSpectrogram``: audio ``(batch, samples)`` to ``(batch, num_mel_bins, frames)``.

The same steps as Keras 3 with the TensorFlow backend: the signal is reflect-padded by
``fft_length // 2`` on both sides (``center=True``), cut into frames of ``fft_length`` every
``sequence_stride`` samples, multiplied by a periodic ``"hann"`` or ``"hamming"`` window of
``sequence_length`` (zero-padded to ``fft_length``; ``None``: no window), Fourier-transformed;
the magnitudes raised to ``mag_exp`` are mapped by HTK's triangular mel filters
(``tf.signal.linear_to_mel_weight_matrix``) and, with ``power_to_db``, turned into decibels
relative to ``ref_power`` and floored at ``top_db`` below the batch's maximum.

Example:
    >>> import torch
    >>> layer = MelSpectrogram(fft_length=64, sequence_stride=16, num_mel_bins=8, sampling_rate=8000)
    >>> layer(torch.zeros(2, 128)).shape
    torch.Size([2, 8, 9])
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.layers.base import Layer
from unison.ops.signal._windows import linear_to_mel_weight_matrix


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{what}` must be a positive integer. Received: {what}={value!r}")
    return value


class MelSpectrogram(Layer):
    """Mel-scaled power spectrogram of raw audio (Keras 3's ``MelSpectrogram``); no weights.

    Args:
        fft_length: samples per FFT frame; sequence_stride: samples between frames;
        sequence_length: the window's length (``fft_length`` by default); window: ``"hann"``,
        ``"hamming"`` or None; sampling_rate: samples per second; num_mel_bins: mel bands;
        min_freq, max_freq: the band edges in Hz (``max_freq``: half the sampling rate);
        power_to_db: output decibels; top_db: the dynamic range kept; mag_exp: the magnitude's
        exponent (2: power); min_power: the floor before the logarithm; ref_power: 0 dB.
    """

    def __init__(
        self,
        fft_length: int = 2048,
        sequence_stride: int = 512,
        sequence_length: int | None = None,
        window: str | None = "hann",
        sampling_rate: int = 16000,
        num_mel_bins: int = 128,
        min_freq: float = 20.0,
        max_freq: float | None = None,
        power_to_db: bool = True,
        top_db: float = 80.0,
        mag_exp: float = 2.0,
        min_power: float = 1e-10,
        ref_power: float = 1.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.fft_length = _positive(fft_length, "fft_length")
        self.sequence_stride = _positive(sequence_stride, "sequence_stride")
        self.sequence_length = _positive(sequence_length or fft_length, "sequence_length")
        if self.fft_length < self.sequence_length:
            raise ValueError(
                "`fft_length` must be greater than or equal to  `sequence_length`. Received: "
                f"`sequence_length`={self.sequence_length}, `fft_length`={self.fft_length}."
            )
        if window not in ("hann", "hamming", None):
            raise ValueError(
                f'If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. Received: window={window}'
            )
        self.window, self.sampling_rate, self.num_mel_bins = (
            window,
            sampling_rate,
            _positive(num_mel_bins, "num_mel_bins"),
        )
        self.min_freq = min_freq
        self.max_freq = max_freq or int(sampling_rate / 2)
        self.power_to_db, self.top_db, self.mag_exp = power_to_db, top_db, mag_exp
        self.min_power, self.ref_power = min_power, ref_power
        self.built = True

    def _window(self, dtype: torch.dtype, device: torch.device) -> torch.Tensor | None:
        if self.window is None:
            return None
        n = torch.arange(self.sequence_length, dtype=torch.float64, device=device)
        cosine = torch.cos(2 * math.pi * n / self.sequence_length)  # periodic, as tf.signal's periodic=True
        window = 0.5 - 0.5 * cosine if self.window == "hann" else 0.54 - 0.46 * cosine
        left = (self.fft_length - self.sequence_length) // 2
        return F.pad(window, (left, self.fft_length - self.sequence_length - left)).to(dtype)

    def call(self, inputs: Any) -> torch.Tensor:
        x = inputs if isinstance(inputs, torch.Tensor) else torch.as_tensor(inputs)
        x = x.to(x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32)
        if x.dim() < 1:
            raise ValueError(
                f"MelSpectrogram takes audio of shape (samples,) or (batch, samples). Received: {tuple(x.shape)}"
            )
        lead, length = x.shape[:-1], x.shape[-1]
        half = self.fft_length // 2
        if length <= half:
            raise ValueError(
                f"MelSpectrogram reflect-pads the audio by fft_length // 2 = {half} samples, so it needs more "
                f"than {half} samples. Received: {length}; use a smaller fft_length or longer audio."
            )
        padded = F.pad(x.reshape(-1, 1, length), (half, half), mode="reflect").reshape(*lead, length + 2 * half)
        frames = padded.unfold(-1, self.fft_length, self.sequence_stride)
        window = self._window(x.dtype, x.device)
        if window is not None:
            frames = frames * window
        spectrum = torch.fft.rfft(frames, n=self.fft_length)
        power = torch.sqrt(spectrum.real.square() + spectrum.imag.square()) ** self.mag_exp
        mel = linear_to_mel_weight_matrix(
            self.num_mel_bins, self.fft_length // 2 + 1, self.sampling_rate, self.min_freq, self.max_freq, x.dtype
        ).to(x.device)
        out = torch.tensordot(power, mel, dims=1)
        if self.power_to_db:
            out = 10.0 * torch.log10(torch.clamp(out, min=self.min_power))
            out = out - 10.0 * math.log10(max(abs(self.ref_power), self.min_power))
            out = torch.maximum(out, out.max() - self.top_db)
        return out.transpose(-1, -2)


__all__ = ["MelSpectrogram"]
