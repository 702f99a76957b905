"""The pieces every ``tf.image`` module shares: layout checks, ``convert_image_dtype``, the
float working dtype of colour adjustments, "no gradient" ops and the seeded generators of the
``stateless_random_*`` functions.

Example:
    >>> import unison as tf
    >>> tf.image.convert_image_dtype(tf.constant([0, 255], dtype=tf.uint8), tf.float32).tolist()
    [0.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import torch

from unison.ops._dispatch import wrap_namespace
from unison.ops.dtypes import as_dtype, to_tensor


def _rank_3_or_4(images: Any, fn: str) -> torch.Tensor:
    t = to_tensor(images)
    if t.dim() not in (3, 4):
        raise ValueError(
            f"tf.image.{fn}: the image must have 3 ([height, width, channels]) or 4 ([batch, height, width, "
            f"channels]) dimensions. Received shape {list(t.shape)}; a grayscale [height, width] image needs "
            "tf.expand_dims(image, -1)."
        )
    return t


def _batched(images: Any, fn: str) -> tuple[torch.Tensor, bool]:
    t = _rank_3_or_4(images, fn)
    return (t, True) if t.dim() == 4 else (t.unsqueeze(0), False)


def _hw(t: torch.Tensor) -> tuple[int, int]:
    return t.shape[-3], t.shape[-2]


def _max(dtype: torch.dtype) -> int:
    return int(torch.iinfo(dtype).max)


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False, name: str | None = None) -> torch.Tensor:
    """``tf.image.convert_image_dtype``: rescale between integer ``0..MAX`` and float ``[0, 1]`` images.

    int -> float divides by the input's MAX; float -> int multiplies by (MAX + 0.5) and
    truncates (``saturate=True`` clamps first); int -> int shifts the scale; float -> float casts.

    Example:
        >>> import unison as tf
        >>> tf.image.convert_image_dtype(tf.constant([0, 255], dtype=tf.uint8), tf.float32).tolist()
        [0.0, 1.0]
        >>> tf.image.convert_image_dtype(tf.constant([0.0, 0.5, 1.0]), tf.uint8).tolist()
        [0, 127, 255]
    """
    t = to_tensor(image)
    target = as_dtype(dtype)
    if not isinstance(target, torch.dtype) or target == torch.bool or target.is_complex:
        raise AttributeError(
            f"tf.image.convert_image_dtype: dtype must be a floating point or integer dtype. Received: {dtype!r}"
        )
    if t.dtype == torch.bool or t.is_complex():
        raise TypeError(f"tf.image.convert_image_dtype takes an integer or float image. Received {t.dtype}.")
    if t.dtype == target:
        return t
    if not t.is_floating_point() and not target.is_floating_point:
        in_max, out_max = _max(t.dtype), _max(target)
        if in_max > out_max:
            scaled = torch.div(t, (in_max + 1) // (out_max + 1), rounding_mode="floor")
            return _saturate(scaled, target) if saturate else scaled.to(target)
        cast = _saturate(t, target) if saturate else t.to(target)
        return cast * ((out_max + 1) // (in_max + 1))
    if t.is_floating_point() and target.is_floating_point:
        return t.to(target)
    if not t.is_floating_point():
        return t.to(target) * torch.tensor(1.0 / _max(t.dtype), dtype=target)
    scaled = t * torch.tensor(_max(target) + 0.5, dtype=t.dtype)
    return _saturate(scaled, target) if saturate else scaled.to(target)


def _saturate(t: torch.Tensor, target: torch.dtype) -> torch.Tensor:
    info = torch.iinfo(target)
    if t.is_floating_point():
        return torch.clamp(t, float(info.min), float(info.max)).to(target)
    return torch.clamp(t.long(), info.min, info.max).to(target)


def _as_float(image: torch.Tensor) -> torch.Tensor:
    # TF computes colour adjustments in float16/float32 and converts other dtypes to float32.
    return image if image.dtype in (torch.float16, torch.float32) else convert_image_dtype(image, torch.float32)


class _NoGradient(torch.autograd.Function):
    """Identity forward; a backward pass through it raises TF's ``LookupError`` for ``op``."""

    @staticmethod
    def forward(ctx: Any, value: torch.Tensor, op: str) -> torch.Tensor:
        ctx.op = op
        return value.view_as(value)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise LookupError(
            f"gradient registry has no entry for: {ctx.op}. TF defines no gradient for this operation, so "
            "unison does not either; compute it outside the GradientTape (or under tape.stop_recording())."
        )


def _no_gradient(value: torch.Tensor, op: str) -> torch.Tensor:
    return _NoGradient.apply(value, op) if value.requires_grad else value


def stateless_generator(seed: Any, op: str) -> torch.Generator:
    """A torch generator determined by TF's stateless ``seed`` (a shape ``[2]`` pair of ints).

    The same seed gives the same draws in unison (TF's Philox streams are not reproduced, so the
    values differ from TF's while their distribution is the same).
    """
    values = to_tensor(seed).reshape(-1).tolist() if not isinstance(seed, (list, tuple)) else list(seed)
    if len(values) != 2:
        raise ValueError(f"{op}: seed must be a shape [2] tensor of two ints. Received: seed={seed!r}")
    generator = torch.Generator()
    generator.manual_seed((int(values[0]) * 0x9E3779B1 + int(values[1])) % (2**63))
    return generator


__all__ = ["convert_image_dtype", "stateless_generator"]

# symbolic-aware here, where pickle finds them by their module and name
wrap_namespace(globals(), __all__)
