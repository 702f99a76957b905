"""Dropout's keep mask drawn in C (ops/_dropmask.c, ops/dropout_mask.py): Philox4x32-10 as
published, the vector and scalar paths word for word, TF's keep rule and rate, repeatable seeds,
and the torch.rand fallback."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
import torch

import unison as tf
from unison.keras import layers
from unison.ops import dropout_mask

pytestmark = pytest.mark.timeout(60)

_dropmask = dropout_mask._dropmask
compiled = pytest.mark.skipif(_dropmask is None, reason="built without a C compiler (the build test says why)")


def test_the_mask_module_is_built_where_a_compiler_is():
    """setup.py's extension is optional (pip installs without a compiler); with one it must build."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine")
    assert _dropmask is not None and dropout_mask.use


@compiled
@pytest.mark.parametrize(
    ("counter", "key", "words"),
    [  # Random123's known-answer vectors for philox4x32, 10 rounds
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
            (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ],
)
def test_philox_matches_the_published_vectors(counter, key, words):
    assert _dropmask.philox(*counter, *key) == words


@pytest.fixture(params=[True, False], ids=["avx2", "scalar"])
def vector_path(request):
    if _dropmask is None:
        pytest.skip("built without a C compiler")
    on = _dropmask.set_vector(request.param)
    if request.param and not on:
        pytest.skip("this CPU has no AVX2")
    yield
    _dropmask.set_vector(True)


@compiled
@pytest.mark.parametrize("n", [0, 1, 3, 4, 31, 32, 33, 100, 1027])
def test_the_mask_is_the_philox_stream_word_by_word(vector_path, n):
    key = 0x1234_5678_9ABC_DEF0
    out = torch.empty(n)
    _dropmask.fill(out.numpy(), 2**31, key, 2.0)
    words = []
    for block in range((n + 3) // 4):
        words += _dropmask.philox(block, 0, 0, 0, key & 0xFFFFFFFF, key >> 32)
    assert out.tolist() == [2.0 if w >= 2**31 else 0.0 for w in words[:n]]


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.5, 0.9])
def test_each_element_is_kept_with_probability_one_minus_rate(rate):
    torch.manual_seed(0)
    mask = dropout_mask.keep_mask((2_000_000,), rate, torch.float32, torch.device("cpu"))
    kept = mask != 0
    n, p = mask.numel(), 1 - rate
    assert abs(kept.float().mean().item() - p) < 6 * math.sqrt(p * (1 - p) / n)
    assert torch.all(mask[kept] == torch.tensor(1 / (1 - rate), dtype=torch.float32))
    # neighbours are independent: the correlation of consecutive decisions is ~0
    k = kept.numpy().astype(np.float64)
    assert abs(np.corrcoef(k[:-1], k[1:])[0, 1]) < 0.005


def test_masks_repeat_under_a_seed_and_differ_between_calls():
    torch.manual_seed(7)
    a, b = (dropout_mask.keep_mask((1000,), 0.5, torch.float32, torch.device("cpu")) for _ in range(2))
    torch.manual_seed(7)
    assert torch.equal(dropout_mask.keep_mask((1000,), 0.5, torch.float32, torch.device("cpu")), a)
    assert not torch.equal(a, b)


def test_the_torch_fallback_keeps_the_same_rule(monkeypatch):
    monkeypatch.setattr(dropout_mask, "use", False)
    torch.manual_seed(0)
    mask = dropout_mask.keep_mask((200_000,), 0.3, torch.bfloat16, torch.device("cpu"))
    assert mask.dtype == torch.bfloat16
    assert abs((mask != 0).float().mean().item() - 0.7) < 0.01
    assert set(mask.unique().tolist()) == {0.0, float(torch.tensor(1 / 0.7, dtype=torch.bfloat16))}


def test_dropout_layer_values_gradient_and_dtype():
    x = torch.randn(64, 50, requires_grad=True)
    y = layers.Dropout(0.25)(x, training=True)
    kept = y != 0
    torch.testing.assert_close(y[kept], x[kept] / 0.75)
    y.sum().backward()
    torch.testing.assert_close(x.grad, kept.float() / 0.75)
    assert layers.Dropout(0.25)(x.detach().bfloat16(), training=True).dtype == torch.bfloat16


def test_a_seeded_dropout_layer_draws_the_same_masks_in_every_run():
    x = torch.ones(10, 20)
    first = layers.Dropout(0.5, seed=3)(x, training=True)
    again = layers.Dropout(0.5, seed=3)(x, training=True)
    assert torch.equal(first, again)
    layer = layers.Dropout(0.5, seed=3)
    assert not torch.equal(layer(x, training=True), layer(x, training=True))  # a sequence, not one mask


def test_tf_nn_dropout_noise_shape_broadcasts_one_decision_per_entry():
    y = tf.nn.dropout(tf.ones([8, 5]), 0.5, noise_shape=[8, 1])
    assert all(len(set(row)) == 1 for row in y.tolist())
    with pytest.raises(ValueError, match=r"noise_shape \[8\] must have the rank of x \(2\)"):
        tf.nn.dropout(tf.ones([8, 5]), 0.5, noise_shape=[8])


@compiled
def test_fill_refuses_a_buffer_that_is_not_float32():
    with pytest.raises(TypeError, match="C-contiguous float32 buffer"):
        _dropmask.fill(np.zeros(4, dtype=np.float64), 0, 1, 1.0)
    with pytest.raises(ValueError, match="32-bit word"):
        _dropmask.fill(np.zeros(4, dtype=np.float32), 2**32, 1, 1.0)
