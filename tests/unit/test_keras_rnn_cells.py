"""keras.layers.RNN(cell) with custom and built-in cells, StackedRNNCells, and stateful=True
recurrent layers, against recurrences computed by hand in numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 5, 4)).astype(np.float32)


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy()


def _simple_rnn(x: np.ndarray, k: np.ndarray, r: np.ndarray, b: np.ndarray, h: np.ndarray | None = None):
    h = np.zeros((x.shape[0], k.shape[1]), np.float32) if h is None else h
    outs = []
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ k + b + h @ r)
        outs.append(h)
    return np.stack(outs, 1), h


def _lstm(x: np.ndarray, k: np.ndarray, r: np.ndarray, b: np.ndarray):
    units = r.shape[0]
    h = c = np.zeros((x.shape[0], units), np.float32)
    for t in range(x.shape[1]):
        z = x[:, t] @ k + h @ r + b
        i, f, g, o = (z[:, j * units : (j + 1) * units] for j in range(4))
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
    return h, c


class MinimalRNNCell(keras.layers.Layer):
    """The cell of Keras's RNN guide."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="uniform", name="kernel")
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, self.units), initializer="uniform", name="recurrent_kernel"
        )

    def call(self, inputs, states):
        prev_output = states[0]
        h = keras.ops.matmul(inputs, self.kernel)
        output = h + keras.ops.matmul(prev_output, self.recurrent_kernel)
        return output, [output]


