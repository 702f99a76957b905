"""``Dataset.random``/``RandomDataset``, ``rejection_resample`` and ``ignore_errors`` against TF 2.21.

The random streams are not TF's numbers (unison draws from NumPy, TF from Philox): those tests
compare what a program may rely on, dtypes, shapes, cardinalities, repeatability per seed and the
class frequencies a resample reaches.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf


@same_as_tf("data.experimental.RandomDataset", "data.Dataset", values=False)
def test_random_dataset(tf):
    return list(tf.data.experimental.RandomDataset(seed=4).take(3)), list(tf.data.Dataset.random(seed=4).take(2))


@same_as_tf("data.experimental.RandomDataset", "data.Dataset", edge=True)
def test_random_dataset_repeats_per_seed(tf):
    def values(ds):
        return [int(v) for v in ds]

    seeded = tf.data.Dataset.random(seed=7).take(5)
    again = tf.data.experimental.RandomDataset(seed=7).take(5)
    fresh = tf.data.Dataset.random(seed=7, rerandomize_each_iteration=True).take(5)
    unseeded = tf.data.Dataset.random().take(5)
    every = values(tf.data.Dataset.random(seed=1).take(200))
    return (
        values(seeded) == values(again),
        values(seeded) == values(seeded),  # a seeded dataset repeats when iterated again
        values(fresh) == values(fresh),  # unless asked to draw anew each iteration
        values(unseeded) == values(unseeded),  # an unseeded one draws its seed once, when made
        min(every) >= 0 and max(every) < 2**32,
        tf.data.Dataset.random(seed=1).cardinality(),
        tf.data.Dataset.random(seed=1).element_spec.dtype == tf.int64,
    )


def _skewed(tf):
    labels = np.array([0] * 90 + [1] * 10, dtype=np.int32)
    return tf.data.Dataset.from_tensor_slices((labels, labels.astype(np.float32) * 2)).repeat()


@pytest.mark.parametrize("initial", [None, [0.9, 0.1]])
@same_as_tf("data.experimental.rejection_resample", "data.Dataset")
def test_rejection_resample_reaches_the_target(tf, initial):
    resampled = _skewed(tf).rejection_resample(
        lambda label, value: label, target_dist=[0.5, 0.5], initial_dist=initial, seed=3
    )
    classes = [int(c) for c, _ in resampled.take(600)]
    pairs = list(resampled.take(3))
    consistent = all(int(c) == int(element[0]) for c, element in pairs)
    return abs(np.mean(classes) - 0.5) < 0.1, consistent, len(pairs[0]), resampled.cardinality()


@same_as_tf("data.experimental.rejection_resample", edge=True)
def test_rejection_resample_one_class_only(tf):
    resample = tf.data.experimental.rejection_resample(
        lambda label, value: label, target_dist=[0.0, 1.0], initial_dist=[0.9, 0.1], seed=1
    )
    classes = [int(c) for c, _ in _skewed(tf).apply(resample).take(20)]
    return classes


@same_as_tf("data.experimental.rejection_resample", "data.Dataset", edge=True)
def test_rejection_resample_mismatched_distributions(tf):
    return _skewed(tf).rejection_resample(
        lambda label, value: label, target_dist=[0.5, 0.25, 0.25], initial_dist=[0.9, 0.1]
    )


def _inverses(tf, **map_kwargs):
    values = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 0.0, 4.0, 0.0, 8.0])
    return values.map(lambda x: tf.debugging.check_numerics(1.0 / x, "division by zero"), **map_kwargs)


@pytest.mark.parametrize("parallel", [False, True])
@same_as_tf("data.experimental.ignore_errors", "data.Dataset")
def test_ignore_errors_drops_failed_elements(tf, parallel):
    ds = _inverses(tf, num_parallel_calls=tf.data.AUTOTUNE) if parallel else _inverses(tf)
    kept = ds.apply(tf.data.experimental.ignore_errors())
    return list(kept), list(ds.ignore_errors(log_warning=True)), kept.cardinality()


@same_as_tf("data.experimental.ignore_errors", "data.Dataset", edge=True)
def test_ignore_errors_only_above_it(tf):
    strings = tf.data.Dataset.from_tensor_slices(["1", "x", "3"]).map(tf.strings.to_number)
    kept = [float(v) for v in strings.ignore_errors()]
    filtered = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0]).filter(
        lambda v: tf.debugging.check_numerics(1.0 / v, "division by zero") > 0
    )
    after = strings.ignore_errors().map(lambda v: tf.debugging.check_numerics(1.0 / (v - 1.0), "later"))
    try:
        list(after)  # an error after ignore_errors still ends the iteration
        later = "no error"
    except tf.errors.InvalidArgumentError:
        later = "InvalidArgumentError"
    return kept, [float(v) for v in filtered.ignore_errors()], later, list(tf.data.Dataset.range(0).ignore_errors())


@same_as_tf("data.experimental.snapshot", "data.Dataset")
def test_snapshot_keeps_each_pipeline(tf, tmp_path):
    path = str(tmp_path / "snap")
    doubled = tf.data.Dataset.range(5).map(lambda x: x * 2).snapshot(path)
    first, again = list(doubled), list(doubled)
    tripled = tf.data.Dataset.range(5).map(lambda x: x * 3).apply(tf.data.experimental.snapshot(path))
    rebuilt = tf.data.Dataset.range(5).map(lambda x: x * 2).snapshot(path)  # reads the first one's files
    # (how many folders TF writes for these depends on its traced functions' names: not compared)
    return first, again, list(tripled), list(rebuilt), doubled.cardinality(), tmp_path.joinpath("snap").is_dir()


@same_as_tf("data.experimental.snapshot", "data.Dataset", edge=True)
def test_snapshot_of_a_partial_and_an_empty_iteration(tf, tmp_path):
    ds = tf.data.Dataset.range(4).snapshot(str(tmp_path / "a"), compression="GZIP")
    partial = list(ds.take(2))  # an unfinished iteration leaves no snapshot to read
    empty = tf.data.Dataset.range(0).apply(tf.data.experimental.snapshot(str(tmp_path / "b"), compression=None))
    return partial, list(ds), list(empty), ds.element_spec.dtype == tf.int64
