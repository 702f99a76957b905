"""Keras 2's ``K.*`` network functions: convolutions, pooling, padding, resizing, normalisation,
variable updates, loops (``rnn``, ``foldl``, ``map_fn``), ``function`` and the focal losses.

Each keeps Keras 2's signature and defaults (``data_format=None`` reads ``image_data_format()``;
``K.in_top_k(predictions, targets, k)`` takes the predictions first) and delegates to
:mod:`unison.keras.ops` where an op exists.

Example:
    >>> import torch
    >>> from unison.keras import backend as K
    >>> K.temporal_padding(torch.ones(1, 2, 1), (1, 0)).flatten().tolist()
    [0.0, 1.0, 1.0]
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from unison.keras import random as _random
from unison.keras.backend import common as _common
from unison.keras.backend.config import epsilon, floatx
from unison.keras.ops import nn as _nn
from unison.keras.ops._config import image_data_format
from unison.keras.ops._convert import float_of, tensor, torch_dtype
from unison.keras.ops.math import in_top_k as _in_top_k

Tensor = torch.Tensor

__all__ = [
    "batch_normalization",
    "bias_add",
    "binary_focal_crossentropy",
    "cast_to_floatx",
    "categorical_focal_crossentropy",
    "conv1d",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "depthwise_conv2d",
    "dropout",
    "foldl",
    "foldr",
    "function",
    "gradients",
    "in_top_k",
    "learning_phase_scope",
    "local_conv1d",
    "local_conv2d",
    "manual_variable_initialization",
    "map_fn",
    "moving_average_update",
    "normalize_batch_in_training",
    "placeholder",
    "pool2d",
    "pool3d",
    "random_normal_variable",
    "random_uniform_variable",
    "repeat",
    "reset_uids",
    "resize_images",
    "resize_volumes",
    "reverse",
    "rnn",
    "separable_conv2d",
    "spatial_2d_padding",
    "spatial_3d_padding",
    "temporal_padding",
    "to_dense",
    "truncated_normal",
    "update",
    "update_add",
    "update_sub",
]


def _format(data_format: str | None) -> str:
    fmt = image_data_format() if data_format is None else data_format
    if fmt not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format!r}. Expected 'channels_first' or 'channels_last'.")
    return fmt


def _padding(padding: str) -> str:
    if padding not in ("same", "valid", "causal"):
        raise ValueError(f"Unknown padding: {padding!r}. Expected 'same', 'valid' (or 'causal' for conv1d).")
    return padding


def cast_to_floatx(x: Any) -> Any:
    """``K.cast_to_floatx(x)``: a tensor cast to floatx; anything else becomes a NumPy array of floatx."""
    if isinstance(x, torch.Tensor):
        return x.to(torch_dtype(floatx()))
    return np.asarray(x, dtype=floatx())


def bias_add(x: Any, bias: Any, data_format: str | None = None) -> Tensor:
    """``K.bias_add(x, bias, data_format=None)``: add a per-channel bias (or a bias of ``x``'s shape without the batch).

    Raises:
        ValueError: a bias whose rank is neither 1 nor ``ndim(x) - 1``.
    """
    fmt = _format(data_format)
    t, b = tensor(x), tensor(bias).to(tensor(x).dtype)
    if b.dim() != 1 and b.dim() != t.dim() - 1:
        raise ValueError(
            f"Unexpected bias dimensions {b.dim()}. Expected it to be 1 or {t.dim() - 1} dimensions. "
            f"Received: bias shape {tuple(b.shape)} for x of shape {tuple(t.shape)}"
        )
    if fmt == "channels_first" and t.dim() > 2:
        if b.dim() == 1:
            return t + b.reshape(1, -1, *([1] * (t.dim() - 2)))
        return t + torch.movedim(b, -1, 0).unsqueeze(0)
    return t + b


def _conv(
    x: Any, kernel: Any, strides: Any, padding: str, data_format: str | None, dilation_rate: Any, rank: int
) -> Tensor:
    fmt, pad = _format(data_format), _padding(padding)
    t = float_of(tensor(x))
    if t.dim() != rank + 2:
        raise ValueError(f"conv{rank}d expects an input of rank {rank + 2}. Received: x of shape {tuple(t.shape)}")
    if pad == "causal":
        if rank != 1:
            raise ValueError("padding='causal' is for conv1d only.")
        k = tensor(kernel).shape[0]
        d = dilation_rate if isinstance(dilation_rate, int) else dilation_rate[0]
        left = d * (k - 1)
        t = F.pad(t, (0, 0, left, 0)) if fmt == "channels_last" else F.pad(t, (left, 0))
        pad = "valid"
    return _nn.conv(t, kernel, strides, pad, fmt, dilation_rate)


def conv1d(
    x: Any,
    kernel: Any,
    strides: int = 1,
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: int = 1,
) -> Tensor:
    """``K.conv1d``: a 1-D convolution; ``kernel`` is ``(width, in_channels, filters)``; ``"causal"`` pads on the left."""
    return _conv(x, kernel, strides, padding, data_format, dilation_rate, 1)


def conv2d(
    x: Any,
    kernel: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: Any = (1, 1),
) -> Tensor:
    """``K.conv2d``: a 2-D convolution; ``kernel`` is ``(h, w, in_channels, filters)``."""
    return _conv(x, kernel, strides, padding, data_format, dilation_rate, 2)


def conv3d(
    x: Any,
    kernel: Any,
    strides: Any = (1, 1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: Any = (1, 1, 1),
) -> Tensor:
    """``K.conv3d``: a 3-D convolution; ``kernel`` is ``(d, h, w, in_channels, filters)``."""
    return _conv(x, kernel, strides, padding, data_format, dilation_rate, 3)


def conv2d_transpose(
    x: Any,
    kernel: Any,
    output_shape: Sequence[int],
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: Any = (1, 1),
) -> Tensor:
    """``K.conv2d_transpose``: the transposed 2-D convolution with ``output_shape`` (``kernel`` is ``(h, w, filters, in_channels)``).

    Raises:
        ValueError: an ``output_shape`` no transposed convolution of these strides can give.
    """
    fmt, pad = _format(data_format), _padding(padding)
    t = float_of(tensor(x))
    k = tensor(kernel).to(t.dtype)
    want = tuple(int(v) for v in output_shape)
    if len(want) != 4:
        raise ValueError(
            f"output_shape must have 4 entries (batch, height, width, channels). Received: {output_shape!r}"
        )
    spatial = want[1:3] if fmt == "channels_last" else want[2:4]
    s = (strides, strides) if isinstance(strides, int) else tuple(strides)
    d = (dilation_rate, dilation_rate) if isinstance(dilation_rate, int) else tuple(dilation_rate)
    xc = t if fmt == "channels_first" else t.permute(0, 3, 1, 2)
    weight = k.permute(3, 2, 0, 1)  # (in, out, h, w)
    size = xc.shape[2:]
    pads, extras = [], []
    for i in range(2):
        ke = d[i] * (k.shape[i] - 1) + 1
        if pad == "valid":
            total = 0
        else:
            total = max((size[i] - 1) * s[i] + ke - spatial[i], 0)
        base = (size[i] - 1) * s[i] + ke - total
        extra = spatial[i] - base
        if not 0 <= extra < s[i] + (1 if pad == "valid" else 0) and extra != 0:
            raise ValueError(
                f"output_shape {want} cannot come from an input of shape {tuple(t.shape)} with strides {s}."
            )
        pads.append(total)
        extras.append(extra)
    out = F.conv_transpose2d(xc, weight, stride=s, dilation=d)
    # crop TF's padding (the larger half at the end) and grow the output to the asked shape
    h0, w0 = pads[0] // 2, pads[1] // 2
    out = F.pad(out, (0, max(extras[1], 0), 0, max(extras[0], 0)))
    out = out[:, :, h0 : h0 + spatial[0], w0 : w0 + spatial[1]]
    return out if fmt == "channels_first" else out.permute(0, 2, 3, 1)


def depthwise_conv2d(
    x: Any,
    depthwise_kernel: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: Any = (1, 1),
) -> Tensor:
    """``K.depthwise_conv2d``: ``depthwise_kernel`` is ``(h, w, in_channels, multiplier)``."""
    return _nn.depthwise_conv(
        float_of(tensor(x)), depthwise_kernel, strides, _padding(padding), _format(data_format), dilation_rate
    )


def separable_conv2d(
    x: Any,
    depthwise_kernel: Any,
    pointwise_kernel: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    dilation_rate: Any = (1, 1),
) -> Tensor:
    """``K.separable_conv2d``: a depthwise convolution, then a 1x1 one with ``pointwise_kernel``."""
    return _nn.separable_conv(
        float_of(tensor(x)),
        depthwise_kernel,
        pointwise_kernel,
        strides,
        _padding(padding),
        _format(data_format),
        dilation_rate,
    )


def _pool(x: Any, pool_size: Any, strides: Any, padding: str, data_format: str | None, pool_mode: str) -> Tensor:
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pool_mode: {pool_mode!r}. Expected 'max' or 'avg'.")
    fn = _nn.max_pool if pool_mode == "max" else _nn.average_pool
    return fn(float_of(tensor(x)), pool_size, strides, _padding(padding), _format(data_format))


def pool2d(
    x: Any,
    pool_size: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    pool_mode: str = "max",
) -> Tensor:
    """``K.pool2d``: 2-D max (``pool_mode="max"``) or average (``"avg"``) pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode)


