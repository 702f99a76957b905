"""The transposed convolutions' direct path (issue 36) computes what the crop of the full one did.

``Conv{1,2,3}DTranspose`` ask torch's transposed convolution for Keras's output window directly
(``padding``/``output_padding``, a view where the crop is lopsided) instead of computing the full
transposed convolution and cropping it with a copy. Each case compares the outputs and the
gradients (input, kernel, bias) with the cropping path (`_cropped_call` below), on
random inputs: odd sizes, ``"same"``/``"valid"``, strides 1-3, dilation, ``output_padding``,
and ``mixed_bfloat16``.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F

from unison.keras import layers, mixed_precision
from unison.keras.layers.conv_nd import to_torch_layout

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _float32_policy():
    yield
    mixed_precision.set_global_policy("float32")


def _cropped_call(layer: Any, inputs: torch.Tensor) -> torch.Tensor:
    """The layer's output by the cropping path (the reference: what ``call`` computed before it
    asked torch for Keras's window directly): the full transposed convolution, then the window."""
    x = to_torch_layout(inputs)
    weight = layer.kernel.permute(layer.rank + 1, layer.rank, *range(layer.rank))
    transposed = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[layer.rank - 1]
    y = transposed(x, weight, None, layer.strides, 0, 0, 1, layer.dilation_rate)
    pads: list[int] = []
    for full, before, target in reversed(layer._crops(x)):  # F.pad lists the last axis first
        pads += [-before, target - (full - before)]
    return layer._finish(F.pad(y, pads))


def _grads(layer: Any, x: torch.Tensor, out: torch.Tensor, seed: torch.Tensor) -> list[torch.Tensor]:
    wrt = [x, layer.kernel] + ([layer.bias] if layer.bias is not None else [])
    return list(torch.autograd.grad((out.float() * seed).sum(), wrt))


CASES = [
    # (class, kwargs, input shape)
    ("Conv2DTranspose", {"filters": 3, "kernel_size": 5, "strides": 2, "padding": "same"}, (2, 5, 7, 4)),
    ("Conv2DTranspose", {"filters": 3, "kernel_size": 5, "strides": 1, "padding": "same"}, (2, 5, 6, 4)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 4, "strides": 2, "padding": "same"}, (1, 3, 4, 3)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, (1, 3, 5, 2)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": (2, 3), "strides": (3, 2), "padding": "valid"}, (1, 4, 3, 2)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "output_padding": 1}, (1, 4, 3, 2)),
    (
        "Conv2DTranspose",
        {"filters": 2, "kernel_size": 3, "strides": 3, "padding": "same", "output_padding": (0, 2)},
        (1, 3, 4, 2),
    ),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "dilation_rate": 2, "padding": "same"}, (1, 5, 4, 2)),
    ("Conv1DTranspose", {"filters": 2, "kernel_size": 5, "strides": 2, "padding": "same"}, (2, 7, 3)),
    ("Conv3DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, (1, 3, 2, 3, 2)),
]


@pytest.mark.parametrize(("name", "kwargs", "shape"), CASES)
@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_direct_transposed_convolution_equals_the_cropped_one(
    name: str, kwargs: dict[str, Any], shape: tuple[int, ...], policy: str
) -> None:
    mixed_precision.set_global_policy(policy)
    torch.manual_seed(36)
    layer = getattr(layers, name)(bias_initializer="random_normal", **kwargs)
    x = torch.randn(shape, requires_grad=True)
    out = layer(x)
    ref = _cropped_call(layer, x)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    seed = torch.randn(out.shape)
    # The same sums in oneDNN's own order, which may depend on the padding: float tolerance (in
    # bfloat16, an absolute one on the tensor's scale: a gradient is a sum of rounded products).
    _close(out.float(), ref.float(), policy)
    for got, want in zip(_grads(layer, x, out, seed), _grads(layer, x, ref, seed)):
        _close(got, want, policy)


def _close(got: torch.Tensor, want: torch.Tensor, policy: str) -> None:
    if policy == "float32":
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    else:
        torch.testing.assert_close(got, want, atol=2e-2 * float(want.abs().max()), rtol=2e-2)


@pytest.mark.parametrize(
    ("kernel", "strides", "dilation", "shape"),
    [(5, 2, 1, (2, 14, 13, 3)), (4, 1, 1, (1, 7, 6, 2)), ((2, 5), (1, 3), 1, (1, 5, 9, 2)), (2, 1, 3, (1, 8, 7, 2))],
)
@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_conv2d_same_padding_pads_only_the_excess(
    kernel: Any, strides: Any, dilation: int, shape: tuple[int, ...], policy: str
) -> None:
    """Conv2D's lopsided "same" padding (more after than before) pads only the excess in a copy and
    lets the convolution pad the rest: the outputs and gradients of the whole padded copy."""
    mixed_precision.set_global_policy(policy)
    torch.manual_seed(28)
    layer = layers.Conv2D(3, kernel, strides=strides, dilation_rate=dilation, padding="same")
    x = torch.relu(torch.randn(shape)).requires_grad_(True)  # zeros too
    out = layer(x)
    xc = x.permute(0, 3, 1, 2)
    pads: list[int] = []
    for axis in (1, 0):  # F.pad lists the last axis first
        size, k, s = xc.shape[2 + axis], layer.kernel_size[axis], layer.strides[axis]
        total = max((-(-size // s) - 1) * s + (k - 1) * dilation + 1 - size, 0)
        pads += [total // 2, total - total // 2]
    assert pads[0] != pads[1] or pads[2] != pads[3]  # a lopsided case
    with torch.autocast("cpu", torch.bfloat16, enabled=policy != "float32"):
        ref = F.conv2d(F.pad(xc, pads), layer.kernel.permute(3, 2, 0, 1), layer.bias, strides, 0, dilation)
    ref = ref.permute(0, 2, 3, 1)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    _close(out.float(), ref.float(), policy)
    seed = torch.randn(out.shape)
    wrt = [x, layer.kernel, layer.bias]
    for got, want in zip(
        torch.autograd.grad((out.float() * seed).sum(), wrt), torch.autograd.grad((ref.float() * seed).sum(), wrt)
    ):
        _close(got, want, policy)
