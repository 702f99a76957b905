"""``tf.random``'s stateful functions, drawing from torch's global generator.

``set_seed`` seeds torch (CPU and CUDA) and numpy's global generator, so a program seeded once
is reproducible run to run, as in TF. The op-level ``seed=`` argument is accepted; values still
come from the global generator (TF's per-op streams have no torch counterpart).

Example:
    >>> import unison as tf
    >>> tf.random.set_seed(0); a = tf.random.uniform([3])
    >>> tf.random.set_seed(0); b = tf.random.uniform([3])
    >>> bool((a == b).all()), a.dtype
    (True, torch.float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.ops.array import _shape
from unison.ops.determinism import note_global_seed, require_seed
from unison.ops.dtypes import as_dtype, to_tensor


def set_seed(seed: int | None) -> None:
    """``tf.random.set_seed``: seed torch's generators (and numpy's, which Keras utilities use).

    ``set_seed(None)`` forgets the global seed, as in TF (torch's generators are reseeded from the
    operating system's entropy).
    """
    if seed is None:
        note_global_seed(None)
        torch.seed()
        return
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"tf.random.set_seed takes an integer. Received: seed={seed!r}")
    note_global_seed(int(seed))
    torch.manual_seed(int(seed))
    np.random.seed(int(seed) % 2**32)


def uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = torch.float32,
    seed: int | None = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.random.uniform``: floats in ``[minval, maxval)`` (default ``[0, 1)``); ints need ``maxval``."""
    require_seed(seed)
    dt = as_dtype(dtype)
    size = _shape(shape)
    if dt.is_floating_point:
        hi = 1.0 if maxval is None else float(to_tensor(maxval))
        lo = float(to_tensor(minval))
        return torch.rand(size, dtype=dt) * (hi - lo) + lo
    if maxval is None:
        raise ValueError(f"tf.random.uniform with an integer dtype ({dt}) needs maxval. Received: maxval=None")
    return torch.randint(int(to_tensor(minval)), int(to_tensor(maxval)), size, dtype=dt)


def normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = torch.float32,
    seed: int | None = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.random.normal``."""
    require_seed(seed)
    return torch.randn(_shape(shape), dtype=as_dtype(dtype)) * float(to_tensor(stddev)) + float(to_tensor(mean))


def truncated_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = torch.float32,
    seed: int | None = None,
    name: str | None = None,
) -> torch.Tensor:
    """``tf.random.truncated_normal``: normal values redrawn beyond two standard deviations."""
    require_seed(seed)
    out = torch.empty(_shape(shape), dtype=as_dtype(dtype))
    m, s = float(to_tensor(mean)), float(to_tensor(stddev))
    return torch.nn.init.trunc_normal_(out, mean=m, std=s, a=m - 2 * s, b=m + 2 * s)


def shuffle(value: Any, seed: int | None = None, name: str | None = None) -> torch.Tensor:
    """``tf.random.shuffle``: a random permutation along the first axis."""
    require_seed(seed)
    t = to_tensor(value)
    return t[torch.randperm(t.shape[0])]


def categorical(
    logits: Any, num_samples: int, dtype: Any = torch.int64, seed: int | None = None, name: str | None = None
) -> torch.Tensor:
    """``tf.random.categorical``: ``num_samples`` class indices per row of unnormalised log-probabilities.

    As TF: ``logits`` is 2-D ``[batch_size, num_classes]`` (``-inf`` marks an impossible class),
    the result is ``[batch_size, num_samples]`` of ``dtype`` ``int64`` (default) or ``int32``, and
    ``num_samples=0`` gives an empty ``[batch_size, 0]``.
    """
    require_seed(seed)
    out_dtype = as_dtype(dtype)
    if out_dtype not in (torch.int32, torch.int64):
        raise ValueError(
            f"tf.random.categorical returns class indices: dtype must be tf.int32 or tf.int64. Received: dtype={dtype!r}"
        )
    t = to_tensor(logits)
    if t.dim() != 2:
        raise ValueError(
            "tf.random.categorical takes 2-D logits [batch_size, num_classes]. "
            f"Received shape {list(t.shape)}; for one distribution pass [logits] (a batch of one)."
        )
    n = int(num_samples)
    if n < 0:
        raise ValueError(f"tf.random.categorical: num_samples must be >= 0. Received: num_samples={num_samples!r}")
    if n == 0 or t.shape[0] == 0:
        return torch.zeros((t.shape[0], n), dtype=out_dtype, device=t.device)
    probs = torch.softmax(t.double() if t.dtype == torch.float64 else t.float(), dim=-1)
    return torch.multinomial(probs, n, replacement=True).to(out_dtype)


__all__ = ["categorical", "normal", "set_seed", "shuffle", "truncated_normal", "uniform"]
