"""``tf.signal``: TF's signal processing over ``torch.fft``: DFTs, windows, frames, STFTs, DCTs, MDCTs, mel filterbanks.

Example:
    >>> import unison as tf
    >>> spectrogram = tf.abs(tf.signal.stft(tf.zeros([1, 400]), frame_length=64, frame_step=32))
    >>> spectrogram.shape
    torch.Size([1, 11, 33])
"""

from __future__ import annotations

from unison.ops._dispatch import wrap_namespace
from unison.ops.signal._fft import (
    fft,
    fft2d,
    fft3d,
    fftshift,
    ifft,
    ifft2d,
    ifft3d,
    ifftshift,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
from unison.ops.signal._spectral import (
    dct,
    frame,
    idct,
    inverse_mdct,
    inverse_stft,
    inverse_stft_window_fn,
    mdct,
    mfccs_from_log_mel_spectrograms,
    overlap_and_add,
    stft,
)
from unison.ops.signal._windows import (
    hamming_window,
    hann_window,
    kaiser_bessel_derived_window,
    kaiser_window,
    linear_to_mel_weight_matrix,
    vorbis_window,
)

__all__ = [
    "dct",
    "fft",
    "fft2d",
    "fft3d",
    "fftshift",
    "frame",
    "hamming_window",
    "hann_window",
    "idct",
    "ifft",
    "ifft2d",
    "ifft3d",
    "ifftshift",
    "inverse_mdct",
    "inverse_stft",
    "inverse_stft_window_fn",
    "irfft",
    "irfft2d",
    "irfft3d",
    "kaiser_bessel_derived_window",
    "kaiser_window",
    "linear_to_mel_weight_matrix",
    "mdct",
    "mfccs_from_log_mel_spectrograms",
    "overlap_and_add",
    "rfft",
    "rfft2d",
    "rfft3d",
    "stft",
    "vorbis_window",
]

wrap_namespace(globals(), __all__)


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.signal", name)
