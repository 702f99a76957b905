"""``keras.ops.nn``, part 2: the newer activations, layer/RMS normalisation, adaptive pooling,
depth/space rearrangements, ``fold``/``unfold``, ``polar`` and CTC (loss and greedy decoding).

Keras's layouts: ``depth_to_space``/``space_to_depth`` default to channels-last (TF's NHWC order of
the block), ``fold``/``unfold`` work on NCHW tensors (torch's ``F.fold``/``F.unfold`` layout), the
adaptive pools read ``image_data_format()``; CTC takes batch-major logits ``(batch, time, classes)``.

Example:
    >>> from unison.keras import ops
    >>> ops.sparsemax([[1.0, 2.0, 0.0]]).tolist(), ops.threshold([0.5, 2.0], 1.0, -1.0).tolist()
    ([[0.0, 1.0, 0.0]], [-1.0, 2.0])
"""

from __future__ import annotations

import builtins
from typing import Any

import torch
import torch.nn.functional as F

from unison.errors import InvalidArgumentError
from unison.keras.ops._convert import axes, float_of, pair, tensor
from unison.ops._dispatch import wrap_namespace

Tensor = torch.Tensor


def _epsilon() -> float:
    from unison.keras.ops._config import epsilon

    return epsilon()


def _data_format(data_format: str | None) -> str:
    from unison.keras.ops._config import standardize_data_format

    return standardize_data_format(data_format)


# --- activations --------------------------------------------------------------------------------


def hard_tanh(x: Any) -> Tensor:
    """``keras.ops.hard_tanh(x)``: ``x`` clipped to ``[-1, 1]`` (float inputs only, as Keras on TF)."""
    t = tensor(x)
    if not t.is_floating_point():
        raise TypeError(
            f"keras.ops.hard_tanh clips to the floats -1.0 and 1.0, so x must be a float tensor. Received "
            f"{t.dtype}; cast it first (keras.ops.cast(x, 'float32'))."
        )
    return F.hardtanh(t)


def hard_shrink(x: Any, threshold: float = 0.5) -> Tensor:
    """``keras.ops.hard_shrink(x, threshold=0.5)``: ``x`` where ``|x| > threshold``, else 0."""
    t = float_of(tensor(x))
    return torch.where(torch.abs(t) > threshold, t, torch.zeros((), dtype=t.dtype))


def soft_shrink(x: Any, threshold: float = 0.5) -> Tensor:
    """``keras.ops.soft_shrink(x, threshold=0.5)``: ``x`` moved ``threshold`` towards 0, 0 within it."""
    t = float_of(tensor(x))
    zero = torch.zeros((), dtype=t.dtype)
    return torch.where(t > threshold, t - threshold, torch.where(t < -threshold, t + threshold, zero))


def tanh_shrink(x: Any) -> Tensor:
    """``keras.ops.tanh_shrink(x)``: ``x - tanh(x)``."""
    t = float_of(tensor(x))
    return t - torch.tanh(t)


def squareplus(x: Any, b: float = 4) -> Tensor:
    """``keras.ops.squareplus(x, b=4)``: ``(x + sqrt(x**2 + b)) / 2``, a smooth ReLU."""
    t = float_of(tensor(x))
    return (t + torch.sqrt(t * t + b)) / 2


def sparse_plus(x: Any) -> Tensor:
    """``keras.ops.sparse_plus(x)``: 0 below -1, ``(x + 1)**2 / 4`` on ``[-1, 1]``, ``x`` above 1."""
    t = float_of(tensor(x))
    return torch.where(t <= -1, torch.zeros((), dtype=t.dtype), torch.where(t >= 1, t, (t + 1) ** 2 / 4))


def sparse_sigmoid(x: Any) -> Tensor:
    """``keras.ops.sparse_sigmoid(x)``: 0 below -1, ``(x + 1) / 2`` on ``[-1, 1]``, 1 above."""
    t = float_of(tensor(x))
    return torch.clamp(0.5 * (t + 1), 0.0, 1.0)


def sparsemax(x: Any, axis: int = -1) -> Tensor:
    """``keras.ops.sparsemax(x, axis=-1)``: a softmax whose small entries are exactly 0.

    Keras's formula on every backend, kept for the same results: the threshold ``tau`` is
    ``(sum of the support's cumulative sums - 1) / k``; it is the paper's ``(cumsum[k - 1] - 1) / k``
    when one entry is in the support (``k == 1``), and larger otherwise."""
    t = float_of(tensor(x))
    (ax,) = axes(axis, t.dim(), "sparsemax") or (0,)
    ordered = torch.sort(t, dim=ax, descending=True).values
    cumulative = torch.cumsum(ordered, dim=ax)
    shape = [1] * t.dim()
    shape[ax] = -1
    r = torch.arange(1, t.shape[ax] + 1, dtype=t.dtype, device=t.device).reshape(shape)
    support = ordered - (cumulative - 1) / r > 0
    k = support.sum(dim=ax, keepdim=True).to(t.dtype)
    tau = (torch.where(support, cumulative, torch.zeros((), dtype=t.dtype)).sum(dim=ax, keepdim=True) - 1) / k
    return torch.clamp(t - tau, min=0.0)


