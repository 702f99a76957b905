"""``keras.random``: Keras 3's random functions over torch generators, with Keras's ``seed=`` rules.

``seed`` may be:

* ``None``: draw from torch's global generator, which ``keras.utils.set_random_seed`` seeds, so a
  seeded program repeats run to run;
* an ``int``: the same values on every call with that seed (Keras's documented behaviour);
* a :class:`SeedGenerator`: a stream of its own that advances on each call (what layers hold,
  e.g. ``self.seed_generator = keras.random.SeedGenerator(1337)`` in a sampling layer).

Values are drawn on the CPU (a seeded stream gives the same numbers on every device) and then
placed on torch's default device (``torch.get_default_device()``, which ``with torch.device("cuda"):``
sets), as Keras's torch backend places new tensors.

Example:
    >>> from unison import keras
    >>> a = keras.random.normal((2,), seed=7); b = keras.random.normal((2,), seed=7)
    >>> bool((a == b).all()), a.dtype
    (True, torch.float32)
    >>> gen = keras.random.SeedGenerator(1)
    >>> bool((keras.random.uniform((3,), seed=gen) == keras.random.uniform((3,), seed=gen)).all())
    False
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from unison.keras.ops._convert import shape_tuple, tensor, torch_dtype

Tensor = torch.Tensor


class SeedGenerator:
    """A random stream with a state of its own (Keras's ``keras.random.SeedGenerator``).

    Args:
        seed: an int; ``None`` draws one from torch's global generator (so ``set_random_seed`` fixes it).
        name: accepted for Keras compatibility.

    Example:
        >>> gen = SeedGenerator(42)
        >>> first = normal((2,), seed=gen)
        >>> bool((first == normal((2,), seed=SeedGenerator(42))).all())
        True
    """

    def __init__(self, seed: int | None = None, name: str | None = None, **kwargs: Any) -> None:
        if seed is None:
            seed = int(torch.randint(0, 2**31 - 1, (1,), device="cpu").item())
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"SeedGenerator takes an int seed or None. Received: seed={seed!r}")
        self.name = name or "seed_generator"
        self._initial_seed = int(seed)
        self._generator = torch.Generator().manual_seed(int(seed))
        self._draws = 0

    @property
    def state(self) -> Tensor:
        """``[seed, draws]``: the initial seed and how many draws the stream has made."""
        return torch.tensor([self._initial_seed, self._draws], dtype=torch.int64, device="cpu")

    def next(self, ordered: bool = True) -> Tensor:
        """A fresh seed pair from the stream (advances it), as Keras's ``SeedGenerator.next``."""
        self._draws += 1
        return torch.randint(0, 2**31 - 1, (2,), generator=self._generator, dtype=torch.int64, device="cpu")

    def torch_generator(self) -> torch.Generator:
        """The torch generator behind the stream; each draw from it advances the stream."""
        self._draws += 1
        return self._generator

    def __repr__(self) -> str:
        return f"<SeedGenerator name={self.name!r} seed={self._initial_seed} draws={self._draws}>"


def _generator(seed: Any, fn: str) -> torch.Generator | None:
    if seed is None:
        return None
    if isinstance(seed, SeedGenerator):
        return seed.torch_generator()
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return torch.Generator().manual_seed(int(seed))
    raise TypeError(
        f"keras.random.{fn}: seed must be None, an int or a keras.random.SeedGenerator. Received: seed={seed!r}"
    )


def _float_dtype(dtype: Any, fn: str) -> torch.dtype:
    dt = torch.get_default_dtype() if dtype is None else torch_dtype(dtype)
    if not dt.is_floating_point:
        raise ValueError(
            f"keras.random.{fn} makes floats; dtype must be a float dtype. Received: dtype={dtype!r}. "
            "For integers use keras.random.randint."
        )
    return dt


def _placed(t: Tensor) -> Tensor:
    device = torch.get_default_device()
    return t if device.type == "cpu" else t.to(device)


def _number(value: Any) -> float:
    return float(tensor(value).item()) if not isinstance(value, (int, float)) else float(value)


def normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = None, seed: Any = None) -> Tensor:
    """``keras.random.normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None)``."""
    dt = _float_dtype(dtype, "normal")
    draw = torch.randn(shape_tuple(shape, "normal"), generator=_generator(seed, "normal"), dtype=dt, device="cpu")
    return _placed(draw * _number(stddev) + _number(mean))


