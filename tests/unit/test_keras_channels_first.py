"""data_format="channels_first" on the convolution, pooling, resampling, padding/cropping and
Flatten layers: on transposed inputs they compute exactly what channels_last computes (same
weights), and BatchNormalization(axis=1) normalises the channels of NCHW inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import layers

CASES = [
    (lambda f: layers.Conv2D(3, 3, padding="same", strides=2, data_format=f), (2, 7, 6, 4)),
    (lambda f: layers.Conv1D(3, 3, padding="causal", data_format=f), (2, 6, 4)),
    (lambda f: layers.Conv2DTranspose(3, 3, strides=2, data_format=f), (2, 5, 5, 4)),
    (lambda f: layers.SeparableConv2D(3, 3, data_format=f), (2, 6, 6, 4)),
    (lambda f: layers.DepthwiseConv2D(3, data_format=f), (2, 6, 6, 4)),
    (lambda f: layers.MaxPooling2D(data_format=f), (2, 6, 6, 4)),
    (lambda f: layers.AveragePooling2D(padding="same", data_format=f), (2, 5, 5, 4)),
    (lambda f: layers.MaxPooling1D(data_format=f), (2, 6, 4)),
    (lambda f: layers.AveragePooling1D(data_format=f), (2, 6, 4)),
    (lambda f: layers.GlobalAveragePooling2D(data_format=f), (2, 6, 6, 4)),
    (lambda f: layers.GlobalAveragePooling2D(data_format=f, keepdims=True), (2, 6, 6, 4)),
    (lambda f: layers.GlobalMaxPooling2D(data_format=f), (2, 6, 6, 4)),
    (lambda f: layers.GlobalAveragePooling1D(data_format=f), (2, 5, 4)),
    (lambda f: layers.UpSampling2D(data_format=f), (2, 3, 3, 4)),
    (lambda f: layers.ZeroPadding2D(((1, 0), (2, 1)), data_format=f), (2, 3, 3, 4)),
    (lambda f: layers.Cropping2D(((1, 0), (0, 1)), data_format=f), (2, 3, 3, 4)),
    (lambda f: layers.ZeroPadding1D(2, data_format=f), (2, 3, 4)),
    (lambda f: layers.Flatten(data_format=f), (2, 3, 3, 4)),
]


@pytest.mark.parametrize(("make", "shape"), CASES)
def test_channels_first_equals_channels_last_on_transposed_inputs(make, shape) -> None:
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    last, first = make("channels_last"), make("channels_first")
    want = last(x)
    first(x.movedim(-1, 1))
    with torch.no_grad():
        for src, dst in zip(last.parameters(), first.parameters()):
            assert src.shape == dst.shape  # kernels keep Keras's layout in both formats
            dst.copy_(src)
    got = first(x.movedim(-1, 1))
    expected = want.movedim(-1, 1) if want.dim() >= 3 and not isinstance(first, layers.Flatten) else want
    torch.testing.assert_close(got, expected)


def test_backend_image_data_format_is_the_default() -> None:
    keras.backend.set_image_data_format("channels_first")
    try:
        layer = layers.Conv2D(2, 3)
    finally:
        keras.backend.set_image_data_format("channels_last")
    assert layer.data_format == "channels_first"
    assert tuple(layer(torch.zeros(1, 4, 5, 5)).shape) == (1, 2, 3, 3)
    assert layers.Conv2D(2, 3).data_format == "channels_last"


def test_channels_first_cnn_with_batch_norm_axis_1_trains() -> None:
    x = np.random.default_rng(0).normal(size=(8, 1, 8, 8)).astype("float32")
    model = keras.Sequential(
        [
            keras.Input((1, 8, 8)),
            layers.Conv2D(4, 3, padding="same", data_format="channels_first"),
            layers.BatchNormalization(axis=1),
            layers.MaxPooling2D(data_format="channels_first"),
            layers.Flatten(data_format="channels_first"),
            layers.Dense(2, activation="softmax"),
        ]
    )
    assert model.layers[0].output.shape == (None, 4, 8, 8)
    assert tuple(model.layers[1].gamma.shape) == (4,)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    history = model.fit(x, np.arange(8) % 2, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"][-1])
    bn = layers.BatchNormalization(axis=1)
    nchw = torch.randn(4, 3, 5, 5)
    torch.testing.assert_close(
        bn(nchw, training=True), layers.BatchNormalization()(nchw.movedim(1, -1), training=True).movedim(-1, 1)
    )
