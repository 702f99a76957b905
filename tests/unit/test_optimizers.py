"""Optimizers: Keras 3 defaults, mapping to torch.optim, learning rate, clipping, registry."""

from __future__ import annotations

import pytest
import torch

from unison.keras import optimizers


def _layer() -> torch.nn.Linear:
    torch.manual_seed(0)
    return torch.nn.Linear(3, 2)


@pytest.mark.parametrize(
    "name, cls, expected",
    [
        ("sgd", optimizers.SGD, {"learning_rate": 0.01, "momentum": 0.0, "nesterov": False}),
        (
            "adam",
            optimizers.Adam,
            {
                "learning_rate": 0.001,
                "beta_1": 0.9,
                "beta_2": 0.999,
                "epsilon": 1e-7,
                "amsgrad": False,
                "weight_decay": None,
            },
        ),
        (
            "AdamW",
            optimizers.AdamW,
            {
                "learning_rate": 0.001,
                "weight_decay": 0.004,
                "beta_1": 0.9,
                "beta_2": 0.999,
                "epsilon": 1e-7,
            },
        ),
        (
            "RMSPROP",
            optimizers.RMSprop,
            {
                "learning_rate": 0.001,
                "rho": 0.9,
                "momentum": 0.0,
                "epsilon": 1e-7,
                "centered": False,
            },
        ),
        (
            "adagrad",
            optimizers.Adagrad,
            {"learning_rate": 0.001, "initial_accumulator_value": 0.1, "epsilon": 1e-7},
        ),
    ],
)
def test_get_gives_keras_3_defaults(name, cls, expected) -> None:
    opt = optimizers.get(name)
    assert type(opt) is cls
    config = opt.get_config()
    assert {k: config[k] for k in expected} == expected
    assert opt.torch_optimizer is None


@pytest.mark.parametrize(
    "opt, torch_cls, group",
    [
        (
            optimizers.SGD(0.1, momentum=0.9, nesterov=True),
            torch.optim.SGD,
            {"lr": 0.1, "momentum": 0.9, "nesterov": True},
        ),
        (
            optimizers.Adam(beta_1=0.8, epsilon=1e-6, amsgrad=True),
            torch.optim.Adam,
            {"betas": (0.8, 0.999), "eps": 1e-6, "amsgrad": True},
        ),
        (optimizers.Adam(weight_decay=0.01), torch.optim.AdamW, {"weight_decay": 0.01}),
        (optimizers.AdamW(), torch.optim.AdamW, {"weight_decay": 0.004, "eps": 1e-7}),
        (
            optimizers.Adagrad(initial_accumulator_value=0.2),
            torch.optim.Adagrad,
            {"initial_accumulator_value": 0.2, "eps": 1e-7},
        ),
    ],
)
def test_build_maps_hyper_parameters_to_torch(opt, torch_cls, group) -> None:
    built = opt.build(_layer().parameters())
    assert type(built) is torch_cls and opt.torch_optimizer is built
    assert {k: built.param_groups[0][k] for k in group} == group


def test_rmsprop_divides_by_the_root_of_velocity_plus_epsilon() -> None:
    # Keras: w -= lr * g / sqrt(v + eps); torch's RMSprop would give w -= lr * g / (sqrt(v) + eps)
    w = torch.nn.Parameter(torch.tensor([1.0]))
    opt = optimizers.RMSprop(learning_rate=0.1, epsilon=0.01)
    opt.apply_gradients([(torch.tensor([0.1]), w)])
    velocity = 0.1 * 0.1**2
    assert w.item() == pytest.approx(1.0 - 0.1 * 0.1 / (velocity + 0.01) ** 0.5, rel=1e-6)
    assert [tuple(v.shape) for v in opt.variables] == [(), (1,)]


def test_sgd_momentum_follows_keras_update_rule() -> None:
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = optimizers.SGD(learning_rate=0.1, momentum=0.9)
    torch_opt = opt.build([w])
    grads = [torch.tensor([0.5, 1.0]), torch.tensor([-1.0, 2.0])]
    keras_w, velocity = torch.tensor([1.0, -2.0]), torch.zeros(2)
    for g in grads:
        w.grad = g.clone()
        torch_opt.step()
        velocity = 0.9 * velocity - 0.1 * g  # Keras: m = momentum * m - lr * g; w += m
        keras_w = keras_w + velocity
    torch.testing.assert_close(w.detach(), keras_w)


