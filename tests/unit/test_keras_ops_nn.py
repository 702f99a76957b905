"""keras.ops.nn: activations and losses against their formulas, conv/pool against a direct numpy loop
with TF's "same" padding, conv_transpose as the gradient of conv (TF's definition)."""

import math

import numpy as np
import pytest
import torch

from unison.keras import backend, ops

X = np.array([[-2.0, -0.5, 0.0, 0.5, 3.0]], dtype=np.float32)


def close(t, expected, atol=1e-5):
    np.testing.assert_allclose(ops.convert_to_numpy(t), expected, rtol=1e-5, atol=atol)


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def test_activations_match_formulas():
    close(ops.relu(X), np.maximum(X, 0))
    close(ops.relu6(X * 3), np.clip(X * 3, 0, 6))
    close(ops.sigmoid(X), sig(X))
    close(ops.silu(X), X * sig(X))
    close(ops.swish(X), X * sig(X))
    close(ops.softplus(X), np.log1p(np.exp(X)))
    close(ops.softsign(X), X / (1 + np.abs(X)))
    close(ops.log_sigmoid(X), np.log(sig(X)))
    close(ops.leaky_relu(X), np.where(X > 0, X, 0.2 * X))
    close(ops.hard_sigmoid(X), np.clip(X / 6 + 0.5, 0, 1))
    close(ops.hard_silu(X), X * np.clip(X / 6 + 0.5, 0, 1))
    close(ops.elu(X, alpha=2.0), np.where(X > 0, X, 2.0 * (np.exp(X) - 1)))
    tanh_gelu = 0.5 * X * (1 + np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X**3)))
    close(ops.gelu(X), tanh_gelu)  # Keras's default is the tanh approximation
    exact = 0.5 * X * (1 + np.vectorize(math.erf)(X / np.sqrt(2)))
    close(ops.gelu(X, approximate=False), exact)
    close(ops.glu(np.array([[1.0, 2.0, 0.0, 3.0]])), [[1.0 * sig(0.0), 2.0 * sig(3.0)]])


def test_softmax_default_last_axis_and_tuple_axis():
    x = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    e = np.exp(x)
    close(ops.softmax(x), e / e.sum(axis=-1, keepdims=True))
    close(ops.softmax(x, axis=(0, 1)), e / e.sum())
    close(ops.log_softmax(x, axis=0), np.log(e / e.sum(axis=0, keepdims=True)))


def test_one_hot_and_multi_hot():
    out = ops.one_hot([1, -1, 3], 3)
    assert out.dtype == torch.float32 and out.tolist() == [[0, 1, 0], [0, 0, 0], [0, 0, 0]]
    assert ops.one_hot([0, 1], 2, axis=0).tolist() == [[1, 0], [0, 1]]
    assert ops.one_hot([1], 2, dtype="int32").dtype == torch.int32
    assert ops.multi_hot([[0, 2], [1, 1]], 3).tolist() == [[1, 0, 1], [0, 1, 0]]
    with pytest.raises(ValueError, match="no sparse tensors"):
        ops.one_hot([1], 2, sparse=True)


def test_binary_crossentropy_elementwise_with_epsilon_clip():
    t = np.array([[1.0, 0.0, 1.0]], np.float32)
    p = np.array([[0.9, 0.2, 1.0]], np.float32)
    eps = 1e-7
    pc = np.clip(p, eps, 1 - eps)
    close(ops.binary_crossentropy(t, p), -(t * np.log(pc) + (1 - t) * np.log(1 - pc)), atol=1e-4)
    logits = np.array([[2.0, -1.0, 0.0]], np.float32)
    close(
        ops.binary_crossentropy(t, logits, from_logits=True),
        -(t * np.log(sig(logits)) + (1 - t) * np.log(1 - sig(logits))),
    )
    with pytest.raises(ValueError, match="same shape"):
        ops.binary_crossentropy([1.0], [[0.5]])