def threshold(x: Any, threshold: float, default_value: float) -> Tensor:
    """``keras.ops.threshold(x, threshold, default_value)``: ``x`` where ``x > threshold``, else
    ``default_value``."""
    t = tensor(x)
    if not (t.is_floating_point() or t.is_complex()) and isinstance(default_value, builtins.float):
        raise TypeError(
            f"keras.ops.threshold: default_value={default_value!r} is a float but x is {t.dtype}; TF's where "
            "needs both of x's dtype. Cast x to a float dtype or pass an integer default_value."
        )
    fill = torch.as_tensor(default_value, device=t.device).to(t.dtype)
    return torch.where(t > threshold, t, fill)


def polar(abs_: Any, angle: Any) -> Tensor:
    """``keras.ops.polar(abs_, angle)``: the complex numbers ``abs_ * (cos(angle) + i sin(angle))``."""
    a, b = pair(abs_, angle)
    a, b = float_of(a), float_of(b)
    dtype = torch.promote_types(a.dtype, b.dtype)
    return torch.polar(a.to(dtype), b.to(dtype))


# --- normalisation ----------------------------------------------------------------------------------


def _compute(x: Any) -> tuple[Tensor, torch.dtype]:
    # Keras computes in at least float32 and casts back (stable in half precision).
    t = tensor(x)
    original = t.dtype
    work = t.to(torch.promote_types(t.dtype, torch.float32)) if t.is_floating_point() else t.to(torch.float32)
    return work, original


def _param(value: Any, t: Tensor, dims: tuple[int, ...]) -> Tensor | None:
    if value is None:
        return None
    p = tensor(value).to(t.dtype)
    if p.dim() != t.dim() and dims != (t.dim() - 1,):
        shape = [t.shape[d] if d in dims else 1 for d in range(t.dim())]
        p = p.reshape(shape)
    return p


def layer_normalization(
    x: Any, gamma: Any = None, beta: Any = None, axis: Any = -1, epsilon: float | None = None, **kwargs: Any
) -> Tensor:
    """``keras.ops.layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None)``: each
    example normalised to mean 0 and variance 1 over ``axis``, then ``* gamma + beta``."""
    if kwargs.pop("rms_scaling", False):
        raise ValueError(
            "keras.ops.layer_normalization: rms_scaling=True is deprecated in Keras (it scales by the "
            "variance); use keras.ops.rms_normalization instead."
        )
    if kwargs:
        raise TypeError(f"keras.ops.layer_normalization got unexpected arguments: {sorted(kwargs)}")
    t, original = _compute(x)
    dims = axes(axis, t.dim(), "layer_normalization") or ()
    eps = _epsilon() if epsilon is None else epsilon
    mean = t.mean(dim=dims, keepdim=True)
    variance = (t - mean).square().mean(dim=dims, keepdim=True)
    inv = torch.rsqrt(variance + eps)
    g, b = _param(gamma, t, dims), _param(beta, t, dims)
    if g is not None:
        inv = inv * g
    out = t * inv - mean * inv
    if b is not None:
        out = out + b
    return out.to(original)


def rms_normalization(x: Any, scale: Any = None, axis: Any = -1, epsilon: float | None = None) -> Tensor:
    """``keras.ops.rms_normalization(x, scale=None, axis=-1, epsilon=None)``:
    ``x * rsqrt(mean(x**2, axis) + epsilon) * scale``."""
    t, original = _compute(x)
    if t.dim() == 0:
        t = t.reshape(1)
    dims = axes(axis, t.dim(), "rms_normalization") or ()
    eps = _epsilon() if epsilon is None else epsilon
    out = t * torch.rsqrt(t.square().mean(dim=dims, keepdim=True) + eps)
    s = _param(scale, t, dims)
    if s is not None:
        out = out * s
    return out.to(original)


# --- pooling and rearrangements ---------------------------------------------------------------------