def pool3d(
    x: Any,
    pool_size: Any,
    strides: Any = (1, 1, 1),
    padding: str = "valid",
    data_format: str | None = None,
    pool_mode: str = "max",
) -> Tensor:
    """``K.pool3d``: 3-D max or average pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode)


def temporal_padding(x: Any, padding: Sequence[int] = (1, 1)) -> Tensor:
    """``K.temporal_padding``: zeros before and after the middle axis of a 3-D tensor."""
    t = tensor(x)
    if len(padding) != 2:
        raise ValueError(f"padding must be a pair (left, right). Received: padding={padding!r}")
    return F.pad(t, (0, 0, int(padding[0]), int(padding[1])))


def _spatial_padding(x: Any, padding: Any, data_format: str | None, rank: int) -> Tensor:
    fmt = _format(data_format)
    t = tensor(x)
    if len(padding) != rank or any(len(p) != 2 for p in padding):
        raise ValueError(
            f"padding must be {rank} pairs ((before, after) per spatial axis). Received: padding={padding!r}"
        )
    flat: list[int] = []
    for before, after in reversed([tuple(p) for p in padding]):
        flat += [int(before), int(after)]
    if fmt == "channels_last":
        flat = [0, 0, *flat]
    return F.pad(t, flat)


def spatial_2d_padding(x: Any, padding: Any = ((1, 1), (1, 1)), data_format: str | None = None) -> Tensor:
    """``K.spatial_2d_padding``: zeros around the height and width of a 4-D tensor."""
    return _spatial_padding(x, padding, data_format, 2)


def spatial_3d_padding(x: Any, padding: Any = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None) -> Tensor:
    """``K.spatial_3d_padding``: zeros around the three spatial axes of a 5-D tensor."""
    return _spatial_padding(x, padding, data_format, 3)


def repeat(x: Any, n: int) -> Tensor:
    """``K.repeat(x, n)``: ``(batch, dim)`` to ``(batch, n, dim)``.

    Raises:
        ValueError: ``x`` is not 2-D.
    """
    t = tensor(x)
    if t.dim() != 2:
        raise ValueError(f"K.repeat expects a 2-D tensor (batch, dim). Received: x of shape {tuple(t.shape)}")
    return t.unsqueeze(1).repeat(1, int(n), 1)


def reverse(x: Any, axes: Any) -> Tensor:
    """``K.reverse(x, axes)``: flip along one axis or a list of axes."""
    t = tensor(x)
    dims = [axes] if isinstance(axes, int) else list(axes)
    return torch.flip(t, [d % t.dim() for d in dims])


def resize_images(
    x: Any, height_factor: int, width_factor: int, data_format: str, interpolation: str = "nearest"
) -> Tensor:
    """``K.resize_images``: scale height and width by integer factors (``"nearest"`` or ``"bilinear"``)."""
    fmt = _format(data_format)
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(
            f"interpolation should be one of 'nearest', 'bilinear'. Received: interpolation={interpolation!r}"
        )
    t = float_of(tensor(x))
    xc = t if fmt == "channels_first" else t.permute(0, 3, 1, 2)
    size = (xc.shape[2] * int(height_factor), xc.shape[3] * int(width_factor))
    if interpolation == "nearest":
        out = xc.repeat_interleave(int(height_factor), dim=2).repeat_interleave(int(width_factor), dim=3)
    else:
        out = F.interpolate(xc, size=size, mode="bilinear", align_corners=False)
    return out if fmt == "channels_first" else out.permute(0, 2, 3, 1)


def resize_volumes(x: Any, depth_factor: int, height_factor: int, width_factor: int, data_format: str) -> Tensor:
    """``K.resize_volumes``: repeat each voxel along depth, height and width."""
    fmt = _format(data_format)
    t = tensor(x)
    first = 2 if fmt == "channels_first" else 1
    for offset, factor in enumerate((depth_factor, height_factor, width_factor)):
        t = t.repeat_interleave(int(factor), dim=first + offset)
    return t


def to_dense(tensor_: Any) -> Tensor:
    """``K.to_dense``: a sparse tensor's dense values; a dense tensor unchanged."""
    t = tensor_ if isinstance(tensor_, torch.Tensor) else tensor(tensor_)
    return t.to_dense() if t.is_sparse else t


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None, seed: Any = None) -> Tensor:
    """``K.truncated_normal``: normal values redrawn beyond two standard deviations."""
    return _random.truncated_normal(shape, mean, stddev, dtype)


