"""``tf.random``'s samplers: ``gamma``, ``poisson``, the ``stateless_*`` ops and the candidate samplers.

The stateless ops take a ``[2]`` integer ``seed`` and give the same values for the same seed
(see :mod:`unison.ops.random_stateless` for how, and why the values are not TF's). Output shapes
follow TF: ``gamma``/``poisson`` append the parameters' shape to ``shape``, their stateless forms
take the full output shape and broadcast the parameters to it.

Example:
    >>> import unison as tf
    >>> tf.random.gamma([4], alpha=[1.0, 2.0]).shape
    torch.Size([4, 2])
    >>> s = tf.random.stateless_poisson([3], seed=[1, 2], lam=4.0)
    >>> bool((s == tf.random.stateless_poisson([3], seed=[1, 2], lam=4.0)).all())
    True
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import torch

from unison.errors import InvalidArgumentError
from unison.ops.array import _shape
from unison.ops.determinism import require_seed
from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.random_base import categorical, normal, uniform
from unison.ops.random_stateless import _binomial, _full_int, _seed_words, _seeded


def _gamma(size: tuple[int, ...], alpha: torch.Tensor, beta: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    a = torch.broadcast_to(alpha.double(), size).contiguous()
    b = torch.broadcast_to(beta.double(), size).contiguous()
    return (torch._standard_gamma(a) / b).to(dtype)


def gamma(
    shape: Any, alpha: Any, beta: Any = None, dtype: Any = torch.float32, seed: int | None = None, name: Any = None
) -> torch.Tensor:
    """``tf.random.gamma``: ``shape + broadcast(alpha, beta).shape`` draws of Gamma(alpha, rate=beta)."""
    require_seed(seed)
    dt = as_dtype(dtype)
    a = to_tensor(alpha).to(dt)
    b = to_tensor(1.0 if beta is None else beta).to(dt)
    param = torch.broadcast_shapes(a.shape, b.shape)
    return _gamma(_shape(shape) + tuple(param), a, b, dt)


def poisson(
    shape: Any, lam: Any, dtype: Any = torch.float32, seed: int | None = None, name: Any = None
) -> torch.Tensor:
    """``tf.random.poisson``: ``shape + lam.shape`` Poisson draws of rate ``lam``."""
    require_seed(seed)
    rate = to_tensor(lam).double()
    size = _shape(shape) + tuple(rate.shape)
    return torch.poisson(torch.broadcast_to(rate, size).contiguous()).to(as_dtype(dtype))


def stateless_uniform(
    shape: Any,
    seed: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = torch.float32,
    name: Any = None,
    alg: Any = "auto_select",
) -> torch.Tensor:
    """``tf.random.stateless_uniform``: uniform values, determined by ``seed``; an integer dtype with
    ``minval=maxval=None`` covers the dtype's whole range."""
    words = _seed_words(seed, "stateless_uniform")
    dt = as_dtype(dtype)
    with _seeded(words):
        if not dt.is_floating_point and minval is None and maxval is None:
            return _full_int(shape, dt)
        if not dt.is_floating_point and maxval is None:
            raise ValueError(
                f"tf.random.stateless_uniform with an integer dtype ({dt}) needs both minval and maxval, or "
                "neither (the full range). Received: maxval=None"
            )
        return uniform(shape, 0 if minval is None else minval, maxval, dt)


def stateless_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = torch.float32,
    name: Any = None,
    alg: Any = "auto_select",
) -> torch.Tensor:
    """``tf.random.stateless_normal``: normal values determined by ``seed``."""
    with _seeded(_seed_words(seed, "stateless_normal")):
        return normal(shape, mean, stddev, dtype)


