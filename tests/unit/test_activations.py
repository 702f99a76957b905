"""Activations (Keras 3 definitions, logits attached to softmax/sigmoid) and initializers."""

from __future__ import annotations

import math

import pytest
import torch

from unison.keras import activations, initializers

X = torch.tensor([-4.0, -1.0, 0.0, 0.5, 2.0, 7.0])


@pytest.mark.parametrize(
    "name, reference",
    [
        ("linear", lambda x: x),
        ("relu", lambda x: x.clamp(min=0)),
        ("tanh", torch.tanh),
        ("elu", lambda x: torch.where(x > 0, x, torch.expm1(x))),
        (
            "selu",
            lambda x: 1.0507009873554805 * torch.where(x > 0, x, 1.6732632423543772 * torch.expm1(x)),
        ),
        ("gelu", lambda x: 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))),
        ("swish", lambda x: x * torch.sigmoid(x)),
        ("silu", lambda x: x * torch.sigmoid(x)),
        ("softplus", lambda x: torch.log1p(torch.exp(x))),
        ("softsign", lambda x: x / (1 + x.abs())),
        ("leaky_relu", lambda x: torch.where(x > 0, x, 0.2 * x)),
        ("relu6", lambda x: x.clamp(0, 6)),
        ("exponential", torch.exp),
        ("hard_sigmoid", lambda x: ((x + 3) / 6).clamp(0, 1)),
        ("log_softmax", lambda x: x - torch.logsumexp(x, -1)),
        ("sigmoid", torch.sigmoid),
        ("softmax", lambda x: torch.exp(x) / torch.exp(x).sum()),
    ],
)
def test_named_activations_match_keras_definitions(name, reference) -> None:
    module = activations.get(name)
    assert isinstance(module, torch.nn.Module)
    torch.testing.assert_close(module(X), reference(X))


def test_none_is_identity_and_each_get_is_a_fresh_module() -> None:
    assert torch.equal(activations.get(None)(X), X)
    assert activations.get("relu") is not activations.get("relu")


def test_softmax_attaches_logits_without_changing_autograd() -> None:
    logits = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    probs = activations.get("softmax")(logits)
    assert getattr(probs, activations.LOGITS_ATTR) is logits
    assert activations.LOGITS_ATTR == "_unison_logits"
    probs[0, 0].backward()
    p = torch.softmax(logits.detach(), -1)[0]
    expected = -p[0] * p
    expected[0] += p[0]
    torch.testing.assert_close(logits.grad[0], expected)


def test_softmax_over_another_axis_does_not_attach_logits() -> None:
    out = activations.Softmax(axis=0)(torch.ones(2, 3))
    assert not hasattr(out, activations.LOGITS_ATTR)


def test_sigmoid_attaches_its_own_logits_attribute() -> None:
    logits = torch.tensor([0.0, 3.0])
    out = activations.get("sigmoid")(logits)
    assert getattr(out, activations.SIGMOID_LOGITS_ATTR) is logits
    assert not hasattr(out, activations.LOGITS_ATTR)


def test_modules_pass_through_and_callables_are_wrapped() -> None:
    module = torch.nn.Tanh()
    assert activations.get(module) is module
    wrapped = activations.get(lambda x: 3 * x)
    assert isinstance(wrapped, torch.nn.Module)
    assert wrapped(torch.tensor([2.0])).tolist() == [6.0]


def test_unknown_activation_lists_names_and_received_value() -> None:
    with pytest.raises(ValueError) as err:
        activations.get("relux")
    message = str(err.value)
    assert message.startswith("Unknown activation: 'relux' (did you mean 'relu'?). Expected one of: 'celu', 'elu'")
    assert "'softmax'" in message and message.endswith("Received: activation='relux'")
    with pytest.raises(ValueError, match="Received: activation=5"):
        activations.get(5)


# Initializers (unison.keras.initializers) share this file: they are small and layer-facing.


