"""``tf.signal`` against TensorFlow 2.21 (see tf_oracle.py for the rules)."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

SIGNAL = np.sin(np.arange(64) * 0.3) + 0.5 * np.cos(np.arange(64) * 1.1)


def _complex(tf, shape):
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return tf.constant(np.cos(values) + 1j * np.sin(values * 0.7), tf.complex128)


@pytest.mark.parametrize("rank", [1, 2, 3])
@same_as_tf("signal.fft", "signal.ifft", "signal.fft2d", "signal.ifft2d", "signal.fft3d", "signal.ifft3d")
def test_complex_transforms(tf, rank):
    x = _complex(tf, [2, 3, 4, 5])
    forward = {1: tf.signal.fft, 2: tf.signal.fft2d, 3: tf.signal.fft3d}[rank]
    inverse = {1: tf.signal.ifft, 2: tf.signal.ifft2d, 3: tf.signal.ifft3d}[rank]
    return forward(x), inverse(x), forward(tf.cast(x, tf.complex64))


@same_as_tf("signal.fft", "signal.ifft", "signal.fft2d", "signal.ifft2d", "signal.fft3d", "signal.ifft3d", edge=True)
def test_fft_of_floats_is_refused(tf):
    return tf.signal.fft(tf.constant([1.0, 2.0]))


@same_as_tf("signal.fft", "signal.ifft2d", edge=True)
def test_fft_of_empty(tf):
    return tf.signal.fft(tf.zeros([2, 0], tf.complex64)), tf.signal.ifft2d(tf.zeros([0, 2, 2], tf.complex64))


@pytest.mark.parametrize("rank", [1, 2, 3])
@same_as_tf("signal.rfft", "signal.irfft", "signal.rfft2d", "signal.irfft2d", "signal.rfft3d", "signal.irfft3d")
def test_real_transforms(tf, rank):
    x = tf.constant(SIGNAL[:60].reshape(3, 4, 5))
    forward = {1: tf.signal.rfft, 2: tf.signal.rfft2d, 3: tf.signal.rfft3d}[rank]
    inverse = {1: tf.signal.irfft, 2: tf.signal.irfft2d, 3: tf.signal.irfft3d}[rank]
    spectrum = forward(x)
    longer = [6] * rank
    shorter = [3] * rank
    return (
        spectrum,
        inverse(spectrum),
        forward(x, fft_length=longer),
        forward(x, fft_length=shorter),
        inverse(spectrum, fft_length=[5] * rank),
        forward(tf.cast(x, tf.float32)),
    )


@same_as_tf(
    "signal.rfft", "signal.irfft", "signal.rfft2d", "signal.irfft2d", "signal.rfft3d", "signal.irfft3d", edge=True
)
def test_rfft_of_complex_is_refused(tf):
    return tf.signal.rfft(tf.constant(np.array([1 + 1j, 2.0])))


@same_as_tf("signal.rfft", "signal.irfft", "signal.irfft2d", edge=True)
def test_real_transforms_of_empty(tf):
    return (
        tf.signal.rfft(tf.zeros([2, 0])),
        tf.signal.irfft(tf.zeros([0, 3], tf.complex64)),
        tf.signal.irfft2d(tf.zeros([0, 3, 3], tf.complex64)),
    )


@same_as_tf("signal.fftshift", "signal.ifftshift")
def test_fftshift(tf):
    x = tf.reshape(tf.range(15), [3, 5])
    return (
        tf.signal.fftshift(x),
        tf.signal.ifftshift(x),
        tf.signal.fftshift(x, axes=1),
        tf.signal.ifftshift(x, axes=[0]),
    )


@same_as_tf("signal.fftshift", "signal.ifftshift", edge=True)
def test_fftshift_of_empty(tf):
    return tf.signal.fftshift(tf.zeros([0, 3])), tf.signal.ifftshift(tf.zeros([4, 0]), axes=1)


@pytest.mark.parametrize("kind", [1, 2, 3, 4])
@same_as_tf("signal.dct", "signal.idct")
def test_dct(tf, kind):
    x = tf.constant(SIGNAL[:24].reshape(3, 8))
    out = (
        tf.signal.dct(x, type=kind),
        tf.signal.idct(x, type=kind),
        tf.signal.dct(tf.cast(x, tf.float32), type=kind, n=6),
    )
    if kind != 1:
        out += (
            tf.signal.dct(x, type=kind, norm="ortho"),
            tf.signal.idct(tf.signal.dct(x, type=kind, norm="ortho"), type=kind, norm="ortho"),
        )
    return out


@same_as_tf("signal.dct", "signal.idct", edge=True)
def test_dct_type_1_has_no_ortho(tf):
    return tf.signal.dct(tf.ones([4]), type=1, norm="ortho")


@same_as_tf("signal.dct", "signal.idct", edge=True)
def test_dct_pads_to_n(tf):
    return tf.signal.dct(tf.constant([1.0, 2.0, 3.0]), n=5), tf.signal.idct(tf.constant([1.0, 2.0, 3.0]), n=2)


@same_as_tf("signal.frame")
def test_frame(tf):
    x = tf.range(10)
    return (
        tf.signal.frame(x, 4, 3),
        tf.signal.frame(x, 4, 3, pad_end=True, pad_value=-1),
        tf.signal.frame(tf.reshape(tf.range(60.0), [2, 10, 3]), 4, 2, axis=1),
    )


@same_as_tf("signal.frame", edge=True)
def test_frame_of_a_short_signal(tf):
    return tf.signal.frame(tf.range(3), 4, 3), tf.signal.frame(tf.zeros([2, 0]), 2, 1, pad_end=True)


@same_as_tf("signal.overlap_and_add")
def test_overlap_and_add(tf):
    return tf.signal.overlap_and_add(tf.reshape(tf.range(12), [3, 4]), 2), tf.signal.overlap_and_add(
        tf.ones([2, 3, 5]), 5
    )


@same_as_tf("signal.overlap_and_add", edge=True)
def test_overlap_and_add_of_a_vector_is_refused(tf):
    return tf.signal.overlap_and_add(tf.ones([4]), 2)


@pytest.mark.parametrize("periodic", [True, False])
@same_as_tf("signal.hann_window", "signal.hamming_window")
def test_raised_cosine_windows(tf, periodic):
    return tuple(
        f(n, periodic=periodic) for f in (tf.signal.hann_window, tf.signal.hamming_window) for n in (1, 5, 8)
    ) + (tf.signal.hann_window(6, dtype=tf.float64),)


@same_as_tf(
    "signal.hann_window",
    "signal.hamming_window",
    "signal.kaiser_window",
    "signal.vorbis_window",
    "signal.kaiser_bessel_derived_window",
    edge=True,
)
def test_windows_of_ints_are_refused(tf):
    return tf.signal.hann_window(4, dtype=tf.int32)


@same_as_tf("signal.kaiser_window", "signal.kaiser_bessel_derived_window", "signal.vorbis_window")
def test_other_windows(tf):
    return (
        tf.signal.kaiser_window(7),
        tf.signal.kaiser_window(6, beta=3.0, dtype=tf.float64),
        tf.signal.kaiser_bessel_derived_window(8),
        tf.signal.kaiser_bessel_derived_window(5, beta=4.0),
        tf.signal.vorbis_window(8),
        tf.signal.vorbis_window(5, dtype=tf.float64),
    )


@same_as_tf(
    "signal.kaiser_window",
    "signal.kaiser_bessel_derived_window",
    "signal.vorbis_window",
    "signal.hann_window",
    edge=True,
)
def test_windows_of_length_zero_and_one(tf):
    return (
        tf.signal.kaiser_window(1),
        tf.signal.vorbis_window(0),
        tf.signal.kaiser_bessel_derived_window(1),
        tf.signal.hann_window(0),
    )


@same_as_tf("signal.stft", "signal.inverse_stft", "signal.inverse_stft_window_fn")
def test_stft_round_trip(tf):
    x = tf.constant(np.stack([SIGNAL, SIGNAL[::-1]]), tf.float32)
    spectrum = tf.signal.stft(x, frame_length=16, frame_step=4)
    window = tf.signal.inverse_stft_window_fn(4)
    back = tf.signal.inverse_stft(spectrum, frame_length=16, frame_step=4, window_fn=window)
    return spectrum, back, window(16, tf.float32), tf.signal.stft(x, 12, 5, fft_length=32, pad_end=True, window_fn=None)


@same_as_tf("signal.stft", "signal.inverse_stft", "signal.inverse_stft_window_fn", edge=True)
def test_stft_frame_longer_than_fft(tf):
    x = tf.constant(SIGNAL, tf.float64)
    spectrum = tf.signal.stft(x, frame_length=10, frame_step=3, fft_length=8)
    window = tf.signal.inverse_stft_window_fn(3, forward_window_fn=tf.signal.hamming_window)
    return (
        spectrum,
        tf.signal.inverse_stft(spectrum, 10, 3, fft_length=8, window_fn=window),
        tf.signal.stft(tf.zeros([0, 8]), 4, 2),
    )


@pytest.mark.parametrize("norm", [None, "ortho"])
@same_as_tf("signal.mdct", "signal.inverse_mdct")
def test_mdct(tf, norm):
    x = tf.constant(SIGNAL, tf.float64)
    coefficients = tf.signal.mdct(x, 16, norm=norm)
    return (
        coefficients,
        tf.signal.inverse_mdct(coefficients, norm=norm),
        tf.signal.mdct(x, 8, window_fn=None, pad_end=True),
    )


@same_as_tf("signal.mdct", "signal.inverse_mdct", edge=True)
def test_mdct_frame_length_must_be_a_multiple_of_4(tf):
    return tf.signal.mdct(tf.ones([16]), 6)


# atol: float32 mel values 2 ulp apart (TF's and torch's float32 log round differently).
@same_as_tf("signal.linear_to_mel_weight_matrix", "signal.mfccs_from_log_mel_spectrograms", atol=1e-5)
def test_mel_and_mfcc(tf):
    mel = tf.signal.linear_to_mel_weight_matrix(8, 33, 16000, 80.0, 7600.0, dtype=tf.float64)
    spectrum = tf.abs(tf.signal.stft(tf.constant(np.stack([SIGNAL, SIGNAL * 2]), tf.float64), 64, 32))
    log_mel = tf.math.log(tf.matmul(spectrum, mel) + 1e-6)
    return mel, tf.signal.linear_to_mel_weight_matrix(), tf.signal.mfccs_from_log_mel_spectrograms(log_mel)


@same_as_tf("signal.linear_to_mel_weight_matrix", "signal.mfccs_from_log_mel_spectrograms", edge=True)
def test_mel_upper_edge_above_nyquist_is_refused(tf):
    return tf.signal.linear_to_mel_weight_matrix(4, 5, 100, 10.0, 60.0)


@same_as_tf("signal.mfccs_from_log_mel_spectrograms", edge=True)
def test_mfcc_of_no_bins_is_refused(tf):
    return tf.signal.mfccs_from_log_mel_spectrograms(tf.zeros([2, 0]))


@same_as_tf("signal.stft", "signal.dct", "signal.frame", "signal.overlap_and_add")
def test_gradients_flow_as_in_tf(tf):
    x = tf.Variable(tf.constant(SIGNAL, tf.float64))
    with tf.GradientTape(persistent=True) as tape:
        losses = (
            tf.reduce_sum(tf.abs(tf.signal.stft(x, 16, 8))),
            tf.reduce_sum(tf.signal.dct(x, norm="ortho") ** 2),
            tf.reduce_sum(tf.signal.overlap_and_add(tf.signal.frame(x, 8, 4), 4) ** 2),
        )
    return tuple(tape.gradient(loss, x) for loss in losses)


@same_as_tf("signal.fft", edge=True, match=r"fft.*rank")
def test_fft_of_a_scalar(tf):
    return tf.signal.fft(tf.constant(1 + 2j, tf.complex64))


@same_as_tf("signal.frame", edge=True)
def test_frame_of_strings(tf):
    words = tf.constant([["a", "b", "c", "d", "e"]])
    return tf.signal.frame(words, 2, 2), tf.signal.frame(words, 2, 2, pad_end=True, pad_value="x")


@same_as_tf("signal.overlap_and_add", edge=True)
def test_overlap_and_add_of_bools_is_refused(tf):
    return tf.signal.overlap_and_add(tf.ones([2, 3], tf.bool), 1)


@same_as_tf("signal.stft", "signal.rfft", edge=True)
def test_stft_of_a_signal_shorter_than_a_frame(tf):
    return tf.signal.stft(tf.zeros([5]), 12, 5)


@same_as_tf("signal.hann_window", "signal.vorbis_window", edge=True)
def test_negative_window_length(tf):
    return tf.signal.hann_window(-1)


@same_as_tf("signal.dct", edge=True)
def test_dct_of_half_is_refused(tf):
    return tf.signal.dct(tf.constant([1.0, 2.0], tf.float16))


@same_as_tf("signal.dct", "signal.idct", edge=True)
def test_dct_of_an_empty_batch(tf):
    return tf.signal.dct(tf.zeros([0, 4]), type=1), tf.signal.idct(tf.zeros([0, 4]))
