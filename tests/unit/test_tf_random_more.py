"""tf.random's seeded streams: a seed fixes the values, a Generator's stream is reproducible.

The values cannot be TF's (its Philox counters are not torch's generators), so these contracts
are what unison promises instead (tests/conformance/test_vs_tf_random.py compares dtypes, shapes
and statistics with TF).
"""

from __future__ import annotations

import pytest
import torch

import unison as tf

STATELESS = [
    lambda seed: tf.random.stateless_uniform([5], seed=seed),
    lambda seed: tf.random.stateless_uniform([5], seed=seed, minval=0, maxval=100, dtype=tf.int64),
    lambda seed: tf.random.stateless_normal([5], seed=seed),
    lambda seed: tf.random.stateless_truncated_normal([5], seed=seed),
    lambda seed: tf.random.stateless_categorical(tf.math.log([[0.3, 0.7]]), 8, seed=seed),
    lambda seed: tf.random.stateless_binomial([5], seed=seed, counts=20.0, probs=0.4),
    lambda seed: tf.random.stateless_gamma([5], seed=seed, alpha=2.0),
    lambda seed: tf.random.stateless_poisson([5], seed=seed, lam=6.0),
    lambda seed: tf.random.stateless_parameterized_truncated_normal([5], seed, minvals=-1.0, maxvals=1.0),
    lambda seed: tf.random.experimental.stateless_shuffle(tf.range(20), seed=seed),
    lambda seed: tf.random.experimental.index_shuffle(tf.range(20), seed, 19),
    lambda seed: tf.random.fold_in(seed, 4),
    lambda seed: tf.random.split(seed, 3),
]


@pytest.mark.parametrize("draw", STATELESS)
def test_stateless_ops_are_fixed_by_their_seed(draw):
    a, b, other = draw([3, 4]), draw([3, 4]), draw([4, 3])
    assert torch.equal(a, b)
    assert not torch.equal(a, other)


def test_stateless_ops_leave_the_global_stream_alone():
    tf.random.set_seed(5)
    expected = tf.random.uniform([4])
    tf.random.set_seed(5)
    tf.random.stateless_normal([100], seed=[1, 2])
    assert torch.equal(tf.random.uniform([4]), expected)


def test_generator_streams_are_reproducible_and_advance():
    g, h = tf.random.Generator.from_seed(42), tf.random.Generator.from_seed(42)
    first, again = g.normal([6]), h.normal([6])
    assert torch.equal(first, again)
    assert not torch.equal(g.normal([6]), first)  # the state advanced
    assert g.state.tolist() != tf.random.Generator.from_seed(42).state.tolist()
    g.reset_from_seed(42)
    assert torch.equal(g.normal([6]), first)


def test_generator_split_gives_distinct_reproducible_children():
    a = [c.uniform([4]) for c in tf.random.Generator.from_seed(7).split(3)]
    b = [c.uniform([4]) for c in tf.random.Generator.from_seed(7).split(3)]
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[0], a[1]) and not torch.equal(a[1], a[2])


def test_generator_int_ranges_and_global_generator():
    g = tf.random.Generator.from_seed(1)
    ints = g.uniform([1000], minval=3, maxval=7, dtype=tf.int32)
    assert ints.dtype == torch.int32 and int(ints.min()) == 3 and int(ints.max()) == 6
    tf.random.set_global_generator(tf.random.Generator.from_seed(3))
    x = tf.random.get_global_generator().normal([3])
    tf.random.set_global_generator(tf.random.Generator.from_seed(3))
    assert torch.equal(tf.random.get_global_generator().normal([3]), x)


def test_bad_seed_names_the_op_and_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"stateless_normal: `seed`"):
        tf.random.stateless_normal([2], seed=[1, 2, 3])
