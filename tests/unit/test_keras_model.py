"""The Keras front end on one replica: fit/evaluate/predict, data kinds, weights, summary."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf


def _data(n: int = 256, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype("float32")
    return x, (x[:, 0] + x[:, 1] > 0).astype("int64")


def _model(out: int = 2, act: str = "softmax") -> tf.keras.Sequential:
    torch.manual_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(6,)),
            tf.keras.layers.Dense(16, activation="relu"),
            tf.keras.layers.Dense(out, activation=act),
        ]
    )
    return model


def test_fit_learns_and_history_has_keras_keys() -> None:
    x, y = _data()
    model = _model()
    model.compile(
        optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", metrics=["accuracy"]
    )
    history = model.fit(x, y, epochs=5, batch_size=32, validation_split=0.25, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert len(history.history["loss"]) == 5
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.85
    loss, acc = model.evaluate(x, y, verbose=0)
    assert 0 <= loss < history.history["loss"][0] and acc > 0.85
    assert model.evaluate(x, y, verbose=0, return_dict=True)["accuracy"] == pytest.approx(acc)


def test_reported_metrics_are_per_sample_means_over_the_epoch() -> None:
    x, y = _data(50)
    model = _model()
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    # learning rate 0 keeps the weights fixed, so the epoch metrics equal a plain evaluation
    model.optimizer.learning_rate = 1e-12
    history = model.fit(x, y, epochs=1, batch_size=16, verbose=0, shuffle=False)
    with torch.no_grad():
        probs = model(torch.from_numpy(x))
    expected_loss = torch.nn.functional.nll_loss(probs.log(), torch.from_numpy(y)).item()
    expected_acc = (probs.argmax(1).numpy() == y).mean()
    assert history.history["loss"][0] == pytest.approx(expected_loss, rel=1e-4)
    assert history.history["accuracy"][0] == pytest.approx(expected_acc)


def test_predict_returns_numpy_in_order() -> None:
    x, _ = _data(37)
    model = _model()
    out = model.predict(x, batch_size=8, verbose=0)
    assert isinstance(out, np.ndarray) and out.shape == (37, 2)
    with torch.no_grad():
        assert np.allclose(out, model(torch.from_numpy(x)).numpy(), atol=1e-6)


def test_fit_accepts_dataset_dataloader_and_batch_list() -> None:
    x, y = _data(64)
    tensors = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    sources = [
        tensors,
        torch.utils.data.DataLoader(tensors, batch_size=16),
        [(x[i : i + 16], y[i : i + 16]) for i in range(0, 64, 16)],
    ]
    for source in sources:
        model = _model()
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        history = model.fit(source, epochs=2, verbose=0, batch_size=16)
        assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()


def test_steps_per_epoch_initial_epoch_and_validation_freq() -> None:
    x, y = _data(64)
    model = _model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    history = model.fit(
        x,
        y,
        batch_size=16,
        epochs=4,
        initial_epoch=1,
        steps_per_epoch=3,
        validation_data=(x, y),
        validation_freq=2,
        verbose=0,
    )
    assert history.epoch == [1, 2, 3]
    assert len(history.history["val_loss"]) == 2  # epochs 2 and 4 (1-based) validate


def test_save_and_load_weights_roundtrip(tmp_path) -> None:
    x, y = _data(32)
    model = _model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, verbose=0)
    path = tmp_path / "w.weights.h5"
    model.save_weights(path)
    other = _model()
    torch.manual_seed(123)
    other.set_weights([w * 0 for w in other.get_weights()])
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        assert np.array_equal(a, b)
    assert not list(tmp_path.glob(".tmp-*"))
    with pytest.raises(FileNotFoundError):
        other.load_weights(tmp_path / "missing.pt")


def test_summary_lists_layers_shapes_and_params() -> None:
    lines: list[str] = []
    model = _model()
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "(None, 16)" in text and "(None, 2)" in text
    assert "Total params: 146" in text


def test_wrapping_a_torch_module_and_binary_problem() -> None:
    x, y = _data()
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1), torch.nn.Sigmoid())
    model = tf.keras.Model(module)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y.astype("float32").reshape(-1, 1), epochs=5, verbose=0)
    assert history.history["accuracy"][-1] > 0.85


def test_cnn_layers_train_on_channels_last_images() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 8, 8, 1)).astype("float32")
    y = (x.mean(axis=(1, 2, 3)) > 0).astype("int64")
    torch.manual_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(4, 3, padding="same", activation="relu", input_shape=(8, 8, 1)),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.AveragePooling2D(padding="same"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dropout(0.1),
            tf.keras.layers.Dense(2, activation="softmax"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=20, batch_size=16, verbose=0)
    assert min(history.history["loss"][-3:]) < 0.8 * history.history["loss"][0]
    assert model.predict(x[:3], verbose=0).shape == (3, 2)


def test_embedding_reshape_global_pooling_shapes() -> None:
    emb = tf.keras.layers.Embedding(10, 4)
    assert emb(torch.tensor([[1, 2, 3]])).shape == (1, 3, 4)
    with pytest.raises(ValueError, match="outside"):
        emb(torch.tensor([[10]]))
    assert tf.keras.layers.Reshape((2, -1))(torch.zeros(3, 8)).shape == (3, 2, 4)
    assert tf.keras.layers.GlobalAveragePooling2D()(torch.ones(2, 3, 3, 5)).shape == (2, 5)
    assert tf.keras.layers.Activation("relu")(torch.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]


def test_glorot_uniform_kernel_and_zero_bias_by_default() -> None:
    torch.manual_seed(0)
    layer = tf.keras.layers.Dense(200)
    layer(torch.zeros(1, 300))
    limit = (6 / (300 + 200)) ** 0.5
    assert float(layer.kernel.abs().max()) <= limit
    assert float(layer.kernel.abs().max()) > 0.9 * limit
    assert float(layer.bias.abs().max()) == 0.0


def test_callbacks_run_inside_fit(tmp_path) -> None:
    x, y = _data(64)
    model = _model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    csv = tmp_path / "log.csv"
    cbs = [
        tf.keras.callbacks.CSVLogger(str(csv)),
        tf.keras.callbacks.ModelCheckpoint(
            str(tmp_path / "ckpt-{epoch:02d}.pt"), save_weights_only=True, monitor="loss"
        ),
        tf.keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10.0),
    ]
    history = model.fit(x, y, epochs=5, verbose=0, callbacks=cbs)
    assert len(history.epoch) == 2  # stopped by EarlyStopping after patience 0
    assert len(csv.read_text().strip().splitlines()) == 3
    assert sorted(p.name for p in tmp_path.glob("ckpt-*")) == ["ckpt-01.pt", "ckpt-02.pt"]
