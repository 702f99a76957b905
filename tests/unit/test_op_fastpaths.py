"""unison/ops/fastpath.py: the fast routes give torch's values, and step aside where they must."""

from __future__ import annotations

import pytest
import torch

import unison as tf
from unison.ops import fastpath

pytestmark = pytest.mark.timeout(60)


def test_tanh_keeps_autograd():
    v = tf.Variable([0.5, -2.0, 3.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.tanh(v) * tf.nn.tanh(v))
    expected = 2 * torch.tanh(v.detach()) * (1 - torch.tanh(v.detach()) ** 2)
    torch.testing.assert_close(tape.gradient(y, v), expected)


def test_tanh_without_grad_mode_takes_the_fast_route():
    x = torch.randn(64, 64, requires_grad=True)
    with torch.no_grad():
        assert fastpath.numpy_ok(x, grad=True)
        y = tf.tanh(x)
    assert y.grad_fn is None and not y.requires_grad
    torch.testing.assert_close(y, torch.tanh(x.detach()))
    assert not fastpath.numpy_ok(x, grad=True)  # grad mode on and x needs a gradient: torch's kernel


def test_where_and_gather_nd_keep_autograd():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.zeros(3)
    out = tf.where(torch.tensor([True, False, True]), x, y)
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    p = torch.ones(2, 2, requires_grad=True)
    tf.gather_nd(p, [[0, 1], [0, 1]]).sum().backward()
    assert p.grad.tolist() == [[0.0, 2.0], [0.0, 0.0]]


def test_vmap_goes_through_torch():
    x = torch.randn(4, 5)
    cond = x > 0
    mapped = torch.func.vmap(lambda c, a: tf.where(c, tf.tanh(a), -a))(cond, x)
    torch.testing.assert_close(mapped, torch.where(cond, torch.tanh(x), -x))
    equal = torch.func.vmap(lambda a: tf.equal(a, a))(x)
    assert bool(equal.all())


def test_large_inputs_with_several_threads_go_to_torch():
    before = torch.get_num_threads()
    big = torch.zeros(300, 300)
    try:
        torch.set_num_threads(2)
        assert not fastpath.numpy_ok(big)
        assert fastpath.numpy_ok(big[:100])  # below torch's one-thread grain
        torch.set_num_threads(1)
        assert fastpath.numpy_ok(big)
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.complex64, torch.int64, torch.bool])
def test_select_matches_torch_where(dtype):
    cond = torch.rand(7, 9) > 0.5
    x = (torch.randn(7, 9) * 10).to(dtype)
    y = (torch.randn(7, 9) * 10).to(dtype)
    assert torch.equal(fastpath.select(cond, x, y), torch.where(cond, x, y))
    assert torch.equal(fastpath.select(cond[:1], x, y), torch.where(cond[:1], x, y))  # broadcasting: torch


def test_comparison_of_mixed_dtypes_follows_torch():
    x = torch.tensor([0.1], dtype=torch.float32)
    point_one = torch.tensor(0.1, dtype=torch.float64)
    # torch compares a 0-d float64 in float32 (as TF converts it); NumPy would compare in float64
    assert fastpath.compare(torch.eq, x, point_one).tolist() == torch.eq(x, point_one).tolist() == [True]
    assert fastpath.compare(torch.gt, x, torch.tensor([0.0])).dtype == torch.bool


def test_results_own_their_memory():
    x = torch.randn(10, 10)
    y = tf.tanh(x)
    y += 1  # a writable result, not a view of x
    torch.testing.assert_close(y - 1, torch.tanh(x))
    assert tf.argmax(torch.tensor(3.0).reshape(1), axis=0).dtype == torch.int64


def test_tanh_autograd_matches_torch_first_and_second_derivatives() -> None:
    from unison.keras import activations

    x = torch.linspace(-4, 4, 9, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fastpath.tanh_autograd, (x,))
    assert torch.autograd.gradgradcheck(fastpath.tanh_autograd, (x,))  # a gradient penalty still works
    y = torch.randn(20000, requires_grad=True)  # below the size torch would split over threads
    ours = activations.get("tanh")(y)
    assert ours.grad_fn is not None and "NumpyTanh" in type(ours.grad_fn).__name__  # the fast path ran
    torch.testing.assert_close(ours, torch.tanh(y), rtol=0, atol=2e-7)
    upstream = torch.randn(20000)
    (got,) = torch.autograd.grad(ours, y, upstream)
    (want,) = torch.autograd.grad(torch.tanh(y), y, upstream)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
