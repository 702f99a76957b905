"""Recurrent, wrapper and convolution layers against NumPy/torch references of Keras 3's equations."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import unison as tf
from unison import keras
from unison.keras import layers
from unison.keras.layers.masking import get_mask, set_mask

pytestmark = pytest.mark.timeout(120)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().numpy()


def _reference(layer: Any, x: np.ndarray, mask: np.ndarray | None = None, act: Any = np.tanh) -> tuple[Any, ...]:
    """Keras's step equations in NumPy, from the layer's Keras-layout weights; returns (outputs, *states)."""
    kernel, rec = _np(layer.kernel), _np(layer.recurrent_kernel)
    bias = _np(layer.bias) if layer.bias is not None else None
    u, (batch, steps, _) = layer.units, x.shape
    states = [np.zeros((batch, u)) for _ in range(2 if isinstance(layer, layers.LSTM) else 1)]
    order = range(steps - 1, -1, -1) if layer.go_backwards else range(steps)
    previous, outputs = np.zeros((batch, u)), []
    for t in order:
        xt = x[:, t]
        if isinstance(layer, layers.LSTM):
            h, c = states
            z = xt @ kernel + h @ rec + (bias if bias is not None else 0)
            i, f, g, o = (z[:, k * u : (k + 1) * u] for k in range(4))
            c_new = _sigmoid(f) * c + _sigmoid(i) * act(g)
            h_new = _sigmoid(o) * act(c_new)
            new = [h_new, c_new]
        elif isinstance(layer, layers.GRU):
            h = states[0]
            if layer.reset_after:
                xw = xt @ kernel + (bias[0] if bias is not None else 0)
                hu = h @ rec + (bias[1] if bias is not None else 0)
                z, r = _sigmoid(xw[:, :u] + hu[:, :u]), _sigmoid(xw[:, u : 2 * u] + hu[:, u : 2 * u])
                hh = act(xw[:, 2 * u :] + r * hu[:, 2 * u :])
            else:
                xw = xt @ kernel + (bias if bias is not None else 0)
                z = _sigmoid(xw[:, :u] + h @ rec[:, :u])
                r = _sigmoid(xw[:, u : 2 * u] + h @ rec[:, u : 2 * u])
                hh = act(xw[:, 2 * u :] + (r * h) @ rec[:, 2 * u :])
            h_new = z * h + (1 - z) * hh
            new = [h_new]
        else:
            h_new = act(xt @ kernel + states[0] @ rec + (bias if bias is not None else 0))
            new = [h_new]
        if mask is not None:
            m = mask[:, t : t + 1]
            states = [np.where(m, n, s) for n, s in zip(new, states)]
            out = np.where(m, new[0], previous)
        else:
            states, out = new, new[0]
        outputs.append(out)
        previous = out
    return (np.stack(outputs, axis=1), *states)


def _randomize(layer: Any) -> None:
    with torch.no_grad():
        for p in layer.parameters():
            p.uniform_(-0.6, 0.6)


# --- recurrent layers ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.LSTM(5, return_sequences=True, return_state=True),
        lambda: layers.GRU(5, return_sequences=True, return_state=True),
        lambda: layers.GRU(5, return_sequences=True, return_state=True, reset_after=False),
        lambda: layers.SimpleRNN(5, return_sequences=True, return_state=True),
        lambda: layers.LSTM(5, return_sequences=True, return_state=True, go_backwards=True, use_bias=False),
        lambda: layers.GRU(5, return_sequences=True, return_state=True, go_backwards=True),
    ],
)
def test_recurrent_layers_match_keras_equations(make: Any) -> None:
    torch.manual_seed(0)
    layer = make()
    x = torch.randn(3, 6, 4)
    result = layer(x)
    _randomize(layer)
    result = layer(x)
    expected = _reference(layer, x.double().numpy())
    assert len(result) == len(expected)
    for got, want in zip(result, expected):
        np.testing.assert_allclose(_np(got), want, atol=1e-5)


def test_weights_are_in_keras_layout_with_keras_defaults() -> None:
    x = torch.zeros(2, 3, 7)
    lstm, gru, gru_v1, rnn = layers.LSTM(4), layers.GRU(4), layers.GRU(4, reset_after=False), layers.SimpleRNN(4)
    for layer in (lstm, gru, gru_v1, rnn):
        layer(x)
    assert [tuple(w.shape) for w in lstm.weights] == [(7, 16), (4, 16), (16,)]
    assert [tuple(w.shape) for w in gru.weights] == [(7, 12), (4, 12), (2, 12)]
    assert tuple(gru_v1.bias.shape) == (12,)
    assert [tuple(w.shape) for w in rnn.weights] == [(7, 4), (4, 4), (4,)]
    assert lstm.bias.tolist() == [0.0] * 4 + [1.0] * 4 + [0.0] * 8  # unit_forget_bias
    rec = lstm.recurrent_kernel.detach()
    torch.testing.assert_close(rec @ rec.T, torch.eye(4), atol=1e-5, rtol=0)  # orthogonal rows
    for layer, base in ((lstm, "lstm"), (gru, "gru"), (rnn, "simple_rnn")):  # Keras's snake case, not l_s_t_m
        assert re.fullmatch(base + r"(_\d+)?", layer.name), layer.name


def test_other_activations_run_the_step_loop_with_the_same_equations() -> None:
    torch.manual_seed(1)
    x = torch.randn(2, 5, 3)
    for layer in (
        layers.LSTM(4, activation="relu", return_state=True),
        layers.GRU(4, activation="relu", return_state=True),
    ):
        layer(x)
        _randomize(layer)
        got = layer(x)
        want = _reference(layer, x.double().numpy(), act=_relu)
        np.testing.assert_allclose(_np(got[0]), want[0][:, -1], atol=1e-5)
        np.testing.assert_allclose(_np(got[-1]), want[-1], atol=1e-5)


@pytest.mark.parametrize("kind", ["lstm", "gru", "simple_rnn"])
@pytest.mark.parametrize("backwards", [False, True])
def test_right_padded_mask_gives_the_unpadded_result(kind: str, backwards: bool) -> None:
    torch.manual_seed(2)
    make = {"lstm": layers.LSTM, "gru": layers.GRU, "simple_rnn": layers.SimpleRNN}[kind]
    layer = make(3, return_sequences=True, return_state=True, go_backwards=backwards)
    full = torch.randn(1, 4, 2)
    padded = torch.cat([full, torch.randn(1, 3, 2) * 50], dim=1)  # garbage in the padding
    mask = torch.tensor([[True] * 4 + [False] * 3])
    alone = layer(full)
    both = layer(set_mask(padded, mask))
    for got, want in zip(both[1:], alone[1:]):
        torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-5)
    seq = both[0]
    if backwards:  # reading order: three padded steps (zeros) first, then the real ones reversed
        torch.testing.assert_close(seq[:, :3], torch.zeros(1, 3, 3))
        torch.testing.assert_close(seq[:, 3:], alone[0], atol=1e-6, rtol=1e-5)
    else:  # padded steps repeat the last real output (Keras's generic implementation)
        torch.testing.assert_close(seq[:, :4], alone[0], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(seq[:, 4:], alone[0][:, 3:4].expand(1, 3, 3), atol=1e-6, rtol=1e-5)
    assert get_mask(seq) is mask


def test_masks_with_holes_and_empty_rows_follow_keras() -> None:
    torch.manual_seed(3)
    layer = layers.LSTM(3, return_sequences=True, return_state=True)
    x = torch.randn(3, 5, 2)
    mask = np.array([[1, 0, 1, 1, 0], [0, 0, 1, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)
    layer(x)
    _randomize(layer)
    got = layer(x, mask=torch.as_tensor(mask))  # not right-padded: the step loop
    want = _reference(layer, x.double().numpy(), mask)
    for g, w in zip(got, want):
        np.testing.assert_allclose(_np(g), w, atol=1e-5)
    right = torch.tensor([[True, True, False, False, False], [False] * 5, [True] * 5])
    packed = layer(x, mask=right)  # right-padded with an empty row: the packed fused kernel
    want = _reference(layer, x.double().numpy(), right.numpy())
    for g, w in zip(packed, want):
        np.testing.assert_allclose(_np(g), w, atol=1e-5)


def test_embedding_mask_reaches_the_lstm_in_sequential() -> None:
    torch.manual_seed(4)
    model = keras.Sequential([layers.Embedding(10, 4, mask_zero=True), layers.LSTM(3)])
    short = torch.tensor([[3, 5, 2]])
    padded = torch.tensor([[3, 5, 2, 0, 0, 0]])
    torch.testing.assert_close(model(padded), model(short), atol=1e-6, rtol=1e-5)


def test_initial_state_and_recurrent_dropout() -> None:
    torch.manual_seed(5)
    layer = layers.GRU(3, return_state=True)
    x = torch.randn(2, 4, 2)
    h0 = torch.randn(2, 3)
    layer(x)
    _randomize(layer)
    out, h = layer(x, initial_state=[h0])
    steps = [x[:, :2], x[:, 2:]]
    _, h_mid = layer(steps[0], initial_state=h0)
    _, h_end = layer(steps[1], initial_state=[h_mid])
    torch.testing.assert_close(h, h_end, atol=1e-6, rtol=1e-5)
    dropped = layers.LSTM(3, dropout=0.5, recurrent_dropout=0.5, seed=7)
    x = torch.randn(8, 5, 2)
    base = dropped(x)
    torch.testing.assert_close(dropped(x, training=False), base)
    a, b = dropped(x, training=True), dropped(x, training=True)
    assert not torch.allclose(a, base) and not torch.allclose(a, b)
    again = layers.LSTM(3, dropout=0.5, recurrent_dropout=0.5, seed=7)
    again(x)
    again.load_state_dict(dropped.state_dict())
    again.random.generator.manual_seed(7)
    dropped.random.generator.manual_seed(7)
    torch.testing.assert_close(again(x, training=True), dropped(x, training=True))


def test_lstm_model_learns_with_fit() -> None:
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 8, 3)).astype("float32")
    y = (x[:, :, 0].sum(axis=1) > 0).astype("int64")
    model = keras.Sequential([keras.Input(shape=(8, 3)), layers.LSTM(8), layers.Dense(2, activation="softmax")])
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="sparse_categorical_crossentropy")
    history = model.fit(x, y, batch_size=16, epochs=6, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.8 * losses[0], losses


def test_recurrent_errors_say_what_to_do() -> None:
    with pytest.raises(ValueError, match="expected a positive integer"):
        layers.GRU(0)
    with pytest.raises(ValueError, match=r"dropout` must be a float in \[0, 1\)"):
        layers.SimpleRNN(2, dropout=1.5)
    with pytest.raises(ValueError, match="Unknown regularizer"):
        layers.LSTM(2, activity_regularizer="l3")
    with pytest.raises(ValueError, match="expected ndim=3"):
        layers.LSTM(2)(torch.zeros(2, 3))
    lstm = layers.LSTM(2)
    lstm(torch.zeros(1, 3, 4))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4"):
        lstm(torch.zeros(1, 3, 5))
    with pytest.raises(ValueError, match=r"list of 2 tensor\(s\) of shape \(1, 2\)"):
        lstm(torch.zeros(1, 3, 4), initial_state=[torch.zeros(1, 2)])
    with pytest.raises(ValueError, match=r"expected \(1, 3\) \(batch, steps\)"):
        lstm(torch.zeros(1, 3, 4), mask=torch.ones(1, 4, dtype=torch.bool))


# --- wrappers ------------------------------------------------------------------------------------
@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merge_modes(merge_mode: str | None) -> None:
    torch.manual_seed(6)
    gru = layers.GRU(3, return_sequences=True)
    bi = layers.Bidirectional(gru, merge_mode=merge_mode)
    x = torch.randn(2, 5, 4)
    out = bi(x)
    fwd, bwd = bi.forward_layer(x), bi.backward_layer(x).flip(1)
    assert bi.backward_layer.go_backwards and not bi.forward_layer.go_backwards
    assert (bi.forward_layer.name, bi.backward_layer.name) == ("forward_" + gru.name, "backward_" + gru.name)
    expected: Any = {
        "concat": torch.cat([fwd, bwd], -1),
        "sum": fwd + bwd,
        "mul": fwd * bwd,
        "ave": (fwd + bwd) / 2,
        None: [fwd, bwd],
    }[merge_mode]
    if merge_mode is None:
        torch.testing.assert_close(out[0], expected[0])
        torch.testing.assert_close(out[1], expected[1])
    else:
        torch.testing.assert_close(out, expected)


def test_bidirectional_states_masks_and_bad_arguments() -> None:
    torch.manual_seed(7)
    bi = layers.Bidirectional(layers.LSTM(3, return_state=True))
    x = torch.randn(2, 5, 4)
    out, fh, fc, bh, bc = bi(x)
    assert tuple(out.shape) == (2, 6)
    torch.testing.assert_close(out, torch.cat([fh, bh], -1))
    seq = layers.Bidirectional(layers.LSTM(3, return_sequences=True))
    mask = torch.tensor([[True, True, True, False, False], [True] * 5])
    y = seq(set_mask(x, mask))
    assert torch.count_nonzero(y[0, 3:]) == 0  # masked steps output zeros in both directions
    alone = seq(x[:1, :3])
    torch.testing.assert_close(y[:1, :3], alone, atol=1e-6, rtol=1e-5)
    with pytest.raises(ValueError, match="Invalid merge mode"):
        layers.Bidirectional(layers.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="recurrent keras layer"):
        layers.Bidirectional(layers.Dense(2))
    with pytest.raises(ValueError, match="different `go_backwards`"):
        layers.Bidirectional(layers.LSTM(2), backward_layer=layers.LSTM(2))


def test_time_distributed_applies_the_layer_per_step_and_keeps_the_mask() -> None:
    torch.manual_seed(8)
    td = layers.TimeDistributed(layers.Dense(3))
    x = torch.randn(2, 4, 5)
    mask = torch.tensor([[True, True, False, False], [True] * 4])
    y = td(set_mask(x, mask))
    per_step = torch.stack([td.layer(x[:, t]) for t in range(4)], dim=1)  # layout-independent reference
    torch.testing.assert_close(y, per_step)
    assert tuple(y.shape) == (2, 4, 3)
    assert get_mask(y) is mask
    with pytest.raises(ValueError, match="at least rank 3"):
        td(torch.zeros(2, 5))


# --- convolutions ----------------------------------------------------------------------------------
def _np_conv1d(x: np.ndarray, kernel: np.ndarray, stride: int, dilation: int, pad: tuple[int, int]) -> np.ndarray:
    x = np.pad(x, ((0, 0), (pad[0], pad[1]), (0, 0)))
    k = kernel.shape[0]
    span = (k - 1) * dilation + 1
    steps = (x.shape[1] - span) // stride + 1
    return np.stack([sum(x[:, t * stride + j * dilation] @ kernel[j] for j in range(k)) for t in range(steps)], axis=1)


@pytest.mark.parametrize(
    ("padding", "stride", "dilation", "pads"),
    [("causal", 1, 2, (4, 0)), ("same", 2, 1, (1, 1)), ("same", 1, 1, (1, 1)), ("valid", 2, 1, (0, 0))],
)
def test_conv1d_matches_numpy_with_tf_padding(padding: str, stride: int, dilation: int, pads: Any) -> None:
    torch.manual_seed(9)
    conv = layers.Conv1D(4, 3, strides=stride, padding=padding, dilation_rate=dilation, use_bias=False)
    x = torch.randn(2, 9, 3)
    y = conv(x)
    assert tuple(conv.kernel.shape) == (3, 3, 4)
    want = _np_conv1d(x.double().numpy(), _np(conv.kernel), stride, dilation, pads)
    np.testing.assert_allclose(_np(y), want, atol=1e-5)


def test_conv1d_causal_output_does_not_see_the_future_and_groups_split_channels() -> None:
    torch.manual_seed(10)
    conv = layers.Conv1D(2, 3, padding="causal")
    x = torch.randn(1, 8, 2)
    changed = x.clone()
    changed[:, 5:] += 10
    torch.testing.assert_close(conv(changed)[:, :5], conv(x)[:, :5])
    grouped = layers.Conv1D(4, 2, groups=2, use_bias=False)
    x = torch.randn(2, 6, 4)
    y = grouped(x)
    assert tuple(grouped.kernel.shape) == (2, 2, 4)
    k = _np(grouped.kernel)
    first = _np_conv1d(x[..., :2].double().numpy(), k[:, :, :2], 1, 1, (0, 0))
    second = _np_conv1d(x[..., 2:].double().numpy(), k[:, :, 2:], 1, 1, (0, 0))
    np.testing.assert_allclose(_np(y), np.concatenate([first, second], -1), atol=1e-5)
    with pytest.raises(ValueError, match="evenly divisible by the number of groups"):
        layers.Conv1D(3, 2, groups=2)


@pytest.mark.parametrize(
    ("padding", "strides", "kernel", "expected"),
    [("same", 2, 3, (10, 12)), ("same", 1, 4, (5, 6)), ("valid", 2, 3, (11, 13)), ("valid", 3, 2, (15, 18))],
)
def test_conv2d_transpose_shapes_and_adjointness(padding: str, strides: int, kernel: int, expected: Any) -> None:
    torch.manual_seed(11)
    layer = layers.Conv2DTranspose(3, kernel, strides=strides, padding=padding, use_bias=False)
    y_in = torch.randn(2, 5, 6, 4)
    out = layer(y_in)
    assert tuple(out.shape) == (2, *expected, 3) and tuple(layer.kernel.shape) == (kernel, kernel, 3, 4)
    # Conv2DTranspose is the adjoint of the TF-padded convolution (3 -> 4 channels) with the same kernel.
    z = torch.randn(2, *expected, 3)
    zc = z.permute(0, 3, 1, 2)
    if padding == "same":
        pads = []
        for size in (expected[1], expected[0]):
            total = max((-(-size // strides) - 1) * strides + kernel - size, 0)
            pads += [total // 2, total - total // 2]
        zc = F.pad(zc, pads)
    conv = F.conv2d(zc, layer.kernel.permute(3, 2, 0, 1), stride=strides)[:, :, :5, :6]
    lhs = (conv * y_in.permute(0, 3, 1, 2)).sum()
    rhs = (z * out).sum()
    torch.testing.assert_close(lhs, rhs, atol=1e-3, rtol=1e-4)


def test_conv2d_transpose_output_padding_and_its_check() -> None:
    layer = layers.Conv2DTranspose(2, 3, strides=2, padding="same", output_padding=1)
    assert tuple(layer(torch.zeros(1, 4, 4, 1)).shape) == (1, 8, 8, 2)
    layer = layers.Conv2DTranspose(2, 3, strides=2, padding="valid", output_padding=(0, 1))
    assert tuple(layer(torch.zeros(1, 4, 4, 1)).shape) == (1, 9, 10, 2)
    with pytest.raises(ValueError, match="output_padding must be smaller than the stride"):
        layers.Conv2DTranspose(2, 3, strides=2, output_padding=2)


def test_depthwise_and_separable_convolutions_match_numpy() -> None:
    torch.manual_seed(12)
    x = torch.randn(1, 5, 5, 2)
    dw = layers.DepthwiseConv2D(3, depth_multiplier=2, use_bias=False)
    y = dw(x)
    k = _np(dw.depthwise_kernel)
    assert k.shape == (3, 3, 2, 2)
    xn = x.double().numpy()
    want = np.zeros((1, 3, 3, 4))
    for i in range(3):
        for j in range(3):
            patch = xn[0, i : i + 3, j : j + 3, :]  # (3, 3, in)
            for c in range(2):
                for m in range(2):
                    want[0, i, j, c * 2 + m] = (patch[:, :, c] * k[:, :, c, m]).sum()
    np.testing.assert_allclose(_np(y), want, atol=1e-5)
    sep = layers.SeparableConv2D(3, 3, depth_multiplier=2)
    out = sep(x)
    assert tuple(sep.pointwise_kernel.shape) == (1, 1, 4, 3) and tuple(sep.bias.shape) == (3,)
    with torch.no_grad():
        sep.depthwise_kernel.copy_(dw.depthwise_kernel)
    out = sep(x)
    want_sep = want @ _np(sep.pointwise_kernel)[0, 0] + _np(sep.bias)
    np.testing.assert_allclose(_np(out), want_sep, atol=1e-5)


def test_resampling_padding_cropping_and_pooling() -> None:
    torch.manual_seed(13)
    x = torch.randn(2, 3, 4, 2)
    bilinear = layers.UpSampling2D(size=(2, 3), interpolation="bilinear")(x)
    expected = F.interpolate(x.permute(0, 3, 1, 2), size=(6, 12), mode="bilinear", align_corners=False)
    torch.testing.assert_close(bilinear, expected.permute(0, 2, 3, 1))
    nearest = layers.UpSampling2D()(x)
    torch.testing.assert_close(nearest[:, ::2, ::2], x)
    torch.testing.assert_close(nearest[:, 1::2, 1::2], x)
    padded = layers.ZeroPadding2D(((1, 0), (2, 1)))(x)
    assert tuple(padded.shape) == (2, 4, 7, 2) and padded[:, 0].abs().sum() == 0
    torch.testing.assert_close(padded[:, 1:, 2:6], x)
    torch.testing.assert_close(layers.Cropping2D(((1, 0), (1, 2)))(x), x[:, 1:, 1:2])
    seq = torch.tensor([[[1.0], [5.0], [2.0], [8.0], [3.0]]])
    assert layers.MaxPooling1D(2, padding="same")(seq).flatten().tolist() == [5.0, 8.0, 3.0]
    assert layers.AveragePooling1D(2, padding="same")(seq).flatten().tolist() == [3.0, 5.0, 3.0]
    assert layers.AvgPool1D(3, strides=1)(seq).flatten().tolist() == pytest.approx([8 / 3, 5.0, 13 / 3])
    torch.testing.assert_close(layers.GlobalMaxPool2D()(x), x.amax(dim=(1, 2)))
    assert tuple(layers.GlobalMaxPooling2D(keepdims=True)(x).shape) == (2, 1, 1, 2)


def test_bad_data_formats_and_sizes_raise_clear_errors() -> None:
    for make in (
        lambda: layers.Conv1D(2, 3, data_format="NCHW"),
        lambda: layers.UpSampling2D(data_format="channels_middle"),
        lambda: layers.GlobalMaxPooling2D(data_format=1),
    ):
        with pytest.raises(
            ValueError, match=r"`data_format` argument must be one of \['channels_last', 'channels_first'\]"
        ):
            make()
    with pytest.raises(ValueError, match="'valid', 'same' or 'causal'"):
        layers.Conv1D(2, 3, padding="full")
    with pytest.raises(ValueError, match="tuple of 2 tuples"):
        layers.ZeroPadding2D(((1, 2, 3), (1, 1)))
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping2D(2)(torch.zeros(1, 4, 4, 1))
    with pytest.raises(ValueError, match="interpolation must be one of"):
        layers.UpSampling2D(interpolation="lanczos3")
    with pytest.raises(ValueError, match="expected ndim=3"):
        layers.Conv1D(2, 3)(torch.zeros(1, 4, 4, 1))


# --- whole models ----------------------------------------------------------------------------------
def test_save_and_load_model_round_trip_with_the_new_layers(tmp_path: Any) -> None:
    tf.random.set_seed(1)
    ids = keras.Input(shape=(7,), dtype="int64")
    emb = layers.Embedding(30, 6, mask_zero=True)(ids)
    seq = layers.Bidirectional(layers.LSTM(4, return_sequences=True), merge_mode="sum")(emb)
    seq = layers.TimeDistributed(layers.Dense(5))(seq)
    conv = layers.Conv1D(4, 3, padding="causal", activation="relu")(seq)
    last, state = layers.GRU(3, return_state=True, reset_after=False)(layers.MaxPooling1D(1)(conv))
    out = layers.Dense(2, activation="softmax")(layers.Concatenate()([last, state, layers.SimpleRNN(2)(seq)]))
    model = keras.Model(ids, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    rng = np.random.default_rng(1)
    x = rng.integers(1, 30, (12, 7))
    x[:6, 4:] = 0
    model.fit(x, rng.integers(0, 2, 12), epochs=1, verbose=0)
    model.save(str(tmp_path / "rnn.keras"))
    loaded = keras.models.load_model(str(tmp_path / "rnn.keras"))
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-6)
    assert [type(m).__name__ for m in loaded.layers] == [type(m).__name__ for m in model.layers]

    images = keras.Sequential(
        [
            keras.Input(shape=(8, 8, 3)),
            layers.RandomFlip(),
            layers.RandomRotation(0.1),
            layers.Conv2DTranspose(4, 3, strides=2, padding="same"),
            layers.DepthwiseConv2D(3, depth_multiplier=2),
            layers.SeparableConv2D(4, 3, padding="same"),
            layers.PReLU(shared_axes=[1, 2]),
            layers.GroupNormalization(groups=2),
            layers.UpSampling2D(interpolation="bilinear"),
            layers.ZeroPadding2D(1),
            layers.Cropping2D(2),
            layers.SpatialDropout2D(0.2),
            layers.GlobalMaxPooling2D(),
            layers.LeakyReLU(alpha=0.1),
            layers.Dense(2),
        ]
    )
    images.compile(optimizer="adam", loss="mse")
    images.fit(rng.random((8, 8, 8, 3)), rng.random((8, 2)), epochs=1, verbose=0)
    images.save(str(tmp_path / "img.keras"))
    again = keras.models.load_model(str(tmp_path / "img.keras"))
    xi = rng.random((4, 8, 8, 3)).astype("float32")
    np.testing.assert_allclose(again.predict(xi, verbose=0), images.predict(xi, verbose=0), atol=1e-6)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: layers.LSTM(2, time_major=True), ValueError, "transpose the inputs"),
        (lambda: layers.Bidirectional(layers.LSTM(2), weights=[np.zeros(1)]), ValueError, "set_weights"),
        (
            lambda: layers.Bidirectional(
                layers.LSTM(2), backward_layer=layers.LSTM(2, go_backwards=True, return_sequences=True)
            ),
            ValueError,
            'same value for attribute "return_sequences"',
        ),
        (lambda: layers.TimeDistributed("dense"), ValueError, "keras.layers.Layer"),
        (lambda: layers.Conv1D(0, 3), ValueError, "filters must be a positive integer"),
        (lambda: layers.Conv1D(2, (3, 3)), ValueError, "kernel_size must be a positive int or a tuple of 1 int"),
        (lambda: layers.Conv1D(4, 2, groups=2)(torch.zeros(1, 5, 3)), ValueError, "input channels must be evenly"),
        (lambda: layers.MaxPooling1D()(torch.zeros(1, 5)), ValueError, "expected ndim=3"),
    ],
)
def test_more_bad_arguments_raise_clear_errors(make: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        make()


def test_conv2d_transpose_checks_channels_after_building() -> None:
    layer = layers.Conv2DTranspose(2, 3)
    layer(torch.zeros(1, 4, 4, 3))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        layer(torch.zeros(1, 4, 4, 5))


def test_subclassed_model_with_recurrent_and_noise_layers_trains_and_predicts_deterministically() -> None:
    tf.random.set_seed(2)

    class Tagger(keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.embed = layers.Embedding(20, 6, mask_zero=True)
            self.noise = layers.GaussianNoise(0.1)
            self.rnn = layers.Bidirectional(layers.GRU(4, return_sequences=True, dropout=0.3))
            self.conv = layers.Conv1D(3, 2, padding="same")
            self.pool = layers.GlobalMaxPooling1D()

        def call(self, ids: torch.Tensor, training: bool | None = None) -> torch.Tensor:
            return self.pool(self.conv(self.rnn(self.noise(self.embed(ids)), training=training)))

    model = Tagger()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    rng = np.random.default_rng(2)
    x = rng.integers(1, 20, (16, 6))
    history = model.fit(x, rng.integers(0, 3, 16), epochs=2, batch_size=8, verbose=0)
    assert len(history.history["loss"]) == 2
    first, second = model.predict(x, verbose=0), model.predict(x, verbose=0)
    np.testing.assert_array_equal(first, second)  # no noise or dropout at inference
    assert first.shape == (16, 3)