def test_custom_cell_matches_hand_computed_recurrence_and_trains() -> None:
    layer = keras.layers.RNN(MinimalRNNCell(3), return_sequences=True, return_state=True)
    seq, state = layer(torch.tensor(X))
    k, r = _numpy(layer.cell.kernel), _numpy(layer.cell.recurrent_kernel)
    h, outs = np.zeros((3, 3), np.float32), []
    for t in range(5):
        h = X[:, t] @ k + h @ r
        outs.append(h)
    np.testing.assert_allclose(_numpy(seq), np.stack(outs, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_numpy(state), h, rtol=1e-5, atol=1e-6)
    model = keras.Sequential([keras.Input((5, 4)), keras.layers.RNN(MinimalRNNCell(3)), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    assert len(model.trainable_weights) == 4
    history = model.fit(X, np.ones((3, 1), np.float32), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"][-1])


def test_builtin_cells_equal_their_layers_and_numpy() -> None:
    cell_layer = keras.layers.RNN(keras.layers.LSTMCell(2), return_state=True)
    out, h, c = cell_layer(torch.tensor(X))
    want_h, want_c = _lstm(
        X, *(_numpy(p) for p in (cell_layer.cell.kernel, cell_layer.cell.recurrent_kernel, cell_layer.cell.bias))
    )
    np.testing.assert_allclose(_numpy(out), want_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_numpy(c), want_c, rtol=1e-5, atol=1e-6)
    assert _numpy(cell_layer.cell.bias)[2:4].tolist() == [1.0, 1.0]  # unit_forget_bias
    for layer_cls, cell_cls in (
        (keras.layers.GRU, keras.layers.GRUCell),
        (keras.layers.SimpleRNN, keras.layers.SimpleRNNCell),
    ):
        layer, rnn = layer_cls(3, return_sequences=True), keras.layers.RNN(cell_cls(3), return_sequences=True)
        layer(torch.tensor(X)), rnn(torch.tensor(X))
        with torch.no_grad():
            for src, dst in zip(layer.parameters(), rnn.parameters()):
                dst.copy_(src)
        np.testing.assert_allclose(_numpy(rnn(torch.tensor(X))), _numpy(layer(torch.tensor(X))), rtol=1e-5, atol=1e-6)
    gru = keras.layers.RNN(keras.layers.GRUCell(2, reset_after=False))
    gru(torch.tensor(X))
    assert tuple(gru.cell.bias.shape) == (6,)


def test_go_backwards_and_masks_follow_keras() -> None:
    rnn = keras.layers.RNN(keras.layers.SimpleRNNCell(2), return_sequences=True, go_backwards=True)
    seq = rnn(torch.tensor(X))
    k, r, b = (_numpy(p) for p in (rnn.cell.kernel, rnn.cell.recurrent_kernel, rnn.cell.bias))
    np.testing.assert_allclose(_numpy(seq), _simple_rnn(X[:, ::-1], k, r, b)[0], rtol=1e-5, atol=1e-6)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], dtype=torch.bool)
    fwd = keras.layers.RNN(keras.layers.SimpleRNNCell(2), return_sequences=True, return_state=True)
    seq, state = fwd(torch.tensor(X), mask=mask)
    k, r, b = (_numpy(p) for p in (fwd.cell.kernel, fwd.cell.recurrent_kernel, fwd.cell.bias))
    for row, length in enumerate((3, 5, 1)):
        outs, last = _simple_rnn(X[row : row + 1, :length], k, r, b)
        np.testing.assert_allclose(_numpy(state)[row], last[0], rtol=1e-5, atol=1e-6)
        held = _numpy(seq)[row, length:]  # masked steps repeat the last real output
        np.testing.assert_allclose(held, np.repeat(outs[0, -1:], 5 - length, axis=0), rtol=1e-5, atol=1e-6)


def test_stacked_cells_and_cell_lists() -> None:
    rnn = keras.layers.RNN([keras.layers.SimpleRNNCell(3), keras.layers.LSTMCell(2)], return_state=True)
    out, [first], (h, c) = rnn(torch.tensor(X))  # Keras 3: each built-in cell's states are a list
    assert tuple(out.shape) == (3, 2) and tuple(first.shape) == (3, 3) and tuple(c.shape) == (3, 2)
    assert torch.equal(out, h)
    cells = rnn.cell.cells
    seq1, _ = _simple_rnn(X, *(_numpy(p) for p in (cells[0].kernel, cells[0].recurrent_kernel, cells[0].bias)))
    want_h, _ = _lstm(seq1, *(_numpy(p) for p in (cells[1].kernel, cells[1].recurrent_kernel, cells[1].bias)))
    np.testing.assert_allclose(_numpy(out), want_h, rtol=1e-5, atol=1e-6)
    assert keras.layers.StackedRNNCells([keras.layers.GRUCell(4), keras.layers.LSTMCell(5)]).state_size == [4, [5, 5]]


def test_bad_cells_are_named() -> None:
    with pytest.raises(ValueError, match="should have a `call` method and a `state_size` attribute"):
        keras.layers.RNN(keras.layers.Dense(3))
    with pytest.raises(ValueError, match="expected ndim>=3"):
        keras.layers.RNN(keras.layers.SimpleRNNCell(2))(torch.zeros(2, 3))


@pytest.mark.parametrize(
    "make",
    [
        lambda: keras.layers.LSTM(3, stateful=True),
        lambda: keras.layers.GRU(3, stateful=True),
        lambda: keras.layers.SimpleRNN(3, stateful=True),
        lambda: keras.layers.RNN(keras.layers.LSTMCell(3), stateful=True),
    ],
)
def test_stateful_layers_continue_across_batches_until_reset(make) -> None:
    layer = make()
    x = torch.tensor(X)
    whole = layer(x)
    layer.reset_states()
    first = layer(x[:, :2])
    second = layer(x[:, 2:])  # continues from the states after step 2
    np.testing.assert_allclose(_numpy(second), _numpy(whole), rtol=1e-5, atol=1e-6)
    assert not np.allclose(_numpy(first), _numpy(second))
    layer.reset_states()  # zeros: the next batch starts fresh
    np.testing.assert_allclose(_numpy(layer(x[:, :2])), _numpy(first), rtol=1e-6)
    layer.reset_state()
    layer(x[:, :2])
    with pytest.raises(ValueError, match="holds the states of 3 sample"):
        layer(x[:2, :2])


def test_stateful_in_fit_and_model_reset_states() -> None:
    model = keras.Sequential([keras.Input((5, 4)), keras.layers.LSTM(2, stateful=True), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(X, np.zeros((3, 1), np.float32), batch_size=3, epochs=2, shuffle=False, verbose=0)
    lstm = model.layers[0]
    assert lstm.states[0] is not None and tuple(lstm.states[0].shape) == (3, 2)
    model.reset_states()
    # as in Keras: zeros of the held shape, usable as another layer's initial_state (TF's RNN guide)
    assert [tuple(s.shape) for s in lstm.states] == [(3, 2), (3, 2)]
    assert all(float(torch.abs(s).sum()) == 0.0 for s in lstm.states)
    other = keras.layers.LSTM(2)
    assert tuple(other(torch.tensor(X), initial_state=lstm.states).shape) == (3, 2)
    lstm(torch.tensor(X[:2]))  # after a reset, a batch of another size starts from fresh zeros
    assert tuple(lstm.states[0].shape) == (2, 2)
    with pytest.raises(ValueError, match="holds the states of 2 sample"):
        lstm(torch.tensor(X))  # but without a reset it still refuses
    lstm.reset_states()
    lstm.reset_states([np.ones((3, 2)), np.zeros((3, 2))])  # Keras 2: set given values
    lstm(torch.tensor(X))  # uses them
    with pytest.raises(ValueError, match="expects 2 state"):
        lstm.reset_states([np.ones((3, 2))])


@pytest.mark.parametrize(
    "cell", [lambda: keras.layers.LSTMCell(4), lambda: [keras.layers.GRUCell(3), keras.layers.SimpleRNNCell(2)]]
)
def test_rnn_of_builtin_cells_saves_and_loads(cell, tmp_path) -> None:
    model = keras.Sequential(
        [keras.Input((5, 4)), keras.layers.RNN(cell(), return_sequences=True), keras.layers.Dense(1)]
    )
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded.predict(X, verbose=0), model.predict(X, verbose=0), rtol=1e-6)
