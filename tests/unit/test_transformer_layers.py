"""Keras layers for Transformers against Keras 3's documented behaviour (issue 16, item 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import unison as tf
from unison.keras import layers
from unison.keras.layers.masking import get_mask, set_mask

pytestmark = pytest.mark.timeout(120)


def _reference_mha(mha, query, value, mask=None):
    """Multi-head attention written with plain torch ops: einsum, explicit masked softmax."""
    h, k, v = mha.num_heads, mha.key_dim, mha.value_dim
    b, t, s = query.shape[0], query.shape[1], value.shape[1]

    def proj(dense, x, size):
        y = torch.einsum("bnd,de->bne", x, dense.kernel)
        if dense.bias is not None:
            y = y + dense.bias
        return y.reshape(b, x.shape[1], h, size)

    q, key, val = proj(mha.query_dense, query, k), proj(mha.key_dense, value, k), proj(mha.value_dense, value, v)
    scores = torch.einsum("bthk,bshk->bhts", q, key) / math.sqrt(k)
    if mask is not None:
        m = mask[:, None].expand(b, h, t, s)
        scores = scores.masked_fill(~m, -1e30)
    probs = torch.softmax(scores, dim=-1)
    if mask is not None:
        probs = probs * m
    out = torch.einsum("bhts,bshv->bthv", probs, val).reshape(b, t, h * v)
    out = torch.einsum("bte,eo->bto", out, mha.output_dense.kernel) + mha.output_dense.bias
    return out, probs


# --- LayerNormalization ------------------------------------------------------------------------
def test_layer_normalization_normalises_the_last_axis_with_keras_epsilon():
    torch.manual_seed(0)
    x = torch.randn(4, 5, 6) * 3 + 2
    ln = layers.LayerNormalization()
    y = ln(x)
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    torch.testing.assert_close(y, (x - mean) / torch.sqrt(var + 1e-3), atol=1e-5, rtol=1e-5)
    assert ln.epsilon == 1e-3 and tuple(ln.gamma.shape) == (6,) and tuple(ln.beta.shape) == (6,)


def test_layer_normalization_over_several_axes_and_without_parameters():
    torch.manual_seed(0)
    x = torch.randn(3, 4, 5)
    ln = layers.LayerNormalization(axis=[1, 2], center=False, scale=False, epsilon=1e-5)
    y = ln(x)
    assert len(list(ln.parameters())) == 0
    assert torch.allclose(y.mean(dim=(1, 2)), torch.zeros(3), atol=1e-5)
    ln2 = layers.LayerNormalization(axis=1)  # not trailing: computed by hand
    y2 = ln2(x)
    assert tuple(ln2.gamma.shape) == (4,)
    assert torch.allclose(y2.mean(dim=1), torch.zeros(3, 5), atol=1e-5)


def test_layer_normalization_rms_scaling_and_bad_axis():
    x = torch.tensor([[3.0, 4.0]])
    y = layers.LayerNormalization(rms_scaling=True, epsilon=1e-6)(x)
    # Keras 3 scales by the root of the variance (0.25 here), not of the mean square (12.5)
    torch.testing.assert_close(y, x / math.sqrt(0.25 + 1e-6), atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="Invalid axis 3"):
        layers.LayerNormalization(axis=3)(torch.zeros(2, 3))


# --- MultiHeadAttention --------------------------------------------------------------------------
def test_mha_shapes_follow_keras():
    torch.manual_seed(0)
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=2)
    target, source = torch.randn(4, 8, 16), torch.randn(4, 2, 16)
    out, scores = mha(target, source, return_attention_scores=True)
    assert tuple(out.shape) == (4, 8, 16) and tuple(scores.shape) == (4, 2, 8, 2)
    mha2 = layers.MultiHeadAttention(num_heads=3, key_dim=4, value_dim=5, output_shape=7)
    assert tuple(mha2(target, source, key=torch.randn(4, 2, 9)).shape) == (4, 8, 7)
    assert tuple(mha2.value_dense.kernel.shape) == (16, 15) and tuple(mha2.key_dense.kernel.shape) == (9, 12)


@pytest.mark.parametrize("case", ["plain", "causal", "padding", "attention_mask"])
def test_mha_equals_an_einsum_reference_within_1e_5(case):
    torch.manual_seed(1)
    mha = layers.MultiHeadAttention(num_heads=3, key_dim=4, value_dim=5)
    q, v = torch.randn(2, 6, 8), torch.randn(2, 6, 8)
    kwargs, mask = {}, None
    causal = torch.ones(6, 6, dtype=torch.bool).tril()[None].expand(2, 6, 6)
    if case == "causal":
        kwargs, mask = {"use_causal_mask": True}, causal
    elif case == "padding":
        keep = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=torch.bool)
        kwargs, mask = {"value_mask": keep}, keep[:, None, :].expand(2, 6, 6)
    elif case == "attention_mask":
        mask = torch.rand(2, 6, 6) > 0.3
        mask[:, :, 0] = True
        kwargs = {"attention_mask": mask}
    with torch.no_grad():
        fused = mha(q, v, **kwargs)
        explicit, scores = mha(q, v, return_attention_scores=True, **kwargs)
        ref, ref_probs = _reference_mha(mha, q, v, mask)
    torch.testing.assert_close(fused, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(explicit, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(scores, ref_probs, atol=1e-5, rtol=1e-5)


def test_mha_causal_mask_hides_the_future():
    torch.manual_seed(2)
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=4)
    x = torch.randn(1, 5, 8)
    changed = x.clone()
    changed[:, 3:] += 10.0  # change only steps 3 and 4
    with torch.no_grad():
        a, b = mha(x, x, use_causal_mask=True), mha(changed, changed, use_causal_mask=True)
        _, scores = mha(x, x, use_causal_mask=True, return_attention_scores=True)
    torch.testing.assert_close(a[:, :3], b[:, :3])
    assert not torch.allclose(a[:, 3:], b[:, 3:])
    assert torch.all(scores.triu(diagonal=1) == 0)


def test_mha_reads_padding_masks_from_embedding_mask_zero():
    torch.manual_seed(3)
    emb = layers.Embedding(10, 8, mask_zero=True)
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=4)
    ids = torch.tensor([[5, 6, 7, 0, 0]])
    other = torch.tensor([[5, 6, 7, 0, 0]])
    with torch.no_grad():
        x = emb(ids)
        assert get_mask(x).tolist() == [[True, True, True, False, False]]
        out, scores = mha(x, x, return_attention_scores=True)
        emb.embeddings[0] += 5.0  # the padding vector changes: the real steps must not see it
        out2 = mha(emb(other), emb(other))
    assert torch.all(scores[..., 3:] == 0)  # nobody attends to padding
    assert torch.all(scores[:, :, 3:, :] == 0)  # padding queries attend to nothing
    torch.testing.assert_close(out[:, :3], out2[:, :3])
    assert get_mask(out).tolist() == [[True, True, True, False, False]]  # the query's mask passes on
    torch.testing.assert_close(out[0, 3], mha.output_dense.bias.detach())  # zero weights -> the bias


def test_mha_dropout_only_in_training():
    torch.manual_seed(4)
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=4, dropout=0.5)
    x = torch.randn(2, 6, 8)
    with torch.no_grad():
        mha.eval()
        assert torch.equal(mha(x, x), mha(x, x))
        assert torch.equal(mha(x, x, training=False), mha(x, x))
        assert not torch.equal(mha(x, x, training=True), mha(x, x, training=True))
        mha.train()
        assert not torch.equal(mha(x, x), mha(x, x))


def test_mha_bad_attention_mask_names_both_shapes():
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=4)
    q, v = torch.randn(2, 5, 8), torch.randn(2, 3, 8)
    with pytest.raises(ValueError) as info:
        mha(q, v, attention_mask=torch.ones(2, 3, 5, dtype=torch.bool))
    message = str(info.value)
    assert "(2, 3, 5)" in message and "(2, 5, 3)" in message


def test_mha_argument_errors():
    with pytest.raises(ValueError, match="num_heads=0"):
        layers.MultiHeadAttention(num_heads=0, key_dim=4)
    with pytest.raises(ValueError, match="key_dim=-1"):
        layers.MultiHeadAttention(num_heads=2, key_dim=-1)
    with pytest.raises(ValueError, match=r"query.shape=\(2, 8\)"):
        layers.MultiHeadAttention(num_heads=2, key_dim=4)(torch.randn(2, 8), torch.randn(2, 8))


# --- Dense, Embedding, pooling ------------------------------------------------------------------
def test_dense_on_inputs_of_any_rank_keeps_the_mask():
    dense = layers.Dense(3)
    x = set_mask(torch.randn(2, 4, 5, 6), torch.ones(2, 4, 5, dtype=torch.bool))
    y = dense(x)
    assert tuple(y.shape) == (2, 4, 5, 3)
    torch.testing.assert_close(y, x @ dense.kernel + dense.bias)
    assert get_mask(y) is get_mask(x)


def test_global_average_pooling_1d_with_and_without_mask():
    x = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    pool = layers.GlobalAveragePooling1D()
    torch.testing.assert_close(pool(x), torch.tensor([[104 / 3, 106 / 3]]))
    masked = set_mask(x.clone(), torch.tensor([[True, True, False]]))
    assert pool(masked).tolist() == [[2.0, 3.0]]
    assert get_mask(pool(masked)) is None
    assert tuple(layers.GlobalAveragePooling1D(keepdims=True)(x).shape) == (1, 1, 2)
    assert layers.GlobalAveragePooling1D(data_format="channels_first")(x).tolist() == [[1.5, 3.5, 100.0]]
    with pytest.raises(ValueError, match="expected \\(1, 3\\)"):
        pool(set_mask(x.clone(), torch.ones(1, 2, dtype=torch.bool)))


# --- merging and Lambda --------------------------------------------------------------------------
def test_add_multiply_concatenate_values_and_masks():
    a, b = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    torch.testing.assert_close(layers.Add()([a, b]), a + b)
    torch.testing.assert_close(layers.Multiply()([a, b]), a * b)
    torch.testing.assert_close(layers.Concatenate(axis=1)([a, b]), torch.cat([a, b], 1))
    torch.testing.assert_close(layers.concatenate([a, b]), torch.cat([a, b], -1))
    ma = torch.tensor([[True, True, False]] * 2)
    mb = torch.tensor([[True, False, False]] * 2)
    added = layers.Add()([set_mask(a.clone(), ma), set_mask(b.clone(), mb)])
    assert get_mask(added).tolist() == mb.tolist()
    cat = layers.Concatenate()([set_mask(a.clone(), ma), b])
    assert get_mask(cat).tolist() == [[True, True, True]] * 2  # Keras: any over the features


def test_merge_shape_errors():
    with pytest.raises(ValueError, match="incompatible shapes"):
        layers.Add()([torch.zeros(2, 3), torch.zeros(2, 4)])
    with pytest.raises(ValueError, match="matching shapes except for the concatenation axis"):
        layers.Concatenate(axis=-1)([torch.zeros(2, 3), torch.zeros(3, 3)])
    with pytest.raises(ValueError, match="list of at least"):
        layers.Add()(torch.zeros(2, 3))


def test_lambda_layer():
    double = layers.Lambda(lambda x, factor: x * factor, arguments={"factor": 2.0})
    assert double(torch.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="callable"):
        layers.Lambda(3)


# --- SparseCategoricalCrossentropy(ignore_class) ---------------------------------------------------
def test_sparse_categorical_crossentropy_ignore_class_on_sequences():
    torch.manual_seed(5)
    logits = torch.randn(2, 4, 5)
    labels = torch.tensor([[1, 2, -1, -1], [0, 4, 3, -1]])
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    keep = labels != -1
    expected = torch.nn.functional.cross_entropy(logits[keep], labels[keep])  # mean over counted steps
    torch.testing.assert_close(loss(labels, logits), expected, atol=1e-6, rtol=1e-6)
    # fit's pieces: per-example sums over the whole global batch / counted fraction = the same mean
    per_example = loss.per_example(labels, logits)
    weights = loss.example_weights(labels, logits)
    torch.testing.assert_close(per_example.sum() / weights.sum(), expected, atol=1e-6, rtol=1e-6)
    with pytest.raises(ValueError, match="ignore_class"):
        tf.keras.losses.SparseCategoricalCrossentropy(ignore_class="pad")


# --- in models ----------------------------------------------------------------------------------
def _sequence_data(n=256, t=8, vocab=20, seed=0):
    """Label = whether token 1 occurs in the (zero-padded) sequence."""
    rng = np.random.default_rng(seed)
    x = rng.integers(2, vocab, size=(n, t))
    lengths = rng.integers(3, t + 1, size=n)
    y = rng.integers(0, 2, size=n)
    for i in range(n):
        if y[i]:
            x[i, rng.integers(0, lengths[i])] = 1
        x[i, lengths[i] :] = 0
    return x.astype("int64"), y.astype("int64")


class _Block(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = layers.Embedding(20, 16, mask_zero=True)
        self.attn = layers.MultiHeadAttention(num_heads=2, key_dim=8)
        self.norm = layers.LayerNormalization()
        self.pool = layers.GlobalAveragePooling1D()
        self.out = layers.Dense(2)

    def call(self, inputs):
        x = self.embed(inputs)
        x = self.norm(layers.Add()([x, self.attn(x, x)]))
        return self.out(self.pool(x))


def test_sequence_classifier_trains_in_a_model_subclass_and_in_sequential():
    torch.manual_seed(0)
    x, y = _sequence_data(n=160)
    model = _Block()
    model.compile(
        optimizer=tf.keras.optimizers.Adam(0.01),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    history = model.fit(x, y, batch_size=32, epochs=6, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.6 * losses[0], losses
    seq = tf.keras.Sequential(
        [
            layers.Embedding(20, 16, mask_zero=True, input_shape=(8,)),
            layers.MultiHeadAttention(num_heads=2, key_dim=8),
            layers.LayerNormalization(),
            layers.GlobalAveragePooling1D(),
            layers.Dense(2, activation="softmax"),
        ]
    )
    seq.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    losses = seq.fit(x, y, batch_size=32, epochs=6, verbose=0).history["loss"]
    assert losses[-1] < 0.75 * losses[0], losses
    assert seq.predict(x[:4], verbose=0).shape == (4, 2)


def test_token_level_model_with_ignore_class_trains():
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    x = rng.integers(1, 10, size=(128, 6)).astype("int64")
    y = (x + 1) % 10  # predict the next id of each token
    y[:, 4:] = -1  # the last steps do not count
    model = tf.keras.Sequential(
        [
            layers.Embedding(10, 16, input_shape=(6,)),
            layers.MultiHeadAttention(num_heads=2, key_dim=8),
            layers.Dense(10),
        ]
    )
    model.compile(
        optimizer=tf.keras.optimizers.Adam(0.02),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1),
    )
    losses = model.fit(x, y, batch_size=32, epochs=5, verbose=0).history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses


def test_mha_causal_with_different_query_and_value_lengths_and_a_2d_output_shape():
    torch.manual_seed(6)
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=4, output_shape=(3, 5))
    q, v = torch.randn(2, 3, 8), torch.randn(2, 6, 8)
    with torch.no_grad():
        fused = mha(q, v, use_causal_mask=True)
        explicit, scores = mha(q, v, use_causal_mask=True, return_attention_scores=True)
    assert tuple(fused.shape) == (2, 3, 3, 5)
    torch.testing.assert_close(fused, explicit, atol=1e-5, rtol=1e-5)
    assert torch.all(scores.triu(diagonal=1) == 0)  # Keras's causal mask: top-left aligned
