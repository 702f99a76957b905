"""More of TF's neural-network ops: ``tf.nn.isotonic_regression``, ``tf.nn.with_space_to_batch``,
``tf.approx_top_k``, ``tf.extract_volume_patches``, the raw ``tf.conv`` op and
``tf.nn.fractional_max_pool`` / ``fractional_avg_pool``.

``isotonic_regression`` is the pool-adjacent-violators algorithm per row (the least-squares
non-increasing fit, or non-decreasing with ``decreasing=False``), with TF's ``segments``: the index
of each element's block. ``with_space_to_batch`` runs an op on the space-to-batch form of a dilated
input, as TF does (``SAME`` padding from ``filter_shape``). ``approx_top_k`` is exact on CPU, as TF's
CPU kernel. ``extract_volume_patches`` is the 3-D form of ``tf.image.extract_patches``.

Example:
    >>> import unison as tf
    >>> out, segments = tf.nn.isotonic_regression([[3.0, 1.0, 2.0]])
    >>> out.tolist(), segments.tolist()
    ([[3.0, 1.5, 1.5]], [[0, 1, 1]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor
from unison.ops.nn_conv import _same, convolution
from unison.ops.nn_spatial import batch_to_space, required_space_to_batch_paddings, space_to_batch_nd

__all__ = [
    "approx_top_k",
    "conv",
    "extract_volume_patches",
    "fractional_avg_pool",
    "fractional_max_pool",
    "isotonic_regression",
    "with_space_to_batch",
]


class IsotonicRegression(NamedTuple):
    """``tf.nn.isotonic_regression``'s result: the fit and each element's block index."""

    output: torch.Tensor
    segments: torch.Tensor


class ApproxTopK(NamedTuple):
    """``tf.approx_top_k``'s result."""

    values: torch.Tensor
    indices: torch.Tensor