def dropout(x: Any, level: float, noise_shape: Any = None, seed: Any = None) -> Tensor:
    """``K.dropout(x, level)``: zero each entry with probability ``level``, scale the rest by ``1 / (1 - level)``.

    Raises:
        ValueError: ``level`` outside ``[0, 1)``.
    """
    if not 0 <= float(level) < 1:
        raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1). Received: level={level!r}")
    return _random.dropout(tensor(x), float(level), noise_shape)


def in_top_k(predictions: Any, targets: Any, k: int) -> Tensor:
    """``K.in_top_k(predictions, targets, k)``: whether each target's score is among its row's top ``k``."""
    return _in_top_k(targets, predictions, k)


def _assign(x: Any, value: Any) -> Any:
    with torch.no_grad():
        x.copy_(tensor(value).to(dtype=x.dtype, device=x.device))
    return x


def update(x: Any, new_x: Any) -> Any:
    """``K.update(x, new_x)``: assign ``new_x`` to variable ``x``; returns ``x``."""
    return _assign(x, new_x)


def update_add(x: Any, increment: Any) -> Any:
    """``K.update_add(x, increment)``: ``x += increment``; returns ``x``."""
    return _assign(x, x.detach() + tensor(increment).to(x.dtype))


def update_sub(x: Any, decrement: Any) -> Any:
    """``K.update_sub(x, decrement)``: ``x -= decrement``; returns ``x``."""
    return _assign(x, x.detach() - tensor(decrement).to(x.dtype))


