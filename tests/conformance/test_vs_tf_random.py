"""``tf.random`` against TensorFlow 2.21 (see tf_oracle.py for the rules).

Random values cannot equal TF's bit for bit (TF's Philox counters are not torch's generators):
samplers are compared by dtype and shape (``values=False``) and by statistics over many samples
(rounded, with a tolerance). That a seed fixes a stream is tested in tests/unit/test_tf_random_more.py.
"""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

BITS = "TF's Philox streams are not torch's generators: same distribution, dtype and shape, other values"


def _stats(t, tf):
    x = tf.cast(t, tf.float64)
    return float(tf.reduce_mean(x)), float(tf.math.reduce_std(x))


@same_as_tf("random.uniform", "random.normal", "random.truncated_normal", "random.set_seed", values=False, differs=BITS)
def test_stateful_samplers_shapes(tf):
    tf.random.set_seed(3)
    return (
        tf.random.uniform([2, 3]),
        tf.random.uniform([4], minval=2, maxval=9, dtype=tf.int32),
        tf.random.normal([2], dtype=tf.float64),
        tf.random.truncated_normal([3, 1]),
    )


@same_as_tf("random.uniform", "random.normal", "random.truncated_normal", "random.set_seed", edge=True, atol=0.05)
def test_stateful_samplers_statistics(tf):
    tf.random.set_seed(1)
    return (
        _stats(tf.random.uniform([40000], minval=-1.0, maxval=3.0), tf),
        _stats(tf.random.normal([40000], mean=2.0, stddev=0.5), tf),
        _stats(tf.random.truncated_normal([40000]), tf),
        tf.random.uniform([0, 3]).shape.as_list() if hasattr(tf.random.uniform([0, 3]).shape, "as_list") else [0, 3],
    )


@same_as_tf("random.shuffle", "random.categorical", values=False, differs=BITS)
def test_shuffle_and_categorical_shapes(tf):
    return tf.random.shuffle(tf.range(5)), tf.random.categorical(tf.math.log([[0.5, 0.5], [0.1, 0.9]]), 4)


@same_as_tf("random.shuffle", "random.categorical", edge=True, atol=0.03)
def test_shuffle_keeps_values_categorical_frequencies(tf):
    shuffled = tf.sort(tf.random.shuffle(tf.constant([3, 1, 2])))
    draws = tf.random.categorical(tf.math.log([[0.2, 0.8]]), 20000)
    return shuffled, float(tf.reduce_mean(tf.cast(draws, tf.float32)))


@same_as_tf("random.gamma", "random.poisson", values=False, differs=BITS)
def test_gamma_poisson_shapes(tf):
    return (
        tf.random.gamma([3], alpha=[1.0, 5.0]),
        tf.random.gamma([2, 2], alpha=2.0, beta=[1.0, 3.0], dtype=tf.float64),
        tf.random.poisson([3], lam=[1.0, 5.0]),
        tf.random.poisson([2], lam=4.0, dtype=tf.int32),
    )


@same_as_tf("random.gamma", "random.poisson", edge=True, atol=0.1)
def test_gamma_poisson_statistics(tf):
    tf.random.set_seed(2)
    g = tf.random.gamma([40000], alpha=3.0, beta=2.0)
    p = tf.random.poisson([40000], lam=4.0)
    return _stats(g, tf), _stats(p, tf), tf.random.gamma([0], alpha=[1.0]).shape[0]


SEED = [7, 11]


@same_as_tf(
    "random.stateless_uniform",
    "random.stateless_normal",
    "random.stateless_truncated_normal",
    "random.stateless_categorical",
    "random.stateless_binomial",
    "random.stateless_gamma",
    "random.stateless_poisson",
    "random.stateless_parameterized_truncated_normal",
    values=False,
    differs=BITS,
)
def test_stateless_shapes(tf):
    return (
        tf.random.stateless_uniform([2, 3], seed=SEED),
        tf.random.stateless_uniform([2], seed=SEED, minval=None, maxval=None, dtype=tf.int32),
        tf.random.stateless_uniform([2], seed=SEED, minval=0, maxval=10, dtype=tf.int64),
        tf.random.stateless_normal([3], seed=SEED, dtype=tf.float64),
        tf.random.stateless_truncated_normal([3, 1], seed=SEED),
        tf.random.stateless_categorical(tf.math.log([[0.5, 0.5]]), 5, seed=SEED),
        tf.random.stateless_binomial([3], seed=SEED, counts=10.0, probs=0.5),
        tf.random.stateless_gamma([3, 2], seed=SEED, alpha=[1.0, 5.0]),
        tf.random.stateless_poisson([3, 2], seed=SEED, lam=[1.0, 5.0]),
        tf.random.stateless_parameterized_truncated_normal([2, 3], SEED, maxvals=[1.0, 2.0, 3.0]),
    )