def test_sgd_weight_decay_is_decoupled_like_keras() -> None:
    w = torch.nn.Parameter(torch.tensor([2.0]))
    torch_opt = optimizers.SGD(learning_rate=0.1, momentum=0.9, weight_decay=0.5).build([w])
    w.grad = torch.tensor([1.0])
    torch_opt.step()
    # Keras: w -= lr * wd * w, then the momentum update with the unchanged gradient.
    assert w.item() == pytest.approx(2.0 * (1 - 0.1 * 0.5) - 0.1 * 1.0)


def test_learning_rate_set_before_and_after_build_reaches_every_param_group() -> None:
    layer = _layer()
    opt = optimizers.Adam()
    opt.learning_rate = 0.05
    built = opt.build([{"params": [layer.weight]}, {"params": [layer.bias]}])
    assert [g["lr"] for g in built.param_groups] == [0.05, 0.05]
    opt.learning_rate = 0.002
    assert [g["lr"] for g in built.param_groups] == [0.002, 0.002]
    assert opt.learning_rate == 0.002
    with pytest.raises(ValueError, match="learning_rate=-1"):
        opt.learning_rate = -1


def test_build_twice_returns_the_same_optimizer_and_rejects_other_params() -> None:
    layer = _layer()
    opt = optimizers.SGD()
    first = opt.build(layer.parameters())
    assert opt.build(layer.parameters()) is first
    with pytest.raises(ValueError, match="already built"):
        opt.build(_layer().parameters())
    with pytest.raises(ValueError, match="no parameters"):
        optimizers.SGD().build([])


def _with_grads(*grads: list[float]) -> list[torch.nn.Parameter]:
    params = [torch.nn.Parameter(torch.zeros(len(g))) for g in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = torch.tensor(g)
    return params


def test_clipvalue_clamps_each_element() -> None:
    params = _with_grads([3.0, -0.5, -7.0])
    optimizers.SGD(clipvalue=1.0).clip_gradients(params)
    assert params[0].grad.tolist() == [1.0, -0.5, -1.0]


def test_clipnorm_scales_each_tensor_separately() -> None:
    params = _with_grads([3.0, 4.0], [0.3, 0.4])
    optimizers.Adam(clipnorm=1.0).clip_gradients(params)
    torch.testing.assert_close(params[0].grad, torch.tensor([0.6, 0.8]))
    torch.testing.assert_close(params[1].grad, torch.tensor([0.3, 0.4]))


def test_global_clipnorm_scales_all_tensors_by_the_global_norm() -> None:
    params = _with_grads([3.0, 0.0], [0.0, 4.0])  # global norm 5
    params.append(torch.nn.Parameter(torch.zeros(1)))  # no gradient: left alone
    optimizers.RMSprop(global_clipnorm=2.5).clip_gradients(params)
    torch.testing.assert_close(params[0].grad, torch.tensor([1.5, 0.0]))
    torch.testing.assert_close(params[1].grad, torch.tensor([0.0, 2.0]))
    assert params[2].grad is None


def test_no_clipping_configured_leaves_gradients_untouched() -> None:
    params = _with_grads([30.0, -40.0])
    optimizers.SGD().clip_gradients(params)
    assert params[0].grad.tolist() == [30.0, -40.0]


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda: optimizers.SGD(learning_rate=-0.5), "Received: learning_rate=-0.5"),
        (lambda: optimizers.SGD(learning_rate="fast"), "learning_rate='fast'"),
        (lambda: optimizers.SGD(momentum=1.5), "Received: momentum=1.5"),
        (lambda: optimizers.Adam(beta_1=1.0), "Received: beta_1=1.0"),
        (lambda: optimizers.Adam(epsilon=-1e-3), "Received: epsilon=-0.001"),
        (lambda: optimizers.AdamW(weight_decay=None), "weight_decay=None"),
        (lambda: optimizers.Adagrad(initial_accumulator_value=-1), "initial_accumulator_value=-1"),
        (lambda: optimizers.Adam(clipnorm=1.0, global_clipnorm=1.0), "Only one of"),
        (lambda: optimizers.SGD(clipvalue=-2), "Received: clipvalue=-2"),
    ],
)
def test_constructors_validate_with_keras_style_messages(make, needle) -> None:
    with pytest.raises(ValueError, match=needle):
        make()


