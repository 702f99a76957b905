"""``tf.nn.experimental.general_dropout`` and ``stateless_dropout``: dropout with a given sampler or seed.

TF's rule: the kept values are ``x / (1 - rate)``, an element is kept where the uniform sample is
``>= rate``, ``noise_shape`` (``None`` entries take ``x``'s size) broadcasts the mask, and
``rate=0`` returns ``x`` unchanged. ``stateless_dropout`` draws its samples with
``tf.random.stateless_uniform(seed)``: the same seed gives the same mask (unison's stateless
generator is torch's, so the mask is not TF's bit for bit).

Example:
    >>> import unison as tf
    >>> x = tf.ones([4])
    >>> tf.nn.experimental.general_dropout(x, 0.5, lambda shape, dtype: tf.constant([0.1, 0.9, 0.5, 0.4])).tolist()
    [0.0, 2.0, 2.0, 0.0]
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import torch

from unison.ops.dtypes import to_tensor
from unison.ops.random_sampling import stateless_uniform

__all__ = ["experimental", "general_dropout", "stateless_dropout"]


def _noise_shape(x: torch.Tensor, noise_shape: Any) -> list[int]:
    if noise_shape is None:
        return list(x.shape)
    dims = [
        None if d is None else int(d)
        for d in (noise_shape.tolist() if isinstance(noise_shape, torch.Tensor) else noise_shape)
    ]
    if len(dims) != x.dim():
        raise ValueError(f"noise_shape {dims} must have the rank of x ({x.dim()}).")
    return [x.shape[i] if d is None else d for i, d in enumerate(dims)]


def general_dropout(
    x: Any, rate: Any, uniform_sampler: Callable[..., Any], noise_shape: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.experimental.general_dropout``: dropout whose uniform samples come from ``uniform_sampler(shape, dtype)``."""
    t = to_tensor(x)
    if not t.is_floating_point():
        raise ValueError(
            f"x has to be a floating point tensor since it's going to be scaled. Got a {t.dtype} tensor instead."
        )
    if isinstance(rate, (int, float)):
        if not 0 <= rate < 1:
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
        if rate == 0:
            return t
        scaled = t * torch.tensor(1 / (1 - rate), dtype=t.dtype)
        threshold: Any = rate
    else:
        r = to_tensor(rate).to(t.dtype)
        if r.dim() != 0:
            raise ValueError(f"`rate` must be a scalar or scalar tensor. Received shape {list(r.shape)}.")
        scaled = t / (1 - r)
        threshold = r
    sample = to_tensor(uniform_sampler(shape=_noise_shape(t, noise_shape), dtype=t.dtype))
    return torch.where(sample >= threshold, scaled, torch.zeros((), dtype=t.dtype))


def stateless_dropout(
    x: Any, rate: Any, seed: Any, rng_alg: Any = None, noise_shape: Any = None, name: str | None = None
) -> torch.Tensor:
    """``tf.nn.experimental.stateless_dropout``: dropout with a mask determined by ``seed`` (a pair of ints)."""
    return general_dropout(
        x,
        rate,
        lambda shape, dtype: stateless_uniform(shape, seed, dtype=dtype, alg=rng_alg or "auto_select"),
        noise_shape,
    )


experimental = types.SimpleNamespace(general_dropout=general_dropout, stateless_dropout=stateless_dropout)
