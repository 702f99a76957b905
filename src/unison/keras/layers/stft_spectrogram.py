"""Keras 3's ``STFTSpectrogram``: a short-time Fourier transform as a strided 1-D convolution.

Each input channel of ``(batch, time, channels)`` (channels-last) is convolved with two kernels
of shape ``(frame_length, 1, fft_length // 2 + 1)``, ``real_kernel`` and ``imag_kernel``, made by
the ``STFT`` initializer (window times the Fourier basis) and trainable, as in Keras 3. ``mode``
picks the output: ``"log"`` (log magnitude), ``"magnitude"``, ``"psd"``, ``"real"``, ``"imag"``,
``"angle"`` or ``"stft"`` (real then imaginary bins). ``padding="same"`` pads as TF's convolution
does. The output is ``(batch, frames, channels * bins)`` or, with ``expand_dims=True``,
``(batch, frames, bins, channels)``.

Example:
    >>> import torch
    >>> layer = STFTSpectrogram(mode="magnitude", frame_length=8, frame_step=4)
    >>> layer(torch.zeros(2, 32, 1)).shape
    torch.Size([2, 7, 5])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.initializers import STFT
from unison.keras.layers.base import Layer

_MODES = ("log", "magnitude", "psd", "real", "imag", "angle", "stft")
_EPSILON = 1e-7


class STFTSpectrogram(Layer):
    """Spectrogram of a ``(batch, time, channels)`` signal (Keras 3's ``STFTSpectrogram``).

    Args:
        mode: the output (see the module docstring); frame_length: samples per frame;
        frame_step: samples between frames (``frame_length // 2``); fft_length: FFT size (the next
        power of two of ``frame_length``); window: ``"hann"``, ``"hamming"``, ``"blackman"``,
        ``"bartlett"``, the window's values or None; periodic: a periodic window; scaling:
        ``"density"``, ``"spectrum"`` or None; padding: ``"valid"`` or ``"same"``;
        expand_dims: keep channels as a last axis; data_format: ``"channels_last"`` or ``"channels_first"``.
    """

    def __init__(
        self,
        mode: str = "log",
        frame_length: int = 256,
        frame_step: int | None = None,
        fft_length: int | None = None,
        window: Any = "hann",
        periodic: bool = False,
        scaling: str | None = "density",
        padding: str = "valid",
        expand_dims: bool = False,
        data_format: str | None = None,
        **kwargs: Any,
    ) -> None:
        if frame_step is not None and (frame_step > frame_length or frame_step < 1):
            raise ValueError(
                "`frame_step` should be a positive integer not greater than `frame_length`. "
                f"Received frame_step={frame_step}, frame_length={frame_length}"
            )
        if fft_length is not None and fft_length < frame_length:
            raise ValueError(
                f"`fft_length` should be not less than `frame_length`. Received fft_length={fft_length}, "
                f"frame_length={frame_length}"
            )
        if fft_length is not None and (fft_length & -fft_length) != fft_length:
            warnings.warn(
                f"`fft_length` is recommended to be a power of two. Received fft_length={fft_length}", stacklevel=2
            )
        if mode not in _MODES:
            raise ValueError(f"Output mode is invalid, it must be one of {', '.join(_MODES)}. Received: mode={mode}")
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(
                f"Scaling is invalid, it must be `None`, 'density' or 'spectrum'. Received scaling={scaling}"
            )
        if padding not in ("valid", "same"):
            raise ValueError(f"Padding is invalid, it should be 'valid', 'same'. Received: padding={padding}")
        if data_format not in (None, "channels_last", "channels_first"):
            raise ValueError(
                "The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                f"Received: data_format={data_format}"
            )
        super().__init__(**kwargs)
        STFT("real", window, scaling, periodic)  # checks the window's name now, as Keras does (scipy)
        self.mode, self.frame_length, self.frame_step = mode, frame_length, frame_step
        self._frame_step = frame_step or frame_length // 2
        self.fft_length = fft_length
        self._fft_length = fft_length or 2 ** math.ceil(math.log2(frame_length))
        self.window, self.periodic, self.scaling = window, periodic, scaling
        self.padding, self.expand_dims = padding, expand_dims
        self.data_format = data_format or "channels_last"

    def build(self, input_shape: Any) -> None:
        if len(input_shape) != 3:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=3 "
                f"(batch, time, channels), found ndim={len(input_shape)}. Full shape received: {tuple(input_shape)}"
            )
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        if self.mode != "imag":
            self.real_kernel = self.add_weight(
                name="real_kernel", shape=shape, initializer=STFT("real", self.window, self.scaling, self.periodic)
            )
        if self.mode != "real":
            self.imag_kernel = self.add_weight(
                name="imag_kernel", shape=shape, initializer=STFT("imag", self.window, self.scaling, self.periodic)
            )

    def _conv(self, signal: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
        """``(batch * channels, time)`` -> ``(batch * channels, bins, frames)``."""
        x = signal.unsqueeze(1)
        if self.padding == "same":  # TF's "same": ceil(time / step) frames, the extra sample on the right
            time = x.shape[-1]
            frames = -(-time // self._frame_step)
            total = max((frames - 1) * self._frame_step + self.frame_length - time, 0)
            x = F.pad(x, (total // 2, total - total // 2))
        weight = kernel.to(signal.dtype).permute(2, 1, 0)  # (bins, 1, frame_length)
        if x.shape[-1] < self.frame_length:  # shorter than one frame: no frames
            return x.new_zeros(x.shape[0], weight.shape[0], 0)
        return F.conv1d(x, weight, stride=self._frame_step)

    def call(self, inputs: Any) -> torch.Tensor:
        x = inputs if isinstance(inputs, torch.Tensor) else torch.as_tensor(inputs)
        if x.dtype not in (torch.float16, torch.float32, torch.float64):
            raise TypeError(
                f"Invalid input type. Expected `float16`, `float32` or `float64`. Received: input type={x.dtype}"
            )
        x = x.to(torch.float32)  # Keras autocasts float inputs to the layer's float32 compute dtype
        if x.dim() != 3:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected ndim=3, "
                f"found ndim={x.dim()}. Full shape received: {tuple(x.shape)}"
            )
        if self.data_format == "channels_last":
            x = x.transpose(1, 2)
        batch, channels, time = x.shape
        flat = x.reshape(batch * channels, time)

        def spectrum(kernel: torch.Tensor) -> torch.Tensor:
            out = self._conv(flat, kernel)
            return out.reshape(batch, channels, out.shape[1], out.shape[2])

        if self.mode == "real":
            return self._adjust(spectrum(self.real_kernel))
        if self.mode == "imag":
            return self._adjust(spectrum(self.imag_kernel))
        real, imag = spectrum(self.real_kernel), spectrum(self.imag_kernel)
        if self.mode == "angle":
            return self._adjust(torch.atan2(imag, real))
        if self.mode == "stft":
            return self._adjust(torch.cat([real, imag], dim=2))
        power = real.square() + imag.square()
        if self.mode == "psd":  # one-sided: every bin but DC and Nyquist counted twice
            return self._adjust(power + F.pad(power[:, :, 1:-1, :], (0, 0, 1, 1)))
        magnitude = self._adjust(torch.sqrt(power.clamp_min(_EPSILON)))
        return magnitude if self.mode == "magnitude" else torch.log(magnitude.clamp_min(_EPSILON))

    def _adjust(self, out: torch.Tensor) -> torch.Tensor:
        """``(batch, channels, bins, frames)`` -> the layer's output layout."""
        batch, channels, bins, frames = out.shape
        if self.expand_dims:
            return out.permute(0, 3, 2, 1) if self.data_format == "channels_last" else out.permute(0, 1, 3, 2)
        out = out.reshape(batch, channels * bins, frames)
        return out.transpose(1, 2) if self.data_format == "channels_last" else out

    def get_config(self) -> dict[str, Any]:
        from unison.keras.layers.layer_config import dtype_entry

        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": dtype_entry(self),
            "mode": self.mode,
            "frame_length": self.frame_length,
            "frame_step": self.frame_step,
            "fft_length": self.fft_length,
            "window": self.window,
            "periodic": self.periodic,
            "scaling": self.scaling,
            "padding": self.padding,
            "data_format": self.data_format,
            "expand_dims": self.expand_dims,
        }


__all__ = ["STFTSpectrogram"]
