"""The issue-35 layers beyond what the Keras comparison covers: TorchModuleWrapper (weights tracked,
trained, frozen, saved), InputSpec on unison's own layers, and each layer's errors for a user mistake."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras import layers

pytestmark = pytest.mark.timeout(300)


def _model_with_torch_module() -> keras.Model:
    torch.manual_seed(0)
    return keras.Sequential([keras.Input((4,)), layers.TorchModuleWrapper(torch.nn.Linear(4, 3)), layers.Dense(1)])


def test_torch_module_wrapper_tracks_the_modules_weights():
    inner = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
    layer = layers.TorchModuleWrapper(inner)
    out = layer(torch.ones(3, 4))
    assert tuple(out.shape) == (3, 2)
    assert layer.count_params() == 4 * 5 + 5 + 5 * 2 + 2
    assert [tuple(w.shape) for w in layer.trainable_weights] == [(5, 4), (5,), (2, 5), (2,)]
    layer.trainable = False
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 4


def test_torch_module_wrapper_trains_in_fit_and_freezes():
    model = _model_with_torch_module()
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    x = np.linspace(-1, 1, 32, dtype="float32").reshape(8, 4)
    y = x.sum(axis=1, keepdims=True)
    before = model.layers[0].get_weights()
    model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    after = model.layers[0].get_weights()
    assert any(not np.allclose(a, b) for a, b in zip(before, after))
    model.layers[0].trainable = False
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    model.fit(x, y, epochs=1, batch_size=4, verbose=0)
    for a, b in zip(after, model.layers[0].get_weights()):
        np.testing.assert_array_equal(a, b)


def test_torch_module_wrapper_saves_weights_and_the_model(tmp_path):
    model = _model_with_torch_module()
    x = np.linspace(-1, 1, 8, dtype="float32").reshape(2, 4)
    want = model.predict(x, verbose=0)
    weights = os.path.join(tmp_path, "w.weights.h5")
    model.save_weights(weights)
    other = _model_with_torch_module()
    other.layers[0].set_weights([np.zeros_like(w) for w in other.layers[0].get_weights()])
    other.load_weights(weights)
    np.testing.assert_allclose(other.predict(x, verbose=0), want, rtol=1e-6)
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    with pytest.raises(ValueError, match="safe_mode=False"):
        keras.models.load_model(path)
    loaded = keras.models.load_model(path, safe_mode=False)
    assert isinstance(loaded.layers[0], layers.TorchModuleWrapper)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), want, rtol=1e-6)


def test_torch_module_wrapper_refuses_a_non_module():
    with pytest.raises(ValueError, match="takes a torch.nn.Module"):
        layers.TorchModuleWrapper(lambda x: x)


def test_input_spec_set_by_a_layer_is_checked_on_each_call():
    class Images(layers.Layer):
        def __init__(self):
            super().__init__()
            self.input_spec = layers.InputSpec(ndim=4, axes={-1: 3})

        def call(self, inputs):
            return inputs

    layer = Images()
    assert tuple(layer(torch.zeros(1, 2, 2, 3)).shape) == (1, 2, 2, 3)
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        layer(torch.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        layer(torch.zeros(1, 2, 2, 4))
    assert keras.InputSpec is layers.InputSpec
    spec = layers.InputSpec(shape=(None, 3), dtype="float32")
    assert layers.InputSpec.from_config(spec.get_config()).shape == (None, 3)
    with pytest.raises(ValueError, match="expected dtype=float32, found dtype=int64"):
        from unison.keras.layers.input_spec import assert_input_compatibility

        assert_input_compatibility(spec, torch.zeros(2, 3, dtype=torch.int64), "x")


def test_input_spec_rejects_bad_axes():
    with pytest.raises(TypeError, match="integer keys"):
        layers.InputSpec(axes={"last": 3})
    with pytest.raises(ValueError, match="greater than the maximum allowed value"):
        layers.InputSpec(ndim=2, axes={2: 3})


def test_spectral_normalization_errors():
    with pytest.raises(ValueError, match="power_iterations"):
        layers.SpectralNormalization(layers.Dense(2), power_iterations=0)
    wrapped = layers.SpectralNormalization(layers.Flatten())
    with pytest.raises(ValueError, match="nor 'embeddings'"):
        wrapped(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="valid Keras layer"):
        layers.Wrapper(torch.nn.Linear(2, 2))


def test_spectral_normalization_trains_to_unit_norm_kernel():
    layer = layers.SpectralNormalization(layers.Dense(4), power_iterations=30)
    layer(torch.randn(2, 3), training=True)
    sigma = torch.linalg.matrix_norm(layer.kernel.detach(), ord=2)
    assert abs(float(sigma) - 1.0) < 1e-3


def test_einsum_dense_errors():
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        layers.EinsumDense("ab,bc", output_shape=3)
    with pytest.raises(ValueError, match="has no corresponding dim"):
        layers.EinsumDense("ab,bc->ad", output_shape=3)(torch.zeros(2, 4))
    with pytest.raises(ValueError, match="do not match at shared dimension"):
        layers.EinsumDense("abc,cd->abd", output_shape=(5, 4))(torch.zeros(2, 3, 5))
    with pytest.raises(ValueError, match="Bias dimension 'x'"):
        layers.EinsumDense("ab,bc->ac", output_shape=3, bias_axes="x")(torch.zeros(2, 4))
    with pytest.raises(ValueError, match="lora_rank"):
        layers.EinsumDense("ab,bc->ac", output_shape=3, lora_rank=2)


@pytest.mark.parametrize(
    ("equation", "output_shape", "shape"),
    [("ab,bc->ac", 3, (4, 5)), ("...b,bc->...c", 3, (2, 4, 5)), ("abc,cde->abde", (None, 2, 3), (2, 4, 5))],
)
def test_einsum_dense_matches_torch_einsum_and_backpropagates(equation, output_shape, shape):
    layer = layers.EinsumDense(equation, output_shape=output_shape, bias_axes=None)
    x = torch.randn(*shape, requires_grad=True)
    y = layer(x)
    torch.testing.assert_close(y, torch.einsum(equation, x, layer.kernel))
    y.sum().backward()
    assert x.grad is not None and layer.kernel.grad is not None


def test_einsum_dense_glorot_counts_fans_over_keras_axes():
    torch.manual_seed(0)
    layer = layers.EinsumDense("abc,cde->abde", output_shape=(None, 64, 32))
    layer(torch.zeros(1, 1, 16))
    limit = (6.0 / (16 + 64 * 32)) ** 0.5  # fan_in = c, fan_out = d * e (Keras 3's input/output axes)
    kernel = layer.kernel.detach()
    assert float(kernel.abs().max()) <= limit
    assert float(kernel.abs().max()) > 0.9 * limit


def test_group_query_attention_errors():
    with pytest.raises(ValueError, match="divisible"):
        layers.GroupQueryAttention(head_dim=2, num_query_heads=3, num_key_value_heads=2)
    with pytest.raises(ValueError, match="sliding_window"):
        layers.GroupQueryAttention(head_dim=2, num_query_heads=2, num_key_value_heads=1, sliding_window=0)
    gqa = layers.GroupQueryAttention(head_dim=2, num_query_heads=2, num_key_value_heads=1)
    with pytest.raises(ValueError, match=r"\(batch, seq, features\)"):
        gqa(torch.zeros(2, 4), torch.zeros(2, 4))


def test_group_query_attention_mask_gives_zero_weight_to_padding():
    gqa = layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2)
    q = torch.randn(2, 3, 4)
    v = torch.randn(2, 5, 4)
    value_mask = torch.tensor([[True, True, True, False, False], [True] * 5])
    out, scores = gqa(q, v, value_mask=value_mask, return_attention_scores=True)
    assert tuple(out.shape) == (2, 3, 4)
    assert float(scores[0, :, :, 3:].detach().abs().max()) == 0.0
    torch.testing.assert_close(scores.detach().sum(-1), torch.ones(2, 4, 3))


def test_rms_normalization_bad_axis():
    with pytest.raises(ValueError, match="out of bounds"):
        layers.RMSNormalization(axis=3)(torch.zeros(2, 3))


def test_reversible_embedding_reverse_and_soft_cap():
    layer = layers.ReversibleEmbedding(7, 3, logit_soft_cap=0.1)
    h = layer(torch.tensor([[1, 2]]))
    logits = layer(h, reverse=True)
    assert tuple(logits.shape) == (1, 2, 7) and float(logits.abs().max()) <= 0.1


def test_serialize_and_deserialize_errors():
    with pytest.raises(TypeError, match="takes a layer"):
        layers.serialize("dense")
    with pytest.raises(ValueError, match="'class_name'"):
        layers.deserialize({"units": 3})
    with pytest.raises(TypeError, match="Unknown layer"):
        layers.deserialize({"class_name": "NoSuchLayer", "config": {}})
    entry = layers.serialize(layers.SpectralNormalization(layers.Dense(2)))
    assert entry["config"]["layer"]["class_name"] == "Dense"
    assert isinstance(layers.deserialize(entry), layers.SpectralNormalization)


def test_abstract_rnn_cell_needs_its_parts():
    class NoCall(layers.AbstractRNNCell):
        state_size = output_size = 2

    with pytest.raises(NotImplementedError, match="call"):
        layers.RNN(NoCall())(torch.zeros(1, 2, 2))
    with pytest.raises(NotImplementedError, match="state_size"):
        _ = layers.AbstractRNNCell().state_size
    with pytest.raises(ValueError, match="batch_size"):
        NoCall().get_initial_state()


def test_sync_batch_normalization_refuses_per_replica_statistics():
    with pytest.raises(ValueError, match="synchronized=False"):
        layers.experimental.SyncBatchNormalization(synchronized=False)
    assert layers.experimental.SyncBatchNormalization().synchronized is True


def test_random_fourier_features_errors():
    with pytest.raises(ValueError, match="output_dim"):
        layers.experimental.RandomFourierFeatures(0)
    with pytest.raises(ValueError, match="Unsupported `kernel_initializer`"):
        layers.experimental.RandomFourierFeatures(2, kernel_initializer="cosine")
    with pytest.raises(ValueError, match="rank of the input tensor should be 2"):
        layers.experimental.RandomFourierFeatures(2)(torch.zeros(1, 2, 3))


def test_left_out_layers_say_what_to_use_instead():
    with pytest.raises(AttributeError, match="FeatureSpace"):
        _ = layers.DenseFeatures
    with pytest.raises(AttributeError, match="StringLookup"):
        _ = layers.experimental.DynamicEmbedding
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchLayer'"):
        _ = layers.NoSuchLayer
    assert not hasattr(layers, "__wrapped__")
