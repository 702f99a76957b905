"""keras.activations: Keras 3's formulas, names usable as Dense(activation=...), get/serialize/deserialize."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import activations, layers

pytestmark = pytest.mark.timeout(60)

X = [-3.0, -0.5, 0.0, 0.7, 4.0]


def _sig(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


# Keras 3's definitions, written out by hand
EXPECTED = {
    "gelu": lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))),
    "silu": lambda v: v * _sig(v),
    "swish": lambda v: v * _sig(v),
    "mish": lambda v: v * math.tanh(math.log1p(math.exp(v))),
    "hard_sigmoid": lambda v: min(max(v + 3.0, 0.0), 6.0) / 6.0,
    "hard_silu": lambda v: v * min(max(v + 3.0, 0.0), 6.0) / 6.0,
    "hard_swish": lambda v: v * min(max(v + 3.0, 0.0), 6.0) / 6.0,
    "relu6": lambda v: min(max(v, 0.0), 6.0),
    "leaky_relu": lambda v: v if v > 0 else 0.2 * v,
    "softsign": lambda v: v / (1.0 + abs(v)),
    "softplus": lambda v: math.log1p(math.exp(v)),
    "selu": lambda v: 1.0507009873554805 * (v if v > 0 else 1.6732632423543772 * (math.exp(v) - 1.0)),
    "elu": lambda v: v if v > 0 else math.exp(v) - 1.0,
    "exponential": math.exp,
    "linear": lambda v: v,
    "tanh": math.tanh,
    "sigmoid": _sig,
    "relu": lambda v: max(v, 0.0),
    "log_sigmoid": lambda v: -math.log1p(math.exp(-v)),
    "celu": lambda v: max(0.0, v) + min(0.0, math.exp(v) - 1.0),
    "hard_tanh": lambda v: min(max(v, -1.0), 1.0),
    "hard_shrink": lambda v: v if abs(v) > 0.5 else 0.0,
    "soft_shrink": lambda v: v - 0.5 if v > 0.5 else (v + 0.5 if v < -0.5 else 0.0),
    "tanh_shrink": lambda v: v - math.tanh(v),
    "squareplus": lambda v: (v + math.sqrt(v * v + 4.0)) / 2.0,
    "sparse_plus": lambda v: 0.0 if v <= -1 else (v if v >= 1 else (v + 1) ** 2 / 4),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_function_string_name_and_dense_activation_agree_with_keras_formula(name: str) -> None:
    x = torch.tensor(X)
    want = [EXPECTED[name](v) for v in X]
    np.testing.assert_allclose(getattr(activations, name)(x).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(activations.get(name)(x).numpy(), want, rtol=1e-5, atol=1e-6)
    dense = layers.Dense(5, activation=name, use_bias=False)
    dense(x[None])
    dense.set_weights([np.eye(5)])
    np.testing.assert_allclose(dense(x[None]).detach().numpy()[0], want, rtol=1e-5, atol=1e-6)


def test_gelu_approximate_is_the_tanh_form() -> None:
    v = 0.7
    tanh_form = 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))
    assert activations.gelu(torch.tensor([v]), approximate=True).item() == pytest.approx(tanh_form, rel=1e-6)
    assert activations.gelu(torch.tensor([v])).item() != pytest.approx(tanh_form, rel=1e-6)


def test_log_softmax_and_glu() -> None:
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    np.testing.assert_allclose(activations.log_softmax(x).exp().sum().item(), 1.0, rtol=1e-6)
    np.testing.assert_allclose(activations.glu(x).numpy(), [[1.0 * _sig(3.0), 2.0 * _sig(4.0)]], rtol=1e-6)
    with pytest.raises(ValueError, match="must be even"):
        activations.glu(torch.ones(1, 3))


def test_serialize_and_deserialize_round_trip() -> None:
    assert activations.serialize(activations.gelu) == "gelu"
    assert activations.serialize(keras.activations.swish) == "silu"
    assert activations.serialize("ReLU") == "relu"
    assert activations.deserialize("gelu") is activations.gelu
    assert activations.deserialize({"class_name": "function", "config": "hard_swish"}) is activations.hard_silu

    def my_act(x: torch.Tensor) -> torch.Tensor:
        return 2 * x

    assert activations.serialize(my_act) == "my_act"
    assert activations.deserialize("my_act", custom_objects={"my_act": my_act}) is my_act


def test_serialize_and_deserialize_errors_say_what_to_pass() -> None:
    with pytest.raises(ValueError, match="Unknown activation: 'my_act'.*custom_objects"):
        activations.deserialize("my_act")
    with pytest.raises(ValueError, match="lambda or a module has no name"):
        activations.serialize(lambda x: x)
    with pytest.raises(ValueError, match="Unknown activation: 'nope'"):
        activations.serialize("nope")
    with pytest.raises(ValueError, match="Received: config=3"):
        activations.deserialize(3)  # type: ignore[arg-type]
