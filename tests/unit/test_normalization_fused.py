"""The normalisation layers on torch's fused kernels give the op-by-op formulas' results.

Each layer is compared with a reference written here from Keras 3's formulas (not from unison's
code): outputs, gradients with respect to the input, ``gamma`` and ``beta``, and BatchNormalization's
moving statistics after several training steps, in training and in inference, for the default
channels-last axis and for other axes.
"""

from __future__ import annotations

import pytest
import torch

from unison.keras import layers

pytestmark = pytest.mark.timeout(120)


def _ref_batch_norm(x, gamma, beta, mean_m, var_m, axis, momentum, eps, training):
    """Keras 3's BatchNormalization: biased batch moments; moving = moving * m + batch * (1 - m)."""
    axis = axis % x.dim()
    dims = [d for d in range(x.dim()) if d != axis]
    shape = [1] * x.dim()
    shape[axis] = x.shape[axis]
    if training:
        mean = x.mean(dims)
        var = ((x - mean.view(shape)) ** 2).mean(dims)
        mean_m = mean_m * momentum + mean.detach() * (1 - momentum)
        var_m = var_m * momentum + var.detach() * (1 - momentum)
    else:
        mean, var = mean_m, var_m
    y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)
    if gamma is not None:
        y = y * gamma.view(shape)
    if beta is not None:
        y = y + beta.view(shape)
    return y, mean_m, var_m


def _grads(y, tensors, seed):
    return torch.autograd.grad((y * seed).sum(), [t for t in tensors if t is not None])


CASES = [
    # (input shape, axis, center, scale)
    ((8, 5), -1, True, True),
    ((4, 6, 6, 3), -1, True, True),  # NHWC, as after a Conv2D
    ((3, 7, 4), -1, True, False),  # Conv1D's (batch, steps, channels)
    ((4, 3, 5, 5), 1, False, True),  # channels first
    ((2, 4, 3, 5), 2, True, True),  # a middle axis
]


@pytest.mark.parametrize(("shape", "axis", "center", "scale"), CASES)
def test_batch_normalization_matches_the_reference_in_training_and_inference(shape, axis, center, scale) -> None:
    torch.manual_seed(0)
    bn = layers.BatchNormalization(axis=axis, momentum=0.8, epsilon=1e-3, center=center, scale=scale)
    bn(torch.zeros(shape))
    with torch.no_grad():
        if bn.gamma is not None:
            bn.gamma.copy_(torch.rand_like(bn.gamma) + 0.5)
        if bn.beta is not None:
            bn.beta.copy_(torch.randn_like(bn.beta))
    gamma = bn.gamma.detach().clone().requires_grad_() if bn.gamma is not None else None
    beta = bn.beta.detach().clone().requires_grad_() if bn.beta is not None else None
    mean_m, var_m = bn.moving_mean.clone(), bn.moving_variance.clone()
    for step in range(3):
        x = (torch.randn(shape) * (step + 1) + step).requires_grad_()
        seed = torch.randn(shape)
        bn.train()
        y = bn(x, training=True)
        want, mean_m, var_m = _ref_batch_norm(x, gamma, beta, mean_m, var_m, axis, 0.8, 1e-3, True)
        torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-5)
        got = _grads(y, [x, bn.gamma, bn.beta], seed)
        ref = _grads(want, [x, gamma, beta], seed)
        for g, r in zip(got, ref):
            torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(bn.moving_mean, mean_m, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(bn.moving_variance, var_m, rtol=1e-5, atol=1e-6)
    x = torch.randn(shape, requires_grad=True)
    seed = torch.randn(shape)
    y = bn(x, training=False)
    want, _, _ = _ref_batch_norm(x, gamma, beta, mean_m, var_m, axis, 0.8, 1e-3, False)
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-5)
    for g, r in zip(_grads(y, [x, bn.gamma, bn.beta], seed), _grads(want, [x, gamma, beta], seed)):
        torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-4)
    # inference leaves the moving statistics alone
    torch.testing.assert_close(bn.moving_mean, mean_m, rtol=1e-5, atol=1e-6)


def test_batch_normalization_of_one_row_keeps_keras_zero_variance() -> None:
    bn = layers.BatchNormalization(momentum=0.5)
    x = torch.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
    y = bn(x, training=True)
    torch.testing.assert_close(y, torch.zeros(1, 3))  # (x - x) * rsqrt(0 + eps)
    torch.testing.assert_close(bn.moving_mean, torch.tensor([0.5, -1.0, 1.5]))
    torch.testing.assert_close(bn.moving_variance, torch.full((3,), 0.5))


def test_frozen_batch_normalization_runs_in_inference_mode() -> None:
    """Keras 3: ``trainable = False`` makes BatchNormalization use (and keep) its moving statistics."""
    bn = layers.BatchNormalization()
    x = torch.randn(16, 4) * 3 + 2
    bn(x)
    bn.trainable = False
    before = bn.moving_mean.clone()
    y = bn(x, training=True)
    torch.testing.assert_close(bn.moving_mean, before)
    want = (x - bn.moving_mean) / torch.sqrt(bn.moving_variance + 1e-3)
    torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)


