"""``keras.random`` (shapes, dtypes, ranges: the numbers come from another generator) and the array
helpers of ``keras.utils`` (``to_categorical``, ``normalize``, ``pad_sequences``) against Keras on TF."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")

RANDOM_NAMES = (
    "keras:random.normal",
    "keras:random.uniform",
    "keras:random.truncated_normal",
    "keras:random.randint",
    "keras:random.categorical",
    "keras:random.dropout",
    "keras:random.shuffle",
    "keras:random.SeedGenerator",
)


def _random(tf, shape: tuple, dtype: str):
    r = tf.keras.random
    seed = r.SeedGenerator(3)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 1.0
    uniform = np.asarray(r.uniform(shape, minval=2.0, maxval=3.0, dtype=dtype, seed=seed))
    truncated = np.asarray(r.truncated_normal(shape, stddev=0.5, dtype=dtype, seed=seed))
    ints = np.asarray(r.randint(shape, 0, 4, seed=seed))
    shuffled = np.asarray(r.shuffle(x, seed=seed))
    dropped = np.asarray(r.dropout(x, 0.5, seed=seed))
    logits = np.log(np.array([[0.999, 0.001], [0.001, 0.999]], np.float32))
    return {
        "normal": r.normal(shape, dtype=dtype, seed=seed),  # compared by shape and dtype
        "uniform_in_range": bool(((uniform >= 2.0) & (uniform < 3.0)).all()),
        "truncated_within_two_stddev": bool((np.abs(truncated) <= 1.0 + 1e-6).all()),
        "randint_in_range": bool(((ints >= 0) & (ints < 4)).all()) and ints.dtype.kind == "i",
        "shuffle_is_a_permutation": sorted(shuffled.reshape(-1).tolist()) == sorted(x.reshape(-1).tolist()),
        "dropout_zero_or_doubled": bool(np.isin(dropped / x, [0.0, 2.0]).all()),
        "categorical": r.categorical(logits, 3, seed=seed),
    }


@same_as_tf(*RANDOM_NAMES, values=False)
def test_random(tf):
    return _random(tf, (3, 4), "float32")


@same_as_tf(*RANDOM_NAMES, edge=True, values=False)
def test_random_of_one_value_in_float64(tf):
    return _random(tf, (1,), "float64")


UTILS_NAMES = (
    "keras:utils.to_categorical",
    "keras:utils.normalize",
    "keras:utils.pad_sequences",
    "keras:preprocessing.sequence.pad_sequences",
)


_CATEGORICAL_DIFFERS = (
    "utils.to_categorical gives float32, as Keras 2 does; Keras 3.15 gives float64 for a list or NumPy input "
    "(its values are compared, as float32, in the Keras 3 run)"
)


def _categorical(u, labels, dialect: str, **kwargs):
    out = np.asarray(u.to_categorical(labels, **kwargs))
    return out.astype(np.float32) if dialect == "keras" else out


@same_as_tf(*UTILS_NAMES, dialects=BOTH, rtol=1e-6, differs=_CATEGORICAL_DIFFERS)
def test_array_utils(tf, dialect):
    u = tf.keras.utils
    seqs = [[1, 2, 3], [4], [5, 6, 7, 8, 9]]
    return (
        _categorical(u, [0, 2, 1], dialect, num_classes=4),
        u.normalize(np.array([[3.0, 4.0], [1.0, 0.0]])),
        u.pad_sequences(seqs),
        tf.keras.preprocessing.sequence.pad_sequences(seqs, maxlen=4, padding="post", truncating="post", value=-1),
    )


@same_as_tf(
    *UTILS_NAMES,
    edge=True,
    dialects=BOTH,
    rtol=1e-6,
    differs="utils.normalize(x, axis=0) divides each column by its norm, as Keras 2 does; Keras 3.15 gives 4/3 "
    "for the column [4, 0] of [[3, 4], [0, 0]] (so its run normalizes rows, axis=1)",
)
def test_array_utils_edge_cases(tf, dialect):
    u = tf.keras.utils
    return (
        _categorical(u, np.array([[1], [0]]), dialect),
        u.normalize(np.array([[3.0, 4.0], [0.0, 0.0]]), axis=0 if dialect == "tf_keras" else 1, order=1),
        u.pad_sequences([[], [1, 2]], maxlen=3, dtype="float32"),
        tf.keras.preprocessing.sequence.pad_sequences([[1.5, 2.5]], dtype="float32", padding="post"),
    )


@pytest.mark.parametrize("bad", [{"padding": "middle"}, {"truncating": "middle", "maxlen": 1}])
@same_as_tf("keras:utils.pad_sequences", edge=True, dialects=BOTH)
def test_pad_sequences_refuses_a_bad_side(tf, bad):
    return tf.keras.utils.pad_sequences([[1, 2, 3]], **bad)


# gamma, beta, binomial: shapes and dtypes (the numbers come from another generator), ranges and
# sample means within a few standard errors of the distributions' means
DISTRIBUTION_NAMES = ("keras:random.gamma", "keras:random.beta", "keras:random.binomial")


def _distributions(tf, n: int, dtype: str):
    r = tf.keras.random
    seed = r.SeedGenerator(5)
    g = np.asarray(r.gamma((n,), 2.0, dtype=dtype, seed=seed))
    b = np.asarray(r.beta((n,), 2.0, 6.0, dtype=dtype, seed=seed))
    k = np.asarray(r.binomial((n,), 10, 0.3, dtype=dtype, seed=seed))
    return {
        "gamma": r.gamma((2, n), 2.0, dtype=dtype, seed=seed),  # compared by shape and dtype
        "beta": r.beta((2, n), 2.0, 6.0, dtype=dtype, seed=seed),
        "binomial": r.binomial((2, n), 10, 0.3, dtype=dtype, seed=seed),
        "gamma_positive": bool((g > 0).all()),
        "beta_in_unit_interval": bool(((b >= 0) & (b <= 1)).all()),
        "binomial_whole_counts": bool(((k >= 0) & (k <= 10) & (k == np.round(k))).all()),
        "means_close": n < 100
        or bool(abs(g.mean() - 2.0) < 0.2 and abs(b.mean() - 0.25) < 0.02 and abs(k.mean() - 3.0) < 0.2),
    }


@same_as_tf(*DISTRIBUTION_NAMES, values=False)
def test_distributions(tf):
    return _distributions(tf, 4000, "float32")


@same_as_tf(*DISTRIBUTION_NAMES, edge=True, values=False)
def test_distributions_of_one_value_in_float64(tf):
    return _distributions(tf, 1, "float64")
