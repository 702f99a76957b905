"""What keras.io's "making new layers and models via subclassing" guide uses: weights that are
variables (``assign_add``), ``add_loss``, ``keras.activations`` functions, ``build`` with several
inputs and ``fit`` of a model without trainable weights or without a compiled loss."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import activations, layers


class ComputeSum(layers.Layer):
    def __init__(self, input_dim: int) -> None:
        super().__init__()
        self.total = self.add_weight(initializer="zeros", shape=(input_dim,), trainable=False)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        self.total.assign_add(torch.sum(inputs, dim=0))
        return self.total


def test_weights_are_variables_with_assign_and_numpy() -> None:
    my_sum = ComputeSum(2)
    assert my_sum(torch.ones(2, 2)).numpy().tolist() == [2.0, 2.0]
    assert my_sum(torch.ones(2, 2)).numpy().tolist() == [4.0, 4.0]
    assert len(my_sum.weights) == 1 and len(my_sum.non_trainable_weights) == 1 and my_sum.trainable_weights == []
    dense = layers.Dense(2)
    dense(torch.zeros(1, 3))
    assert dense.weights == [dense.kernel, dense.bias]
    dense.kernel.assign(np.ones((3, 2), "float32"))
    assert dense.kernel.numpy().sum() == 6.0  # numpy() works on a trainable weight, as in Keras
    assert dense.kernel.requires_grad


class ActivityRegularizationLayer(layers.Layer):
    def __init__(self, rate: float = 1e-2) -> None:
        super().__init__()
        self.rate = rate

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        self.add_loss(self.rate * torch.mean(inputs))
        return inputs


class OuterLayer(layers.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.activity_reg = ActivityRegularizationLayer(0.5)

    def call(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.activity_reg(inputs)


def test_add_loss_keeps_the_losses_of_the_latest_call() -> None:
    layer = OuterLayer()
    assert layer.losses == []
    layer(torch.full((1, 2), 4.0))
    assert [float(v) for v in layer.losses] == [2.0]
    layer(torch.full((1, 2), 2.0))  # reset at the start of each outermost call
    assert [float(v) for v in layer.losses] == [1.0]
    regularized = layers.Dense(1, kernel_regularizer=keras.regularizers.l2(1e-3))
    regularized(torch.zeros(1, 2))
    want = 1e-3 * float((regularized.kernel**2).sum())
    assert [float(v) for v in regularized.losses] == pytest.approx([want])


def test_fit_adds_add_loss_losses_and_trains_on_them_alone() -> None:
    inputs = keras.Input(shape=(3,))
    outputs = ActivityRegularizationLayer(1.0)(layers.Dense(3, kernel_initializer="ones")(inputs))
    model = keras.Model(inputs, outputs)
    x = np.ones((4, 3), "float32")
    model.compile(optimizer="sgd", loss="mse")
    logged = model.evaluate(x, np.zeros((4, 3), "float32"), verbose=0)
    # mse of the outputs (all 3.0) is 9; the added loss is mean(outputs) = 3
    assert logged == pytest.approx(12.0)
    model.compile(optimizer=keras.optimizers.SGD(0.1))  # no loss: add_loss's losses are the loss
    history = model.fit(x, x, epochs=3, batch_size=4, verbose=0)
    assert history.history["loss"][0] == pytest.approx(3.0)
    assert history.history["loss"][-1] < history.history["loss"][0]  # it trains on the added loss


def test_a_subclassed_model_adds_its_own_loss() -> None:
    class Model(keras.Model):
        def __init__(self) -> None:
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, inputs: torch.Tensor) -> torch.Tensor:
            out = self.dense(inputs)
            self.add_loss(torch.tensor(5.0))
            return out

    model = Model()
    model(torch.zeros(1, 2))
    model(torch.zeros(1, 2))
    assert [float(v) for v in model.losses] == [5.0]


def test_fit_of_a_model_without_trainable_weights_reports_the_loss() -> None:
    inputs = keras.Input(shape=(3,))
    model = keras.Model(inputs, ActivityRegularizationLayer(1.0)(inputs))
    model.compile(optimizer="adam", loss="mse")
    x = np.full((2, 3), 2.0, "float32")
    history = model.fit(x, np.zeros((2, 3), "float32"), verbose=0)
    assert history.history["loss"] == pytest.approx([4.0 + 2.0])


def test_add_loss_refuses_a_callable() -> None:
    with pytest.raises(TypeError, match="loss tensor"):
        ActivityRegularizationLayer().add_loss(lambda: torch.zeros(()))


def test_build_gets_a_tuple_of_shapes_for_a_tuple_input() -> None:
    seen: list[Any] = []

    class Pair(layers.Layer):
        def build(self, input_shape: Any) -> None:
            seen.append(input_shape)

        def call(self, inputs: Any) -> torch.Tensor:
            a, b = inputs
            return a + b

    Pair()((torch.zeros(2, 3), torch.zeros(2, 3)))
    assert seen == [(torch.Size([2, 3]), torch.Size([2, 3]))]


def test_activation_functions_match_keras() -> None:
    x = torch.tensor([-2.0, 0.5, 8.0])
    assert activations.relu(x).tolist() == [0.0, 0.5, 8.0]
    assert activations.relu(x, negative_slope=0.1, max_value=6.0).tolist() == pytest.approx([-0.2, 0.5, 6.0])
    assert activations.relu(x, threshold=1.0).tolist() == [0.0, 0.0, 8.0]
    assert activations.leaky_relu(x).tolist() == pytest.approx([-0.4, 0.5, 8.0])
    torch.testing.assert_close(activations.softmax(torch.zeros(1, 4)), torch.full((1, 4), 0.25))
    torch.testing.assert_close(activations.sigmoid(torch.zeros(2)), torch.full((2,), 0.5))
    torch.testing.assert_close(activations.hard_sigmoid(torch.tensor([0.0, 3.0])), torch.tensor([0.5, 1.0]))
    # a function given as activation= resolves to the named module, so the layer still saves
    assert activations.get(activations.relu).__class__ is torch.nn.ReLU


def test_losses_belong_to_the_latest_call_only() -> None:
    class Sometimes(layers.Layer):
        def call(self, inputs: torch.Tensor, training: bool | None = None) -> torch.Tensor:
            if training:
                self.add_loss(inputs.sum())
            return inputs

    inputs = keras.Input(shape=(2,))
    model = keras.Model(inputs, ActivityRegularizationLayer(1.0)(Sometimes()(inputs)))
    assert len(model.losses) == 1  # the symbolic build's loss, until the first real call
    model(torch.full((1, 2), 3.0), training=True)
    assert sorted(float(v) for v in model.losses) == [3.0, 6.0]
    model(torch.full((1, 2), 1.0), training=False)  # no training loss in this call
    assert [float(v) for v in model.losses] == [1.0]