def moving_average_update(x: Any, value: Any, momentum: float) -> Any:
    """``K.moving_average_update``: ``x -= (x - value) * (1 - momentum)``; returns ``x``."""
    v = tensor(value).to(x.dtype)
    return _assign(x, x.detach() - (x.detach() - v) * (1 - momentum))


def random_normal_variable(
    shape: Any, mean: float, scale: float, dtype: Any = None, name: str | None = None, seed: Any = None
) -> Any:
    """``K.random_normal_variable``: a variable of normal values."""
    return _common.variable(_random.normal(shape, mean, scale, dtype or floatx()), dtype=dtype, name=name)


def random_uniform_variable(
    shape: Any, low: float, high: float, dtype: Any = None, name: str | None = None, seed: Any = None
) -> Any:
    """``K.random_uniform_variable``: a variable of uniform values in ``[low, high)``."""
    return _common.variable(_random.uniform(shape, low, high, dtype or floatx()), dtype=dtype, name=name)


def reset_uids() -> None:
    """``K.reset_uids()``: restart every ``get_uid`` counter."""
    _common._UIDS.clear()


class _Manual:
    value = False


def manual_variable_initialization(value: bool) -> None:
    """``K.manual_variable_initialization(value)``: recorded; variables are initialised when made (TF 2's eager rule)."""
    _Manual.value = bool(value)


