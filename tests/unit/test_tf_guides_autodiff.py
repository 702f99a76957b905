"""TF's "Introduction to gradients and automatic differentiation" guide: what unison must give."""

from __future__ import annotations

import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


def test_gradient_with_respect_to_an_intermediate_recorded_by_the_tape():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0  # dz/dy = 2y, y = 9
    assert tape.gradient(z, x).numpy() == 108.0
    before = x * 2  # made before the next tape opened: not one of its sources (TF gives None)
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        w = before * 3
    assert tape2.gradient(w, before) is None


def test_intermediate_after_the_tape_closed_is_not_a_source():
    v = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = v * v
    later = y * 3  # computed after the block: TF never recorded it
    assert tape.gradient(later, later) is None
    assert tape.gradient(y, v).numpy() == 4.0


def test_variable_operators_take_lists_as_tf_does():
    w = tf.Variable([[1.0], [2.0], [3.0]])
    assert ([[1.0, 2.0, 3.0]] @ w).tolist() == [[14.0]]
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * [3.0, 4.0]
    assert y.tolist() == [6.0, 8.0] and tape.gradient(y, x).numpy() == 7.0
    assert (x + [1.0, 2.0]).tolist() == [3.0, 4.0] and ([1.0, 2.0] - x).tolist() == [-1.0, 0.0]
    assert ([4.0, 8.0] / x).tolist() == [2.0, 4.0] and (x / [4.0]).tolist() == [0.5]
    assert (x * 3).item() == 6.0  # numbers and tensors: torch's operators as before


def test_softplus_softsign_silu_log_sigmoid_match_their_formulas():
    x = torch.tensor([-30.0, -1.0, 0.0, 2.0, 30.0])
    torch.testing.assert_close(tf.nn.softplus(x), torch.log1p(torch.exp(x)))
    torch.testing.assert_close(tf.nn.softsign(x), x / (x.abs() + 1))
    torch.testing.assert_close(tf.nn.silu(x), x * torch.sigmoid(x))
    torch.testing.assert_close(tf.nn.swish(x, beta=2.0), x * torch.sigmoid(2 * x))
    torch.testing.assert_close(tf.nn.log_sigmoid(x), -torch.log1p(torch.exp(-x)))
    v = tf.Variable(10.0)
    with tf.GradientTape() as tape:
        y = tf.nn.softplus(v)
    assert abs(tape.gradient(y, v).item() - 0.9999546) < 1e-6  # the guide's printed value


def test_adjust_contrast_has_no_gradient_as_in_tf():
    image = tf.Variable([[[0.5, 0.0, 0.0]]])
    delta = tf.Variable(0.1)
    with tf.GradientTape() as tape:
        new_image = tf.image.adjust_contrast(image, delta)
    assert new_image.shape == (1, 1, 3)
    with pytest.raises(LookupError, match="gradient registry has no entry for: AdjustContrastv2"):
        tape.gradient(new_image, [image, delta])
    plain = tf.image.adjust_contrast(tf.constant([[[0.5, 0.0, 0.0]]]), 2.0)  # forward unchanged
    assert plain.tolist() == [[[0.5, 0.0, 0.0]]]


def test_a_list_of_tensors_is_packed_keeping_the_graph_as_tf_packs_it():
    import warnings

    w = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        losses = [w * 1.0, w * 3.0, tf.constant(4.0)]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "converting a tensor that requires grad" warning
            mean = tf.reduce_mean(losses)
    assert mean.item() == pytest.approx((2.0 + 6.0 + 4.0) / 3)
    assert tape.gradient(mean, w).item() == pytest.approx(4.0 / 3)
    assert tf.convert_to_tensor([tf.constant(1), 2]).tolist() == [1, 2]
    assert tf.constant([[tf.constant(1.0), 2.0], [3.0, 4.0]]).shape == (2, 2)