def _adaptive(inputs: Any, output_size: Any, data_format: str | None, fn: str, kind: str) -> Tensor:
    t = tensor(inputs)
    n = t.dim() - 2
    if n not in (1, 2, 3):
        raise ValueError(
            f"keras.ops.{fn} supports 1D, 2D or 3D inputs (rank 3 to 5, with batch and channels). "
            f"Received an input of shape {tuple(t.shape)}."
        )
    size = (output_size,) * n if isinstance(output_size, builtins.int) else tuple(output_size)
    if len(size) != n:
        raise ValueError(f"keras.ops.{fn}: output_size needs {n} values for a {n}D input. Received: {output_size!r}")
    channels_last = _data_format(data_format) == "channels_last"
    work = t.movedim(-1, 1) if channels_last else t
    work = float_of(work) if kind == "avg" else work
    pools: dict[tuple[str, int], Any] = {
        ("avg", 1): F.adaptive_avg_pool1d,
        ("avg", 2): F.adaptive_avg_pool2d,
        ("avg", 3): F.adaptive_avg_pool3d,
        ("max", 1): F.adaptive_max_pool1d,
        ("max", 2): F.adaptive_max_pool2d,
        ("max", 3): F.adaptive_max_pool3d,
    }
    out = pools[(kind, n)](work, size)
    return out.movedim(1, -1) if channels_last else out


def adaptive_average_pool(inputs: Any, output_size: Any, data_format: str | None = None) -> Tensor:
    """``keras.ops.adaptive_average_pool(inputs, output_size, data_format=None)``: average pooling
    into ``output_size`` bins per spatial axis (bins of sizes ``floor``/``ceil`` of ``in/out``)."""
    return _adaptive(inputs, output_size, data_format, "adaptive_average_pool", "avg")


def adaptive_max_pool(inputs: Any, output_size: Any, data_format: str | None = None) -> Tensor:
    """``keras.ops.adaptive_max_pool(inputs, output_size, data_format=None)``: max pooling into
    ``output_size`` bins per spatial axis."""
    return _adaptive(inputs, output_size, data_format, "adaptive_max_pool", "max")


def _nhwc(x: Any, data_format: str, fn: str) -> tuple[Tensor, bool]:
    t = tensor(x)
    if t.dim() != 4:
        raise ValueError(
            f"keras.ops.{fn} needs a 4-D tensor (batch, height, width, channels). Received {tuple(t.shape)}."
        )
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            f"keras.ops.{fn}: data_format must be 'channels_last' or 'channels_first'. Received: {data_format!r}"
        )
    first = data_format == "channels_first"
    return (t.permute(0, 2, 3, 1) if first else t), first


