"""``tf.random``: the namespace (stateful functions, seeded streams and samplers).

``set_seed`` seeds torch (CPU and CUDA) and numpy's global generator, so a program seeded once
is reproducible run to run, as in TF. ``Generator`` and the ``stateless_*`` ops give streams
fixed by their seed (:mod:`unison.ops.random_stateless`); their values are not TF's bits.

Example:
    >>> import unison as tf
    >>> tf.random.set_seed(0); a = tf.random.uniform([3])
    >>> tf.random.set_seed(0); b = tf.random.uniform([3])
    >>> bool((a == b).all()), a.dtype
    (True, torch.float32)
"""

from __future__ import annotations

import types

from unison.ops.random_base import categorical, normal, set_seed, shuffle, truncated_normal, uniform
from unison.ops.random_sampling import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    gamma,
    index_shuffle,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    poisson,
    stateless_binomial,
    stateless_categorical,
    stateless_gamma,
    stateless_normal,
    stateless_parameterized_truncated_normal,
    stateless_poisson,
    stateless_shuffle,
    stateless_truncated_normal,
    stateless_uniform,
    uniform_candidate_sampler,
)
from unison.ops.random_stateless import (
    Algorithm,
    Generator,
    create_rng_state,
    fold_in,
    get_global_generator,
    set_global_generator,
    split,
)

experimental = types.SimpleNamespace(
    Algorithm=Algorithm,
    Generator=Generator,
    create_rng_state=create_rng_state,
    get_global_generator=get_global_generator,
    index_shuffle=index_shuffle,
    set_global_generator=set_global_generator,
    stateless_fold_in=fold_in,
    stateless_shuffle=stateless_shuffle,
    stateless_split=split,
)

__all__ = [
    "Algorithm",
    "Generator",
    "all_candidate_sampler",
    "categorical",
    "create_rng_state",
    "experimental",
    "fixed_unigram_candidate_sampler",
    "fold_in",
    "gamma",
    "get_global_generator",
    "learned_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "normal",
    "poisson",
    "set_global_generator",
    "set_seed",
    "shuffle",
    "split",
    "stateless_binomial",
    "stateless_categorical",
    "stateless_gamma",
    "stateless_normal",
    "stateless_parameterized_truncated_normal",
    "stateless_poisson",
    "stateless_truncated_normal",
    "stateless_uniform",
    "truncated_normal",
    "uniform",
    "uniform_candidate_sampler",
]


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.random", name)