def test_fans_follow_keras_layout() -> None:
    assert initializers.compute_fans((10, 20)) == (10, 20)  # Dense kernel (in, units)
    assert initializers.compute_fans((3, 3, 4, 8)) == (36, 72)  # Conv2D kernel (kh, kw, in, filters)
    assert initializers.compute_fans((5,)) == (5, 5)


def test_orthogonal_is_orthogonal_along_keras_axes() -> None:
    w = torch.empty(6, 4)  # (in, units): the 4 columns are orthonormal, as in Keras
    initializers.get("orthogonal")(w)
    torch.testing.assert_close(w.t() @ w, torch.eye(4), atol=1e-5, rtol=0)
    k = torch.empty(3, 2, 5, 8)  # a kernel: flattened to (3*2*5, 8)
    initializers.get("orthogonal")(k)
    flat = k.reshape(-1, 8)
    torch.testing.assert_close(flat.t() @ flat, torch.eye(8), atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "name, limit",
    [
        ("glorot_uniform", math.sqrt(6 / (300 + 200))),
        ("he_uniform", math.sqrt(6 / 300)),
        ("lecun_uniform", math.sqrt(3 / 300)),
        ("random_uniform", 0.05),
    ],
)
def test_uniform_initializers_use_keras_limits(name, limit) -> None:
    torch.manual_seed(0)
    w = torch.empty(300, 200)  # a Dense(300 -> 200) kernel, Keras layout (in, units)
    initializers.get(name)(w)
    assert w.abs().max().item() <= limit
    assert w.abs().max().item() > 0.95 * limit  # the range is used, not a narrower one


@pytest.mark.parametrize(
    "name, std",
    [
        ("glorot_normal", math.sqrt(2 / (300 + 200))),
        ("he_normal", math.sqrt(2 / 300)),
        ("lecun_normal", math.sqrt(1 / 300)),
        ("random_normal", 0.05),
        ("truncated_normal", 0.05 * 0.87962566103423978),
    ],
)
def test_normal_initializers_have_keras_standard_deviation(name, std) -> None:
    torch.manual_seed(0)
    w = torch.empty(300, 200)
    initializers.get(name)(w)
    assert w.std().item() == pytest.approx(std, rel=0.03)
    if name != "random_normal":  # truncated at two (uncorrected) standard deviations
        assert w.abs().max().item() <= 2 * std / 0.87962566103423978 + 1e-6


def test_conv_weight_uses_receptive_field_in_fans() -> None:
    torch.manual_seed(0)
    w = torch.empty(64, 32, 3, 3)
    initializers.get("he_uniform")(w)
    assert w.abs().max().item() <= math.sqrt(6 / (32 * 9))


def test_constant_orthogonal_and_seeded_initializers() -> None:
    w = torch.empty(3, 4)
    initializers.get("zeros")(w)
    assert w.abs().sum().item() == 0.0
    initializers.get("ones")(w)
    assert w.sum().item() == 12.0
    q = torch.empty(6, 4)
    initializers.get("orthogonal")(q)
    torch.testing.assert_close(q.T @ q, torch.eye(4), atol=1e-5, rtol=0)
    a, b = torch.empty(5, 5), torch.empty(5, 5)
    initializers.GlorotUniform(seed=7)(a)
    initializers.GlorotUniform(seed=7)(b)
    assert torch.equal(a, b)


def test_parameters_are_filled_in_place_without_autograd_errors() -> None:
    layer = torch.nn.Linear(4, 2)
    initializers.get("glorot_normal")(layer.weight)
    assert layer.weight.requires_grad and layer.weight.grad_fn is None


def test_unknown_initializer_lists_names() -> None:
    with pytest.raises(ValueError) as err:
        initializers.get("glorot")
    assert "'glorot_uniform'" in str(err.value)
    assert "Received: initializer='glorot'" in str(err.value)