@same_as_tf(
    "random.stateless_uniform",
    "random.stateless_normal",
    "random.stateless_truncated_normal",
    "random.stateless_binomial",
    "random.stateless_gamma",
    "random.stateless_poisson",
    "random.stateless_parameterized_truncated_normal",
    edge=True,
    atol=0.1,
)
def test_stateless_statistics(tf):
    n = [40000]
    bounded = tf.random.stateless_parameterized_truncated_normal(
        n, SEED, means=1.0, stddevs=2.0, minvals=0.0, maxvals=1.0
    )
    return (
        _stats(tf.random.stateless_uniform(n, seed=SEED, minval=1.0, maxval=2.0), tf),
        _stats(tf.random.stateless_normal(n, seed=SEED, mean=-1.0, stddev=2.0), tf),
        _stats(tf.random.stateless_truncated_normal(n, seed=SEED), tf),
        _stats(tf.random.stateless_binomial(n, seed=SEED, counts=10.0, probs=0.3), tf),
        _stats(tf.random.stateless_gamma(n, seed=SEED, alpha=2.0), tf),
        _stats(tf.random.stateless_poisson(n, seed=SEED, lam=3.0), tf),
        float(tf.reduce_min(bounded)) >= 0.0 and float(tf.reduce_max(bounded)) <= 1.0,
    )


@pytest.mark.parametrize("seed", [[1, 2, 3], [1.0, 2.0]])
@same_as_tf("random.stateless_categorical", edge=True)
def test_stateless_bad_seed(tf, seed):
    return tf.random.stateless_categorical(tf.math.log([[0.5, 0.5]]), 5, seed=seed)


@same_as_tf(
    "random.create_rng_state",
    "random.experimental.create_rng_state",
    "random.Algorithm",
    "random.experimental.Algorithm",
)
def test_create_rng_state(tf):
    return (
        tf.random.create_rng_state(1, "philox"),
        tf.random.create_rng_state(2**70 + 5, tf.random.Algorithm.PHILOX),
        tf.random.experimental.create_rng_state(3, "threefry"),
        tf.random.Algorithm.PHILOX.value,
        tf.random.experimental.Algorithm.THREEFRY.value,
    )


@same_as_tf(
    "random.create_rng_state",
    "random.experimental.create_rng_state",
    "random.Algorithm",
    "random.experimental.Algorithm",
    edge=True,
)
def test_create_rng_state_bad_algorithm(tf):
    return tf.random.create_rng_state(1, "mersenne")


@same_as_tf("random.Generator", "random.experimental.Generator")
def test_generator_state(tf):
    g = tf.random.Generator.from_seed(1)
    h = tf.random.experimental.Generator.from_seed(5, alg="threefry")
    s = tf.random.Generator.from_state([4, 0, 9], alg="philox")
    return g.state, g.algorithm, g.key, h.state, h.algorithm, s.state


@same_as_tf("random.Generator", "random.experimental.Generator", edge=True, values=False, differs=BITS)
def test_generator_draws(tf):
    g = tf.random.Generator.from_seed(1)
    children = g.split(2)
    return (
        g.normal([2, 3]),
        g.uniform([4], maxval=10, dtype=tf.int32),
        g.uniform_full_int([2], dtype=tf.int64),
        g.truncated_normal([2]),
        g.binomial([2], counts=5.0, probs=0.5),
        g.make_seeds(3),
        len(children),
        children[0].normal([1]),
        tf.random.Generator.from_non_deterministic_state().uniform([0]),
    )


@same_as_tf(
    "random.get_global_generator",
    "random.set_global_generator",
    "random.experimental.get_global_generator",
    "random.experimental.set_global_generator",
)
def test_global_generator(tf):
    tf.random.set_global_generator(tf.random.Generator.from_seed(9))
    state = tf.random.get_global_generator().state
    tf.random.experimental.set_global_generator(tf.random.Generator.from_seed(4))
    return state, tf.random.experimental.get_global_generator().state


@same_as_tf(
    "random.get_global_generator",
    "random.set_global_generator",
    "random.experimental.get_global_generator",
    "random.experimental.set_global_generator",
    edge=True,
)
def test_global_generator_threefry(tf):
    tf.random.set_global_generator(tf.random.Generator.from_seed(2**64 + 3, alg="threefry"))
    return tf.random.get_global_generator().state, tf.random.get_global_generator().algorithm


@same_as_tf(
    "random.fold_in",
    "random.split",
    "random.experimental.stateless_fold_in",
    "random.experimental.stateless_split",
    values=False,
    differs=BITS,
)
def test_fold_in_split(tf):
    seed = tf.constant([1, 2], tf.int64)
    return (
        tf.random.fold_in(seed, 3),
        tf.random.fold_in([1, 2], 3),
        tf.random.split(seed, 3),
        tf.random.experimental.stateless_fold_in(seed, 7),
        tf.random.experimental.stateless_split(seed),
    )