def test_bfloat16_inputs_are_normalised_in_float32_and_returned_in_bfloat16() -> None:
    bn = layers.BatchNormalization()
    x = (torch.randn(32, 6) * 4 + 1).bfloat16()
    # bfloat16 activations reach a float32-policy layer inside a mixed model's autocast (fit's);
    # outside it the layer casts them to float32 first, as Keras's does
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = bn(x, training=True)
    assert y.dtype == torch.bfloat16
    want, _, _ = _ref_batch_norm(x.float(), None, None, torch.zeros(6), torch.ones(6), -1, 0.99, 1e-3, True)
    torch.testing.assert_close(y.float(), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_batch_norm_matches_the_float32_reference(scale, policy) -> None:
    # Under a mixed policy, Keras casts the half-precision activations to float32, normalises and
    # casts back. On CPU unison hands torch's mixed-dtype kernel the half-precision input with the
    # float32 weights and statistics (it computes in float32 inside): the same values within the
    # half type's rounding, and float32-exact statistics and weight gradients.
    torch.manual_seed(3)
    low = torch.bfloat16 if policy == "mixed_bfloat16" else torch.float16
    bn = layers.BatchNormalization(momentum=0.9, scale=scale, dtype=policy)
    x0 = (torch.randn(4, 5, 5, 8) * 3 + 2).to(low)
    bn.build(x0.shape)
    assert bn.moving_mean.dtype == torch.float32 and (bn.gamma is None or bn.gamma.dtype == torch.float32)
    gamma = None if bn.gamma is None else bn.gamma.detach().clone().requires_grad_()
    beta = bn.beta.detach().clone().requires_grad_()
    mean_m, var_m = bn.moving_mean.clone(), bn.moving_variance.clone()
    for step in range(3):
        x = (x0 + step).requires_grad_()
        y = bn(x, training=True)
        assert y.dtype == low
        xr = x.detach().float().requires_grad_()
        want, mean_m, var_m = _ref_batch_norm(xr, gamma, beta, mean_m, var_m, -1, 0.9, 1e-3, True)
        torch.testing.assert_close(y.float(), want.to(low).float(), rtol=2**-7, atol=2**-7)
        g = torch.randn(y.shape).to(low)
        y.backward(g)
        want.backward(g.float())
        torch.testing.assert_close(x.grad.float(), xr.grad, rtol=2**-7, atol=2**-7)
        torch.testing.assert_close(bn.beta.grad, beta.grad, rtol=1e-4, atol=1e-4)
        if scale:
            torch.testing.assert_close(bn.gamma.grad, gamma.grad, rtol=1e-4, atol=1e-4)
        for t in (bn.beta, bn.gamma, beta, gamma):
            if t is not None:
                t.grad = None
        torch.testing.assert_close(bn.moving_mean, mean_m, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(bn.moving_variance, var_m, rtol=1e-5, atol=1e-5)
    y = bn(x0, training=False)
    want, _, _ = _ref_batch_norm(x0.float(), gamma, beta, mean_m, var_m, -1, 0.9, 1e-3, False)
    assert y.dtype == low
    torch.testing.assert_close(y.float(), want.detach().to(low).float(), rtol=2**-7, atol=2**-7)


def _ref_group_norm(x, groups, gamma, beta, eps):
    """Keras 3's GroupNormalization on channels-last input: moments over each group and the spatial axes."""
    c = x.shape[-1]
    g = x.reshape(*x.shape[:-1], groups, c // groups)
    dims = [d for d in range(1, g.dim()) if d != g.dim() - 2]
    mean = g.mean(dims, keepdim=True)
    var = ((g - mean) ** 2).mean(dims, keepdim=True)
    y = ((g - mean) / torch.sqrt(var + eps)).reshape(x.shape)
    return y * gamma + beta


@pytest.mark.parametrize("shape", [(2, 5, 6), (2, 4, 4, 6), (3, 6)])
@pytest.mark.parametrize("groups", [2, 3, -1])
def test_group_normalization_matches_the_reference(shape, groups) -> None:
    torch.manual_seed(1)
    gn = layers.GroupNormalization(groups=groups)
    x = (torch.randn(shape) * 2 + 1).requires_grad_()
    gn(x)
    with torch.no_grad():
        gn.gamma.copy_(torch.rand(6) + 0.5)
        gn.beta.copy_(torch.randn(6))
    gamma, beta = gn.gamma.detach().clone().requires_grad_(), gn.beta.detach().clone().requires_grad_()
    y = gn(x)
    want = _ref_group_norm(x, 6 if groups == -1 else groups, gamma, beta, 1e-3)
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-5)
    seed = torch.randn(shape)
    for g, r in zip(_grads(y, [x, gn.gamma, gn.beta], seed), _grads(want, [x, gamma, beta], seed)):
        torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-4)


def test_group_normalization_of_a_channels_first_axis() -> None:
    gn = layers.GroupNormalization(groups=2, axis=1)
    x = torch.randn(2, 4, 3, 3)
    want = _ref_group_norm(x.movedim(1, -1), 2, torch.ones(4), torch.zeros(4), 1e-3).movedim(-1, 1)
    torch.testing.assert_close(gn(x), want, rtol=1e-4, atol=1e-5)


def test_rms_scaling_layer_normalization_is_keras_variance_scaling() -> None:
    """Keras 3's rms_scaling: ``x * rsqrt(var(x) + eps) * gamma`` (its deprecation warning says so)."""
    ln = layers.LayerNormalization(rms_scaling=True)
    x = torch.randn(3, 4, 5, requires_grad=True)
    ln(x)
    with torch.no_grad():
        ln.gamma.copy_(torch.rand(5) + 0.5)
    gamma = ln.gamma.detach().clone().requires_grad_()
    y = ln(x)
    var = ((x - x.mean(-1, keepdim=True)) ** 2).mean(-1, keepdim=True)
    want = x / torch.sqrt(var + 1e-3) * gamma
    torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-5)
    seed = torch.randn(3, 4, 5)
    for g, r in zip(_grads(y, [x, ln.gamma], seed), _grads(want, [x, gamma], seed)):
        torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-4)