def depth_to_space(x: Any, block_size: int, data_format: str = "channels_last") -> Tensor:
    """``keras.ops.depth_to_space(x, block_size, data_format="channels_last")``: moves channel blocks
    into ``block_size x block_size`` spatial tiles (TF's order within a tile)."""
    t, first = _nhwc(x, data_format, "depth_to_space")
    n, h, w, c = t.shape
    bs = int(block_size)
    if bs < 2 or c % (bs * bs):
        raise InvalidArgumentError(
            None,
            None,
            f"keras.ops.depth_to_space: the channels ({c}) must divide by block_size**2 and block_size must "
            f"be at least 2. Received: block_size={block_size}",
        )
    out = t.reshape(n, h, w, bs, bs, c // (bs * bs)).permute(0, 1, 3, 2, 4, 5).reshape(n, h * bs, w * bs, -1)
    return out.permute(0, 3, 1, 2) if first else out


def space_to_depth(x: Any, block_size: int, data_format: str = "channels_last") -> Tensor:
    """``keras.ops.space_to_depth(x, block_size, data_format="channels_last")``: moves
    ``block_size x block_size`` spatial tiles into channels (the inverse of :func:`depth_to_space`)."""
    t, first = _nhwc(x, data_format, "space_to_depth")
    n, h, w, c = t.shape
    bs = int(block_size)
    if bs < 2 or h % bs or w % bs:
        raise InvalidArgumentError(
            None,
            None,
            f"keras.ops.space_to_depth: height and width ({h}, {w}) must divide by block_size, which must be "
            f"at least 2. Received: block_size={block_size}",
        )
    out = t.reshape(n, h // bs, bs, w // bs, bs, c).permute(0, 1, 3, 2, 4, 5).reshape(n, h // bs, w // bs, -1)
    return out.permute(0, 3, 1, 2) if first else out


def _pair2(value: Any) -> tuple[int, int]:
    return (int(value), int(value)) if isinstance(value, builtins.int) else (int(value[0]), int(value[1]))


def unfold(x: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """``keras.ops.unfold(x, kernel_size, dilation=1, padding=0, stride=1)``: the sliding blocks of an
    NCHW tensor as ``(N, C * kh * kw, blocks)``."""
    t = tensor(x)
    if t.dim() != 4:
        raise ValueError(f"keras.ops.unfold needs a 4-D NCHW tensor. Received shape {tuple(t.shape)}.")
    return F.unfold(t, _pair2(kernel_size), dilation=_pair2(dilation), padding=_pair2(padding), stride=_pair2(stride))


def fold(x: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """``keras.ops.fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1)``: sums sliding
    blocks ``(N, C * kh * kw, blocks)`` back into an NCHW tensor (the adjoint of :func:`unfold`)."""
    t = tensor(x)
    if t.dim() != 3:
        raise ValueError(f"keras.ops.fold needs a 3-D tensor (N, C*kh*kw, L). Received shape {tuple(t.shape)}.")
    return F.fold(
        t,
        _pair2(output_size),
        _pair2(kernel_size),
        dilation=_pair2(dilation),
        padding=_pair2(padding),
        stride=_pair2(stride),
    )


# --- CTC --------------------------------------------------------------------------------------------


def ctc_loss(target: Any, output: Any, target_length: Any, output_length: Any, mask_index: int = 0) -> Tensor:
    """``keras.ops.ctc_loss(target, output, target_length, output_length, mask_index=0)``: the CTC
    loss per sequence, of batch-major logits ``output`` ``(batch, time, classes)`` and padded labels
    ``target`` ``(batch, max_label_length)``; ``mask_index`` is the blank class."""
    labels = tensor(target).long()
    logits = float_of(tensor(output))
    if logits.dim() != 3 or labels.dim() != 2:
        raise ValueError(
            "keras.ops.ctc_loss: output must be (batch, time, classes) and target (batch, max_label_length). "
            f"Received shapes {tuple(logits.shape)} and {tuple(labels.shape)}."
        )
    log_probs = torch.log_softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)
    loss = F.ctc_loss(
        log_probs.transpose(0, 1),
        labels,
        tensor(output_length).long(),
        tensor(target_length).long(),
        blank=int(mask_index) % logits.shape[-1],
        reduction="none",
        zero_infinity=False,
    )
    return loss.to(logits.dtype)


def ctc_decode(
    inputs: Any,
    sequence_lengths: Any,
    strategy: str = "greedy",
    beam_width: int = 100,
    top_paths: int = 1,
    merge_repeated: builtins.bool = True,
    mask_index: int = 0,
) -> tuple[Tensor, Tensor]:
    """``keras.ops.ctc_decode(inputs, sequence_lengths, strategy="greedy", ...)``: the best path of
    batch-major scores ``(batch, time, classes)``: ``(decoded, scores)`` with ``decoded`` of shape
    ``(1, batch, time)`` (int32, padded with -1) and ``scores`` ``(batch, 1)``, the negated sum of
    each step's best score. Only ``strategy="greedy"`` is implemented."""
    if strategy == "beam_search":
        raise NotImplementedError(
            "keras.ops.ctc_decode(strategy='beam_search') is not implemented in unison; use strategy='greedy'."
        )
    if strategy != "greedy":
        raise ValueError(f"Invalid strategy {strategy}. Supported values are 'greedy' and 'beam_search'.")
    scores_in = float_of(tensor(inputs))
    scores_in = scores_in.to(torch.promote_types(scores_in.dtype, torch.float32))
    if scores_in.dim() != 3:
        raise ValueError(
            f"keras.ops.ctc_decode: inputs must be (batch, time, classes). Received {tuple(scores_in.shape)}."
        )
    n, steps, classes = scores_in.shape
    lengths = tensor(sequence_lengths).long().reshape(n, 1)
    best, best_class = scores_in.max(dim=-1)
    valid = torch.arange(steps).reshape(1, steps) < lengths
    blank = int(mask_index) % classes
    keep = valid & (best_class != blank)
    if merge_repeated:
        previous = torch.cat([torch.full((n, 1), -1, dtype=best_class.dtype), best_class[:, :-1]], dim=1)
        keep = keep & (best_class != previous)
    # compact the kept labels to the left of each row, -1 after them
    position = torch.cumsum(keep.long(), dim=1) - 1
    decoded = torch.full((n, steps), -1, dtype=torch.int64)
    rows = torch.arange(n).reshape(n, 1).expand(n, steps)
    decoded[rows[keep], position[keep]] = best_class[keep]
    score = -(best * valid).sum(dim=1, keepdim=True)
    return decoded.to(torch.int32).unsqueeze(0), score


__all__ = [
    "adaptive_average_pool",
    "adaptive_max_pool",
    "ctc_decode",
    "ctc_loss",
    "depth_to_space",
    "fold",
    "hard_shrink",
    "hard_tanh",
    "layer_normalization",
    "polar",
    "rms_normalization",
    "soft_shrink",
    "space_to_depth",
    "sparse_plus",
    "sparse_sigmoid",
    "sparsemax",
    "squareplus",
    "tanh_shrink",
    "threshold",
    "unfold",
]

# Symbolic keras.Input tensors defer these to the functional graph (see unison.ops._dispatch).
wrap_namespace(globals(), __all__)