@same_as_tf(
    "random.fold_in",
    "random.split",
    "random.experimental.stateless_fold_in",
    "random.experimental.stateless_split",
    edge=True,
)
def test_fold_in_bad_seed(tf):
    return tf.random.fold_in([1, 2, 3], 3)


@same_as_tf("random.experimental.stateless_shuffle", "random.experimental.index_shuffle", values=False, differs=BITS)
def test_stateless_shuffle_index_shuffle(tf):
    return (
        tf.random.experimental.stateless_shuffle(tf.range(6), seed=SEED),
        tf.random.experimental.index_shuffle(tf.constant([1, 2], tf.int64), [4, 5], 9),
    )


@same_as_tf("random.experimental.stateless_shuffle", "random.experimental.index_shuffle", edge=True)
def test_stateless_shuffle_keeps_values_index_shuffle_is_a_permutation(tf):
    perm = tf.random.experimental.index_shuffle(tf.range(10, dtype=tf.int64), tf.constant([4, 5], tf.int64), 9)
    return tf.sort(tf.random.experimental.stateless_shuffle(tf.constant([3, 1, 2]), seed=SEED)), tf.sort(perm)


SAMPLERS = ["uniform_candidate_sampler", "log_uniform_candidate_sampler"]


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("unique", [True, False])
@same_as_tf("random.uniform_candidate_sampler", "random.log_uniform_candidate_sampler", values=False, differs=BITS)
def test_candidate_samplers(tf, name, unique):
    classes = tf.constant([[1, 2], [3, 4]], tf.int64)
    return getattr(tf.random, name)(classes, 2, 5, unique, 10)


@pytest.mark.parametrize("name", SAMPLERS)
@same_as_tf("random.uniform_candidate_sampler", "random.log_uniform_candidate_sampler", edge=True, atol=1e-6)
def test_candidate_sampler_expected_counts_without_unique(tf, name):
    out = getattr(tf.random, name)(tf.constant([[0], [4]], tf.int64), 1, 6, False, 10)
    return out.true_expected_count, int(tf.size(out.sampled_candidates))


@same_as_tf("random.fixed_unigram_candidate_sampler", values=False, differs=BITS)
def test_fixed_unigram_candidate_sampler(tf):
    classes = tf.constant([[1], [2]], tf.int64)
    return tf.random.fixed_unigram_candidate_sampler(classes, 1, 3, True, 4, unigrams=[1.0, 2.0, 3.0, 4.0])


@same_as_tf("random.fixed_unigram_candidate_sampler", edge=True, atol=1e-6)
def test_fixed_unigram_expected_counts(tf):
    out = tf.random.fixed_unigram_candidate_sampler(
        tf.constant([[0], [3]], tf.int64), 1, 4, False, 4, unigrams=[1.0, 1.0, 2.0, 4.0], distortion=0.5
    )
    return out.true_expected_count


@same_as_tf("random.all_candidate_sampler")
def test_all_candidate_sampler(tf):
    return tf.random.all_candidate_sampler(tf.constant([[1], [2]], tf.int64), 1, 3, True)


@same_as_tf("random.all_candidate_sampler", edge=True)
def test_all_candidate_sampler_none(tf):
    return tf.random.all_candidate_sampler(tf.constant([[1, 2]], tf.int64), 2, 0, False)


@same_as_tf("random.learned_unigram_candidate_sampler", values=False, differs=BITS)
def test_learned_unigram_candidate_sampler(tf):
    classes = tf.constant([[1], [2]], tf.int64)
    return tf.random.learned_unigram_candidate_sampler(classes, 1, 3, True, 6, seed=11)


@same_as_tf("random.learned_unigram_candidate_sampler", edge=True, atol=1e-6)
def test_learned_unigram_candidate_sampler_learns_across_calls(tf):
    classes = tf.constant([[1], [1], [2]], tf.int64)
    counts = [
        tf.random.learned_unigram_candidate_sampler(classes, 1, 4, False, 5, seed=23).true_expected_count
        for _ in range(3)
    ]
    return counts


@same_as_tf("random_index_shuffle", values=False, differs=BITS)
def test_random_index_shuffle(tf):
    return tf.random_index_shuffle(
        tf.constant([1, 2], tf.int64), tf.constant([4, 5, 6], tf.int64), tf.constant(9, tf.int64)
    )


@same_as_tf("random_index_shuffle", edge=True)
def test_random_index_shuffle_is_a_permutation(tf):
    seed = tf.constant([4, 5, 6], tf.int64)
    return tf.sort(tf.random_index_shuffle(tf.range(10, dtype=tf.int64), seed, tf.constant(9, tf.int64)))