def test_categorical_and_sparse_crossentropy():
    probs = np.array([[0.2, 0.3, 0.5], [0.1, 0.8, 0.1]], np.float32)
    onehot = np.array([[0, 0, 1], [0, 1, 0]], np.float32)
    expected = -np.log([0.5, 0.8])
    close(ops.categorical_crossentropy(onehot, probs), expected)
    close(ops.categorical_crossentropy(onehot, probs * 2), expected)  # renormalised, as Keras does
    close(ops.sparse_categorical_crossentropy([2, 1], probs), expected)
    close(ops.sparse_categorical_crossentropy([[2], [1]], probs), expected)
    logits = np.log(probs)
    close(ops.sparse_categorical_crossentropy([2, 1], logits, from_logits=True), expected)
    close(ops.categorical_crossentropy(onehot, logits, from_logits=True), expected)
    with pytest.raises(ValueError, match="use sparse_categorical_crossentropy"):
        ops.categorical_crossentropy([2, 1], probs)
    with pytest.raises(ValueError, match="does not match output"):
        ops.sparse_categorical_crossentropy([2, 1, 0], probs)


def test_moments_batch_normalization_normalize():
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    mean, var = ops.moments(x, axes=[0])
    close(mean, x.mean(0))
    close(var, x.var(0))
    mean_k, _ = ops.moments(x, axes=[0], keepdims=True)
    assert tuple(mean_k.shape) == (1, 3)
    out = ops.batch_normalization(x, x.mean(0), x.var(0), axis=1, offset=[1.0, 1.0, 1.0], scale=[2.0, 2.0, 2.0])
    close(out, 2 * (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3) + 1)
    close(ops.normalize([[3.0, 4.0]]), [[0.6, 0.8]])
    close(ops.normalize([[3.0, -4.0]], order=1), [[3 / 7, -4 / 7]])
    close(ops.normalize([[0.0, 0.0]]), [[0.0, 0.0]])


def _conv_reference(x, k, stride, padding, dilation=1):
    # Direct NHWC convolution with TF's "same" padding (the odd row/column at the end).
    n, h, w, _ = x.shape
    kh, kw, _, cout = k.shape
    eh, ew = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    if padding == "same":
        oh, ow = -(-h // stride), -(-w // stride)
        ph, pw = max((oh - 1) * stride + eh - h, 0), max((ow - 1) * stride + ew - w, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - eh) // stride + 1, (w - ew) // stride + 1
    out = np.zeros((n, oh, ow, cout), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride : i * stride + eh : dilation, j * stride : j * stride + ew : dilation, :]
            out[:, i, j, :] = np.einsum("nhwc,hwco->no", patch, k)
    return out


@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("stride, dilation", [(1, 1), (2, 1), (1, 2)])
def test_conv2d_matches_direct_loop(padding, stride, dilation):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 7, 6, 3)).astype(np.float32)
    k = rng.normal(size=(3, 2, 3, 4)).astype(np.float32)
    out = ops.conv(x, k, strides=stride, padding=padding, dilation_rate=dilation)
    close(out, _conv_reference(x, k, stride, padding, dilation), atol=1e-4)


def test_conv_channels_first_1d_and_depthwise():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(1, 5, 5, 2)).astype(np.float32)
    k = rng.normal(size=(3, 3, 2, 3)).astype(np.float32)
    first = ops.conv(np.transpose(x, (0, 3, 1, 2)), k, padding="same", data_format="channels_first")
    close(np.transpose(ops.convert_to_numpy(first), (0, 2, 3, 1)), _conv_reference(x, k, 1, "same"), atol=1e-4)
    x1 = rng.normal(size=(2, 6, 2)).astype(np.float32)
    k1 = rng.normal(size=(3, 2, 4)).astype(np.float32)
    ref = _conv_reference(x1[:, :, None, :], k1[:, None], 1, "valid")[:, :, 0]
    close(ops.conv(x1, k1), ref, atol=1e-4)
    dk = rng.normal(size=(3, 3, 2, 1)).astype(np.float32)
    per_channel = [_conv_reference(x[..., c : c + 1], dk[:, :, c : c + 1], 1, "valid") for c in range(2)]
    close(ops.depthwise_conv(x, dk), np.concatenate(per_channel, axis=-1), atol=1e-4)