def test_torch_optimizer_instance_is_wrapped_and_checked() -> None:
    layer = _layer()
    torch_opt = torch.optim.SGD(layer.parameters(), lr=0.3)
    opt = optimizers.get(torch_opt)
    assert isinstance(opt, optimizers.Optimizer) and opt.learning_rate == 0.3
    assert opt.build(layer.parameters()) is torch_opt
    opt.learning_rate = 0.1
    assert torch_opt.param_groups[0]["lr"] == 0.1
    other = optimizers.get(torch.optim.Adam(_layer().parameters()))
    with pytest.raises(ValueError, match="does not hold 2 of the model's parameters"):
        other.build(layer.parameters())


def test_get_returns_instances_and_rejects_unknown_names() -> None:
    opt = optimizers.SGD(learning_rate=0.5)
    assert optimizers.get(opt) is opt
    with pytest.raises(ValueError) as err:
        optimizers.get("adamm")
    message = str(err.value)
    assert "'adam'" in message and "'rmsprop'" in message and "Received: optimizer='adamm'" in message
    with pytest.raises(ValueError, match="Received: optimizer=None"):
        optimizers.get(None)


def test_config_round_trips() -> None:
    opt = optimizers.RMSprop(learning_rate=0.01, rho=0.8, clipnorm=2.0)
    clone = optimizers.RMSprop.from_config(opt.get_config())
    assert clone.get_config() == opt.get_config()


def test_compile_builds_the_optimizer_of_a_built_model_and_a_later_freeze_rebuilds_it() -> None:
    import numpy as np

    from unison import keras

    model = keras.Sequential([keras.layers.Dense(4, activation="relu", input_shape=(3,)), keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    early = model.optimizer.torch_optimizer
    assert early is not None  # the one-time torch set-up happens in compile(), not in fit()
    assert sum(len(g["params"]) for g in early.param_groups) == 4

    model.layers[0].trainable = False  # changed after compile, before any step
    for p in model.layers[0].parameters():
        p.requires_grad_(False)
    frozen = [p.detach().clone() for p in model.layers[0].parameters()]
    model.fit(np.ones((8, 3), "float32"), np.zeros((8, 2), "float32"), epochs=1, verbose=0)
    built = model.optimizer.torch_optimizer
    assert sum(len(g["params"]) for g in built.param_groups) == 2
    for before, after in zip(frozen, model.layers[0].parameters()):
        assert torch.equal(before, after)


def test_unbuilt_model_builds_its_optimizer_in_fit() -> None:
    import numpy as np

    from unison import keras

    model = keras.Sequential([keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")
    assert model.optimizer.torch_optimizer is None
    model.fit(np.ones((4, 3), "float32"), np.zeros((4, 2), "float32"), epochs=1, verbose=0)
    assert model.optimizer.torch_optimizer is not None


def test_adam_uses_the_fused_kernel_for_dense_float_parameters_on_one_device() -> None:
    from unison.keras.optimizers.optimizer import _fusable

    layer = torch.nn.Linear(3, 2)
    for opt in (optimizers.get("adam"), optimizers.AdamW()):
        torch_opt = opt.build(layer.parameters())
        assert torch_opt.param_groups[0]["fused"] is True, opt
    assert not _fusable([torch.zeros(2, dtype=torch.complex64)])  # no fused complex Adam
    assert not _fusable([torch.zeros(2, device="meta")])
    assert not _fusable([torch.zeros(2).to_sparse()])
    assert not _fusable([])


def test_fused_adam_takes_the_same_steps_as_torch_default_adam() -> None:
    torch.manual_seed(0)
    a, b = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    b.load_state_dict(a.state_dict())
    fused = optimizers.Adam(learning_rate=0.01).build(a.parameters())
    plain = torch.optim.Adam(b.parameters(), lr=0.01, eps=1e-7)
    x = torch.randn(16, 4)
    for _ in range(20):
        for model, opt in ((a, fused), (b, plain)):
            opt.zero_grad()
            model(x).square().sum().backward()
            opt.step()
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.allclose(p, q, rtol=1e-5, atol=1e-6)
