"""``tf.space_to_batch`` & co and the window ops of ``tf.nn`` torch lacks: ``dilation2d``,
``erosion2d`` (grey-scale morphology) and ``max_pool_with_argmax``.

Each follows TF 2.21's documented semantics, compared with TensorFlow by
``tests/conformance/test_vs_tf_nn_spatial.py``: NHWC images, TF's "SAME" padding (the odd pixel
after), argmax indices flattened as ``((b * height + y) * width + x) * channels + c``.

Example:
    >>> import unison as tf
    >>> x = tf.reshape(tf.range(4), [1, 2, 2, 1])
    >>> tf.space_to_batch(x, [2, 2], [[0, 0], [0, 0]])[:, 0, 0, 0].tolist()
    [0, 1, 2, 3]
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.nn_conv import _padding, _per_axis

__all__ = [
    "batch_to_space",
    "dilation2d",
    "erosion2d",
    "max_pool_with_argmax",
    "required_space_to_batch_paddings",
    "space_to_batch",
    "space_to_batch_nd",
]


def _ints(value: Any, what: str, fn: str) -> list[int]:
    t = to_tensor(value)
    if t.dtype not in (torch.int32, torch.int64):
        raise InvalidArgumentError(None, None, f"{fn}: {what} must be int32 or int64. Received dtype {t.dtype}.")
    return [int(v) for v in t.reshape(-1).tolist()]


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: str | None = None) -> torch.Tensor:  # noqa: A002
    """``tf.space_to_batch_nd``: pads the spatial axes, then moves ``block_shape`` blocks of them into the batch.

    ``input`` is ``[batch] + spatial + remaining``; the output batch is ``batch * prod(block_shape)``
    with the block offset outer and the original batch inner, as TF orders it.
    """
    x = to_tensor(input)
    block = _ints(block_shape, "block_shape", "space_to_batch")
    pads = _ints(paddings, "paddings", "space_to_batch")
    m = len(block)
    if len(pads) != 2 * m or x.dim() < m + 1:
        raise InvalidArgumentError(
            None,
            None,
            f"space_to_batch: paddings must have shape [{m}, 2] and input at least {m + 1} dimensions. "
            f"Received paddings of {len(pads)} values and input of shape {list(x.shape)}.",
        )
    if any(b < 1 for b in block) or any(p < 0 for p in pads):
        raise InvalidArgumentError(
            None, None, f"space_to_batch: block_shape must be >= 1 and paddings >= 0. Received {block}, {pads}."
        )
    torch_pads: list[int] = [0, 0] * (x.dim() - 1 - m)
    for i in reversed(range(m)):
        torch_pads += [pads[2 * i], pads[2 * i + 1]]
    x = F.pad(x, torch_pads) if any(pads) else x
    batch, spatial, rest = x.shape[0], list(x.shape[1 : m + 1]), list(x.shape[m + 1 :])
    for i, (size, b) in enumerate(zip(spatial, block)):
        if size % b:
            raise InvalidArgumentError(
                None,
                None,
                f"space_to_batch: padded spatial dimension {i} ({size}) is not divisible by block_shape[{i}]={b}.",
            )
    split: list[int] = [batch]
    for size, b in zip(spatial, block):
        split += [size // b, b]
    x = x.reshape(*split, *rest)
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, x.dim()))
    x = x.permute(order)
    return x.reshape(batch * _prod(block), *[s // b for s, b in zip(spatial, block)], *rest)


def _prod(values: list[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def space_to_batch(input: Any, block_shape: Any, paddings: Any, name: str | None = None) -> torch.Tensor:  # noqa: A002
    """``tf.space_to_batch`` (TF 2): the same as :func:`space_to_batch_nd`."""
    return space_to_batch_nd(input, block_shape, paddings)


def batch_to_space(input: Any, block_shape: Any, crops: Any, name: str | None = None) -> torch.Tensor:  # noqa: A002
    """``tf.batch_to_space``: the inverse of ``space_to_batch``: batch blocks back into space, then crops."""
    x = to_tensor(input)
    block = _ints(block_shape, "block_shape", "batch_to_space")
    crop = _ints(crops, "crops", "batch_to_space")
    m = len(block)
    if len(crop) != 2 * m or x.dim() < m + 1 or x.shape[0] % _prod(block):
        raise InvalidArgumentError(
            None,
            None,
            f"batch_to_space: input of shape {list(x.shape)} needs a batch divisible by prod(block_shape)="
            f"{_prod(block)} and crops of shape [{m}, 2].",
        )
    batch = x.shape[0] // _prod(block)
    spatial, rest = list(x.shape[1 : m + 1]), list(x.shape[m + 1 :])
    x = x.reshape(*block, batch, *spatial, *rest)
    order = [m]
    for i in range(m):
        order += [m + 1 + i, i]
    order += list(range(2 * m + 1, x.dim()))
    x = x.permute(order).reshape(batch, *[s * b for s, b in zip(spatial, block)], *rest)
    index: list[slice] = [slice(None)]
    for i in range(m):
        size = x.shape[1 + i]
        if crop[2 * i] + crop[2 * i + 1] > size:
            raise InvalidArgumentError(
                None, None, f"batch_to_space: crops {crop[2 * i : 2 * i + 2]} exceed dimension {size}."
            )
        index.append(slice(crop[2 * i], size - crop[2 * i + 1]))
    return x[tuple(index)]


def required_space_to_batch_paddings(
    input_shape: Any, block_shape: Any, base_paddings: Any = None, name: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``tf.required_space_to_batch_paddings``: (paddings, crops) making ``input_shape`` divisible by ``block_shape``.

    Example:
        >>> paddings, crops = required_space_to_batch_paddings([5], [2])
        >>> paddings.tolist(), crops.tolist()
        ([[0, 1]], [[0, 1]])
    """
    shape = _ints(input_shape, "input_shape", "required_space_to_batch_paddings")
    block = _ints(block_shape, "block_shape", "required_space_to_batch_paddings")
    base = (
        [0] * (2 * len(block))
        if base_paddings is None
        else _ints(base_paddings, "base_paddings", "required_space_to_batch_paddings")
    )
    pads, crops = [], []
    for i, (size, b) in enumerate(zip(shape, block)):
        start, end = base[2 * i], base[2 * i + 1]
        extra = (b - (size + start + end) % b) % b
        pads.append([start, end + extra])
        crops.append([0, extra])
    return torch.tensor(pads, dtype=torch.int32).reshape(-1, 2), torch.tensor(crops, dtype=torch.int32).reshape(-1, 2)


