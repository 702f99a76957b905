"""Optimizer use_ema / ema_momentum / ema_overwrite_frequency (Keras 3), finalize_variable_values,
and the SwapEMAWeights callback, against the averages computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras


def _sgd_trajectory(steps: int, lr: float, grads: list[float], start: float = 1.0) -> list[float]:
    w, out = start, []
    for g in grads[:steps]:
        w -= lr * g
        out.append(w)
    return out


def test_average_follows_keras_formula() -> None:
    w = torch.nn.Parameter(torch.tensor([1.0]))
    opt = keras.optimizers.SGD(learning_rate=0.1, use_ema=True, ema_momentum=0.5)
    grads = [1.0, 2.0, -1.0]
    for g in grads:
        opt.apply_gradients([(torch.tensor([g]), w)])
    weights = _sgd_trajectory(3, 0.1, grads)
    average = weights[0]  # the first update copies the weights
    for value in weights[1:]:
        average = 0.5 * average + 0.5 * value
    assert float(w.detach()) == pytest.approx(weights[-1])
    opt.finalize_variable_values([w])
    assert float(w.detach()) == pytest.approx(average)


def test_overwrite_frequency_sets_weights_to_averages() -> None:
    w = torch.nn.Parameter(torch.tensor([1.0]))
    opt = keras.optimizers.SGD(learning_rate=1.0, use_ema=True, ema_momentum=0.5, ema_overwrite_frequency=2)
    opt.apply_gradients([(torch.tensor([1.0]), w)])  # w = 0, average = 0
    opt.apply_gradients([(torch.tensor([1.0]), w)])  # w = -1, average = -0.5, then overwritten
    assert float(w.detach()) == pytest.approx(-0.5)


def test_without_use_ema_finalize_changes_nothing_and_config_round_trips() -> None:
    w = torch.nn.Parameter(torch.tensor([1.0]))
    opt = keras.optimizers.Adam(0.1)
    opt.apply_gradients([(torch.tensor([1.0]), w)])
    before = float(w.detach())
    opt.finalize_variable_values([w])
    assert float(w.detach()) == before
    config = keras.optimizers.Adam(use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=5).get_config()
    assert (config["use_ema"], config["ema_momentum"], config["ema_overwrite_frequency"]) == (True, 0.9, 5)
    assert keras.optimizers.Adam.from_config(config).ema_momentum == 0.9


def test_bad_ema_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="ema_momentum"):
        keras.optimizers.SGD(use_ema=True, ema_momentum=1.5)
    with pytest.raises(ValueError, match="ema_overwrite_frequency"):
        keras.optimizers.SGD(use_ema=True, ema_overwrite_frequency=0)


def _model(use_ema: bool) -> keras.Model:
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer=keras.optimizers.SGD(0.1, use_ema=use_ema, ema_momentum=0.5), loss="mse")
    return model


def test_fit_ends_with_averages_and_swap_evaluates_with_them() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(8, 3)).astype("float32"), rng.normal(size=(8, 1)).astype("float32")
    plain, ema = _model(False), _model(True)
    plain.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    history = ema.fit(
        x,
        y,
        batch_size=4,
        epochs=2,
        shuffle=False,
        verbose=0,
        validation_data=(x, y),
        callbacks=[keras.callbacks.SwapEMAWeights()],
    )
    # the raw trajectories are equal; the EMA model ends at the average of its 4 updates
    # (the validation loss of the last epoch was computed with the averages: it is the final loss)
    assert not np.allclose(plain.get_weights()[0], ema.get_weights()[0])
    final_loss = ema.evaluate(x, y, verbose=0)
    assert history.history["val_loss"][-1] == pytest.approx(final_loss, rel=1e-5)


def test_swap_without_use_ema_is_an_error() -> None:
    model = _model(False)
    x, y = np.zeros((4, 3), "float32"), np.zeros((4, 1), "float32")
    # as in Keras, the error comes at the first swap (a validation), not when training starts
    model.fit(x, y, verbose=0, callbacks=[keras.callbacks.SwapEMAWeights()])
    with pytest.raises(ValueError, match="use_ema=True"):
        model.fit(x, y, verbose=0, validation_data=(x, y), callbacks=[keras.callbacks.SwapEMAWeights()])