@contextlib.contextmanager
def learning_phase_scope(value: int) -> Iterator[None]:
    """``K.learning_phase_scope(value)``: ``K.learning_phase()`` returns ``value`` inside.

    Raises:
        ValueError: ``value`` is not 0 or 1.
    """
    if value not in (0, 1):
        raise ValueError(f"Expected learning phase to be 0 or 1. Received: value={value!r}")
    _common._PHASES.append(int(value))
    try:
        yield
    finally:
        _common._PHASES.pop()


def gradients(loss: Any, variables: Any) -> Any:
    """``K.gradients``: TF 1 graph code; eager TF 2 refuses it, and so does unison.

    Raises:
        RuntimeError: always; use ``tf.GradientTape``.
    """
    raise RuntimeError(
        "tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape instead "
        "(K.gradients is TF 1 graph code)."
    )


def placeholder(
    shape: Any = None,
    ndim: int | None = None,
    dtype: Any = None,
    sparse: bool = False,
    name: str | None = None,
    ragged: bool = False,
) -> Any:
    """``K.placeholder``: a symbolic input (``keras.Input`` of ``batch_shape=shape``)."""
    from unison.keras.backend.keras_tensor import Input

    if shape is None:
        if ndim is None:
            raise ValueError("K.placeholder needs a shape or an ndim.")
        shape = (None,) * int(ndim)
    return Input(batch_shape=tuple(shape), dtype=dtype or floatx(), name=name)


def _evaluate(inputs: list[Any], outputs: list[Any], values: list[Any]) -> list[Any]:
    """Run the recorded graph from ``inputs`` (given ``values``) to ``outputs``: each node once, parents first."""
    known: dict[int, Any] = {id(kt): tensor(v) for kt, v in zip(inputs, values)}
    order: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(out, False) for out in reversed(outputs)]
    while stack:
        kt, expanded = stack.pop()
        node = kt._node
        if id(kt) in known or node is None or (id(node) in seen and not expanded):
            if node is None and id(kt) not in known:
                raise ValueError(f"K.function: output needs the input {kt.name!r}, which is not among its inputs.")
            continue
        if expanded:
            if id(node) not in seen:
                seen.add(id(node))
                order.append(node)
            continue
        stack.append((kt, True))
        stack.extend((p, False) for p in reversed(node.parents))
    for node in order:
        for kt, value in zip(node.outputs, node.run(known)):
            known[id(kt)] = value
    return [known[id(out)] for out in outputs]


def function(
    inputs: Any, outputs: Any, updates: Any = None, name: str | None = None, **kwargs: Any
) -> Callable[[Any], Any]:
    """``K.function(inputs, outputs)``: a callable computing ``outputs`` from values for ``inputs`` (as NumPy).

    It replays the symbolic graph ``inputs`` (``K.placeholder``/``keras.Input``) were traced into;
    returns a list when ``outputs`` is a list, one array otherwise.
    """
    ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    single = not isinstance(outputs, (list, tuple))
    outs = [outputs] if single else list(outputs)

    def run(values: Any) -> Any:
        given = list(values) if isinstance(values, (list, tuple)) else [values]
        if len(given) != len(ins):
            raise ValueError(f"K.function expects {len(ins)} input value(s). Received: {len(given)}")
        results = [np.asarray(r.detach().cpu().numpy()) for r in _evaluate(ins, outs, given)]
        return results[0] if single else results

    return run


