"""unison/data/resampling.py: what the conformance tests cannot see (files read back, refusals)."""

from __future__ import annotations

import pytest

import unison as tf

pytestmark = pytest.mark.timeout(60)


def test_snapshot_is_read_back_instead_of_rerunning_the_pipeline(tmp_path):
    calls = []

    def pipeline():
        return tf.data.Dataset.range(4).map(lambda x: (calls.append(1), x * 2)[1]).snapshot(str(tmp_path))

    assert [int(v) for v in pipeline()] == [0, 2, 4, 6] and len(calls) == 4
    assert [int(v) for v in pipeline()] == [0, 2, 4, 6] and len(calls) == 4  # a new pipeline object: the files
    other = tf.data.Dataset.range(4).map(lambda x: x + 1).snapshot(str(tmp_path))
    assert [int(v) for v in other] == [1, 2, 3, 4]  # another pipeline gets a folder of its own
    assert len(list(tmp_path.iterdir())) == 2


def test_snapshot_refuses_a_reader_func(tmp_path):
    with pytest.raises(ValueError, match=r"reader_func=\.\.\.\) is not supported.*one file"):
        tf.data.Dataset.range(2).snapshot(str(tmp_path), reader_func=lambda datasets: datasets)


def test_ignore_errors_logs_when_asked(caplog):
    ds = tf.data.Dataset.from_tensor_slices([1.0, 0.0]).map(lambda x: tf.debugging.check_numerics(1.0 / x, "zero"))
    with caplog.at_level("WARNING", logger="unison.data"):
        assert [float(v) for v in ds.ignore_errors(log_warning=True)] == [1.0]
    assert "dropped an element whose map function raised InvalidArgumentError" in caplog.text


def test_rejection_resample_checks_its_arguments():
    ds = tf.data.Dataset.range(3)
    with pytest.raises(TypeError, match="class_func to be a function"):
        ds.rejection_resample(None, [0.5, 0.5])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"probabilities >= 0"):
        ds.rejection_resample(lambda x: x, [0.5, -0.5])
    with pytest.raises(tf.errors.InvalidArgumentError, match="outside the 2 classes"):
        list(ds.rejection_resample(lambda x: x, [0.5, 0.5], seed=1))
    with pytest.raises(TypeError, match="seed must be an integer"):
        tf.data.Dataset.random(seed="1")