def _pav_decreasing(row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The least-squares non-increasing fit of ``row`` and the block index of each element."""
    sums: list[float] = []
    counts: list[int] = []
    for v in row.tolist():
        sums.append(float(v))
        counts.append(1)
        # merge while the newer block's mean exceeds the previous one's (a violation)
        while len(sums) > 1 and sums[-1] * counts[-2] > sums[-2] * counts[-1]:
            s, c = sums.pop(), counts.pop()
            sums[-1] += s
            counts[-1] += c
    fit = np.concatenate([np.full(c, s / c) for s, c in zip(sums, counts)]) if counts else np.zeros(0)
    segments = np.repeat(np.arange(len(counts)), counts) if counts else np.zeros(0, dtype=np.int64)
    return fit, segments


# TF's kernel computes small integers and half in float32, wide integers in float64
_ISOTONIC_DTYPES = {
    torch.int8: torch.float32, torch.uint8: torch.float32, torch.int16: torch.float32, torch.uint16: torch.float32,
    torch.float16: torch.float32, torch.int32: torch.float64, torch.int64: torch.float64,
    torch.uint32: torch.float64, torch.uint64: torch.float64,
}  # fmt: skip


def isotonic_regression(
    inputs: Any, decreasing: bool = True, axis: int = -1
) -> IsotonicRegression | tuple[torch.Tensor, torch.Tensor]:
    """``tf.nn.isotonic_regression``: the least-squares monotone fit along ``axis`` and its blocks.

    float32/float64 inputs keep their dtype; int8/int16/half give float32, int32/int64 float64, as in
    TF. ``segments`` is int32. As TF, the result is the named tuple for ``decreasing=True`` along
    ``axis=-1`` and a plain tuple otherwise (TF computes those by negation and transposition).

    Example:
        >>> isotonic_regression([[1.0, 3.0]], decreasing=False)[0].tolist()
        [[1.0, 3.0]]
    """
    t = to_tensor(inputs)
    if t.dim() == 0:
        raise InvalidArgumentError(None, None, "tf.nn.isotonic_regression: inputs must have at least one dimension.")
    out_dtype = _ISOTONIC_DTYPES.get(t.dtype, t.dtype)
    moved = torch.movedim(t, axis, -1)
    values = moved.detach().cpu().to(torch.float64).numpy()
    rows = values.reshape(-1, values.shape[-1]) if values.size else values.reshape(-1, values.shape[-1] or 0)
    fits = np.zeros_like(rows)
    segs = np.zeros(rows.shape, dtype=np.int32)
    for i, row in enumerate(rows):
        # TF solves the increasing case as the decreasing fit of the negated values
        fit, seg = _pav_decreasing(row if decreasing else -row)
        fits[i] = fit if decreasing else -fit
        segs[i] = seg
    output = torch.movedim(torch.from_numpy(fits.reshape(values.shape)).to(out_dtype), -1, axis)
    segments = torch.movedim(torch.from_numpy(segs.reshape(values.shape)), -1, axis)
    return IsotonicRegression(output, segments) if decreasing and axis == -1 else (output, segments)


def approx_top_k(
    input: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95, is_max_k: bool = True,
    reduction_input_size_override: int = -1, aggregate_to_topk: bool = True, name: str | None = None,
) -> ApproxTopK:  # fmt: skip
    """``tf.approx_top_k``: the ``k`` largest (or smallest) values along ``reduction_dimension``, sorted.

    TF's CPU kernel is exact, and so is this; indices are int32. ``is_max_k=False`` (the ``k``
    smallest) is computed here; TF 2.21's CPU kernel refuses it (``NotFoundError``), so that case
    is not checked against TF.

    Example:
        >>> approx_top_k([[5.0, 1.0, 3.0]], 2).indices.tolist()
        [[0, 2]]
    """
    t = to_tensor(input)
    if t.dim() == 0:
        raise InvalidArgumentError(None, None, "tf.approx_top_k: input must have at least one dimension.")
    dim = reduction_dimension % t.dim()
    if not 0 <= int(k) <= t.shape[dim]:
        raise InvalidArgumentError(
            None, None, f"tf.approx_top_k: k must be in [0, {t.shape[dim]}]. Received: k={k}."
        )  # fmt: skip
    # a stable sort keeps the lower index first among equal values, as TF's kernel
    key = t if is_max_k else -t
    order = torch.sort(
        key.to(torch.float64) if not t.is_floating_point() else key, dim=dim, descending=True, stable=True
    )
    indices = order.indices.narrow(dim, 0, int(k))
    return ApproxTopK(torch.gather(t, dim, indices), indices.to(torch.int32))


def _list5(value: Any, what: str) -> list[int]:
    vals = [int(v) for v in (value.tolist() if isinstance(value, torch.Tensor) else value)]
    if len(vals) != 5 or vals[0] != 1 or vals[4] != 1:
        raise InvalidArgumentError(
            None, None, f"tf.extract_volume_patches: {what} must be [1, planes, rows, cols, 1]. Received {what}={vals}."
        )
    return vals


def extract_volume_patches(
    input: Any, ksizes: Any, strides: Any, padding: str, name: str | None = None
) -> torch.Tensor:
    """``tf.extract_volume_patches``: 3-D patches of ``input`` [b, planes, rows, cols, depth] as channels.

    Output ``[b, out_planes, out_rows, out_cols, kp * kr * kc * depth]``, each patch flattened in
    (plane, row, col, depth) order; ``SAME`` pads with zeros, more after than before, as TF.

    Example:
        >>> extract_volume_patches(torch.ones(1, 2, 2, 2, 1), [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID").shape
        torch.Size([1, 1, 1, 1, 8])
    """
    x = to_tensor(input)
    if x.dim() != 5:
        raise InvalidArgumentError(
            None, None, f"tf.extract_volume_patches: input must be 5-D. Received shape {list(x.shape)}."
        )
    k, s = _list5(ksizes, "ksizes"), _list5(strides, "strides")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"tf.extract_volume_patches: padding must be 'SAME' or 'VALID'. Received: {padding!r}")
    y = x.permute(0, 4, 1, 2, 3)  # [b, depth, p, r, c]
    if padding == "SAME":
        pads = [_same(x.shape[1 + i], k[1 + i], s[1 + i], 1) for i in range(3)]
        y = F.pad(y, (pads[2][0], pads[2][1], pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
    if any(y.shape[2 + i] < k[1 + i] for i in range(3)):  # no whole window fits: TF gives no patches
        outs = [max((y.shape[2 + i] - k[1 + i]) // s[1 + i] + 1, 0) for i in range(3)]
        return x.new_zeros(x.shape[0], *outs, k[1] * k[2] * k[3] * x.shape[4])
    for i in range(3):
        y = y.unfold(2 + i, k[1 + i], s[1 + i])  # [b, d, op, or, oc, kp, kr, kc]
    y = y.permute(0, 2, 3, 4, 5, 6, 7, 1)
    return y.reshape(*y.shape[:4], -1).contiguous()


_FORMATS = {True: {1: "NWC", 2: "NHWC", 3: "NDHWC"}, False: {1: "NCW", 2: "NCHW", 3: "NCDHW"}}


def conv(
    input: Any, filter: Any, strides: Any, padding: str, explicit_paddings: Any = (),
    data_format: str = "CHANNELS_LAST", dilations: Any = (), batch_dims: int = 1, groups: int = 1,
    name: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """``tf.conv`` (the raw ``Conv`` op): an N-D convolution with ``batch_dims`` leading batch axes.

    ``strides`` and ``dilations`` list every axis (batch and channel entries 1); ``padding`` is
    ``"SAME"``, ``"VALID"`` or ``"EXPLICIT"`` with ``explicit_paddings`` (a flat before/after list).
    2 or 3 spatial axes, as TF's kernel. ``groups > 1`` is computed here, where TF 2.21's CPU kernel
    raises ``UnimplementedError``; so is ``CHANNELS_FIRST``, which TF's CPU kernel refuses too.

    Example:
        >>> conv(torch.ones(1, 3, 3, 1), torch.ones(2, 2, 1, 1), [1, 1, 1, 1], "VALID").shape
        torch.Size([1, 2, 2, 1])
    """
    x, w = to_tensor(input), to_tensor(filter)
    rank = w.dim() - 2
    if data_format not in ("CHANNELS_LAST", "CHANNELS_FIRST"):
        raise ValueError(f"tf.conv: data_format must be 'CHANNELS_LAST' or 'CHANNELS_FIRST'. Received: {data_format!r}")
    if rank not in (2, 3):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.conv: The input must have 2 or 3 spatial dimensions but got {rank} (filter shape {list(w.shape)}).",
        )
    if x.dim() != rank + batch_dims + 1:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.conv: input must have rank {rank + batch_dims + 1} (batch_dims={batch_dims}, spatial rank "
            f"{rank} from the filter's shape {list(w.shape)}). Received shape {list(x.shape)}.",
        )
    channels_last = data_format == "CHANNELS_LAST"
    cin = x.shape[-1] if channels_last else x.shape[batch_dims]
    if w.shape[-2] * groups != cin:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.conv: the input's {cin} channels must equal filter in-depth {w.shape[-2]} * groups {groups}.",
        )
    lead = list(x.shape[:batch_dims])
    flat = x.reshape(-1, *x.shape[batch_dims:])
    pad: Any = padding
    if padding == "EXPLICIT":
        vals = [int(v) for v in explicit_paddings]
        pairs = [vals[i : i + 2] for i in range(0, len(vals), 2)]
        pad = pairs[batch_dims - 1 :] if len(pairs) == rank + batch_dims + 1 else pairs
    dil = list(dilations) if len(dilations) else None
    stride_list = list(strides)[batch_dims - 1 :] if len(strides) == rank + batch_dims + 1 else list(strides)
    dil = dil[batch_dims - 1 :] if dil is not None and len(dil) == rank + batch_dims + 1 else dil
    out = convolution(flat, w, stride_list, pad, _FORMATS[channels_last][rank], dil)
    return out.reshape(*lead, *out.shape[1:])


def with_space_to_batch(
    input: Any, dilation_rate: Any, padding: str, op: Callable[..., Any], filter_shape: Any = None,
    spatial_dims: Any = None, data_format: str | None = None,
) -> Any:  # fmt: skip
    """``tf.nn.with_space_to_batch``: ``op`` on ``input`` turned to batch by ``dilation_rate``, then back.

    ``op(converted_input, num_spatial_dims, padding)`` is called with ``"VALID"`` on the padded
    space-to-batch form (or directly, with ``padding``, when every rate is 1), as TF does.

    Example:
        >>> import unison as tf
        >>> pool = lambda x, n, p: tf.nn.max_pool2d(x, 2, 1, p)
        >>> tf.nn.with_space_to_batch(tf.ones([1, 4, 4, 1]), [2, 2], "VALID", pool).shape
        torch.Size([1, 2, 2, 1])
    """
    x = to_tensor(input)
    rate = [int(v) for v in (dilation_rate.tolist() if isinstance(dilation_rate, torch.Tensor) else dilation_rate)]
    n = len(rate)
    if any(r < 1 for r in rate):
        raise ValueError(f"tf.nn.with_space_to_batch: dilation_rate must be positive. Received: {rate}")
    if spatial_dims is None:
        start = 2 if data_format is not None and data_format.startswith("NC") else 1
        dims = list(range(start, start + n))
    else:
        dims = [int(d) for d in spatial_dims]
        if len(dims) != n or sorted(dims) != dims or len(set(dims)) != n:
            raise ValueError(f"tf.nn.with_space_to_batch: spatial_dims must be {n} ascending axes. Received: {dims}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"tf.nn.with_space_to_batch: padding must be 'SAME' or 'VALID'. Received: {padding!r}")
    if all(r == 1 for r in rate):
        return op(x, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("tf.nn.with_space_to_batch: filter_shape must be specified for SAME padding.")
        fs = [int(v) for v in filter_shape]
        extra = [(f - 1) * r for f, r in zip(fs, rate)]
        base = [v for e in extra for v in (e // 2, e - e // 2)]
    else:
        base = [0] * (2 * n)
    paddings, crops = required_space_to_batch_paddings([x.shape[d] for d in dims], rate, base)
    # space_to_batch_nd blocks axes 1..last spatial axis: the others get block 1 and no padding
    last = dims[-1]
    block_full, pad_full, crop_full = [1] * last, [[0, 0]] * last, [[0, 0]] * last
    for i, d in enumerate(dims):
        block_full[d - 1] = rate[i]
        pad_full[d - 1] = paddings[i].tolist()
        crop_full[d - 1] = crops[i].tolist()
    converted = space_to_batch_nd(x, block_full, pad_full)
    result = to_tensor(op(converted, n, "VALID"))
    return batch_to_space(result, block_full, crop_full)


# --- fractional pooling -------------------------------------------------------------------------
class FractionalPool(NamedTuple):
    """``tf.nn.fractional_max_pool`` / ``fractional_avg_pool``'s result."""

    output: torch.Tensor
    row_pooling_sequence: torch.Tensor
    col_pooling_sequence: torch.Tensor


def _pooling_sequence(n_in: int, n_out: int, pseudo_random: bool, rng: np.random.Generator) -> list[int]:
    """Cell boundaries (``n_out + 1`` of them, from 0 to ``n_in``) as TF draws them."""
    if n_in % n_out == 0:  # every cell equally wide: no randomness, as in TF
        step = n_in // n_out
        return list(range(0, n_in + 1, step))
    alpha = n_in / n_out
    if pseudo_random:  # ceil(alpha * (i + u)) - ceil(alpha * u) for one u in [0, 1)
        u = float(rng.uniform(0.0, 1.0))
        base = int(np.ceil(alpha * u))
        return [int(np.ceil(alpha * (i + u))) - base for i in range(n_out)] + [n_in]
    small = n_in // n_out  # a random order of widths floor(alpha) and ceil(alpha) that sums to n_in
    widths = [small] * n_out
    for i in range(n_in - small * n_out):
        widths[i] += 1
    rng.shuffle(widths)
    return [0, *np.cumsum(widths).tolist()]


def _fractional_pool(
    value: Any, pooling_ratio: Any, pseudo_random: bool, overlapping: bool, seed: int, reduce: str
) -> FractionalPool:
    fn = f"tf.nn.fractional_{reduce}_pool"
    x = to_tensor(value)
    if x.dim() != 4:
        raise ValueError(f"{fn}: value must be 4-D [batch, rows, cols, channels]. Received shape {list(x.shape)}.")
    ratio = [float(r) for r in (pooling_ratio if isinstance(pooling_ratio, (list, tuple)) else [pooling_ratio])]
    if len(ratio) == 1:
        ratio = [1.0, ratio[0], ratio[0], 1.0]
    elif len(ratio) == 2:
        ratio = [1.0, *ratio, 1.0]
    if len(ratio) != 4 or ratio[0] != 1.0 or ratio[3] != 1.0 or min(ratio) < 1.0:
        raise InvalidArgumentError(
            None, None, f"{fn}: pooling_ratio must be [1.0, rows >= 1, cols >= 1, 1.0]. Received: {pooling_ratio!r}"
        )
    rows, cols = x.shape[1], x.shape[2]
    out_rows, out_cols = int(rows // ratio[1]), int(cols // ratio[2])
    if out_rows < 1 or out_cols < 1:
        raise InvalidArgumentError(
            None, None, f"{fn}: pooling_ratio {ratio} is too large for an input of {rows}x{cols} (no output cell)."
        )
    rng = np.random.default_rng(int(seed) if seed else None)
    row_seq = _pooling_sequence(rows, out_rows, pseudo_random, rng)
    col_seq = _pooling_sequence(cols, out_cols, pseudo_random, rng)

    def cells(seq: list[int], n: int) -> list[tuple[int, int]]:
        # overlapping cells also take the boundary row/column they share with the next cell
        return [(seq[i], min(seq[i + 1] + (1 if overlapping else 0), n)) for i in range(len(seq) - 1)]

    out_rows_t = []
    for r0, r1 in cells(row_seq, rows):
        row_cells = []
        for c0, c1 in cells(col_seq, cols):
            window = x[:, r0:r1, c0:c1, :]
            row_cells.append(window.amax(dim=(1, 2)) if reduce == "max" else window.mean(dim=(1, 2)))
        out_rows_t.append(torch.stack(row_cells, dim=1))
    output = torch.stack(out_rows_t, dim=1)
    return FractionalPool(output, torch.tensor(row_seq, dtype=torch.int64), torch.tensor(col_seq, dtype=torch.int64))


def fractional_max_pool(
    value: Any, pooling_ratio: Any, pseudo_random: bool = False, overlapping: bool = False, seed: int = 0,
    name: str | None = None,
) -> FractionalPool:  # fmt: skip
    """``tf.nn.fractional_max_pool``: max over cells of random widths ``floor``/``ceil(rows / out_rows)``.

    The output has ``floor(size / ratio)`` rows and columns; the cell boundaries come back as
    ``row_pooling_sequence`` / ``col_pooling_sequence``. When a size divides evenly every cell is
    equally wide and the result is TF's exactly; otherwise the widths are drawn as TF draws them
    (same distribution) from NumPy's generator, so a seed does not reproduce TF's particular draw.

    Example:
        >>> out = fractional_max_pool(torch.arange(16.0).reshape(1, 4, 4, 1), [1.0, 2.0, 2.0, 1.0])
        >>> out.output[0, :, :, 0].tolist(), out.row_pooling_sequence.tolist()
        ([[5.0, 7.0], [13.0, 15.0]], [0, 2, 4])
    """
    return _fractional_pool(value, pooling_ratio, pseudo_random, overlapping, seed, "max")


def fractional_avg_pool(
    value: Any, pooling_ratio: Any, pseudo_random: bool = False, overlapping: bool = False, seed: int = 0,
    name: str | None = None,
) -> FractionalPool:  # fmt: skip
    """``tf.nn.fractional_avg_pool``: the mean over the cells of :func:`fractional_max_pool`.

    Example:
        >>> fractional_avg_pool(torch.arange(16.0).reshape(1, 4, 4, 1), [1.0, 2.0, 2.0, 1.0]).output[0, 0, 0, 0].item()
        2.5
    """
    return _fractional_pool(value, pooling_ratio, pseudo_random, overlapping, seed, "avg")
