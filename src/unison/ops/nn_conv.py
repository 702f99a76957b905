"""``tf.nn``'s convolutions and pools of any rank, in TF's layouts, on torch's kernels.

TF's conventions, kept exactly (each compared with TensorFlow by
``tests/conformance/test_vs_tf_nn.py``): inputs channels-last by default (``NWC``/``NHWC``/``NDHWC``),
filters ``[k..., in, out]`` (transposed ones ``[k..., out, in]``, depthwise ones
``[h, w, in, multiplier]``), ``"SAME"`` padding with the odd pixel after, strides and dilations as
an int, a list per spatial axis or a full list with 1 on the batch and channel axes; a transposed
convolution is the gradient of the forward one, cropped to ``output_shape``.

Example:
    >>> import unison as tf
    >>> x = tf.reshape(tf.range(6, dtype=tf.float32), [1, 6, 1])
    >>> tf.nn.conv1d(x, tf.ones([3, 1, 1]), stride=1, padding="SAME")[0, :, 0].tolist()
    [1.0, 3.0, 6.0, 9.0, 12.0, 9.0]
    >>> tf.nn.max_pool1d(x, 2, 2, "VALID")[0, :, 0].tolist()
    [1.0, 3.0, 5.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor

_LAYOUTS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}
_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}


def _layout(x: torch.Tensor, rank: int, data_format: str | None, fn: str) -> bool:
    """Whether the layout is channels-last, after checking the input's rank and the format's name."""
    last, first = _LAYOUTS[rank]
    fmt = last if data_format is None else data_format
    if fmt not in (last, first):
        raise ValueError(f"{fn}: data_format must be {last!r} or {first!r}. Received: data_format={data_format!r}")
    if x.dim() != rank + 2:
        raise ValueError(
            f"{fn} takes a {rank + 2}-D input ({fmt}). Received shape {list(x.shape)}; add a batch axis with "
            "tf.expand_dims(x, 0) for a single example."
        )
    return fmt == last


def _first(x: torch.Tensor, channels_last: bool) -> torch.Tensor:
    return x.movedim(-1, 1) if channels_last else x


def _back(x: torch.Tensor, channels_last: bool) -> torch.Tensor:
    return x.movedim(1, -1) if channels_last else x


def _per_axis(value: Any, rank: int, what: str, fn: str, channels_last: bool) -> tuple[int, ...]:
    """TF's int / per-spatial-axis / full-rank list of strides, ksize or dilations, per spatial axis."""
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
    if len(values) == 1:
        return tuple(values * rank)
    if len(values) == rank:
        return tuple(values)
    if len(values) == rank + 2:
        outer = (values[0], values[-1]) if channels_last else (values[0], values[1])
        if outer != (1, 1):
            raise ValueError(f"{fn}: {what} along the batch and channel axes must be 1. Received: {what}={values}")
        return tuple(values[1:-1] if channels_last else values[2:])
    raise ValueError(
        f"{fn}: {what} must be an int or a list of 1, {rank} or {rank + 2} ints. Received: {what}={value!r}"
    )