def uniform(shape: Any, minval: Any = 0.0, maxval: Any = 1.0, dtype: Any = None, seed: Any = None) -> Tensor:
    """``keras.random.uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None)``: floats in ``[minval, maxval)``."""
    dt = _float_dtype(dtype, "uniform")
    draw = torch.rand(shape_tuple(shape, "uniform"), generator=_generator(seed, "uniform"), dtype=dt, device="cpu")
    lo, hi = _number(minval), _number(maxval)
    return _placed(draw * (hi - lo) + lo)


def randint(shape: Any, minval: Any, maxval: Any, dtype: Any = "int32", seed: Any = None) -> Tensor:
    """``keras.random.randint(shape, minval, maxval, dtype="int32", seed=None)``: ints in ``[minval, maxval)``."""
    lo, hi = int(_number(minval)), int(_number(maxval))
    if hi <= lo:
        raise ValueError(f"keras.random.randint needs minval < maxval. Received: minval={minval!r}, maxval={maxval!r}")
    dt = torch_dtype(dtype)
    gen = _generator(seed, "randint")
    return _placed(torch.randint(lo, hi, shape_tuple(shape, "randint"), generator=gen, dtype=dt, device="cpu"))


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = None, seed: Any = None) -> Tensor:
    """``keras.random.truncated_normal(...)``: normal values limited to two standard deviations of the mean.

    Drawn by inverting the normal CDF on the truncated range, so every value comes from one draw.
    """
    dt = _float_dtype(dtype, "truncated_normal")
    lo = 0.5 * (1.0 + math.erf(-2.0 / math.sqrt(2.0)))
    u = torch.rand(
        shape_tuple(shape, "truncated_normal"),
        generator=_generator(seed, "truncated_normal"),
        dtype=torch.float64,
        device="cpu",
    )
    z = math.sqrt(2.0) * torch.erfinv(2.0 * (lo + u * (1.0 - 2.0 * lo)) - 1.0)
    return _placed((z.clamp(-2.0, 2.0) * _number(stddev) + _number(mean)).to(dt))


def dropout(inputs: Any, rate: float, noise_shape: Any = None, seed: Any = None) -> Tensor:
    """``keras.random.dropout(inputs, rate, noise_shape=None, seed=None)``: zeros with probability ``rate``,
    the rest scaled by ``1 / (1 - rate)``."""
    x = tensor(inputs)
    if not 0.0 <= float(rate) < 1.0:
        raise ValueError(f"keras.random.dropout: rate must be in [0, 1). Received: rate={rate!r}")
    shape = (
        x.shape
        if noise_shape is None
        else tuple(x.shape[i] if d is None else int(d) for i, d in enumerate(noise_shape))
    )
    keep = torch.rand(shape, generator=_generator(seed, "dropout"), device="cpu") >= float(rate)
    return x * keep.to(device=x.device, dtype=x.dtype) / (1.0 - float(rate))


def shuffle(x: Any, axis: int = 0, seed: Any = None) -> Tensor:
    """``keras.random.shuffle(x, axis=0, seed=None)``: a random permutation along ``axis``."""
    t = tensor(x)
    order = torch.randperm(t.shape[axis], generator=_generator(seed, "shuffle"), device="cpu").to(t.device)
    return torch.index_select(t, axis, order)


