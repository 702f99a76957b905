"""Layer variable lists, list inputs, Attention/AdditiveAttention and RandomHeight/RandomWidth against Keras's formulas."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras
from unison.keras import layers
from unison.keras.layers.masking import get_mask, set_mask

pytestmark = pytest.mark.timeout(120)


# --- variable lists ----------------------------------------------------------------------------
def test_dense_variable_lists_are_kernel_then_bias_and_feed_tape_gradient() -> None:
    layer = layers.Dense(2)
    x = torch.tensor([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x))
    grads = tape.gradient(y, layer.trainable_variables)
    assert [v.name for v in layer.variables] == ["kernel", "bias"]  # Keras 3: no ":0"
    assert [v.path for v in layer.variables] == [f"{layer.name}/kernel", f"{layer.name}/bias"]
    assert layer.variables == layer.weights == layer.trainable_weights == layer.trainable_variables
    assert layer.non_trainable_variables == [] and layer.non_trainable_weights == []
    # d sum(x @ W + b) / dW = x^T @ ones, / db = ones
    np.testing.assert_allclose(grads[0].numpy(), [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    np.testing.assert_allclose(grads[1].numpy(), [1.0, 1.0])


def test_batch_normalization_lists_moving_statistics_as_non_trainable() -> None:
    bn = layers.BatchNormalization()
    bn(torch.ones(4, 3), training=True)
    assert [tuple(v.shape) for v in bn.weights] == [(3,)] * 4
    assert len(bn.trainable_variables) == 2 and len(bn.non_trainable_variables) == 2
    assert bn.weights[:2] == bn.trainable_weights and bn.weights[2:] == bn.non_trainable_weights
    mean, var = bn.non_trainable_weights
    # one training step on a batch of ones from (0, 1), Keras's momentum 0.99
    np.testing.assert_allclose(mean.numpy(), np.full(3, 0.01), rtol=1e-5)
    np.testing.assert_allclose(var.numpy(), np.full(3, 0.99), rtol=1e-5)
    assert len(bn.get_weights()) == 4


def test_frozen_layer_moves_weights_to_non_trainable_and_nested_layers_follow_creation_order() -> None:
    class Block(layers.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.first, self.second = layers.Dense(3), layers.Dense(1)

        def call(self, inputs: torch.Tensor) -> torch.Tensor:
            return self.second(self.first(inputs))

    block = Block()
    block(torch.zeros(2, 4))
    assert [tuple(v.shape) for v in block.trainable_variables] == [(4, 3), (3,), (3, 1), (1,)]
    block.first.trainable = False
    assert [tuple(v.shape) for v in block.trainable_variables] == [(3, 1), (1,)]
    assert [tuple(v.shape) for v in block.non_trainable_variables] == [(4, 3), (3,)]


def test_set_weights_round_trips_and_checks_count_and_shapes() -> None:
    layer = layers.Dense(2)
    layer(torch.zeros(1, 3))
    kernel, bias = np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0])
    layer.set_weights([kernel, bias])
    np.testing.assert_allclose(layer(torch.tensor([[1.0, 0.0, 0.0]])).detach().numpy(), [[1.0, 0.0]])
    with pytest.raises(ValueError, match="expects 2 arrays"):
        layer.set_weights([kernel])
    with pytest.raises(ValueError, match=r"weight 0 has shape \(3, 2\).*\(2, 3\)"):
        layer.set_weights([kernel.T, bias])


# --- list inputs ---------------------------------------------------------------------------------
class _SumOfProducts(layers.Layer):
    def build(self, input_shape: list[torch.Size]) -> None:
        self.shapes_seen = [tuple(s) for s in input_shape]
        self.w = self.add_weight(shape=(input_shape[0][-1], 1), initializer="ones")

    def call(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        a, b = inputs
        return tf.matmul(a, self.w) + tf.matmul(b, self.w)


def test_custom_layer_on_a_list_builds_from_the_list_of_shapes() -> None:
    layer = _SumOfProducts()
    out = layer([torch.ones(2, 3), 2 * torch.ones(2, 3)])
    assert layer.shapes_seen == [(2, 3), (2, 3)]
    np.testing.assert_allclose(out.detach().numpy(), [[9.0], [9.0]])


def test_custom_list_layer_in_a_functional_model() -> None:
    a, b = keras.Input((3,)), keras.Input((3,))
    model = keras.Model([a, b], _SumOfProducts()([a, b]))
    out = model.predict([np.ones((2, 3)), np.zeros((2, 3))], verbose=0)
    np.testing.assert_allclose(out, [[3.0], [3.0]])


# --- Attention -----------------------------------------------------------------------------------
def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_attention_dot_matches_softmax_of_query_key_products() -> None:
    torch.manual_seed(0)
    q, v, k = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    out, scores = layers.Attention()([q, v, k], return_attention_scores=True)
    weights = _softmax(q.numpy() @ k.numpy().transpose(0, 2, 1))
    np.testing.assert_allclose(scores.detach().numpy(), weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.detach().numpy(), weights @ v.numpy(), rtol=1e-5, atol=1e-6)


def test_attention_use_scale_and_concat_score_mode() -> None:
    torch.manual_seed(1)
    q, v = torch.randn(1, 2, 3), torch.randn(1, 4, 3)
    layer = layers.Attention(use_scale=True, score_mode="concat")
    out, scores = layer([q, v], return_attention_scores=True)
    assert [w.name for w in layer.weights] == ["scale", "concat_score_weight"]
    with torch.no_grad():
        layer.scale.fill_(0.5)
        layer.concat_score_weight.fill_(2.0)
    out, scores = layer([q, v], return_attention_scores=True)
    raw = 2.0 * np.tanh(0.5 * (q.numpy()[:, :, None, :] + v.numpy()[:, None, :, :])).sum(-1)
    np.testing.assert_allclose(scores.detach().numpy(), _softmax(raw), rtol=1e-5, atol=1e-6)


def test_attention_masks_value_steps_query_steps_and_causal() -> None:
    q, v = torch.ones(1, 3, 2), torch.ones(1, 3, 2)
    v_mask = torch.tensor([[True, True, False]])
    q_mask = torch.tensor([[True, False, True]])
    out, scores = layers.Attention()([q, v], mask=[q_mask, v_mask], return_attention_scores=True)
    np.testing.assert_allclose(scores[0].detach().numpy(), [[0.5, 0.5, 0.0]] * 3, atol=1e-6)
    np.testing.assert_allclose(out[0, 1].detach().numpy(), [0.0, 0.0])  # masked query step
    assert get_mask(out).tolist() == q_mask.tolist()  # the output keeps the query's mask
    _, causal = layers.Attention()([q, v], return_attention_scores=True, use_causal_mask=True)
    np.testing.assert_allclose(
        causal[0].detach().numpy(), [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]], atol=1e-6
    )
    # masks attached to the inputs (Embedding(mask_zero=True)) are used by default
    _, from_inputs = layers.Attention()([q, set_mask(v.clone(), v_mask)], return_attention_scores=True)
    np.testing.assert_allclose(from_inputs[0, 0].detach().numpy(), [0.5, 0.5, 0.0], atol=1e-6)


def test_additive_attention_matches_bahdanau_scores() -> None:
    torch.manual_seed(2)
    q, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    layer = layers.AdditiveAttention()
    layer([q, v])
    scale = layer.scale.detach().numpy()
    assert scale.shape == (4,)
    out, scores = layer([q, v], return_attention_scores=True)
    raw = (scale * np.tanh(q.numpy()[:, :, None, :] + v.numpy()[:, None, :, :])).sum(-1)
    np.testing.assert_allclose(scores.detach().numpy(), _softmax(raw), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.detach().numpy(), _softmax(raw) @ v.numpy(), rtol=1e-5, atol=1e-5)


def test_attention_in_a_functional_model_with_scores_output() -> None:
    qi, vi = keras.Input((3, 4)), keras.Input((5, 4))
    out, scores = layers.Attention()([qi, vi], return_attention_scores=True)
    model = keras.Model([qi, vi], [out, scores])
    o, s = model.predict([np.ones((2, 3, 4)), np.ones((2, 5, 4))], verbose=0)
    assert o.shape == (2, 3, 4)
    np.testing.assert_allclose(s, np.full((2, 3, 5), 0.2), atol=1e-6)


def test_attention_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match=r"score_mode.*Received: score_mode='add'"):
        layers.Attention(score_mode="add")
    with pytest.raises(ValueError, match=r"list of inputs.*\[query, value\]"):
        layers.Attention()(torch.ones(1, 2, 3))
    with pytest.raises(ValueError, match="same last dimension"):
        layers.Attention()([torch.ones(1, 2, 3), torch.ones(1, 2, 4)])


def test_attention_dropout_only_when_training_and_seeded_draws_repeat() -> None:
    q = torch.ones(1, 4, 2)
    layer = layers.Attention(dropout=0.5, seed=3)
    _, inference = layer([q, q], return_attention_scores=True, training=False)
    np.testing.assert_allclose(inference.detach().numpy(), np.full((1, 4, 4), 0.25))
    _, first = layers.Attention(dropout=0.5, seed=3)([q, q], return_attention_scores=True, training=True)
    _, again = layers.Attention(dropout=0.5, seed=3)([q, q], return_attention_scores=True, training=True)
    assert set(np.unique(first.detach().numpy()).round(6)) <= {0.0, 0.5}
    np.testing.assert_array_equal(first.detach().numpy(), again.detach().numpy())


# --- RandomHeight / RandomWidth -------------------------------------------------------------------
def test_random_height_and_width_resize_in_training_only() -> None:
    images = torch.rand(2, 10, 8, 3)
    assert tuple(layers.RandomHeight((0.5, 0.5))(images).shape) == (2, 15, 8, 3)
    assert tuple(layers.RandomWidth((-0.5, -0.5))(images).shape) == (2, 10, 4, 3)
    assert torch.equal(layers.RandomHeight(0.3)(images, training=False), images)
    sizes = {layers.RandomWidth(0.4, seed=s)(images).shape[2] for s in range(8)}
    assert sizes <= set(range(4, 12)) and len(sizes) > 1  # int(8 * (1 + u)), u in [-0.4, 0.4]
    single = layers.RandomHeight((1.0, 1.0))(torch.ones(4, 3, 1))  # one unbatched image
    np.testing.assert_allclose(single.numpy(), np.ones((8, 3, 1)))


def test_random_height_rejects_a_factor_below_minus_one() -> None:
    with pytest.raises(ValueError, match=r"larger than -1.*factor=\(-1.5, 0.2\)"):
        layers.RandomHeight((-1.5, 0.2))
    with pytest.raises(NotImplementedError, match="interpolation"):
        layers.RandomWidth(0.2, interpolation="cubic-ish")


# --- small Keras 3 layers ------------------------------------------------------------------------
def test_one_dimensional_padding_cropping_and_upsampling() -> None:
    x = torch.arange(6.0).reshape(1, 3, 2)
    padded = layers.ZeroPadding1D((1, 2))(x)
    np.testing.assert_allclose(padded[0].numpy(), [[0, 0], [0, 1], [2, 3], [4, 5], [0, 0], [0, 0]])
    np.testing.assert_allclose(layers.Cropping1D((1, 1))(x)[0].numpy(), [[2, 3]])
    np.testing.assert_allclose(layers.UpSampling1D(2)(x)[0, :, 1].numpy(), [1, 1, 3, 3, 5, 5])
    with pytest.raises(ValueError, match="leaves nothing"):
        layers.Cropping1D(2)(x)
    with pytest.raises(ValueError, match=r"Received: padding=-1"):
        layers.ZeroPadding1D(-1)
    with pytest.raises(ValueError, match=r"\(batch, steps, features\)"):
        layers.UpSampling1D(2)(torch.zeros(2, 3))


def test_alpha_dropout_keeps_selu_statistics_and_is_identity_at_inference() -> None:
    x = torch.randn(200_000)
    layer = layers.AlphaDropout(0.2, seed=0)
    out = layer(x, training=True)
    assert abs(out.mean().item()) < 0.02 and abs(out.std().item() - 1.0) < 0.02
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p**2)) ** -0.5
    dropped_value = a * alpha_p - a * alpha_p * 0.2
    dropped = torch.isclose(out, torch.tensor(dropped_value))
    assert abs(dropped.float().mean().item() - 0.2) < 0.01  # about rate of the values
    assert torch.equal(layer(x), x)


def test_dot_function_and_keras_alias_names() -> None:
    a, b = torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, 4.0]])
    np.testing.assert_allclose(layers.dot([a, b], axes=1).numpy(), [[11.0]])
    assert layers.Convolution2D is layers.Conv2D and layers.Convolution1D is layers.Conv1D
    assert layers.GlobalAvgPool2D is layers.GlobalAveragePooling2D


def test_layer_called_with_its_first_call_argument_by_name() -> None:
    # TF's NMT tutorial: attention_layer(query=..., value=..., mask=...)
    class Bahdanau(layers.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.attention = layers.AdditiveAttention(use_scale=False)

        def call(self, query: torch.Tensor, value: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            query_mask = torch.ones(query.shape[:-1], dtype=torch.bool)
            return self.attention(inputs=[query, value], mask=[query_mask, mask], return_attention_scores=True)

    value = torch.ones(2, 4, 3)
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    context, weights = Bahdanau()(query=torch.zeros(2, 1, 3), value=value, mask=mask)
    np.testing.assert_allclose(weights[:, 0].detach().numpy(), [[0.5, 0.5, 0, 0], [0.25] * 4], atol=1e-6)
    assert tuple(context.shape) == (2, 1, 3)
    with pytest.raises(TypeError, match=r"without inputs.*'inputs'.*\['values'\]"):
        layers.Dense(2)(values=torch.ones(1, 2))


def test_attention_over_feature_maps_and_rank_two_error() -> None:
    maps = torch.randn(2, 3, 4, 5)  # Conv2D outputs: attention over the next-to-last axis
    out = layers.Attention()([maps, maps])
    weights = _softmax(maps.numpy() @ maps.numpy().transpose(0, 1, 3, 2))
    np.testing.assert_allclose(out.detach().numpy(), weights @ maps.numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"\(batch, steps, features\).*Reshape"):
        layers.Attention()([torch.ones(2, 3), torch.ones(2, 3)])


def test_submodules_lists_the_layers_inside_depth_first_as_tf_modules_do():
    class Block(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.inner = keras.layers.Dense(2)

        def call(self, x):
            return self.inner(x)

    class Net(keras.Model):  # TF's modules guide: a Keras model is a tf.Module
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = keras.layers.Dense(1)

        def call(self, x):
            return self.head(self.block(x))

    net = Net()
    net(torch.zeros(1, 3))
    assert [type(m).__name__ for m in net.submodules] == ["Block", "Dense", "Dense"]
    assert net.submodules[1] is net.block.inner and net.block.submodules == (net.block.inner,)
    assert keras.layers.Dense(2).submodules == ()


def test_a_weight_constraint_is_attached_by_name_and_none_is_keras_default():
    assert isinstance(keras.layers.Dense(2, kernel_constraint="max_norm")(torch.zeros(1, 3)), torch.Tensor)
    layer = keras.layers.Dense(2, kernel_constraint=None, bias_constraint=None)  # what Keras code often passes
    assert layer(torch.zeros(1, 3)).shape == (1, 2)
    with pytest.raises(TypeError, match="Check the spelling"):
        keras.layers.Dense(2, kernal_initializer="ones")
