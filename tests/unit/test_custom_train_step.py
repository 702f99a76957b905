"""A user's ``train_step``/``test_step``/``predict_step`` (Keras 3's contract) on the default strategy."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import unison as tf

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "distributed"))
from custom_step_fns import Trackers, fit_style, regression_data  # noqa: E402

keras = tf.keras
pytestmark = pytest.mark.timeout(120)
N_ROWS, BATCH = 19 * 16 + 2, 16


@pytest.fixture(scope="module")
def builtin() -> dict:
    return fit_style(None, "builtin", N_ROWS, BATCH)


@pytest.mark.parametrize("style", ["torch", "tf"])
def test_a_custom_train_step_takes_the_built_in_steps(builtin: dict, style: str) -> None:
    # Written as Keras's guides write it, the step computes exactly what the built-in one does.
    res = fit_style(None, style, N_ROWS, BATCH)
    assert res["iterations"] == builtin["iterations"] == 20
    for got, want in zip(res["weights"], builtin["weights"]):
        assert np.allclose(got, want, atol=1e-6), np.abs(got - want).max()
    assert sorted(res["history"]) == ["accuracy", "loss"]
    for key in ("loss", "accuracy"):
        assert res["history"][key][0] == pytest.approx(builtin["history"][key][0], abs=1e-6), key


def test_own_trackers_in_metrics_are_reset_each_epoch_and_logged_by_name() -> None:
    torch.manual_seed(0)
    model = Trackers([keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer=keras.optimizers.SGD(0.05))  # no compiled loss: the step computes its own
    x, y = regression_data(128)
    history = model.fit(x, y, batch_size=16, epochs=4, verbose=0)
    assert sorted(history.history) == ["loss", "mae"]
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    # each epoch starts from zero: the last epoch's mean is not dragged up by the first one
    assert model.loss_tracker.result().item() == pytest.approx(losses[-1], rel=1e-5)


class _Doubling(keras.Sequential):
    def test_step(self, data):  # noqa: ANN001, ANN201
        x, y = data
        y_pred = self(x, training=False)
        self.compiled_metrics.update_state(y, y_pred)
        return {"twice": torch.tensor(2.0), **{m.name: m.result() for m in self.compiled_metrics}}

    def predict_step(self, data):  # noqa: ANN001, ANN201
        x, _, _ = keras.utils.unpack_x_y_sample_weight(data)
        return {"out": self(x) * 2}


def test_test_step_and_predict_step_overrides() -> None:
    torch.manual_seed(0)
    model = _Doubling([keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x, y = regression_data(40)
    logs = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    assert logs == {
        "twice": 2.0,
        "mae": pytest.approx(np.abs(model.predict(x, verbose=0)["out"] / 2 - y).mean(), rel=1e-5),
    }
    out = model.predict(x, batch_size=7, verbose=0)
    assert set(out) == {"out"} and out["out"].shape == (40, 1)
    plain = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
    plain.set_weights(model.get_weights())
    assert np.allclose(out["out"], 2 * plain.predict(x, verbose=0), atol=1e-6)


def test_super_train_step_and_metrics_api() -> None:
    seen = []

    class Logged(keras.Sequential):
        def train_step(self, data):  # noqa: ANN001, ANN201
            seen.append(len(data[0]))
            return super().train_step(data)

    torch.manual_seed(0)
    model = Logged([keras.layers.Dense(2, activation="softmax", input_shape=(3,))])
    assert model.metrics == []  # built on the first step, as in Keras
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x = np.random.default_rng(0).normal(size=(20, 3)).astype("float32")
    history = model.fit(x, (x[:, 0] > 0).astype("int64"), batch_size=8, verbose=0)
    assert seen == [8, 8, 4]
    assert sorted(history.history) == ["accuracy", "loss"]
    assert model.metrics_names == ["loss", "accuracy"]
    model.reset_metrics()
    assert all(m.result().item() == 0.0 for m in model.metrics[1]) and model.metrics[0].result().item() == 0.0


def test_compute_loss_outside_fit_and_unpack_errors() -> None:
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
    with pytest.raises(RuntimeError, match="compute_loss\\(\\) uses the compiled loss"):
        model.compute_loss(y=torch.zeros(2, 1), y_pred=torch.zeros(2, 1))
    with pytest.raises(ValueError, match="tuple of length 4"):
        keras.utils.unpack_x_y_sample_weight((1, 2, 3, 4))
    with pytest.raises(ValueError, match="needs trainable_variables"):
        keras.optimizers.SGD().apply([torch.zeros(1)])


def test_a_step_that_raises_leaves_no_replica_context_behind() -> None:
    class Failing(keras.Sequential):
        def train_step(self, data):  # noqa: ANN001, ANN201
            raise RuntimeError("boom in train_step")

    model = Failing([keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
    x, y = regression_data(16)
    with pytest.raises(RuntimeError, match="boom in train_step"):
        model.fit(x, y, batch_size=4, verbose=0)
    assert tf.distribute.get_replica_context() is not None  # the default context, outside any scope
    assert not tf.distribute.has_strategy() and not tf.distribute.in_cross_replica_context()


def test_a_step_may_log_a_loss_that_still_carries_its_graph() -> None:
    # keras.io's knowledge distillation returns {"student_loss": student_loss} straight from the
    # tape: the logs read it without torch's "requires_grad=True to a scalar" warning, as Keras.
    import warnings

    class Logged(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                student_loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
                loss = 0.1 * student_loss  # the tape differentiates this one; student_loss keeps its graph
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"student_loss": student_loss}

    inputs = keras.Input((3,))
    model = Logged(inputs, keras.layers.Dense(1)(inputs))
    model.compile("sgd")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = model.fit(np.ones((8, 3), "float32"), np.zeros((8, 1), "float32"), batch_size=4, verbose=0)
    assert list(history.history) == ["student_loss"] and history.history["student_loss"][0] >= 0.0
