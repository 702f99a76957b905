"""``tf.nn``'s activation and loss functions over torch (re-exported by :mod:`unison.nn`).

Example:
    >>> import unison as tf
    >>> logits = tf.constant([[2.0, 0.0], [0.0, 2.0]])
    >>> loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=logits)
    >>> [round(v, 4) for v in loss.tolist()]
    [0.1269, 0.1269]
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from unison.ops import fastpath
from unison.ops._dispatch import wrap_namespace
from unison.ops.determinism import require_seed
from unison.ops.dropout_mask import dropout as _dropout
from unison.ops.dtypes import to_tensor

# one implementation each, shared with tf.math (the softmax output remembers its logits for Keras)
from unison.ops.math import clip_by_norm, l2_normalize, log_sigmoid, log_softmax, softmax, softplus, softsign
from unison.ops.math import sigmoid as _math_sigmoid
from unison.ops.nn_dropout import _noise_shape


def relu(features: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.relu``."""
    return F.relu(to_tensor(features))


def relu6(features: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.relu6``."""
    return F.relu6(to_tensor(features))


def elu(features: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.elu``."""
    return F.elu(to_tensor(features))


def selu(features: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.selu``."""
    return F.selu(to_tensor(features))


def silu(features: Any, beta: float = 1.0, name: str | None = None) -> torch.Tensor:
    """``tf.nn.silu`` (also ``tf.nn.swish``): ``x * sigmoid(beta * x)``."""
    x = to_tensor(features)
    return F.silu(x) if beta == 1.0 else x * torch.sigmoid(beta * x)


swish = silu


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> torch.Tensor:
    """``tf.nn.gelu``."""
    x = to_tensor(features)
    out = F.gelu(x, approximate="tanh" if approximate else "none")
    return torch.where(x == float("inf"), x, out) if x.is_floating_point() else out  # TF: gelu(inf) = inf


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> torch.Tensor:
    """``tf.nn.leaky_relu`` (TF's default slope 0.2)."""
    return F.leaky_relu(to_tensor(features), alpha)


def sigmoid(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.sigmoid``: ``tf.math.sigmoid`` (the output remembers its logits for Keras's losses)."""
    return _math_sigmoid(x)


def tanh(x: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.tanh``."""
    return fastpath.tanh(to_tensor(x))


def sparse_softmax_cross_entropy_with_logits(
    labels: Any = None, logits: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.sparse_softmax_cross_entropy_with_logits``: per-example losses, shape of ``labels``."""
    if labels is None or logits is None:
        raise ValueError(
            "sparse_softmax_cross_entropy_with_logits needs labels= and logits=. "
            f"Received: labels={labels!r:.40}, logits={logits!r:.40}"
        )
    x, y = to_tensor(logits), to_tensor(labels).long()
    if y.shape != x.shape[:-1]:
        raise ValueError(
            f"labels must have the shape of logits without its last axis: expected "
            f"{tuple(x.shape[:-1])}, received labels of shape {tuple(y.shape)}."
        )
    flat = F.cross_entropy(x.reshape(-1, x.shape[-1]), y.reshape(-1), reduction="none")
    return flat.reshape(y.shape)


def softmax_cross_entropy_with_logits(
    labels: Any = None, logits: Any = None, axis: int = -1, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.softmax_cross_entropy_with_logits``: labels are probabilities along ``axis``."""
    if labels is None or logits is None:
        raise ValueError("softmax_cross_entropy_with_logits needs labels= and logits=.")
    x = to_tensor(logits)
    y = to_tensor(labels).to(x.dtype)
    return -(y * F.log_softmax(x, dim=axis)).sum(dim=axis)


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None, name: str | None = None) -> torch.Tensor:
    """``tf.nn.sigmoid_cross_entropy_with_logits``: elementwise."""
    x = to_tensor(logits)
    return F.binary_cross_entropy_with_logits(x, to_tensor(labels).to(x.dtype), reduction="none")


def l2_loss(t: Any, name: str | None = None) -> torch.Tensor:
    """``tf.nn.l2_loss``: ``sum(t ** 2) / 2``."""
    x = to_tensor(t)
    return (x * x).sum() / 2


def dropout(
    x: Any, rate: float, noise_shape: Any = None, seed: int | None = None, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.dropout``: zero elements with probability ``rate``, scale the rest by 1/(1-rate).

    ``noise_shape`` (``None`` entries take ``x``'s size) gives one keep/drop decision per entry,
    broadcast over ``x``.
    """
    if not 0 <= rate < 1:
        raise ValueError(f"rate must be in [0, 1). Received: rate={rate}")
    require_seed(seed)
    t = to_tensor(x)
    if rate == 0:
        return t
    return _dropout(t, float(rate), _noise_shape(t, noise_shape))


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.nn.bias_add``: ``bias`` added along the channel axis (the last, or axis 1 for ``"NC..."`` formats)."""
    t, b = to_tensor(value), to_tensor(bias)
    if data_format is not None and str(data_format).startswith("NC") and t.dim() > 2:
        return t + b.reshape(-1, *([1] * (t.dim() - 2)))
    return t + b


def moments(
    x: Any, axes: Any, shift: Any = None, keepdims: bool = False, name: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.nn.moments``: ``(mean, variance)`` over ``axes``."""
    t = to_tensor(x)
    dims = tuple(int(a) for a in axes)
    return t.mean(dim=dims, keepdim=keepdims), t.var(dim=dims, keepdim=keepdims, correction=0)


def embedding_lookup(params: Any, ids: Any, max_norm: float | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.nn.embedding_lookup``: the rows of ``params`` at ``ids`` (shape ``ids.shape + params.shape[1:]``).

    ``params`` may be a list of shards split along the first axis ("div" order, TF 2's); with
    ``max_norm`` each looked-up embedding is clipped to that L2 norm. Gradients flow to ``params``.

    Example:
        >>> import unison as tf
        >>> table = tf.constant([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
        >>> tf.nn.embedding_lookup(table, [[2], [0]]).tolist()
        [[[2.0, 2.0]], [[0.0, 0.0]]]
    """
    table = torch.cat([to_tensor(p) for p in params]) if isinstance(params, (list, tuple)) else to_tensor(params)
    idx = to_tensor(ids)
    if idx.is_floating_point() or idx.dtype == torch.bool:
        raise TypeError(f"tf.nn.embedding_lookup: ids must be integers. Received a {idx.dtype} tensor.")
    idx = idx.long().to(table.device)
    rows = table.shape[0]
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= rows):
        bad = int(idx.min()) if int(idx.min()) < 0 else int(idx.max())
        raise ValueError(
            f"tf.nn.embedding_lookup: id {bad} is out of range for params with {rows} rows; ids must be in "
            f"[0, {rows}). Check the vocabulary size of the embedding table."
        )
    out = table.index_select(0, idx.reshape(-1)).reshape(tuple(idx.shape) + tuple(table.shape[1:]))
    if max_norm is not None:
        out = clip_by_norm(out, max_norm, axes=list(range(idx.dim(), out.dim())))
    return out


def _spatial(value: Any, what: str, fn: str, channels_last: bool) -> tuple[int, int]:
    """A TF ``strides``/``ksize``/``dilations`` value (int, or a list of 1, 2 or 4) as (height, width)."""
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]
    if len(values) == 1:
        return values[0], values[0]
    if len(values) == 2:
        return values[0], values[1]
    if len(values) == 4:
        batch_and_channel = (values[0], values[3]) if channels_last else (values[0], values[1])
        if batch_and_channel != (1, 1):
            raise ValueError(
                f"{fn}: {what} along the batch and channel axes must be 1. Received: {what}={list(values)}"
            )
        return (values[1], values[2]) if channels_last else (values[2], values[3])
    raise ValueError(f"{fn}: {what} must be an int or a list of 1, 2 or 4 ints. Received: {what}={value!r}")


def _same_pads(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    # TF's SAME: out = ceil(size / stride); the total padding is split with the extra one after.
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def _pads(
    padding: Any,
    sizes: tuple[int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    dilation: tuple[int, int],
    fn: str,
    channels_last: bool,
    explicit_ok: bool = True,
) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) for TF's ``padding`` ("SAME", "VALID" or explicit pairs)."""
    if isinstance(padding, str) and padding.upper() in ("SAME", "VALID"):
        if padding.upper() == "VALID":
            return 0, 0, 0, 0
        top, bottom = _same_pads(sizes[0], kernel[0], stride[0], dilation[0])
        left, right = _same_pads(sizes[1], kernel[1], stride[1], dilation[1])
        return top, bottom, left, right
    if explicit_ok and isinstance(padding, (list, tuple)) and len(padding) == 4:
        pairs = [tuple(int(v) for v in pair) for pair in padding]
        spatial = (pairs[1], pairs[2]) if channels_last else (pairs[2], pairs[3])
        outer = (pairs[0], pairs[3]) if channels_last else (pairs[0], pairs[1])
        if all(len(p) == 2 for p in pairs) and outer == ((0, 0), (0, 0)) and min(min(p) for p in pairs) >= 0:
            return spatial[0][0], spatial[0][1], spatial[1][0], spatial[1][1]
    choices = (
        "'SAME', 'VALID' or explicit [[0, 0], [top, bottom], [left, right], [0, 0]]"
        if explicit_ok
        else "'SAME' or 'VALID'"
    )
    raise ValueError(f"{fn}: padding must be {choices}. Received: padding={padding!r}")


def _to_nchw(x: torch.Tensor, data_format: str, fn: str) -> tuple[torch.Tensor, bool]:
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{fn}: data_format must be 'NHWC' or 'NCHW'. Received: data_format={data_format!r}")
    if x.dim() != 4:
        raise ValueError(
            f"{fn} takes a 4-D input ({data_format}: batch, height, width, channels). Received shape "
            f"{list(x.shape)}; add a batch axis with tf.expand_dims(x, 0) for a single image."
        )
    channels_last = data_format == "NHWC"
    return (x.permute(0, 3, 1, 2) if channels_last else x), channels_last


def conv2d(
    input: Any,
    filters: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.nn.conv2d``: 2-D convolution of NHWC ``input`` with ``filters`` of shape ``[h, w, in, out]``.

    ``padding="SAME"`` pads as TF does (the odd pixel after, so possibly asymmetric); an input
    with ``k`` times the filter's ``in`` channels is a grouped convolution with ``k`` groups.

    Example:
        >>> import unison as tf
        >>> x = tf.reshape(tf.range(16, dtype=tf.float32), [1, 4, 4, 1])
        >>> y = tf.nn.conv2d(x, tf.ones([3, 3, 1, 1]), strides=2, padding="SAME")
        >>> y.shape, y[0, :, :, 0].tolist()
        (torch.Size([1, 2, 2, 1]), [[45.0, 39.0], [66.0, 50.0]])
    """
    fn = "tf.nn.conv2d"
    x, channels_last = _to_nchw(to_tensor(input), data_format, fn)
    w = to_tensor(filters)
    if w.dim() != 4:
        raise ValueError(f"{fn}: filters must be 4-D [height, width, in, out]. Received shape {list(w.shape)}.")
    cin, fin = x.shape[1], w.shape[2]
    if fin == 0 or cin % fin or w.shape[3] % (cin // fin):
        raise ValueError(
            f"{fn}: the input has {cin} channels, which the filters' in={fin} must divide (and out={w.shape[3]} "
            "must be a multiple of the number of groups). Filters are [height, width, in, out], as in TF."
        )
    stride = _spatial(strides, "strides", fn, channels_last)
    dilation = _spatial(1 if dilations is None else dilations, "dilations", fn, channels_last)
    top, bottom, left, right = _pads(
        padding, (x.shape[2], x.shape[3]), (w.shape[0], w.shape[1]), stride, dilation, fn, channels_last
    )
    if top or bottom or left or right:
        x = F.pad(x, (left, right, top, bottom))
    out = F.conv2d(x, w.permute(3, 2, 0, 1).to(x.dtype), stride=stride, dilation=dilation, groups=cin // fin)
    return out.permute(0, 2, 3, 1) if channels_last else out


def _pool_window(
    x: torch.Tensor, ksize: Any, strides: Any, padding: Any, fn: str, channels_last: bool, explicit_ok: bool
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int, int, int]]:
    """A pool's window, stride and (top, bottom, left, right) padding, checked as TF checks them."""
    kernel = _spatial(ksize, "ksize", fn, channels_last)
    stride = _spatial(strides, "strides", fn, channels_last)
    pads = _pads(padding, (x.shape[2], x.shape[3]), kernel, stride, (1, 1), fn, channels_last, explicit_ok=explicit_ok)
    return kernel, stride, pads


def max_pool2d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC", name: str | None = None
) -> torch.Tensor:
    """``tf.nn.max_pool2d``: the maximum of each window; ``"SAME"`` padding never wins the maximum.

    Example:
        >>> import unison as tf
        >>> x = tf.reshape(tf.range(9, dtype=tf.float32), [1, 3, 3, 1])
        >>> tf.nn.max_pool2d(x, 2, 2, "SAME")[0, :, :, 0].tolist()
        [[4.0, 5.0], [7.0, 8.0]]
    """
    fn = "tf.nn.max_pool2d"
    x, channels_last = _to_nchw(to_tensor(input), data_format, fn)
    kernel, stride, (top, bottom, left, right) = _pool_window(x, ksize, strides, padding, fn, channels_last, True)
    if top or bottom or left or right:
        lowest = float("-inf") if x.is_floating_point() else torch.iinfo(x.dtype).min
        x = F.pad(x, (left, right, top, bottom), value=lowest)
    out = F.max_pool2d(x, kernel, stride)
    return out.permute(0, 2, 3, 1) if channels_last else out


def avg_pool2d(
    input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC", name: str | None = None
) -> torch.Tensor:
    """``tf.nn.avg_pool2d``: the mean of each window; with ``"SAME"`` only real (unpadded) values count.

    Example:
        >>> import unison as tf
        >>> x = tf.reshape(tf.range(9, dtype=tf.float32), [1, 3, 3, 1])
        >>> tf.nn.avg_pool2d(x, 2, 2, "SAME")[0, :, :, 0].tolist()
        [[2.0, 3.5], [6.5, 8.0]]
    """
    fn = "tf.nn.avg_pool2d"
    x, channels_last = _to_nchw(to_tensor(input), data_format, fn)
    if not x.is_floating_point():
        raise TypeError(f"{fn} takes a float tensor. Received {x.dtype}; cast it first (tf.cast(x, tf.float32)).")
    kernel, stride, (top, bottom, left, right) = _pool_window(x, ksize, strides, padding, fn, channels_last, False)
    if top or bottom or left or right:
        pads = (left, right, top, bottom)
        sums = F.avg_pool2d(F.pad(x, pads), kernel, stride, divisor_override=1)
        ones = torch.ones((1, 1, x.shape[2], x.shape[3]), dtype=x.dtype, device=x.device)
        counts = F.avg_pool2d(F.pad(ones, pads), kernel, stride, divisor_override=1)
        out = sums / counts
    else:
        out = F.avg_pool2d(x, kernel, stride)
    return out.permute(0, 2, 3, 1) if channels_last else out


__all__ = [
    "avg_pool2d",
    "bias_add",
    "conv2d",
    "dropout",
    "elu",
    "embedding_lookup",
    "gelu",
    "l2_loss",
    "l2_normalize",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "max_pool2d",
    "moments",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "sigmoid_cross_entropy_with_logits",
    "silu",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softplus",
    "softsign",
    "sparse_softmax_cross_entropy_with_logits",
    "swish",
    "tanh",
]

wrap_namespace(globals(), [n for n in __all__ if n != "l2_normalize"])  # l2_normalize: wrapped in math
