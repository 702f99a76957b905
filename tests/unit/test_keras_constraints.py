"""Weight constraints (keras.constraints): Keras 3's formulas, applied by the optimizer right after
each update of the constrained weight (fit, apply_gradients), names and custom Constraint classes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import constraints

W = np.array([[3.0, 0.5, -1.0], [4.0, 0.0, 2.0]], dtype=np.float32)


def _norm0(w: np.ndarray) -> np.ndarray:
    return np.sqrt((w**2).sum(axis=0, keepdims=True))


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        (constraints.MaxNorm(2.0), W * np.clip(_norm0(W), 0, 2.0) / (1e-7 + _norm0(W))),
        (constraints.NonNeg(), np.maximum(W, 0.0)),
        (constraints.UnitNorm(), W / (1e-7 + _norm0(W))),
        (
            constraints.MinMaxNorm(1.0, 2.0, rate=0.5),
            W * (0.5 * np.clip(_norm0(W), 1.0, 2.0) + 0.5 * _norm0(W)) / (1e-7 + _norm0(W)),
        ),
        (constraints.MaxNorm(1.0, axis=1), W / np.maximum(np.sqrt((W**2).sum(1, keepdims=True)), 1.0)),
    ],
)
def test_formulas_match_keras(constraint, expected) -> None:
    np.testing.assert_allclose(constraint(torch.tensor(W)).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_names_configs_and_errors() -> None:
    assert isinstance(constraints.get("max_norm"), constraints.MaxNorm)
    assert isinstance(constraints.get("NonNeg"), constraints.NonNeg)
    assert isinstance(constraints.get("unit_norm"), constraints.UnitNorm)
    assert isinstance(constraints.get("min_max_norm"), constraints.MinMaxNorm)
    assert constraints.max_norm is constraints.MaxNorm
    restored = constraints.deserialize(constraints.serialize(constraints.MaxNorm(3.0, axis=[0, 1])))
    assert restored.get_config() == {"max_value": 3.0, "axis": [0, 1]}
    with pytest.raises(ValueError, match=r"Unknown constraint 'maxnrom'.*max_norm"):
        constraints.get("maxnrom")
    with pytest.raises(TypeError, match="A constraint must be"):
        constraints.get(3)
    with pytest.raises(ValueError, match="min_value <= max_value"):
        constraints.MinMaxNorm(2.0, 1.0)


def test_applied_after_each_update_of_apply_gradients() -> None:
    layer = keras.layers.Dense(3, kernel_constraint=keras.constraints.NonNeg(), bias_constraint="max_norm")
    layer(torch.zeros(1, 2))
    with torch.no_grad():
        layer.kernel.copy_(torch.tensor(W))
        layer.bias.copy_(torch.tensor([3.0, 0.0, 4.0]))
    opt = keras.optimizers.SGD(learning_rate=1.0)
    grad_k = np.ones_like(W)
    opt.apply_gradients([(torch.tensor(grad_k), layer.kernel), (torch.zeros(3), layer.bias)])
    np.testing.assert_allclose(layer.kernel.detach().numpy(), np.maximum(W - grad_k, 0.0))
    np.testing.assert_allclose(layer.bias.detach().numpy(), np.array([3.0, 0.0, 4.0]) * 2.0 / 5.0, rtol=1e-6)


def test_fit_keeps_every_layer_kind_constrained() -> None:
    model = keras.Sequential(
        [
            keras.Input((5, 4)),
            keras.layers.Conv1D(3, 2, kernel_constraint=keras.constraints.MaxNorm(0.5, axis=[0, 1])),
            keras.layers.LSTM(3, recurrent_constraint="non_neg", return_sequences=True),
            keras.layers.BatchNormalization(gamma_constraint=keras.constraints.NonNeg()),
            keras.layers.Flatten(),
            keras.layers.Dense(2, kernel_constraint="unit_norm"),
        ]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse")
    rng = np.random.default_rng(0)
    model.fit(rng.normal(size=(16, 5, 4)).astype("float32"), 10 * rng.normal(size=(16, 2)).astype("float32"), verbose=0)
    conv, lstm, bn, _, dense = model.layers
    assert float(torch.sqrt((conv.kernel.detach() ** 2).sum(dim=(0, 1))).max()) <= 0.5 + 1e-5
    assert float(lstm.recurrent_kernel.detach().min()) >= 0.0
    assert float(bn.gamma.detach().min()) >= 0.0
    np.testing.assert_allclose(dense.kernel.detach().norm(dim=0).numpy(), 1.0, rtol=1e-5)


def test_custom_constraint_class_and_add_weight() -> None:
    class Clip(keras.constraints.Constraint):
        def __call__(self, w):
            return w.clamp(-0.1, 0.1)

    class Scale(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", constraint=Clip())

        def call(self, inputs):
            return inputs * self.w

    layer = Scale()
    layer(torch.ones(1, 3))
    keras.optimizers.Adam(0.01).apply_gradients([(torch.ones(3), layer.w)])
    assert layer.w.detach().tolist() == pytest.approx([0.1, 0.1, 0.1])


def test_constraint_on_a_weight_the_layer_lacks_is_named() -> None:
    layer = keras.layers.Dense(2, embeddings_constraint="non_neg")
    with pytest.raises(ValueError, match=r"\['embeddings_constraint'\].*no weight"):
        layer(torch.ones(1, 2))


def test_saved_and_loaded_with_the_model(tmp_path) -> None:
    model = keras.Sequential(
        [keras.Input((3,)), keras.layers.Dense(2, kernel_constraint=keras.constraints.MaxNorm(1.5))]
    )
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    assert loaded.layers[0].kernel.constraint.get_config() == {"max_value": 1.5, "axis": 0}
