"""Adadelta, Adamax, Nadam and Lion against Keras 3's update rules computed by hand; the
``variables`` list (Keras 3 property / Keras 2 method), the ``lr`` alias, and compile's Keras 2 keywords."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import optimizers

GRADS = [0.5, -0.3, 0.2, 0.8]


def _run(opt: optimizers.Optimizer, w0: float = 1.0) -> list[float]:
    w = torch.nn.Parameter(torch.tensor([w0], dtype=torch.float64))
    out = []
    for g in GRADS:
        opt.apply_gradients([(torch.tensor([g], dtype=torch.float64), w)])
        out.append(w.item())
    return out


def test_adadelta_matches_keras_rule() -> None:
    lr, rho, eps = 0.5, 0.95, 1e-7
    w, acc_g, acc_d, expected = 1.0, 0.0, 0.0, []
    for g in GRADS:
        acc_g = rho * acc_g + (1 - rho) * g * g
        delta = -math.sqrt(acc_d + eps) * g / math.sqrt(acc_g + eps)
        acc_d = rho * acc_d + (1 - rho) * delta * delta
        w += lr * delta
        expected.append(w)
    assert _run(optimizers.Adadelta(learning_rate=lr)) == pytest.approx(expected, rel=1e-12)


def test_adamax_matches_keras_rule() -> None:
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-7
    w, m, u, expected = 1.0, 0.0, 0.0, []
    for t, g in enumerate(GRADS, start=1):
        m = m + (g - m) * (1 - b1)
        u = max(b2 * u, abs(g))
        w -= lr * m / ((1 - b1**t) * (u + eps))
        expected.append(w)
    assert _run(optimizers.Adamax(learning_rate=lr)) == pytest.approx(expected, rel=1e-12)


def test_nadam_matches_keras_rule() -> None:
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-7
    w, m, v, product, expected = 1.0, 0.0, 0.0, 1.0, []
    for t, g in enumerate(GRADS, start=1):
        u_t = b1 * (1 - 0.5 * 0.96**t)
        u_next = b1 * (1 - 0.5 * 0.96 ** (t + 1))
        product *= u_t
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        m_hat = u_next * m / (1 - product * u_next) + (1 - u_t) * g / (1 - product)
        v_hat = v / (1 - b2**t)
        w -= lr * m_hat / (math.sqrt(v_hat) + eps)
        expected.append(w)
    assert _run(optimizers.Nadam(learning_rate=lr)) == pytest.approx(expected, rel=1e-12)


def test_lion_matches_keras_rule() -> None:
    lr, b1, b2 = 0.1, 0.9, 0.99
    w, m, expected = 1.0, 0.0, []
    for g in [0.5, -0.3, -0.9, 0.8]:
        c = m * b1 + g * (1 - b1)
        w -= lr * (c > 0) - lr * (c < 0)
        m = m * b2 + g * (1 - b2)
        expected.append(w)
    w_t = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    opt, got = optimizers.Lion(learning_rate=lr), []
    for g in [0.5, -0.3, -0.9, 0.8]:
        opt.apply_gradients([(torch.tensor([g], dtype=torch.float64), w_t)])
        got.append(w_t.item())
    assert got == pytest.approx(expected, rel=1e-12)


def test_keras_defaults_and_names() -> None:
    assert optimizers.get("adadelta").get_config()["learning_rate"] == pytest.approx(0.001)
    assert optimizers.get("Adadelta").rho == 0.95
    assert optimizers.get("adamax").epsilon == 1e-7
    assert optimizers.get("nadam").beta_2 == 0.999
    assert optimizers.get("lion").beta_2 == 0.99
    # legacy Nadam is its own class: Keras 2's momentum schedule comes from its `decay` argument
    assert issubclass(optimizers.legacy.Nadam, optimizers.Nadam) and optimizers.legacy.Nadam is not optimizers.Nadam
    assert optimizers.legacy.Adadelta is optimizers.Adadelta
    assert optimizers.legacy.Adamax is optimizers.Adamax


def test_new_optimizers_validate_arguments() -> None:
    with pytest.raises(ValueError, match="beta_1"):
        optimizers.Lion(beta_1=0.0)
    with pytest.raises(ValueError, match="rho"):
        optimizers.Adadelta(rho=1.5)
    with pytest.raises(ValueError, match="Only one of"):
        optimizers.Nadam(clipnorm=1.0, clipvalue=1.0)


def test_weight_decay_is_decoupled_before_the_update() -> None:
    lr, wd = 0.1, 0.5
    w = torch.nn.Parameter(torch.tensor([2.0], dtype=torch.float64))
    optimizers.Lion(learning_rate=lr, weight_decay=wd).apply_gradients([(torch.tensor([1.0], dtype=torch.float64), w)])
    assert w.item() == pytest.approx(2.0 * (1 - lr * wd) - lr)


def test_variables_is_a_list_and_a_method() -> None:
    w1 = torch.nn.Parameter(torch.zeros(2))
    w2 = torch.nn.Parameter(torch.zeros(3))
    opt = optimizers.Adam()
    assert [tuple(v.shape) for v in opt.variables] == [()]
    opt.apply_gradients([(torch.ones(2), w1), (torch.ones(3), w2)])
    shapes = [tuple(v.shape) for v in opt.variables]
    assert shapes == [(), (2,), (3,), (2,), (3,)]  # iterations, momenta, velocities
    assert [tuple(v.shape) for v in opt.variables()] == shapes
    assert int(opt.variables[0]) == 1
    # first moments: (1 - beta_1) * g
    assert opt.variables[1].tolist() == pytest.approx([0.1, 0.1])


def test_lr_is_an_alias_of_learning_rate() -> None:
    opt = optimizers.SGD(learning_rate=0.1)
    assert opt.lr == pytest.approx(0.1) and opt.lr.numpy() == np.float32(0.1)
    opt.lr = 0.2
    assert opt.learning_rate == pytest.approx(0.2)
    opt.lr.assign(0.3)
    assert opt.learning_rate == pytest.approx(0.3)
    keras.backend.set_value(opt.lr, 0.05)
    assert opt.learning_rate == pytest.approx(0.05)
    assert keras.backend.get_value(opt.lr) == pytest.approx(0.05)


def test_fit_with_new_optimizers_reduces_the_loss() -> None:
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(-1, 1)
    y = 3 * x
    for name in ("adamax", "nadam", "lion", keras.optimizers.Adadelta(learning_rate=1.0)):
        model = keras.Sequential([keras.layers.Dense(1, input_shape=(1,))])
        model.compile(optimizer=name, loss="mse")
        history = model.fit(x, y, epochs=4, batch_size=8, verbose=0)
        assert history.history["loss"][-1] < history.history["loss"][0], name


def _model() -> keras.Model:
    return keras.Sequential([keras.layers.Dense(1, input_shape=(1,))])


def test_compile_accepts_keras2_noop_keywords() -> None:
    model = _model()
    model.compile(optimizer="sgd", loss="mse", experimental_run_tf_function=False, sample_weight_mode=None)
    assert model.optimizer is not None


def test_compile_refuses_keywords_tf2_refuses() -> None:
    with pytest.raises(ValueError, match="strategy.scope"):
        _model().compile(optimizer="sgd", loss="mse", distribute=object())
    with pytest.raises(ValueError, match="target_tensors"):
        _model().compile(optimizer="sgd", loss="mse", target_tensors=[object()])
    with pytest.raises(TypeError, match="unexpected keyword arguments: \\['lossweights'\\]"):
        _model().compile(optimizer="sgd", loss="mse", lossweights=[1.0])


def test_ftrl_matches_keras_rule() -> None:
    lr, power, l1, l2, shrink, beta = 0.1, -0.5, 0.01, 0.02, 0.03, 0.1
    w, n, z, expected = 1.0, 0.1, 0.0, []
    for g in GRADS:
        l2_eff = l2 + beta / (2 * lr)
        n_new = n + g * g
        z += g + 2 * shrink * w - (n_new ** (-power) - n ** (-power)) / lr * w
        quadratic = n_new ** (-power) / lr + 2 * l2_eff
        w = (min(max(z, -l1), l1) - z) / quadratic
        n = n_new
        expected.append(w)
    opt = optimizers.Ftrl(
        learning_rate=lr,
        l1_regularization_strength=l1,
        l2_regularization_strength=l2,
        l2_shrinkage_regularization_strength=shrink,
        beta=beta,
    )
    assert _run(opt) == pytest.approx(expected, rel=1e-12)
    assert [tuple(v.shape) for v in opt.variables] == [(), (1,), (1,)]
    assert opt.variables[1].item() == pytest.approx(n)  # the accumulator started at 0.1


def test_ftrl_validates_like_keras() -> None:
    with pytest.raises(ValueError, match="learning_rate_power"):
        optimizers.Ftrl(learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength"):
        optimizers.Ftrl(l1_regularization_strength=-1.0)
    assert isinstance(optimizers.get("ftrl"), optimizers.Ftrl) and optimizers.legacy.Ftrl is optimizers.Ftrl


def test_keras2_lr_and_decay_arguments() -> None:
    with pytest.warns(DeprecationWarning, match="learning_rate"):
        opt = optimizers.Adam(lr=0.01)
    assert opt.learning_rate == pytest.approx(0.01)
    with pytest.warns(DeprecationWarning):
        sgd = optimizers.legacy.SGD(lr=0.1, decay=0.5)
    w = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    got = []
    for _ in range(3):
        sgd.apply_gradients([(torch.ones(1, dtype=torch.float64), w)])
        got.append(w.item())
    # Keras 2: lr_t = lr / (1 + decay * iterations), iterations counted before the step
    assert got == pytest.approx([-0.1, -0.1 - 0.1 / 1.5, -0.1 - 0.1 / 1.5 - 0.1 / 2.0], rel=1e-6)


def test_decay_with_a_schedule_is_refused() -> None:
    schedule = optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.9)
    with pytest.raises(ValueError, match="decay"):
        optimizers.SGD(learning_rate=schedule, decay=0.1)