def batch_normalization(
    x: Any, mean: Any, var: Any, beta: Any, gamma: Any, axis: int = -1, epsilon: float = 1e-3
) -> Tensor:
    """``K.batch_normalization``: ``(x - mean) / sqrt(var + epsilon) * gamma + beta``."""
    t = float_of(tensor(x))

    def as_t(v: Any) -> Any:
        return None if v is None else tensor(v).to(t.dtype)

    out = (t - as_t(mean)) * torch.rsqrt(as_t(var) + epsilon)
    if gamma is not None:
        out = out * as_t(gamma)
    if beta is not None:
        out = out + as_t(beta)
    return out


def normalize_batch_in_training(
    x: Any, gamma: Any, beta: Any, reduction_axes: Sequence[int], epsilon: float = 1e-3
) -> tuple[Tensor, Tensor, Tensor]:
    """``K.normalize_batch_in_training``: ``(normalized, mean, variance)`` over ``reduction_axes``."""
    t = float_of(tensor(x))
    axes = [a % t.dim() for a in reduction_axes]
    mean = t.mean(dim=axes)
    var = t.var(dim=axes, unbiased=False)
    shape = [1 if i in axes else t.shape[i] for i in range(t.dim())]
    g = None if gamma is None else tensor(gamma).to(t.dtype).reshape(shape)
    b = None if beta is None else tensor(beta).to(t.dtype).reshape(shape)
    normed = batch_normalization(t, mean.reshape(shape), var.reshape(shape), b, g, epsilon=epsilon)
    return normed, mean, var


def _clip_probs(output: Tensor) -> Tensor:
    eps = epsilon()
    return output.clamp(eps, 1.0 - eps)


def binary_focal_crossentropy(
    target: Any,
    output: Any,
    apply_class_balancing: bool = False,
    alpha: float = 0.25,
    gamma: float = 2.0,
    from_logits: bool = False,
) -> Tensor:
    """``K.binary_focal_crossentropy``: per element, ``(1 - p_t) ** gamma`` times the binary crossentropy."""
    y = float_of(tensor(target))
    out = float_of(tensor(output)).to(y.dtype) if y.is_floating_point() else float_of(tensor(output))
    y = y.to(out.dtype)
    p = torch.sigmoid(out) if from_logits else out
    bce = _nn.binary_crossentropy(y, out, from_logits=from_logits)
    p_t = y * p + (1 - y) * (1 - p)
    loss = torch.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        loss = (y * alpha + (1 - y) * (1 - alpha)) * loss
    return loss


def categorical_focal_crossentropy(
    target: Any, output: Any, alpha: float = 0.25, gamma: float = 2.0, from_logits: bool = False, axis: int = -1
) -> Tensor:
    """``K.categorical_focal_crossentropy``: per example, the sum over classes of ``-alpha * (1 - p) ** gamma * y * log(p)``."""
    out = float_of(tensor(output))
    y = tensor(target).to(out.dtype)
    if from_logits:
        p = torch.softmax(out, dim=axis)
    else:
        p = out / out.sum(dim=axis, keepdim=True)
    p = _clip_probs(p)
    return torch.sum(-y * alpha * torch.pow(1.0 - p, gamma) * torch.log(p), dim=axis)


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    """``K.foldl(fn, elems, initializer=None)``: ``fn`` over ``elems``'s first axis, left to right."""
    items = list(tensor(elems).unbind(0))
    acc = items.pop(0) if initializer is None else initializer
    for item in items:
        acc = fn(acc, item)
    return acc


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    """``K.foldr(fn, elems, initializer=None)``: ``fn`` over ``elems``'s first axis, right to left."""
    items = list(tensor(elems).unbind(0))[::-1]
    acc = items.pop(0) if initializer is None else initializer
    for item in items:
        acc = fn(acc, item)
    return acc


def map_fn(fn: Callable[[Any], Any], elems: Any, name: str | None = None, dtype: Any = None) -> Tensor:
    """``K.map_fn(fn, elems)``: ``fn`` of each slice along the first axis, stacked."""
    out = torch.stack([tensor(fn(item)) for item in tensor(elems).unbind(0)])
    return out if dtype is None else out.to(torch_dtype(dtype))