def categorical(logits: Any, num_samples: int, dtype: Any = "int32", seed: Any = None) -> Tensor:
    """``keras.random.categorical(logits, num_samples, dtype="int32", seed=None)``: class ids per row of logits."""
    probs = torch.softmax(tensor(logits).double().cpu(), dim=-1)
    if probs.dim() != 2:
        raise ValueError(
            f"keras.random.categorical takes 2-D logits (batch, classes). Received shape {tuple(probs.shape)}."
        )
    draws = torch.multinomial(probs, int(num_samples), replacement=True, generator=_generator(seed, "categorical"))
    return draws.to(device=tensor(logits).device, dtype=torch_dtype(dtype))


def _with_generator(gen: torch.Generator | None, draw: Any) -> Tensor:
    # torch's gamma sampler takes no generator: run it on the global one, seeded from ``gen`` and
    # restored afterwards, so a seed still fixes the numbers and the global stream is untouched.
    if gen is None:
        return draw()
    seed = int(torch.randint(0, 2**62, (1,), generator=gen))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return draw()


def _broadcast_param(value: Any, shape: tuple[int, ...], dt: torch.dtype, fn: str, name: str) -> Tensor:
    t = tensor(value).to(device="cpu", dtype=dt)
    try:
        return torch.broadcast_to(t, shape)
    except RuntimeError:
        raise ValueError(
            f"keras.random.{fn}: {name} of shape {tuple(t.shape)} does not broadcast to shape {shape}. "
            f"Pass a scalar or a tensor that broadcasts to the requested shape."
        ) from None


def gamma(shape: Any, alpha: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """``keras.random.gamma(shape, alpha, dtype=None, seed=None)``: draws from Gamma(``alpha``, 1)
    (``alpha`` a number or a tensor broadcasting to ``shape``).

    Example: ``gamma((2,), 2.0, seed=1)`` has shape (2,) and positive values.
    """
    dt = _float_dtype(dtype, "gamma")
    dims = shape_tuple(shape, "gamma")
    concentration = _broadcast_param(alpha, dims, torch.float64, "gamma", "alpha")
    draw = _with_generator(_generator(seed, "gamma"), lambda: torch._standard_gamma(concentration))
    return _placed(draw.to(dt))


def beta(shape: Any, alpha: Any, beta: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """``keras.random.beta(shape, alpha, beta, dtype=None, seed=None)``: draws from Beta(``alpha``,
    ``beta``) in [0, 1], as ``X / (X + Y)`` of two gamma draws."""
    dt = _float_dtype(dtype, "beta")
    dims = shape_tuple(shape, "beta")
    a = _broadcast_param(alpha, dims, torch.float64, "beta", "alpha")
    b = _broadcast_param(beta, dims, torch.float64, "beta", "beta")
    gen = _generator(seed, "beta")
    x = _with_generator(gen, lambda: torch._standard_gamma(a))
    y = _with_generator(gen, lambda: torch._standard_gamma(b))
    return _placed((x / (x + y)).to(dt))


def binomial(shape: Any, counts: Any, probabilities: Any, dtype: Any = None, seed: Any = None) -> Tensor:
    """``keras.random.binomial(shape, counts, probabilities, dtype=None, seed=None)``: the number of
    successes in ``counts`` trials of success probability ``probabilities``, as floats (floatx)."""
    dt = _float_dtype(dtype, "binomial")
    dims = shape_tuple(shape, "binomial")
    n = _broadcast_param(counts, dims, torch.float64, "binomial", "counts").contiguous()
    p = _broadcast_param(probabilities, dims, torch.float64, "binomial", "probabilities").contiguous()
    gen = _generator(seed, "binomial")
    draw = torch.binomial(n, p, generator=gen) if gen is not None else torch.binomial(n, p)
    return _placed(draw.to(dt))


__all__ = [
    "SeedGenerator",
    "beta",
    "binomial",
    "categorical",
    "gamma",
    "dropout",
    "normal",
    "randint",
    "shuffle",
    "truncated_normal",
    "uniform",
]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("keras.random", name)