def _truncated(size: tuple[int, ...], mean: Any, std: Any, lo: Any, hi: Any, dtype: torch.dtype) -> torch.Tensor:
    # inverse-CDF sampling in float64: u uniform between Phi(a) and Phi(b), x = Phi^-1(u)
    m, s = to_tensor(mean).double(), to_tensor(std).double()
    a = (to_tensor(lo).double() - m) / s
    b = (to_tensor(hi).double() - m) / s
    cdf_a, cdf_b = torch.special.ndtr(a), torch.special.ndtr(b)
    u = torch.rand(size, dtype=torch.float64)
    x = torch.special.ndtri((cdf_a + u * (cdf_b - cdf_a)).clamp(1e-300, 1 - 1e-16))
    return (m + s * torch.maximum(torch.minimum(x, b), a)).to(dtype)


def stateless_truncated_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = torch.float32,
    name: Any = None,
    alg: Any = "auto_select",
) -> torch.Tensor:
    """``tf.random.stateless_truncated_normal``: normal values within two standard deviations."""
    with _seeded(_seed_words(seed, "stateless_truncated_normal")):
        return _truncated(
            _shape(shape),
            mean,
            stddev,
            -2.0 * to_tensor(stddev).double() + to_tensor(mean).double(),
            2.0 * to_tensor(stddev).double() + to_tensor(mean).double(),
            as_dtype(dtype),
        )


def stateless_parameterized_truncated_normal(
    shape: Any,
    seed: Any,
    means: Any = 0.0,
    stddevs: Any = 1.0,
    minvals: Any = -2.0,
    maxvals: Any = 2.0,
    name: Any = None,
) -> torch.Tensor:
    """``tf.random.stateless_parameterized_truncated_normal``: normal values within ``[minvals, maxvals]``
    (each parameter broadcast to ``shape``)."""
    dt = to_tensor(means).dtype if isinstance(to_tensor(means), torch.Tensor) else torch.float32
    dt = dt if dt.is_floating_point else torch.float32
    with _seeded(_seed_words(seed, "stateless_parameterized_truncated_normal")):
        return _truncated(_shape(shape), means, stddevs, minvals, maxvals, dt)


def stateless_categorical(
    logits: Any, num_samples: int, seed: Any, dtype: Any = torch.int64, name: Any = None
) -> torch.Tensor:
    """``tf.random.stateless_categorical``: class indices drawn from ``logits`` rows, determined by ``seed``."""
    with _seeded(_seed_words(seed, "stateless_categorical")):
        return categorical(logits, num_samples, dtype)


def stateless_binomial(
    shape: Any, seed: Any, counts: Any, probs: Any, output_dtype: Any = torch.int32, name: Any = None
) -> torch.Tensor:
    """``tf.random.stateless_binomial``: successes out of ``counts`` trials of probability ``probs``."""
    with _seeded(_seed_words(seed, "stateless_binomial")):
        return _binomial(shape, counts, probs, output_dtype)


def stateless_gamma(
    shape: Any, seed: Any, alpha: Any, beta: Any = None, dtype: Any = torch.float32, name: Any = None
) -> torch.Tensor:
    """``tf.random.stateless_gamma``: Gamma(alpha, rate=beta) draws of the full ``shape``."""
    dt = as_dtype(dtype)
    with _seeded(_seed_words(seed, "stateless_gamma")):
        return _gamma(_shape(shape), to_tensor(alpha), to_tensor(1.0 if beta is None else beta), dt)


def stateless_poisson(shape: Any, seed: Any, lam: Any, dtype: Any = torch.int32, name: Any = None) -> torch.Tensor:
    """``tf.random.stateless_poisson``: Poisson draws of rate ``lam`` (broadcast to ``shape``)."""
    with _seeded(_seed_words(seed, "stateless_poisson")):
        rate = torch.broadcast_to(to_tensor(lam).double(), _shape(shape)).contiguous()
        return torch.poisson(rate).to(as_dtype(dtype))


def stateless_shuffle(value: Any, seed: Any, alg: Any = "auto_select", name: Any = None) -> torch.Tensor:
    """``tf.random.experimental.stateless_shuffle``: a permutation of the first axis fixed by ``seed``."""
    t = to_tensor(value)
    with _seeded(_seed_words(seed, "experimental.stateless_shuffle")):
        return t[torch.randperm(t.shape[0])] if t.dim() else t


