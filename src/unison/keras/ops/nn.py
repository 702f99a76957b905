"""``keras.ops.nn``: activations, losses, one-hot, convolution, pooling and normalisation.

Keras's conventions: channels-last inputs (``data_format=None`` reads
``keras.backend.image_data_format()``), kernels laid out ``(*spatial, in_channels, out_channels)``,
TF's ``"same"`` padding (the odd extra row at the end), ``gelu(approximate=True)`` by default, and
``binary_crossentropy`` element-wise (the loss class averages; this op does not).

Example:
    >>> from unison.keras import ops
    >>> ops.one_hot([0, 2], 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    >>> round(float(ops.sparse_categorical_crossentropy([1], [[0.5, 0.5]])[0]), 4)
    0.6931
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.keras.ops._convert import axes, float_of, tensor, torch_dtype
from unison.keras.ops._nn_more import *  # noqa: F403
from unison.keras.ops._nn_more import __all__ as _more_names
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor


def _epsilon() -> float:
    from unison.keras.ops._config import epsilon

    return epsilon()


def _data_format(data_format: str | None) -> str:
    from unison.keras.ops._config import standardize_data_format

    return standardize_data_format(data_format)


# --- activations --------------------------------------------------------------------------------


def relu(x: Any) -> Tensor:
    """``keras.ops.relu(x)``: ``max(x, 0)``."""
    return torch.relu(tensor(x))


def relu6(x: Any) -> Tensor:
    """``keras.ops.relu6(x)``: ``min(max(x, 0), 6)``."""
    return torch.clamp(tensor(x), 0, 6)


def sigmoid(x: Any) -> Tensor:
    """``keras.ops.sigmoid(x)``: ``1 / (1 + exp(-x))``."""
    return torch.sigmoid(float_of(tensor(x)))


def softplus(x: Any) -> Tensor:
    """``keras.ops.softplus(x)``: ``log(1 + exp(x))``."""
    return F.softplus(float_of(tensor(x)))


def softsign(x: Any) -> Tensor:
    """``keras.ops.softsign(x)``: ``x / (1 + |x|)``."""
    return F.softsign(float_of(tensor(x)))


def silu(x: Any) -> Tensor:
    """``keras.ops.silu(x)`` (also ``swish``): ``x * sigmoid(x)``."""
    return F.silu(float_of(tensor(x)))


swish = silu


def log_sigmoid(x: Any) -> Tensor:
    """``keras.ops.log_sigmoid(x)``: ``log(sigmoid(x))``, computed stably."""
    return F.logsigmoid(float_of(tensor(x)))


def leaky_relu(x: Any, negative_slope: float = 0.2) -> Tensor:
    """``keras.ops.leaky_relu(x, negative_slope=0.2)``."""
    return F.leaky_relu(float_of(tensor(x)), negative_slope)


def hard_sigmoid(x: Any) -> Tensor:
    """``keras.ops.hard_sigmoid(x)``: ``relu6(x + 3) / 6``."""
    return F.hardsigmoid(float_of(tensor(x)))


def hard_silu(x: Any) -> Tensor:
    """``keras.ops.hard_silu(x)`` (also ``hard_swish``): ``x * hard_sigmoid(x)``."""
    return F.hardswish(float_of(tensor(x)))


hard_swish = hard_silu


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    """``keras.ops.elu(x, alpha=1.0)``."""
    return F.elu(float_of(tensor(x)), alpha)


def selu(x: Any) -> Tensor:
    """``keras.ops.selu(x)``."""
    return F.selu(float_of(tensor(x)))


def celu(x: Any, alpha: float = 1.0) -> Tensor:
    """``keras.ops.celu(x, alpha=1.0)``."""
    return F.celu(float_of(tensor(x)), alpha)


def gelu(x: Any, approximate: builtins.bool = True) -> Tensor:
    """``keras.ops.gelu(x, approximate=True)``: Keras defaults to the tanh approximation."""
    return F.gelu(float_of(tensor(x)), approximate="tanh" if approximate else "none")


def glu(x: Any, axis: int = -1) -> Tensor:
    """``keras.ops.glu(x, axis=-1)``: ``a * sigmoid(b)`` of the two halves along ``axis``."""
    return F.glu(float_of(tensor(x)), dim=axis)


def softmax(x: Any, axis: Any = -1) -> Tensor:
    """``keras.ops.softmax(x, axis=-1)``; ``axis`` may be a tuple (one softmax over those axes)."""
    t = float_of(tensor(x))
    dims = axes(axis, t.dim(), "softmax")
    if dims is None:
        dims = tuple(builtins.range(t.dim()))
    if len(dims) == 1:
        return torch.softmax(t, dim=dims[0])
    return torch.exp(t - torch.logsumexp(t, dim=dims, keepdim=True))


def log_softmax(x: Any, axis: Any = -1) -> Tensor:
    """``keras.ops.log_softmax(x, axis=-1)``."""
    t = float_of(tensor(x))
    dims = axes(axis, t.dim(), "log_softmax")
    if dims is None:
        dims = tuple(builtins.range(t.dim()))
    return t - torch.logsumexp(t, dim=dims, keepdim=True)


# --- encodings and losses -----------------------------------------------------------------------


def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None, sparse: builtins.bool = False) -> Tensor:
    """``keras.ops.one_hot(x, num_classes, axis=-1, dtype=None)``: ids outside ``[0, num_classes)`` give zeros."""
    if sparse:
        raise ValueError("keras.ops.one_hot(sparse=True): unison has no sparse tensors. Use sparse=False.")
    ids = tensor(x)
    if ids.is_floating_point():
        ids = ids.long()
    classes = torch.arange(int(num_classes), device=ids.device)
    out = (ids.unsqueeze(-1) == classes).to(torch.get_default_dtype() if dtype is None else torch_dtype(dtype))
    return out if axis == -1 else torch.moveaxis(out, -1, axis)


def multi_hot(
    inputs: Any, num_classes: int, axis: int = -1, dtype: Any = None, sparse: builtins.bool = False
) -> Tensor:
    """``keras.ops.multi_hot(inputs, num_classes)``: per sample (the last input axis), 1 for each id present."""
    encoded = one_hot(inputs, num_classes, axis=-1, dtype=dtype, sparse=sparse)
    out = encoded.amax(dim=-2) if encoded.dim() > 1 else encoded
    return out if axis == -1 else torch.moveaxis(out, -1, axis)


def binary_crossentropy(target: Any, output: Any, from_logits: builtins.bool = False) -> Tensor:
    """``keras.ops.binary_crossentropy(target, output, from_logits=False)``: element-wise, not averaged.

    Probabilities are clipped to ``[epsilon, 1 - epsilon]`` as Keras does.
    """
    y_pred = float_of(tensor(output))
    y_true = tensor(target).to(y_pred.dtype)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"keras.ops.binary_crossentropy: target and output must have the same shape. "
            f"Received: target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}"
        )
    if from_logits:
        return F.binary_cross_entropy_with_logits(y_pred, y_true, reduction="none")
    eps = _epsilon()
    p = torch.clamp(y_pred, eps, 1.0 - eps)
    return -(y_true * torch.log(p) + (1.0 - y_true) * torch.log(1.0 - p))


def categorical_crossentropy(target: Any, output: Any, from_logits: builtins.bool = False, axis: int = -1) -> Tensor:
    """``keras.ops.categorical_crossentropy(target, output, from_logits=False, axis=-1)``.

    Probabilities are renormalised along ``axis`` and clipped to ``[epsilon, 1 - epsilon]``.
    """
    y_pred = float_of(tensor(output))
    y_true = tensor(target).to(y_pred.dtype)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"keras.ops.categorical_crossentropy: target and output must have the same shape (one-hot targets). "
            f"Received: target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}. "
            "For integer targets use sparse_categorical_crossentropy."
        )
    if from_logits:
        return -(y_true * log_softmax(y_pred, axis=axis)).sum(dim=axis)
    eps = _epsilon()
    p = torch.clamp(y_pred / y_pred.sum(dim=axis, keepdim=True), eps, 1.0 - eps)
    return -(y_true * torch.log(p)).sum(dim=axis)


def sparse_categorical_crossentropy(
    target: Any, output: Any, from_logits: builtins.bool = False, axis: int = -1
) -> Tensor:
    """``keras.ops.sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1)``: integer targets."""
    y_pred = float_of(tensor(output))
    ids = tensor(target)
    if ids.dim() == y_pred.dim() and ids.shape[-1] == 1:
        ids = ids.squeeze(-1)
    expected = y_pred.shape[:axis] + y_pred.shape[axis:][1:] if axis != -1 else y_pred.shape[:-1]
    if ids.shape != expected:
        raise ValueError(
            f"keras.ops.sparse_categorical_crossentropy: target shape {tuple(ids.shape)} does not match output "
            f"shape {tuple(y_pred.shape)}; expected target.shape={tuple(expected)} (one class id per row)."
        )
    classes = y_pred.shape[axis]
    return categorical_crossentropy(
        one_hot(ids.long(), classes, axis=axis, dtype=y_pred.dtype), y_pred, from_logits, axis
    )


def psnr(x1: Any, x2: Any, max_val: float) -> Tensor:
    """``keras.ops.psnr(x1, x2, max_val)``: the peak signal-to-noise ratio in dB over all values."""
    a, b = float_of(tensor(x1)), float_of(tensor(x2))
    mse = torch.mean((a - b) ** 2)
    return 20.0 * math.log10(max_val) - 10.0 * torch.log10(mse)


# --- normalisation ------------------------------------------------------------------------------


def moments(
    x: Any, axes: Sequence[int], keepdims: builtins.bool = False, synchronized: builtins.bool = False
) -> tuple[Tensor, Tensor]:
    """``keras.ops.moments(x, axes, keepdims=False)``: ``(mean, variance)`` over ``axes`` (population variance).

    float16 inputs are reduced in float32 and cast back, as Keras does.
    """
    t = float_of(tensor(x))
    dims = tuple(int(a) for a in axes)
    work = t.float() if t.dtype in (torch.float16, torch.bfloat16) else t
    mean = work.mean(dim=dims, keepdim=True)
    variance = ((work - mean) ** 2).mean(dim=dims, keepdim=keepdims)
    if not keepdims:
        mean = mean.squeeze(dims)
    return mean.to(t.dtype), variance.to(t.dtype)


def batch_normalization(
    x: Any, mean: Any, variance: Any, axis: int, offset: Any = None, scale: Any = None, epsilon: float = 1e-3
) -> Tensor:
    """``keras.ops.batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3)``.

    ``mean``/``variance``/``offset``/``scale`` are vectors along ``axis`` of ``x``.
    """
    t = float_of(tensor(x))
    shape = [1] * t.dim()
    shape[axis] = t.shape[axis]

    def along(v: Any) -> Tensor:
        return tensor(v).to(device=t.device, dtype=t.dtype).reshape(shape)

    out = (t - along(mean)) * torch.rsqrt(along(variance) + epsilon)
    if scale is not None:
        out = out * along(scale)
    if offset is not None:
        out = out + along(offset)
    return out


def normalize(x: Any, axis: int = -1, order: int = 2, epsilon: float | None = None) -> Tensor:
    """``keras.ops.normalize(x, axis=-1, order=2, epsilon=None)``: ``x`` divided by its ``order``-norm along ``axis``."""
    t = float_of(tensor(x))
    eps = _epsilon() if epsilon is None else float(epsilon)
    if order == 2:
        return t * torch.rsqrt(torch.clamp((t * t).sum(dim=axis, keepdim=True), min=eps))
    norm = torch.linalg.vector_norm(t, ord=order, dim=axis, keepdim=True)
    return t / torch.clamp(norm, min=eps)


# --- convolution and pooling --------------------------------------------------------------------


def _tuple(value: Any, n: int, what: str, fn: str) -> tuple[int, ...]:
    items = [value] * n if isinstance(value, int) else list(value)
    if len(items) != n or builtins.any(not isinstance(v, int) or v < 1 for v in items):
        raise ValueError(f"keras.ops.{fn}: {what} must be a positive int or {n} of them. Received: {what}={value!r}")
    return tuple(int(v) for v in items)


def _channels_first(x: Tensor, data_format: str | None, fn: str) -> tuple[Tensor, builtins.bool]:
    if x.dim() not in (3, 4, 5):
        raise ValueError(
            f"keras.ops.{fn} takes a batch of 1-D, 2-D or 3-D inputs (rank 3, 4 or 5). Received shape {tuple(x.shape)}."
        )
    last = _data_format(data_format) == "channels_last"
    return (torch.movedim(x, -1, 1) if last else x), last


def _same(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    # TF's "same": enough padding for ceil(size / stride) outputs, the odd one at the end.
    effective = (kernel - 1) * dilation + 1
    total = builtins.max((-(-size // stride) - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def _pad_spatial(
    x: Tensor,
    padding: str,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilation: Sequence[int],
    fn: str,
    value: float = 0.0,
) -> Tensor:
    mode = str(padding).lower()
    if mode not in ("valid", "same"):
        raise ValueError(f"keras.ops.{fn}: padding must be 'valid' or 'same'. Received: padding={padding!r}")
    if mode == "valid":
        return x
    pads: list[int] = []
    for i in builtins.range(len(kernel) - 1, -1, -1):
        pads.extend(_same(x.shape[2 + i], kernel[i], strides[i], dilation[i]))
    return F.pad(x, pads, value=value) if builtins.any(pads) else x


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
_MAX_POOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVG_POOL = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


def conv(
    inputs: Any,
    kernel: Any,
    strides: Any = 1,
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: Any = 1,
) -> Tensor:
    """``keras.ops.conv``: an N-D convolution (N = 1, 2, 3) with a Keras-layout kernel.

    ``kernel`` is ``(*kernel_size, in_channels // groups, out_channels)``; the group count is
    ``in_channels // kernel.shape[-2]``.
    """
    x, last = _channels_first(float_of(tensor(inputs)), data_format, "conv")
    k = tensor(kernel).to(device=x.device, dtype=x.dtype)
    n = x.dim() - 2
    if k.dim() != n + 2:
        raise ValueError(
            f"keras.ops.conv: kernel must have rank {n + 2} for rank-{x.dim()} inputs. Received kernel shape {tuple(k.shape)}."
        )
    in_channels = x.shape[1]
    if in_channels % k.shape[-2]:
        raise ValueError(
            f"keras.ops.conv: the input has {in_channels} channels, not a multiple of kernel.shape[-2]={k.shape[-2]}. "
            f"Received kernel shape {tuple(k.shape)}; expected (*kernel_size, {in_channels} // groups, out_channels)."
        )
    s, d = _tuple(strides, n, "strides", "conv"), _tuple(dilation_rate, n, "dilation_rate", "conv")
    x = _pad_spatial(x, padding, k.shape[:n], s, d, "conv")
    weight = torch.movedim(torch.movedim(k, -1, 0), -1, 1)  # (out, in/groups, *spatial)
    out = _CONV[n](x, weight, stride=s, dilation=d, groups=in_channels // k.shape[-2])
    return torch.movedim(out, 1, -1) if last else out


def depthwise_conv(
    inputs: Any,
    kernel: Any,
    strides: Any = 1,
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: Any = 1,
) -> Tensor:
    """``keras.ops.depthwise_conv``: ``kernel`` is ``(*kernel_size, in_channels, channel_multiplier)``."""
    k = tensor(kernel)
    n = k.dim() - 2
    grouped = k.reshape(*k.shape[:n], 1, k.shape[-2] * k.shape[-1])
    return conv(inputs, grouped, strides, padding, data_format, dilation_rate)


def separable_conv(
    inputs: Any,
    depthwise_kernel: Any,
    pointwise_kernel: Any,
    strides: Any = 1,
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: Any = 1,
) -> Tensor:
    """``keras.ops.separable_conv``: a depthwise convolution, then a 1x1 one with ``pointwise_kernel``."""
    depthwise = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return conv(depthwise, pointwise_kernel, 1, "valid", data_format, 1)


def conv_transpose(
    inputs: Any,
    kernel: Any,
    strides: Any = 1,
    padding: str = "valid",
    output_padding: Any = None,
    data_format: str | None = None,
    dilation_rate: Any = 1,
) -> Tensor:
    """``keras.ops.conv_transpose``: ``kernel`` is ``(*kernel_size, out_channels, in_channels)``.

    Output length per axis (Keras's rule): ``"same"`` gives ``size * stride``; ``"valid"`` gives
    ``size * stride + max(kernel - stride, 0)``; with ``output_padding`` it is
    ``(size - 1) * stride + kernel - 2 * pad + output_padding`` (``pad = kernel // 2`` for same).
    """
    x, last = _channels_first(float_of(tensor(inputs)), data_format, "conv_transpose")
    k = tensor(kernel).to(device=x.device, dtype=x.dtype)
    n = x.dim() - 2
    mode = str(padding).lower()
    if mode not in ("valid", "same"):
        raise ValueError(f"keras.ops.conv_transpose: padding must be 'valid' or 'same'. Received: padding={padding!r}")
    if k.dim() != n + 2 or k.shape[-1] != x.shape[1]:
        raise ValueError(
            f"keras.ops.conv_transpose: kernel shape {tuple(k.shape)} does not fit inputs with {x.shape[1]} channels; "
            f"expected (*kernel_size, out_channels, {x.shape[1]})."
        )
    s, d = _tuple(strides, n, "strides", "conv_transpose"), _tuple(dilation_rate, n, "dilation_rate", "conv_transpose")
    weight = torch.movedim(torch.movedim(k, -1, 0), -1, 1)  # (in, out, *spatial)
    full = _CONV_T[n](x, weight, stride=s, dilation=d)
    extra = None if output_padding is None else _tuple_or_zero(output_padding, n)
    for i in builtins.range(n):
        size, effective = x.shape[2 + i], (k.shape[i] - 1) * d[i] + 1
        if extra is None:
            start = builtins.max(effective - s[i], 0) // 2 if mode == "same" else 0
            length = size * s[i] + (0 if mode == "same" else builtins.max(effective - s[i], 0))
        else:
            start = effective // 2 if mode == "same" else 0
            length = (size - 1) * s[i] + effective - 2 * start + extra[i]
        dim = 2 + i
        piece = full.narrow(dim, start, builtins.min(length, full.shape[dim] - start))
        if piece.shape[dim] < length:
            pads = [0, 0] * (full.dim() - 1 - dim) + [0, length - piece.shape[dim]]
            piece = F.pad(piece, pads)
        full = piece
    return torch.movedim(full, 1, -1) if last else full


def _tuple_or_zero(value: Any, n: int) -> tuple[int, ...]:
    items = [value] * n if isinstance(value, int) else list(value)
    return tuple(int(v) for v in items)


def _pool(
    kind: str,
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str,
    data_format: str | None,
) -> Tensor:
    fn = f"{kind}_pool"
    x, last = _channels_first(float_of(tensor(inputs)), data_format, fn)
    n = x.dim() - 2
    window = _tuple(pool_size, n, "pool_size", fn)
    s = window if strides is None else _tuple(strides, n, "strides", fn)
    ones = (1,) * n
    if kind == "max":
        padded = _pad_spatial(x, padding, window, s, ones, fn, value=-math.inf)
        out = _MAX_POOL[n](padded, window, s)
    else:
        padded = _pad_spatial(x, padding, window, s, ones, fn)
        out = _AVG_POOL[n](padded, window, s)
        if padded.shape != x.shape:
            # TF's "same" average ignores the padding: divide by the real values in each window.
            count = _pad_spatial(torch.ones_like(x[:1, :1]), padding, window, s, ones, fn)
            out = out / _AVG_POOL[n](count, window, s)
    return torch.movedim(out, 1, -1) if last else out


def max_pool(
    inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid", data_format: str | None = None
) -> Tensor:
    """``keras.ops.max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None)``; 1-3 D."""
    return _pool("max", inputs, pool_size, strides, padding, data_format)


def average_pool(
    inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid", data_format: str | None = None
) -> Tensor:
    """``keras.ops.average_pool(...)``; with ``"same"`` the padding is left out of each average, as in TF."""
    return _pool("average", inputs, pool_size, strides, padding, data_format)


def dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    bias: Any = None,
    mask: Any = None,
    scale: float | None = None,
    is_causal: builtins.bool = False,
    flash_attention: builtins.bool | None = None,
) -> Tensor:
    """``keras.ops.dot_product_attention``: inputs are ``(batch, length, heads, head_dim)``, as in Keras.

    ``mask`` (boolean, broadcastable to ``(batch, heads, q_len, k_len)``) is True where attention is allowed.
    """
    q, k, v = (float_of(tensor(t)).transpose(1, 2) for t in (query, key, value))
    logits = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5 if scale is None else scale)
    if bias is not None:
        logits = logits + tensor(bias).to(logits.dtype)
    if mask is not None:
        logits = logits.masked_fill(~tensor(mask).bool(), torch.finfo(logits.dtype).min)
    if is_causal:
        causal = torch.ones(logits.shape[-2], logits.shape[-1], dtype=torch.bool, device=logits.device).tril()
        logits = logits.masked_fill(~causal, torch.finfo(logits.dtype).min)
    weights = torch.softmax(logits, dim=-1)
    return torch.matmul(weights, v).transpose(1, 2)


__all__ = [
    "average_pool",
    "batch_normalization",
    "binary_crossentropy",
    "categorical_crossentropy",
    "celu",
    "conv",
    "conv_transpose",
    "depthwise_conv",
    "dot_product_attention",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "max_pool",
    "moments",
    "multi_hot",
    "normalize",
    "one_hot",
    "psnr",
    "relu",
    "relu6",
    "selu",
    "separable_conv",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "sparse_categorical_crossentropy",
    "swish",
]


# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), __all__)
__all__ = sorted([*__all__, *_more_names])  # already wrapped in _nn_more
