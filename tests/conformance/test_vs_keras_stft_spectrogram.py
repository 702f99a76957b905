"""Keras 3's ``STFTSpectrogram`` on unison against Keras 3.15: every mode, padding, window, layout."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_SIGNAL = (np.sin(np.arange(2 * 80 * 2) * 0.37) + np.cos(np.arange(2 * 80 * 2) * 1.1) * 0.5).reshape(2, 80, 2)
_SIGNAL = _SIGNAL.astype(np.float32)


def _np(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "log", "frame_length": 16},
        {"mode": "magnitude", "frame_length": 16, "frame_step": 5, "padding": "same", "expand_dims": True},
        {"mode": "psd", "frame_length": 12, "fft_length": 16, "window": "hamming", "periodic": True},
        {"mode": "real", "frame_length": 16, "scaling": "spectrum", "window": None},
        {"mode": "imag", "frame_length": 10, "frame_step": 3, "padding": "same"},
        {"mode": "stft", "frame_length": 8, "scaling": None, "expand_dims": True, "data_format": "channels_first"},
    ],
)
@same_as_tf("keras:layers.STFTSpectrogram", atol=2e-4, rtol=1e-4)
def test_stft_spectrogram_modes(tf, kwargs):
    layer = tf.keras.layers.STFTSpectrogram(**kwargs)
    first = kwargs.get("data_format") == "channels_first"
    x = tf.constant(_SIGNAL.transpose(0, 2, 1) if first else _SIGNAL)
    out = layer(x)
    clone = type(layer).from_config(layer.get_config())
    config = {k: v for k, v in layer.get_config().items() if k not in ("dtype", "name")}
    return (
        _np(out),
        _np(clone(x)),
        [tuple(w.shape) for w in layer.weights],
        [w.name.split(":")[0] for w in layer.weights],
        config,
        sorted(layer.get_config()),
    )


@same_as_tf("keras:layers.STFTSpectrogram", atol=2e-4, rtol=1e-4)
def test_stft_spectrogram_angle(tf):
    angle = _np(tf.keras.layers.STFTSpectrogram(mode="angle", frame_length=8, window=None)(tf.constant(_SIGNAL)))
    # by cosine and sine: a real bin's angle is +pi or -pi by the sign of a rounding error
    return np.cos(angle), np.sin(angle)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"frame_length": 8, "frame_step": 9},
        {"frame_length": 16, "fft_length": 8},
        {"mode": "power"},
        {"scaling": "energy"},
        {"padding": "causal"},
    ],
)
@same_as_tf("keras:layers.STFTSpectrogram", edge=True)
def test_stft_spectrogram_bad_arguments(tf, kwargs):
    return tf.keras.layers.STFTSpectrogram(**kwargs)


@same_as_tf("keras:layers.STFTSpectrogram", edge=True)
def test_stft_spectrogram_integer_input(tf):
    return tf.keras.layers.STFTSpectrogram(frame_length=8)(tf.constant(np.ones((1, 16, 1), np.int32)))


@same_as_tf("keras:layers.STFTSpectrogram", edge=True, atol=2e-4)
def test_stft_spectrogram_short_signal_and_float64(tf):
    short = tf.keras.layers.STFTSpectrogram(frame_length=8, mode="magnitude", padding="same")(tf.ones([1, 4, 1]))
    wide = tf.keras.layers.STFTSpectrogram(frame_length=8, mode="real")(tf.constant(_SIGNAL.astype(np.float64)))
    return _np(short), _np(wide)
