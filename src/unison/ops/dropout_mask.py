"""Dropout's keep mask, drawn in C on CPU: ``1 / (1 - rate)`` where an element is kept, 0 where dropped.

TF's rule: an element is kept where its uniform draw is ``>= rate`` and the kept values are
scaled by ``1 / (1 - rate)``. On CPU torch draws uniforms one Mersenne Twister step at a time,
and the comparison, the cast and the scaling were three more passes: 3.2 ms for the 800k
activations of the DCGAN discriminator's first Dropout, and Dropout was most of the DCGAN step's
gap to TensorFlow (BENCHMARKS.md, issue 36). ``unison.ops._dropmask`` (``_dropmask.c``) draws
Philox4x32-10 words (TensorFlow's and cuRAND's generator; AVX2 where the CPU has it) and writes
the mask in the same pass: 0.7 ms. An element is kept where its 32-bit word is ``>= rate * 2**32``
(rounded up), a keep probability within ``2**-32`` of ``1 - rate``.

The 64-bit Philox key is drawn from torch's generator (the default one, or the layer's own for a
seeded layer), so ``tf.random.set_seed`` / ``keras.utils.set_random_seed`` / ``torch.manual_seed``
still make the masks repeatable. Off CPU, without the compiled module, or with
``UNISON_PURE_PYTHON_DROPOUT=1``, the mask is ``torch.rand(shape) >= rate``, as before.

Example:
    >>> import torch
    >>> mask = keep_mask((1000,), 0.25, torch.float32, torch.device("cpu"))
    >>> sorted(set(mask.tolist()))
    [0.0, 1.3333333730697632]
"""

from __future__ import annotations

import math
import os
from typing import Any

import torch

try:
    from unison.ops import _dropmask  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: torch.rand draws the mask
    _dropmask = None

__all__ = ["dropout", "keep_mask"]

# read once (the tests switch it to compare the two paths)
use = _dropmask is not None and os.environ.get("UNISON_PURE_PYTHON_DROPOUT", "") in ("", "0")


def _threshold(rate: float) -> int:
    """The 32-bit word below which an element is dropped: ``ceil(rate * 2**32)``."""
    return min(math.ceil(rate * 2.0**32), 2**32 - 1)


def keep_mask(
    shape: Any, rate: float, dtype: torch.dtype, device: torch.device, generator: torch.Generator | None = None
) -> torch.Tensor:
    """A ``dtype`` tensor of ``shape``: ``1 / (1 - rate)`` where kept, 0 where dropped (``0 <= rate < 1``).

    Example:
        >>> float(keep_mask((4,), 0.0, torch.float32, torch.device("cpu")).sum())
        4.0
    """
    scale = 1.0 / (1.0 - rate)
    if use and device.type == "cpu" and (generator is None or generator.device.type == "cpu"):
        key = int(torch.randint(0, 2**62, (), generator=generator))
        mask = torch.empty(tuple(shape), dtype=torch.float32)
        _dropmask.fill(mask.numpy(), _threshold(rate), key, scale)
        return mask if dtype == torch.float32 else mask.to(dtype)
    # float32 draws: a bfloat16 uniform has 8 bits, which would round the rate to a 256th
    keep = torch.rand(tuple(shape), dtype=torch.float32, device=device, generator=generator) >= rate
    return keep.to(dtype).mul_(scale)


def dropout(x: torch.Tensor, rate: float, noise_shape: Any = None, generator: torch.Generator | None = None) -> Any:
    """``x`` times a keep mask of ``noise_shape`` (broadcast; default ``x``'s shape), as TF's dropout.

    Example:
        >>> x = torch.ones(2, 3)
        >>> dropout(x, 0.5, noise_shape=(2, 1)).unique(dim=1).shape[1]  # one decision per row
        1
    """
    shape = tuple(x.shape) if noise_shape is None else tuple(noise_shape)
    return x * keep_mask(shape, rate, x.dtype, x.device, generator)
