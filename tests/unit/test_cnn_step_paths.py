"""The CPU fast paths of the convolutional step (issue 28): they must not change what is computed.

- A Sequential's ``Conv2D(activation="relu")`` followed by ``MaxPooling2D`` pools before the ReLU:
  the outputs and the gradients are exactly those of the layers called one by one.
- It is used only where nothing can tell: not with a hook on the convolution, not for other
  activations, not for channels_first layers.
- Convolutions follow the ``mixed_bfloat16`` policy outside ``fit`` too (Keras computes them in
  bfloat16 in a custom loop), and a small CNN trains under it with float32 variables.
"""

from __future__ import annotations

import pytest
import torch

import unison as tf
import unison.keras.models.sequential as model_module  # Sequential.call fuses Conv2D+ReLU+pool
from unison.keras import mixed_precision

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _float32_policy():
    yield
    mixed_precision.set_global_policy("float32")


def _cnn(activation: str = "relu", data_format: str | None = None) -> tf.keras.Sequential:
    torch.manual_seed(0)
    return tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(8, 3, activation=activation, data_format=data_format),
            tf.keras.layers.MaxPooling2D(data_format=data_format),
            tf.keras.layers.Conv2D(8, 3, activation=activation, padding="same", data_format=data_format),
            tf.keras.layers.MaxPooling2D(padding="same", data_format=data_format),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(3),
        ]
    )


def _count_fused(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = model_module.run_conv_relu_pool

    def counting(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(model_module, "run_conv_relu_pool", counting)
    return calls


def _layer_by_layer(model: tf.keras.Sequential, x: torch.Tensor) -> torch.Tensor:
    for layer in model.layers:
        x = layer(x)
    return x


@pytest.mark.parametrize("shape", [(4, 17, 17, 2), (3, 12, 13, 1)])
def test_conv_relu_pool_in_sequential_is_exact(monkeypatch, shape):
    model = _cnn()
    x = torch.randn(*shape)
    model(x)  # builds the layers (the first call runs them one by one)
    fused = _count_fused(monkeypatch)
    y = model(x)
    grads = torch.autograd.grad(y.square().sum(), list(model.parameters()))
    assert len(fused) == 2  # both Conv2D + MaxPooling2D pairs took the fused path
    y_ref = _layer_by_layer(model, x)
    grads_ref = torch.autograd.grad(y_ref.square().sum(), list(model.parameters()))
    assert torch.equal(y, y_ref)
    for g, g_ref in zip(grads, grads_ref):
        assert torch.equal(g, g_ref)


def test_conv_relu_pool_exact_under_mixed_bfloat16(monkeypatch):
    mixed_precision.set_global_policy("mixed_bfloat16")
    model = _cnn()
    x = torch.randn(4, 17, 17, 2)
    model(x)
    fused = _count_fused(monkeypatch)
    y = model(x)
    assert len(fused) == 2
    assert torch.equal(y, _layer_by_layer(model, x))


def test_hooked_conv_sees_its_relu_output(monkeypatch):
    model = _cnn()
    x = torch.randn(4, 17, 17, 2)
    model(x)
    seen = []
    model.layers[0].register_forward_hook(lambda module, args, out: seen.append(out))
    fused = _count_fused(monkeypatch)
    model(x)
    assert len(fused) == 1  # only the unhooked second pair
    assert seen and seen[0].min() >= 0  # the hook got the activation's output, as Keras computes it


@pytest.mark.parametrize("activation", ["tanh", "elu"])
def test_other_activations_are_not_reordered(monkeypatch, activation):
    model = _cnn(activation)
    x = torch.randn(2, 10, 10, 2)
    model(x)
    fused = _count_fused(monkeypatch)
    model(x)
    assert fused == []


def test_channels_first_layers_are_not_reordered(monkeypatch):
    model = _cnn(data_format="channels_first")
    x = torch.randn(2, 2, 10, 10)
    y0 = model(x)
    fused = _count_fused(monkeypatch)
    assert torch.equal(model(x), y0)
    assert fused == []


def test_conv2d_computes_in_bfloat16_under_mixed_policy_outside_fit():
    mixed_precision.set_global_policy("mixed_bfloat16")
    conv = tf.keras.layers.Conv2D(4, 3)
    conv_f32 = tf.keras.layers.Conv2D(4, 3, dtype="float32")
    conv1d = tf.keras.layers.Conv1D(4, 3)
    x = torch.randn(2, 8, 8, 3)
    assert conv(x).dtype == torch.bfloat16
    assert conv.kernel.dtype == torch.float32  # variables stay float32
    assert conv_f32(x).dtype == torch.float32
    assert conv1d(torch.randn(2, 8, 3)).dtype == torch.bfloat16


@pytest.mark.slow
def test_cnn_trains_under_mixed_bfloat16_custom_loop():
    mixed_precision.set_global_policy("mixed_bfloat16")
    torch.manual_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(8, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(2, dtype="float32"),
        ]
    )
    # class 1: a bright upper half; class 0: a bright lower half
    x = torch.rand(32, 12, 12, 1) * 0.2
    y = torch.arange(32) % 2
    x[y == 1, :6] += 1.0
    x[y == 0, 6:] += 1.0
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam(0.01)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, logits

    first, _ = step()
    for _ in range(20):
        loss, logits = step()
    assert logits.dtype == torch.float32
    assert all(v.dtype == torch.float32 for v in model.trainable_variables)
    assert float(loss) < 0.5 * float(first)
    assert float((logits.argmax(-1) == y).float().mean()) > 0.9
