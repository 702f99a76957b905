"""Keras 3's ``MelSpectrogram`` on unison against Keras 3.15 on TensorFlow 2.21, by value."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_AUDIO = (np.sin(np.arange(2 * 400) * 0.37) + 0.3 * np.cos(np.arange(2 * 400) * 1.9)).reshape(2, 400).astype(np.float32)

SETTINGS = (
    {"fft_length": 128, "sequence_stride": 32, "num_mel_bins": 16, "sampling_rate": 8000},
    {"fft_length": 64, "sequence_stride": 20, "sequence_length": 48, "num_mel_bins": 10, "window": "hamming"},
    {"fft_length": 64, "sequence_stride": 16, "num_mel_bins": 8, "power_to_db": False, "mag_exp": 1.0},
    {"fft_length": 32, "sequence_stride": 8, "num_mel_bins": 6, "window": None, "top_db": 20.0, "ref_power": 2.0},
    {"fft_length": 128, "sequence_stride": 64, "num_mel_bins": 12, "min_freq": 300.0, "max_freq": 3000.0},
)


@pytest.mark.parametrize("kwargs", SETTINGS)
@same_as_tf("keras:layers.MelSpectrogram", rtol=1e-4)  # float32 FFTs of two libraries: 4e-5 apart
def test_mel_spectrogram(tf, kwargs):
    layer = tf.keras.layers.MelSpectrogram(**kwargs)
    clone = type(layer).from_config(layer.get_config())
    out = layer(tf.constant(_AUDIO))
    return np.asarray(out), np.asarray(clone(tf.constant(_AUDIO[0]))), tuple(out.shape)


@same_as_tf("keras:layers.MelSpectrogram", edge=True)
def test_mel_spectrogram_with_a_window_longer_than_the_fft_is_an_error(tf):
    return tf.keras.layers.MelSpectrogram(fft_length=32, sequence_length=64)
