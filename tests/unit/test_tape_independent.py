"""Several GradientTapes over one forward pass are independent, as in TF (the GAN step)."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


def _nets():
    torch.manual_seed(0)
    gen = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 6))
    disc = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1))
    return gen, disc


def _losses(gen, disc, noise, real):
    fake = gen(noise)
    real_out, fake_out = disc(real), disc(fake)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    gen_loss = bce(fake_out, torch.ones_like(fake_out))
    disc_loss = bce(real_out, torch.ones_like(real_out)) + bce(fake_out, torch.zeros_like(fake_out))
    return gen_loss, disc_loss


def _reference(gen, disc, noise, real):
    # Two separate torch computations: each loss from its own forward pass.
    gen_loss, _ = _losses(gen, disc, noise, real)
    want_gen = torch.autograd.grad(gen_loss, list(gen.parameters()))
    _, disc_loss = _losses(gen, disc, noise, real)
    want_disc = torch.autograd.grad(disc_loss, list(disc.parameters()))
    return want_gen, want_disc


def _close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)


@pytest.mark.parametrize("order", ["gen_first", "disc_first"])
def test_gan_step_with_two_tapes_matches_two_torch_computations(order):
    gen, disc = _nets()
    noise, real = torch.randn(3, 4), torch.randn(3, 6)
    want_gen, want_disc = _reference(gen, disc, noise, real)
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        gen_loss, disc_loss = _losses(gen, disc, noise, real)
    if order == "gen_first":
        got_gen = gen_tape.gradient(gen_loss, list(gen.parameters()))
        got_disc = disc_tape.gradient(disc_loss, list(disc.parameters()))
    else:
        got_disc = disc_tape.gradient(disc_loss, list(disc.parameters()))
        got_gen = gen_tape.gradient(gen_loss, list(gen.parameters()))
    _close(got_gen, want_gen)
    _close(got_disc, want_disc)


def test_two_tapes_same_target_each_get_the_full_gradient():
    x = tf.Variable(3.0)
    with tf.GradientTape() as a, tf.GradientTape() as b:
        y = x * x * x
    assert a.gradient(y, x).item() == pytest.approx(27.0)
    assert b.gradient(y, x).item() == pytest.approx(27.0)


def test_sibling_nested_tape_and_persistent_tape():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            y = x * x
        first = inner.gradient(y, x)  # 2x, recorded by the outer tape
    assert first.item() == pytest.approx(4.0)
    assert outer.gradient(first, x).item() == pytest.approx(2.0)
    assert outer.gradient(y, x).item() == pytest.approx(4.0)  # persistent: a second use works


def test_a_spent_tape_is_still_single_use():
    x = tf.Variable(1.0)
    with tf.GradientTape() as a, tf.GradientTape() as b:
        y = x * 2.0
    a.gradient(y, x)
    b.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        a.gradient(y, x)


# a freed graph: torch's "backward through the graph a second time", or, once the last tape detached
# its spent target (so float(loss) is a plain number, as TF's), no graph reachable from it at all
FREED = "second time|does not require grad"


def test_last_tape_frees_the_graph():
    # After both tapes are spent, the graph's saved tensors are freed, as a single tape frees them.
    x = tf.Variable(torch.ones(3))
    with tf.GradientTape() as a, tf.GradientTape() as b:
        y = (x.exp() * x).sum()
    a.gradient(y, x)
    b.gradient(y, x)
    with pytest.raises(RuntimeError, match=FREED):
        torch.autograd.grad(y, x)


def test_a_lone_tape_does_not_retain_the_graph():
    x = tf.Variable(torch.ones(3))
    with tf.GradientTape() as a:
        y = (x.exp() * x).sum()
    a.gradient(y, x)
    with pytest.raises(RuntimeError, match=FREED):
        torch.autograd.grad(y, x)


def test_a_dropped_tape_stops_keeping_graphs():
    x = tf.Variable(torch.ones(3))
    with tf.GradientTape() as a, tf.GradientTape() as b:
        y = (x.exp() * x).sum()
    gone = weakref.ref(b)
    del b
    gc.collect()
    assert gone() is None
    a.gradient(y, x)
    with pytest.raises(RuntimeError, match=FREED):
        torch.autograd.grad(y, x)


def test_tapes_in_turn_do_not_keep_each_others_graphs():
    x = tf.Variable(torch.ones(3))
    with tf.GradientTape(persistent=True) as earlier:
        z = (x * 2.0).sum()
    earlier.gradient(z, x)
    with tf.GradientTape() as later:  # did not record alongside `earlier`
        y = (x.exp() * x).sum()
    later.gradient(y, x)
    with pytest.raises(RuntimeError, match=FREED):
        torch.autograd.grad(y, x)