def rnn(
    step_function: Callable[[Any, list[Any]], tuple[Any, list[Any]]],
    inputs: Any,
    initial_states: list[Any],
    go_backwards: bool = False,
    mask: Any = None,
    constants: Any = None,
    unroll: bool = False,
    input_length: int | None = None,
    time_major: bool = False,
    zero_output_for_mask: bool = False,
    return_all_outputs: bool = True,
) -> tuple[Tensor, Tensor, list[Tensor]]:
    """``K.rnn``: run ``step_function(input_t, states)`` over time; returns ``(last_output, outputs, states)``.

    A ``mask`` (batch, time) keeps the previous state (and output, or zeros with
    ``zero_output_for_mask``) where it is false.
    """
    x = tensor(inputs)
    if not time_major:
        x = x.transpose(0, 1)
    m = None if mask is None else tensor(mask).bool()
    if m is not None and not time_major:
        m = m.transpose(0, 1)
    steps = range(x.shape[0] - 1, -1, -1) if go_backwards else range(x.shape[0])
    states = [tensor(s) for s in initial_states]
    outputs: list[Tensor] = []
    prev: Tensor | None = None
    extra = list(constants) if constants else []
    for t in steps:
        out, new_states = step_function(x[t], [*states, *extra])
        out = tensor(out)
        new_states = [tensor(s) for s in new_states]
        if m is not None:
            keep = m[t].reshape(-1, *([1] * (out.dim() - 1)))
            base = torch.zeros_like(out) if zero_output_for_mask or prev is None else prev
            out = torch.where(keep, out, base)
            new_states = [
                torch.where(m[t].reshape(-1, *([1] * (s.dim() - 1))), s, old) for s, old in zip(new_states, states)
            ]
        states = new_states
        prev = out
        outputs.append(out)
    stacked = torch.stack(outputs if return_all_outputs else outputs[-1:], dim=0)
    if not time_major:
        stacked = stacked.transpose(0, 1)
    return outputs[-1], stacked, states


def _local_conv(
    inputs: Any,
    kernel: Any,
    kernel_size: Sequence[int],
    strides: Sequence[int],
    output_shape: Sequence[int],
    data_format: str | None,
) -> Tensor:
    """Keras 2's unshared convolution: each output position has its own ``(feature_dim, filters)`` kernel."""
    fmt = _format(data_format)
    x = float_of(tensor(inputs))
    k = tensor(kernel).to(x.dtype)
    feature_dim, filters = k.shape[1], k.shape[-1]
    ndims = len(output_shape)
    patches = []
    for position in itertools.product(*(range(int(n)) for n in output_shape)):
        index: list[Any] = [slice(None)]
        if fmt == "channels_first":
            index.append(slice(None))
        index.extend(slice(position[d] * strides[d], position[d] * strides[d] + kernel_size[d]) for d in range(ndims))
        if fmt == "channels_last":
            index.append(slice(None))
        patches.append(x[tuple(index)].reshape(1, -1, feature_dim))
    stacked = torch.cat(patches, dim=0)  # (positions, batch, feature_dim)
    out = torch.bmm(stacked, k.reshape(-1, feature_dim, filters))  # (positions, batch, filters)
    out = out.reshape(*[int(n) for n in output_shape], -1, filters)
    if fmt == "channels_first":
        order = [ndims, ndims + 1, *range(ndims)]
    else:
        order = [ndims, *range(ndims), ndims + 1]
    return out.permute(order)


def local_conv1d(
    inputs: Any, kernel: Any, kernel_size: Sequence[int], strides: Sequence[int], data_format: str | None = None
) -> Tensor:
    """``K.local_conv1d``: ``kernel`` is ``(output_length, kernel_size * input_dim, filters)``."""
    return _local_conv(inputs, kernel, kernel_size, strides, (tensor(kernel).shape[0],), data_format)


def local_conv2d(
    inputs: Any,
    kernel: Any,
    kernel_size: Sequence[int],
    strides: Sequence[int],
    output_shape: Sequence[int],
    data_format: str | None = None,
) -> Tensor:
    """``K.local_conv2d``: ``kernel`` is ``(out_rows * out_cols, kh * kw * channels, filters)``."""
    return _local_conv(inputs, kernel, kernel_size, strides, tuple(output_shape), data_format)