def index_shuffle(index: Any, seed: Any, max_index: Any) -> torch.Tensor:
    """``tf.random.experimental.index_shuffle``: where ``index`` goes under a permutation of
    ``[0, max_index]`` fixed by ``seed`` (a ``[2]`` integer vector; unison has no batched seeds)."""
    words = _seed_words(seed, "experimental.index_shuffle")
    idx = to_tensor(index)
    n = int(to_tensor(max_index)) + 1
    with _seeded(words + [n]):
        perm = torch.randperm(n)
    return perm[idx.long()].to(idx.dtype)


def random_index_shuffle(index: Any, seed: Any, max_index: Any, rounds: int = 4, name: Any = None) -> torch.Tensor:
    """``tf.random_index_shuffle``: ``index_shuffle`` with a ``[3]`` integer ``seed`` (TF's raw form)."""
    s = to_tensor(seed)
    if not isinstance(s, torch.Tensor) or s.is_floating_point() or s.numel() != 3:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.random_index_shuffle: `seed` must be a vector of 3 integers. Received shape {list(getattr(s, 'shape', []))}",
        )
    idx = to_tensor(index)
    n = int(to_tensor(max_index)) + 1
    with _seeded([int(v) for v in s.reshape(-1).tolist()] + [n, int(rounds)]):
        perm = torch.randperm(n)
    return perm[idx.long()].to(idx.dtype)


_Sampled = namedtuple("_Sampled", ["sampled_candidates", "true_expected_count", "sampled_expected_count"])


def _candidates(true_classes: Any, num_true: int, num_sampled: int, unique: bool, probs: torch.Tensor, op: str) -> Any:
    classes = to_tensor(true_classes).long()
    if classes.dim() != 2 or classes.shape[1] != int(num_true):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.random.{op}: `true_classes` must be [batch_size, num_true={num_true}]. Received {list(classes.shape)}",
        )
    n = int(num_sampled)
    if n < 1:
        raise InvalidArgumentError(None, None, f"tf.random.{op}: num_sampled must be at least 1. Received: {n}")
    if unique and n > len(probs):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.random.{op}: unique sampling of num_sampled={n} needs range_max >= {n}; it is {len(probs)}.",
        )
    if unique:
        sampled, tries = _unique_draws(probs, n)

        def expected(p: torch.Tensor) -> torch.Tensor:
            # TF's RangeSampler: p * n when no draw was rejected, else 1 - (1 - p) ** tries
            if tries == n:
                return p * n
            return -torch.expm1(tries * torch.log1p(-p.clamp(max=1 - 1e-12)))

    else:
        sampled = torch.multinomial(probs.float(), n, replacement=True) if n else torch.zeros(0, dtype=torch.int64)

        def expected(p: torch.Tensor) -> torch.Tensor:
            return p * n

    true_p = probs[classes.clamp(0, len(probs) - 1)]
    return _Sampled(sampled.to(torch.int64), expected(true_p).float(), expected(probs[sampled]).float())


def _unique_draws(probs: torch.Tensor, n: int) -> tuple[torch.Tensor, int]:
    """TF's unique sampling: draw with replacement until ``n`` distinct classes are seen; returns
    them in the order first seen and the number of draws it took."""
    if n == 0:
        return torch.zeros(0, dtype=torch.int64), 0
    batch = max(4 * n, 64)
    draws = torch.multinomial(probs.float(), batch, replacement=True)
    while True:
        uniq, inverse = torch.unique(draws, return_inverse=True)
        if len(uniq) >= n:
            break
        draws = torch.cat([draws, torch.multinomial(probs.float(), batch, replacement=True)])
    first = torch.full((len(uniq),), len(draws), dtype=torch.int64).scatter_reduce(
        0, inverse, torch.arange(len(draws)), "amin"
    )
    positions = torch.sort(first).values[:n]
    return draws[positions], int(positions[-1]) + 1


def uniform_candidate_sampler(
    true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int, seed: Any = None, name: Any = None
) -> Any:
    """``tf.random.uniform_candidate_sampler``: classes drawn uniformly from ``[0, range_max)``."""
    probs = torch.full((int(range_max),), 1.0 / int(range_max), dtype=torch.float64)
    return _candidates(true_classes, num_true, num_sampled, unique, probs, "uniform_candidate_sampler")


