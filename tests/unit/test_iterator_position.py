"""Exact data positions: distributed iterators in tf.train.Checkpoint, and fit's backups of tf.data."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison.data.iterator_state import PipelinePosition, counters, replica_seed, set_counters


def _pipeline() -> tf.data.Dataset:
    return tf.data.Dataset.range(40).shuffle(40).batch(4)  # unseeded, reshuffled every iteration


def test_a_distributed_iterator_resumes_at_the_next_batch_in_a_later_epoch(tmp_path):
    strategy = tf.distribute.get_strategy()
    dist = strategy.experimental_distribute_dataset(_pipeline())
    for _ in iter(dist):  # a whole first epoch: the saved iteration is the second one
        pass
    it = iter(dist)
    first = [next(it).tolist() for _ in range(3)]
    path = tf.train.Checkpoint(iterator=it).write(str(tmp_path / "it"))
    expected = [next(it).tolist() for _ in range(7)]
    assert sorted(sum(first + expected, [])) == list(range(40))

    # a new process: a fresh dataset object (counters at 0, another random seed)
    fresh = iter(strategy.experimental_distribute_dataset(_pipeline()))
    tf.train.Checkpoint(iterator=fresh).read(path).assert_consumed()
    assert [next(fresh).tolist() for _ in range(7)] == expected
    with pytest.raises(StopIteration):
        next(fresh)


def test_a_per_replica_iterator_from_a_function_resumes(tmp_path):
    strategy = tf.distribute.get_strategy()
    dist = strategy.distribute_datasets_from_function(lambda ctx: _pipeline())
    it = iter(dist)
    next(it)
    state = it.state_dict()
    expected = [next(it).tolist() for _ in range(4)]
    again = iter(strategy.distribute_datasets_from_function(lambda ctx: _pipeline()))
    again.load_state_dict(state)
    assert [next(again).tolist() for _ in range(4)] == expected


def test_restoring_into_another_pipeline_says_why(tmp_path):
    strategy = tf.distribute.get_strategy()
    it = iter(strategy.experimental_distribute_dataset(_pipeline()))
    next(it)
    path = tf.train.Checkpoint(iterator=it).write(str(tmp_path / "it"))
    plain = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.range(40).batch(4)))
    with pytest.raises(ValueError, match="pipeline with 1 shuffle/sample steps; this one has 0"):
        tf.train.Checkpoint(iterator=plain).read(path)
    short = iter(
        strategy.experimental_distribute_dataset(tf.data.Dataset.range(2).shuffle(2).batch(4, drop_remainder=True))
    )
    with pytest.raises(ValueError, match="consumed 1 batches, but this distributed dataset ends after 0"):
        tf.train.Checkpoint(iterator=short).read(path)
    with pytest.raises(ValueError, match="not one this iterator wrote"):
        plain.load_state_dict({"consumed": torch.tensor(1)})


def test_position_helpers_check_what_they_restore():
    ds = _pipeline()
    assert counters(ds) == [0]
    with pytest.raises(ValueError, match="example: the saved data position comes from a pipeline with 2"):
        set_counters(ds, [1, 2], where="example")
    assert replica_seed(5, 0) != replica_seed(5, 1) and replica_seed(5, 1) == replica_seed(5, 1)
    assert PipelinePosition.from_dict(None, "x") is None and PipelinePosition.from_dict(3, "x") is None
    pos = PipelinePosition(7, (1, 2), 3)
    assert PipelinePosition.from_dict(pos.as_dict(), "x") == pos
    with pytest.raises(ValueError, match="backup: the saved data position is malformed"):
        PipelinePosition.from_dict({"counters": [1]}, "backup")


def _fit(backup_dir: str, data: tf.data.Dataset, stop_at: tuple[int, int] | None) -> list[np.ndarray]:
    torch.manual_seed(0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,))])
    model.compile(optimizer="sgd", loss="mse")

    class Stop(tf.keras.callbacks.Callback):
        epoch = 0

        def on_epoch_begin(self, epoch, logs=None):
            Stop.epoch = epoch

        def on_train_batch_begin(self, batch, logs=None):
            if stop_at is not None and (Stop.epoch, batch) == stop_at:
                raise KeyboardInterrupt

    try:
        model.fit(
            data, epochs=3, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(backup_dir, save_freq=3), Stop()]
        )
    except KeyboardInterrupt:
        return []
    return model.get_weights()


def _data() -> tf.data.Dataset:
    x = np.random.default_rng(0).normal(size=(40, 4)).astype("float32")
    return tf.data.Dataset.from_tensor_slices((x, x[:, :3] * 2)).shuffle(40).batch(5)


def test_fit_resumes_a_shuffled_tf_data_pipeline_mid_epoch_exactly(tmp_path):
    reference = _fit(str(tmp_path / "ref"), _data(), None)
    assert _fit(str(tmp_path / "b"), _data(), (1, 5)) == []
    resumed = _fit(str(tmp_path / "b"), _data(), None)  # a fresh pipeline, as after a restart
    for got, want in zip(resumed, reference):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_fit_refuses_a_backup_of_another_pipeline(tmp_path):
    assert _fit(str(tmp_path / "b"), _data(), (1, 5)) == []
    x = np.zeros((40, 4), "float32")
    other = tf.data.Dataset.from_tensor_slices((x, x[:, :3])).batch(5)  # no shuffle
    with pytest.raises(ValueError, match="BackupAndRestore: the saved data position comes from a pipeline with 1"):
        _fit(str(tmp_path / "b"), other, None)