def test_conv_errors():
    with pytest.raises(ValueError, match="padding must be 'valid' or 'same'"):
        ops.conv(np.zeros((1, 4, 4, 1)), np.zeros((2, 2, 1, 1)), padding="full")
    with pytest.raises(ValueError, match="not a multiple of kernel.shape"):
        ops.conv(np.zeros((1, 4, 4, 3)), np.zeros((2, 2, 2, 1)))
    with pytest.raises(ValueError, match="rank 3, 4 or 5"):
        ops.conv(np.zeros((4, 4)), np.zeros((2, 2, 1, 1)))


@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("stride, size", [(1, 4), (2, 4), (2, 5)])
def test_conv_transpose_is_the_gradient_of_conv(padding, stride, size):
    rng = np.random.default_rng(3)
    kernel = torch.tensor(rng.normal(size=(3, 3, 2, 4)).astype(np.float32))  # conv: 2 -> 4 channels
    g = torch.tensor(rng.normal(size=(1, size, size, 4)).astype(np.float32))
    out = ops.conv_transpose(g, kernel, strides=stride, padding=padding)
    expected_len = size * stride if padding == "same" else size * stride + max(3 - stride, 0)
    assert tuple(out.shape) == (1, expected_len, expected_len, 2)
    z = torch.zeros(1, expected_len, expected_len, 2, requires_grad=True)
    y = ops.conv(z, kernel, strides=stride, padding=padding)
    assert tuple(y.shape) == tuple(g.shape)
    (grad,) = torch.autograd.grad((y * g).sum(), z)
    close(out, grad.numpy(), atol=1e-4)


def test_conv_transpose_output_padding_length():
    out = ops.conv_transpose(np.ones((1, 4, 4, 1)), np.ones((3, 3, 2, 1)), strides=2, padding="same", output_padding=1)
    assert tuple(out.shape) == (1, 8, 8, 2)  # (4 - 1) * 2 + 3 - 2 * 1 + 1


def _pool_reference(x, size, stride, padding, kind):
    n, h, w, c = x.shape
    if padding == "same":
        oh, ow = -(-h // stride), -(-w // stride)
        ph, pw = max((oh - 1) * stride + size - h, 0), max((ow - 1) * stride + size - w, 0)
        top, left = ph // 2, pw // 2
    else:
        oh, ow = (h - size) // stride + 1, (w - size) // stride + 1
        top = left = 0
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * stride - top, j * stride - left
            win = x[:, max(r0, 0) : r0 + size, max(c0, 0) : c0 + size, :]  # padding never counts
            out[:, i, j] = win.max(axis=(1, 2)) if kind == "max" else win.mean(axis=(1, 2))
    return out


@pytest.mark.parametrize("padding", ["valid", "same"])
@pytest.mark.parametrize("kind", ["max", "average"])
def test_pooling_matches_tf_rules(padding, kind):
    x = np.random.default_rng(4).normal(size=(2, 5, 5, 3)).astype(np.float32)
    fn = ops.max_pool if kind == "max" else ops.average_pool
    close(fn(x, 2, strides=2, padding=padding), _pool_reference(x, 2, 2, padding, kind))
    close(fn(x, 3, strides=1, padding=padding), _pool_reference(x, 3, 1, padding, kind))


def test_image_data_format_setting_is_read_by_conv():
    x = np.ones((1, 2, 4, 4), np.float32)  # channels first
    backend.set_image_data_format("channels_first")
    try:
        assert tuple(ops.max_pool(x, 2).shape) == (1, 2, 2, 2)
    finally:
        backend.set_image_data_format("channels_last")
    assert tuple(ops.max_pool(x, 2).shape) == (1, 1, 2, 4)


def test_dot_product_attention_matches_formula():
    rng = np.random.default_rng(5)
    q, k, v = (rng.normal(size=(2, 3, 1, 4)).astype(np.float32) for _ in range(3))
    logits = np.einsum("bqd,bkd->bqk", q[:, :, 0], k[:, :, 0]) / 2.0
    mask = np.tril(np.ones((3, 3), bool))
    logits = np.where(mask, logits, -1e30)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    expected = np.einsum("bqk,bkd->bqd", w, v[:, :, 0])[:, :, None]
    close(ops.dot_product_attention(q, k, v, is_causal=True), expected)
    close(ops.dot_product_attention(q, k, v, mask=mask[None, None]), expected)