def log_uniform_candidate_sampler(
    true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int, seed: Any = None, name: Any = None
) -> Any:
    """``tf.random.log_uniform_candidate_sampler``: Zipfian classes, P(k) = log((k+2)/(k+1)) / log(range_max+1)."""
    k = torch.arange(int(range_max), dtype=torch.float64)
    probs = (torch.log(k + 2) - torch.log(k + 1)) / math.log(int(range_max) + 1)
    return _candidates(true_classes, num_true, num_sampled, unique, probs, "log_uniform_candidate_sampler")


def fixed_unigram_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    vocab_file: str = "",
    distortion: float = 1.0,
    num_reserved_ids: int = 0,
    num_shards: int = 1,
    shard: int = 0,
    unigrams: Any = (),
    seed: Any = None,
    name: Any = None,
) -> Any:
    """``tf.random.fixed_unigram_candidate_sampler``: classes drawn with probability proportional to
    ``unigrams ** distortion`` (or the counts in ``vocab_file``, one ``word,count`` a line)."""
    if vocab_file:
        with open(vocab_file, encoding="utf-8") as f:
            counts = [float(line.rstrip("\n").split(",")[-1]) for line in f if line.strip()]
    else:
        counts = [float(u) for u in unigrams]
    weights = torch.tensor([0.0] * int(num_reserved_ids) + counts, dtype=torch.float64) ** float(distortion)
    if len(weights) != int(range_max):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.random.fixed_unigram_candidate_sampler: num_reserved_ids + len(unigrams) = {len(weights)} must "
            f"equal range_max = {range_max}.",
        )
    return _candidates(
        true_classes, num_true, num_sampled, unique, weights / weights.sum(), "fixed_unigram_candidate_sampler"
    )


# TF's learned sampler lives in the op's cached kernel: calls with the same attributes share (and
# keep teaching) one distribution. unison keys it the same way.
_LEARNED: dict[tuple[int, int, bool, int, Any], torch.Tensor] = {}


def learned_unigram_candidate_sampler(
    true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int, seed: Any = None, name: Any = None
) -> Any:
    """``tf.random.learned_unigram_candidate_sampler``: classes drawn in proportion to how often they
    have been true classes (every class starts at a count of 1); the counts learn from each call's
    ``true_classes`` after it samples, shared by calls with the same arguments, as in TF eager."""
    key = (int(num_true), int(num_sampled), bool(unique), int(range_max), seed)
    counts = _LEARNED.setdefault(key, torch.ones(int(range_max), dtype=torch.float64))
    out = _candidates(
        true_classes, num_true, num_sampled, unique, counts / counts.sum(), "learned_unigram_candidate_sampler"
    )
    seen = to_tensor(true_classes).long().reshape(-1)
    seen = seen[(seen >= 0) & (seen < int(range_max))]
    counts.index_add_(0, seen, torch.ones(len(seen), dtype=torch.float64))
    return out


def all_candidate_sampler(
    true_classes: Any, num_true: int, num_sampled: int, unique: bool, seed: Any = None, name: Any = None
) -> Any:
    """``tf.random.all_candidate_sampler``: the classes ``0..num_sampled-1``, each expected once."""
    classes = to_tensor(true_classes)
    n = int(num_sampled)
    if n < 1:
        raise InvalidArgumentError(
            None, None, f"tf.random.all_candidate_sampler: num_sampled must be at least 1. Received: {n}"
        )
    if classes.numel() and (int(classes.min()) < 0 or int(classes.max()) >= n):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.random.all_candidate_sampler: `true_classes` out of range [0, {n}) (the num_sampled candidates). "
            f"Received {int(classes.max())}",
        )
    return _Sampled(
        torch.arange(n, dtype=torch.int64),
        torch.ones(tuple(classes.shape), dtype=torch.float32),
        torch.ones(n, dtype=torch.float32),
    )