def _same(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _padding(
    padding: Any, sizes: Sequence[int], kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
    fn: str, channels_last: bool, explicit_ok: bool = True,
) -> list[tuple[int, int]]:  # fmt: skip
    """(before, after) per spatial axis for "SAME", "VALID" or TF's explicit pairs."""
    rank = len(sizes)
    if isinstance(padding, str) and padding.upper() in ("SAME", "VALID"):
        if padding.upper() == "VALID":
            return [(0, 0)] * rank
        return [_same(sizes[i], kernel[i], stride[i], dilation[i]) for i in range(rank)]
    if explicit_ok and isinstance(padding, (list, tuple)) and len(padding) == rank + 2:
        pairs = [tuple(int(v) for v in p) for p in padding]
        inner = pairs[1:-1] if channels_last else pairs[2:]
        outer = (pairs[0], pairs[-1]) if channels_last else (pairs[0], pairs[1])
        if all(len(p) == 2 for p in pairs) and outer == ((0, 0), (0, 0)) and min(min(p) for p in pairs) >= 0:
            return [(p[0], p[1]) for p in inner]
    choices = "'SAME', 'VALID' or explicit [[before, after], ...] per axis" if explicit_ok else "'SAME' or 'VALID'"
    raise ValueError(f"{fn}: padding must be {choices}. Received: padding={padding!r}")


def _torch_pads(pads: list[tuple[int, int]]) -> tuple[int, ...]:
    flat: list[int] = []
    for before, after in reversed(pads):  # F.pad lists the last axis first
        flat += [before, after]
    return tuple(flat)


def _convolve(
    input: Any, filters: Any, strides: Any, padding: Any, data_format: str | None, dilations: Any, rank: int, fn: str
) -> torch.Tensor:
    x, w = to_tensor(input), to_tensor(filters)
    channels_last = _layout(x, rank, data_format, fn)
    if w.dim() != rank + 2:
        raise ValueError(f"{fn}: filters must be {rank + 2}-D [k..., in, out]. Received shape {list(w.shape)}.")
    x = _first(x, channels_last)
    cin, fin, fout = x.shape[1], w.shape[-2], w.shape[-1]
    if fin == 0 or cin % fin or fout % (cin // fin):
        raise InvalidArgumentError(
            f"{fn}: the input has {cin} channels, which the filters' in={fin} must divide (and out={fout} must be a "
            "multiple of the number of groups). Filters are [k..., in, out], as in TF."
        )
    stride = _per_axis(1 if strides is None else strides, rank, "strides", fn, channels_last)
    dilation = _per_axis(1 if dilations is None else dilations, rank, "dilations", fn, channels_last)
    pads = _padding(padding, x.shape[2:], w.shape[:rank], stride, dilation, fn, channels_last)
    if any(p != (0, 0) for p in pads):
        x = F.pad(x, _torch_pads(pads))
    weight = w.permute(rank + 1, rank, *range(rank)).to(x.dtype)
    out = _CONV[rank](x, weight, stride=stride, dilation=dilation, groups=cin // fin)
    return _back(out, channels_last)


def conv1d(
    input: Any, filters: Any, stride: Any, padding: Any, data_format: str = "NWC", dilations: Any = None,
    name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.conv1d``: ``input`` [batch, width, in] with ``filters`` [k, in, out]."""
    return _convolve(input, filters, stride, padding, data_format, dilations, 1, "tf.nn.conv1d")


def conv3d(
    input: Any, filters: Any, strides: Any, padding: Any, data_format: str = "NDHWC", dilations: Any = None,
    name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.conv3d``: ``input`` [batch, depth, height, width, in] with ``filters`` [d, h, w, in, out]."""
    return _convolve(input, filters, strides, padding, data_format, dilations, 3, "tf.nn.conv3d")


def convolution(
    input: Any, filters: Any, strides: Any = None, padding: Any = "VALID", data_format: str | None = None,
    dilations: Any = None, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.convolution``: a convolution of the input's rank (3-D, 4-D or 5-D input)."""
    rank = to_tensor(input).dim() - 2
    if rank not in _CONV:
        raise ValueError(f"tf.nn.convolution takes a 3-D, 4-D or 5-D input. Received rank {rank + 2}.")
    return _convolve(input, filters, strides, padding, data_format, dilations, rank, "tf.nn.convolution")


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.atrous_conv2d``: a 2-D convolution dilated by ``rate`` (stride 1, NHWC)."""
    if int(rate) < 1:
        raise ValueError(f"tf.nn.atrous_conv2d: rate must be >= 1. Received: rate={rate}")
    return _convolve(value, filters, 1, padding, "NHWC", int(rate), 2, "tf.nn.atrous_conv2d")


def _depthwise_weight(w: torch.Tensor, fn: str) -> torch.Tensor:
    if w.dim() != 4:
        raise ValueError(f"{fn}: the depthwise filter must be 4-D [h, w, in, multiplier]. Received {list(w.shape)}.")
    h, k, cin, mult = w.shape
    return w.permute(2, 3, 0, 1).reshape(cin * mult, 1, h, k)


def depthwise_conv2d(
    input: Any, filter: Any, strides: Any, padding: Any, data_format: str | None = None, dilations: Any = None,
    name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.depthwise_conv2d``: each input channel convolved with its own ``multiplier`` filters."""
    fn = "tf.nn.depthwise_conv2d"
    x, w = to_tensor(input), to_tensor(filter)
    channels_last = _layout(x, 2, data_format, fn)
    x = _first(x, channels_last)
    if w.dim() == 4 and w.shape[2] != x.shape[1]:
        raise InvalidArgumentError(f"{fn}: the filter's in={w.shape[2]} must equal the input's {x.shape[1]} channels.")
    stride = _per_axis(strides, 2, "strides", fn, channels_last)
    dilation = _per_axis(1 if dilations is None else dilations, 2, "dilations", fn, channels_last)
    pads = _padding(padding, x.shape[2:], w.shape[:2], stride, dilation, fn, channels_last)
    if any(p != (0, 0) for p in pads):
        x = F.pad(x, _torch_pads(pads))
    out = F.conv2d(x, _depthwise_weight(w, fn).to(x.dtype), stride=stride, dilation=dilation, groups=x.shape[1])
    return _back(out, channels_last)


def separable_conv2d(
    input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any, padding: Any,
    data_format: str | None = None, dilations: Any = None, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.separable_conv2d``: a depthwise convolution, then a 1x1 ``pointwise_filter`` [1, 1, in*m, out]."""
    depth = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations)
    return _convolve(depth, pointwise_filter, 1, "VALID", data_format, 1, 2, "tf.nn.separable_conv2d")


def _transpose(
    input: Any, filters: Any, output_shape: Any, strides: Any, padding: Any, data_format: str | None,
    dilations: Any, rank: int, fn: str,
) -> torch.Tensor:  # fmt: skip
    x, w = to_tensor(input), to_tensor(filters)
    channels_last = _layout(x, rank, data_format, fn)
    if w.dim() != rank + 2:
        raise ValueError(f"{fn}: filters must be {rank + 2}-D [k..., out, in]. Received shape {list(w.shape)}.")
    shape = [int(v) for v in (output_shape.tolist() if isinstance(output_shape, torch.Tensor) else output_shape)]
    if len(shape) != rank + 2:
        raise ValueError(f"{fn}: output_shape must have {rank + 2} entries. Received: output_shape={shape}")
    x = _first(x, channels_last)
    if w.shape[-1] != x.shape[1]:
        raise InvalidArgumentError(
            f"{fn}: the input has {x.shape[1]} channels but the filters' last axis (in) is {w.shape[-1]}; "
            "a transposed convolution's filters are [k..., out, in]."
        )
    sizes = shape[1:-1] if channels_last else shape[2:]
    stride = _per_axis(strides, rank, "strides", fn, channels_last)
    dilation = _per_axis(1 if dilations is None else dilations, rank, "dilations", fn, channels_last)
    # the forward convolution this is the gradient of pads the *output* as TF's SAME/VALID/explicit rule says
    pads = _padding(padding, sizes, w.shape[:rank], stride, dilation, fn, channels_last)
    weight = w.permute(rank + 1, rank, *range(rank)).to(x.dtype)
    full = _CONV_T[rank](x, weight, stride=stride, dilation=dilation)
    for axis, (size, (before, _)) in enumerate(zip(sizes, pads)):
        dim = axis + 2
        have = full.shape[dim] - before
        if have < size:  # the forward conv's last rows were never reached: their gradient is zero
            extra = [0, 0] * (rank - axis - 1) + [0, size - have]
            full = F.pad(full, extra)
        full = full.narrow(dim, before, size)
    return _back(full, channels_last)


def conv1d_transpose(
    input: Any, filters: Any, output_shape: Any, strides: Any, padding: Any = "SAME", data_format: str = "NWC",
    dilations: Any = None, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.conv1d_transpose``: the gradient of ``conv1d`` with respect to its input."""
    return _transpose(
        input, filters, output_shape, strides, padding, data_format, dilations, 1, "tf.nn.conv1d_transpose"
    )


def conv2d_transpose(
    input: Any, filters: Any, output_shape: Any, strides: Any, padding: Any = "SAME", data_format: str = "NHWC",
    dilations: Any = None, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.conv2d_transpose``: the gradient of ``conv2d`` with respect to its input."""
    return _transpose(
        input, filters, output_shape, strides, padding, data_format, dilations, 2, "tf.nn.conv2d_transpose"
    )


def conv3d_transpose(
    input: Any, filters: Any, output_shape: Any, strides: Any, padding: Any = "SAME", data_format: str = "NDHWC",
    dilations: Any = None, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.conv3d_transpose``: the gradient of ``conv3d`` with respect to its input."""
    return _transpose(
        input, filters, output_shape, strides, padding, data_format, dilations, 3, "tf.nn.conv3d_transpose"
    )


def conv_transpose(
    input: Any, filters: Any, output_shape: Any, strides: Any, padding: Any = "SAME", data_format: str | None = None,
    dilations: Any = None, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.conv_transpose``: the transposed convolution of the input's rank."""
    rank = to_tensor(input).dim() - 2
    if rank not in _CONV_T:
        raise ValueError(f"tf.nn.conv_transpose takes a 3-D, 4-D or 5-D input. Received rank {rank + 2}.")
    return _transpose(
        input, filters, output_shape, strides, padding, data_format, dilations, rank, "tf.nn.conv_transpose"
    )


def _max_pool(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None, rank: int, fn: str
) -> torch.Tensor:
    x = to_tensor(input)
    channels_last = _layout(x, rank, data_format, fn)
    x = _first(x, channels_last)
    kernel = _per_axis(ksize, rank, "ksize", fn, channels_last)
    stride = _per_axis(strides, rank, "strides", fn, channels_last)
    pads = _padding(padding, x.shape[2:], kernel, stride, (1,) * rank, fn, channels_last)
    if any(p != (0, 0) for p in pads):
        lowest = float("-inf") if x.is_floating_point() else torch.iinfo(x.dtype).min
        x = F.pad(x, _torch_pads(pads), value=lowest)
    if x.is_floating_point():
        return _back(_MAX[rank](x, kernel, stride), channels_last)
    # torch's CPU max pools take floats only; float64 holds every int32 exactly (TF pools ints too)
    return _back(_MAX[rank](x.double(), kernel, stride).to(x.dtype), channels_last)


def _avg_pool(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None, rank: int, fn: str
) -> torch.Tensor:
    x = to_tensor(input)
    channels_last = _layout(x, rank, data_format, fn)
    if not x.is_floating_point():
        raise TypeError(f"{fn} takes a float tensor. Received {x.dtype}; cast it first (tf.cast(x, tf.float32)).")
    x = _first(x, channels_last)
    kernel = _per_axis(ksize, rank, "ksize", fn, channels_last)
    stride = _per_axis(strides, rank, "strides", fn, channels_last)
    pads = _padding(padding, x.shape[2:], kernel, stride, (1,) * rank, fn, channels_last, explicit_ok=False)
    # 1-D pools run as 2-D ones over a height of 1 (torch's avg_pool1d has no divisor_override)
    lift = rank == 1
    if lift:
        x, kernel, stride, pads = x.unsqueeze(2), (1, *kernel), (1, *stride), [(0, 0), *pads]
    pool = F.avg_pool3d if len(kernel) == 3 else F.avg_pool2d
    flat = _torch_pads(pads)
    if any(flat):  # SAME: only real values count in each window's mean, as in TF
        sums = pool(F.pad(x, flat), kernel, stride, divisor_override=1)
        ones = torch.ones((1, 1, *x.shape[2:]), dtype=x.dtype, device=x.device)
        out = sums / pool(F.pad(ones, flat), kernel, stride, divisor_override=1)
    else:
        out = pool(x, kernel, stride)
    return _back(out.squeeze(2) if lift else out, channels_last)


def max_pool1d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC", name: str | None = None
) -> torch.Tensor:
    """``tf.nn.max_pool1d``: the maximum of each window of a [batch, width, channels] input."""
    return _max_pool(input, ksize, strides, padding, data_format, 1, "tf.nn.max_pool1d")


def max_pool3d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NDHWC", name: str | None = None
) -> torch.Tensor:
    """``tf.nn.max_pool3d``: the maximum of each window of a 5-D input."""
    return _max_pool(input, ksize, strides, padding, data_format, 3, "tf.nn.max_pool3d")


def avg_pool1d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC", name: str | None = None
) -> torch.Tensor:
    """``tf.nn.avg_pool1d``: the mean of each window; with ``"SAME"`` only real values count."""
    return _avg_pool(input, ksize, strides, padding, data_format, 1, "tf.nn.avg_pool1d")


def avg_pool3d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NDHWC", name: str | None = None
) -> torch.Tensor:
    """``tf.nn.avg_pool3d``: the mean of each window of a 5-D input."""
    return _avg_pool(input, ksize, strides, padding, data_format, 3, "tf.nn.avg_pool3d")


def _rank_of(input: Any, fn: str) -> int:
    rank = to_tensor(input).dim() - 2
    if rank not in _MAX:
        raise ValueError(f"{fn} takes a 3-D, 4-D or 5-D input. Received rank {rank + 2}.")
    return rank


def max_pool(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None = None, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.max_pool``: the max pool of the input's rank."""
    return _max_pool(input, ksize, strides, padding, data_format, _rank_of(input, "tf.nn.max_pool"), "tf.nn.max_pool")


def avg_pool(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None = None, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.avg_pool``: the average pool of the input's rank."""
    return _avg_pool(input, ksize, strides, padding, data_format, _rank_of(input, "tf.nn.avg_pool"), "tf.nn.avg_pool")


def pool(
    input: Any, window_shape: Any, pooling_type: str, strides: Any = None, padding: str = "VALID",
    data_format: str | None = None, dilations: Any = None, name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.nn.pool``: ``"MAX"`` or ``"AVG"`` pooling over ``window_shape`` (dilations other than 1 not built)."""
    fn = "tf.nn.pool"
    if dilations is not None and any(
        int(d) != 1 for d in (dilations if isinstance(dilations, (list, tuple)) else [dilations])
    ):
        raise NotImplementedError(
            f"{fn}: dilations other than 1 are not built in unison. Received: dilations={dilations!r}"
        )
    rank = _rank_of(input, fn)
    kind = str(pooling_type).upper()
    if kind not in ("MAX", "AVG"):
        raise ValueError(f"{fn}: pooling_type must be 'MAX' or 'AVG'. Received: pooling_type={pooling_type!r}")
    strides = 1 if strides is None else strides
    pooler = _max_pool if kind == "MAX" else _avg_pool
    return pooler(input, window_shape, strides, padding, data_format, rank, fn)


__all__ = [
    "atrous_conv2d",
    "avg_pool",
    "avg_pool1d",
    "avg_pool3d",
    "conv1d",
    "conv1d_transpose",
    "conv2d_transpose",
    "conv3d",
    "conv3d_transpose",
    "conv_transpose",
    "convolution",
    "depthwise_conv2d",
    "max_pool",
    "max_pool1d",
    "max_pool3d",
    "pool",
    "separable_conv2d",
]
