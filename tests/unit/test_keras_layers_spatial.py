"""The issue-35 layers' own behaviour and errors (their values are compared with Keras in
tests/conformance/test_vs_keras_layers_spatial.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import layers

pytestmark = pytest.mark.timeout(120)

# (layer factory, an input of the wrong rank, the rank the message names)
WRONG_RANK = [
    (lambda: layers.Conv3D(2, 2), (1, 4, 4, 2), "expected ndim=5"),
    (lambda: layers.Conv1DTranspose(2, 2), (1, 4, 4, 2), "expected ndim=3"),
    (lambda: layers.Conv3DTranspose(2, 2), (1, 4, 2), "expected ndim=5"),
    (lambda: layers.SeparableConv1D(2, 2), (1, 4, 4, 2), "expected ndim=3"),
    (lambda: layers.DepthwiseConv1D(2), (1, 4, 4, 2), "expected ndim=3"),
    (lambda: layers.MaxPooling3D(), (1, 4, 4, 2), "expected ndim=5"),
    (lambda: layers.AveragePooling3D(), (1, 4, 2), "expected ndim=5"),
    (lambda: layers.GlobalAveragePooling3D(), (1, 4, 4, 2), "expected ndim=5"),
    (lambda: layers.GlobalMaxPooling3D(), (1, 4, 4, 2), "expected ndim=5"),
    (lambda: layers.AdaptiveAveragePooling2D(2), (1, 4, 2), "expected ndim=4"),
    (lambda: layers.AdaptiveMaxPooling1D(2), (1, 4, 4, 2), "expected ndim=3"),
    (lambda: layers.AdaptiveMaxPooling3D(2), (1, 4, 4, 2), "expected ndim=5"),
    (lambda: layers.Cropping3D(1), (1, 4, 4, 2), "expected ndim=5"),
    (lambda: layers.ZeroPadding3D(1), (1, 4, 4, 2), "expected ndim=5"),
    (lambda: layers.UpSampling3D(2), (1, 4, 4, 2), "expected ndim=5"),
    (lambda: layers.ConvLSTM2D(2, 2), (1, 3, 4, 2), "expected ndim=5"),
    (lambda: layers.ConvLSTM1D(2, 2), (1, 3, 4, 4, 2), "expected ndim=4"),
    (lambda: layers.ConvLSTM3D(2, 2), (1, 3, 4, 4, 2), "expected ndim=6"),
    (lambda: layers.LocallyConnected1D(2, 2), (1, 4, 4, 2), "expected ndim=3"),
    (lambda: layers.LocallyConnected2D(2, 2), (1, 4, 2), "expected ndim=4"),
]


@pytest.mark.parametrize(("make", "shape", "message"), WRONG_RANK)
def test_an_input_of_the_wrong_rank_is_named(make, shape, message):
    with pytest.raises(ValueError, match=message):
        make()(torch.zeros(shape))


def test_spatial_dropout3d_wants_rank_5():
    with pytest.raises(ValueError, match="rank 5"):
        layers.SpatialDropout3D(0.5)(torch.zeros(1, 4, 4, 2), training=True)


BAD_ARGUMENTS = [
    (lambda: layers.Conv3D(2, (2, 2)), "kernel_size must be an int or a tuple of 3 ints"),
    (lambda: layers.Conv3D(2, 0), "kernel_size"),
    (lambda: layers.Conv3D(3, 2, groups=2), "divisible by the number of groups"),
    (lambda: layers.Conv3D(2, 2, strides=2, dilation_rate=2), "not compatible with `dilation_rate > 1`"),
    (lambda: layers.Conv3D(2, 2, padding="causal"), "padding must be 'valid' or 'same'"),
    (lambda: layers.Conv1DTranspose(2, 3, strides=2, output_padding=2), "output_padding must be smaller"),
    (lambda: layers.Conv3DTranspose(2, 3, strides=(1, 2)), "strides must be an int or a tuple of 3 ints"),
    (lambda: layers.SeparableConv1D(0, 3), "filters must be a positive integer"),
    (lambda: layers.DepthwiseConv1D(3, depth_multiplier=0), "depth_multiplier"),
    (lambda: layers.MaxPooling3D((2, 2)), "pool_size must be an int or a tuple of 3 ints"),
    (lambda: layers.AdaptiveAveragePooling2D((2, 2, 2)), "output_size must be an int or a tuple of 2 ints"),
    (lambda: layers.Cropping3D(((1, 1), (1, 1))), "`cropping` should be"),
    (lambda: layers.ZeroPadding3D(-1), "`padding` should be"),
    (lambda: layers.UpSampling3D(0), "size"),
    (lambda: layers.SpatialDropout3D(1.5), "rate"),
    (lambda: layers.ConvLSTM2D(2, 3, strides=2, dilation_rate=2), "not compatible"),
    (lambda: layers.ConvLSTM2D(2, 3, dropout=1.0), "dropout"),
    (lambda: layers.LocallyConnected1D(2, 3, padding="same"), 'only "valid"'),
    (lambda: layers.LocallyConnected2D(2, 3, implementation=2), "implementation=1"),
    (lambda: layers.ThresholdedReLU(-1.0), "should be >=0"),
    (lambda: layers.ThresholdedReLU(None), "cannot be None"),
    (lambda: layers.Conv3D(2, 2, data_format="NCDHW"), "data_format"),
]


@pytest.mark.parametrize(("make", "message"), BAD_ARGUMENTS)
def test_a_bad_argument_says_what_was_expected(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_channels_that_change_after_build_are_named():
    layer = layers.Conv3D(2, 1)
    layer(torch.zeros(1, 2, 2, 2, 3))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        layer(torch.zeros(1, 2, 2, 2, 4))


def test_cropping_everything_is_an_error():
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping3D(((1, 1), (0, 0), (0, 0)))(torch.zeros(1, 2, 3, 3, 1))


def test_a_locally_connected_output_of_no_positions_is_an_error():
    with pytest.raises(ValueError, match="output is <= 0"):
        layers.LocallyConnected1D(2, 5)(torch.zeros(1, 3, 2))


def test_conv_lstm_initial_state_must_be_two_tensors_of_the_state_shape():
    layer = layers.ConvLSTM2D(2, 3, padding="same")
    x = torch.zeros(1, 2, 4, 4, 1)
    with pytest.raises(ValueError, match="takes 2 initial states"):
        layer(x, initial_state=[torch.zeros(1, 4, 4, 2)])
    with pytest.raises(ValueError, match="initial state must have shape"):
        layer(x, initial_state=[torch.zeros(1, 3, 3, 2), torch.zeros(1, 3, 3, 2)])
    h = torch.ones(1, 4, 4, 2)
    out = layer(x, initial_state=[h, h])
    assert not torch.equal(out, layer(x))  # the state was used


def test_conv_lstm_forget_bias_starts_at_one_and_states_carry_when_stateful():
    layer = layers.ConvLSTM1D(3, 2, stateful=True, padding="same")
    x = torch.ones(2, 3, 5, 1)
    first = layer(x)
    np.testing.assert_array_equal(layer.bias.detach().numpy(), [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    second = layer(x)
    assert not torch.allclose(first, second)  # the second call starts from the first's states
    layer.reset_states()
    torch.testing.assert_close(layer(x), first)


def test_conv_lstm_gradients_reach_every_weight():
    layer = layers.ConvLSTM2D(2, 2, return_sequences=True)
    layer(torch.randn(2, 3, 4, 4, 2)).square().sum().backward()
    assert all(
        w.grad is not None and w.grad.abs().sum() > 0 for w in (layer.kernel, layer.recurrent_kernel, layer.bias)
    )


def test_spatial_dropout3d_drops_whole_channels_in_both_formats():
    torch.manual_seed(0)
    last = layers.SpatialDropout3D(0.5, seed=1)(torch.ones(4, 2, 3, 2, 8), training=True)
    per_channel = last.reshape(4, -1, 8)
    assert torch.all(per_channel == per_channel[:, :1])  # one draw per example and channel
    first = layers.SpatialDropout3D(0.5, seed=1, data_format="channels_first")(torch.ones(4, 8, 2, 3, 2), training=True)
    flat = first.reshape(4, 8, -1)
    assert torch.all(flat == flat[:, :, :1])
    assert set(torch.unique(first).tolist()) <= {0.0, 2.0}


def test_a_3d_model_trains_and_its_config_rebuilds_it():
    model = keras.Sequential(
        [
            keras.Input((4, 6, 6, 2)),
            layers.Conv3D(4, 3, padding="same", activation="relu"),
            layers.MaxPooling3D(2),
            layers.Conv3DTranspose(2, 2, strides=2),
            layers.GlobalAveragePooling3D(),
            layers.Dense(1),
        ]
    )
    model.compile(optimizer="adam", loss="mse")
    x = np.random.default_rng(0).normal(size=(8, 4, 6, 6, 2)).astype("float32")
    y = x.mean(axis=(1, 2, 3, 4))[:, None]
    history = model.fit(x, y, epochs=3, batch_size=4, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    clone = keras.Sequential.from_config(model.get_config())
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