# --- windows: morphology and pooling with argmax --------------------------------------------------


def _windows(
    x: torch.Tensor, kernel: tuple[int, int], strides: Any, padding: Any, dilations: Any, fill: float, fn: str
) -> tuple[torch.Tensor, list[tuple[int, int]]]:
    """[B, OH, OW, C, kh, kw] windows of an NHWC tensor (padding filled with ``fill``), and the pads."""
    if x.dim() != 4:
        raise ValueError(f"{fn} takes a 4-D NHWC input. Received shape {list(x.shape)}.")
    stride = _per_axis(strides, 2, "strides", fn, True)
    dilation = _per_axis(dilations, 2, "dilations", fn, True)
    pads = _padding(padding, list(x.shape[1:3]), kernel, stride, dilation, fn, True, explicit_ok=False)
    xp = F.pad(x.movedim(3, 1), (pads[1][0], pads[1][1], pads[0][0], pads[0][1]), value=fill).movedim(1, 3)
    span = [(kernel[i] - 1) * dilation[i] + 1 for i in range(2)]
    patches = xp.unfold(1, span[0], stride[0]).unfold(2, span[1], stride[1])  # [B, OH, OW, C, span_h, span_w]
    return patches[..., :: dilation[0], :: dilation[1]], pads


def dilation2d(
    input: Any,  # noqa: A002
    filters: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.nn.dilation2d``: grey-scale dilation, ``max`` over each window of ``input + filters`` per channel.

    ``filters`` is ``[height, width, channels]``.
    """
    if data_format != "NHWC":
        raise ValueError(
            f"tf.nn.dilation2d supports data_format='NHWC' only (as TF on CPU). Received: {data_format!r}."
        )
    x, w = to_tensor(input), to_tensor(filters)
    if w.dim() != 3 or x.dim() != 4 or w.shape[2] != x.shape[3]:
        raise ValueError(
            f"tf.nn.dilation2d: filters must be [height, width, channels] with the input's channels. "
            f"Received input {list(x.shape)} and filters {list(w.shape)}."
        )
    patches, _ = _windows(
        x, (w.shape[0], w.shape[1]), strides, padding, dilations or 1, float("-inf"), "tf.nn.dilation2d"
    )
    return (patches + w.permute(2, 0, 1)).amax(dim=(-2, -1))


def erosion2d(
    value: Any,
    filters: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    dilations: Any = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.nn.erosion2d``: grey-scale erosion, ``-dilation2d(-value, filters reflected in space)``."""
    w = to_tensor(filters)
    return -dilation2d(-to_tensor(value), torch.flip(w, [0, 1]), strides, padding, data_format, dilations)


class PoolWithArgmax(NamedTuple):
    """``tf.nn.max_pool_with_argmax``'s result: the pooled values and the flat index of each maximum."""

    output: torch.Tensor
    argmax: torch.Tensor


def max_pool_with_argmax(
    input: Any,  # noqa: A002
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    output_dtype: Any = torch.int64,
    include_batch_in_index: bool = False,
    name: str | None = None,
) -> PoolWithArgmax:
    """``tf.nn.max_pool_with_argmax``: max pooling and where each maximum is.

    The index is ``(y * width + x) * channels + c`` (plus ``b * height * width * channels`` with
    ``include_batch_in_index``), the first maximum of a window in row-major order.
    """
    if data_format != "NHWC":
        raise ValueError(f"tf.nn.max_pool_with_argmax supports data_format='NHWC' only. Received: {data_format!r}.")
    x = to_tensor(input)
    kernel = _per_axis(ksize, 2, "ksize", "tf.nn.max_pool_with_argmax", True)
    patches, pads = _windows(
        x, (kernel[0], kernel[1]), strides, padding, 1, float("-inf"), "tf.nn.max_pool_with_argmax"
    )
    b, oh, ow, c, kh, kw = patches.shape
    flat = patches.reshape(b, oh, ow, c, kh * kw)
    values, where = flat.max(dim=-1)
    stride = _per_axis(strides, 2, "strides", "tf.nn.max_pool_with_argmax", True)
    rows = torch.arange(oh).view(1, oh, 1, 1) * stride[0] + where // kw - pads[0][0]
    cols = torch.arange(ow).view(1, 1, ow, 1) * stride[1] + where % kw - pads[1][0]
    height, width = x.shape[1], x.shape[2]
    index = (rows * width + cols) * c + torch.arange(c).view(1, 1, 1, c)
    if include_batch_in_index:
        index = index + torch.arange(b).view(b, 1, 1, 1) * (height * width * c)
    return PoolWithArgmax(values, index.to(as_dtype(output_dtype)))
