"""keras.callbacks.TensorBoard and tf.summary write real event files that TensorBoard reads back."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import unison as tf
from unison import keras

pytestmark = pytest.mark.timeout(120)


def _read(folder: str) -> EventAccumulator:
    acc = EventAccumulator(folder, size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    return acc


def _scalars(acc: EventAccumulator, tag: str) -> list[tuple[int, float]]:
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def _fit(tmp_path: Any, **kwargs: Any) -> tuple[Any, str]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    model = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(4,))])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    log_dir = str(tmp_path / "logs")
    hist = model.fit(
        x,
        y,
        batch_size=16,
        epochs=3,
        verbose=0,
        validation_split=0.25,
        callbacks=[keras.callbacks.TensorBoard(log_dir=log_dir, **kwargs)],
    )
    return hist, log_dir


def test_epoch_scalars_in_train_and_validation_folders(tmp_path: Any) -> None:
    hist, log_dir = _fit(tmp_path, histogram_freq=1)
    assert sorted(os.listdir(log_dir)) == ["train", "validation"]
    train, val = _read(os.path.join(log_dir, "train")), _read(os.path.join(log_dir, "validation"))
    loss = _scalars(train, "epoch_loss")
    assert [s for s, _ in loss] == [0, 1, 2]
    np.testing.assert_allclose([v for _, v in loss], hist.history["loss"], rtol=1e-5)
    np.testing.assert_allclose([v for _, v in _scalars(val, "epoch_loss")], hist.history["val_loss"], rtol=1e-5)
    assert "epoch_accuracy" in val.Tags()["scalars"] and "epoch_val_loss" not in val.Tags()["scalars"]
    # Keras 3's tags: <model>/<layer>/<weight>/histogram (layer names, not torch's module paths)
    assert any(t.endswith("/kernel/histogram") and "/dense" in t for t in train.Tags()["histograms"])
    assert not any(t.startswith("stack/") for t in train.Tags()["histograms"])
    assert "batch_loss" not in train.Tags()["scalars"]


def test_batch_update_freq_writes_batch_scalars(tmp_path: Any) -> None:
    _, log_dir = _fit(tmp_path, update_freq=2)
    train = _read(os.path.join(log_dir, "train"))
    steps = [s for s, _ in _scalars(train, "batch_loss")]
    assert steps == [2, 4, 6, 8]  # 3 epochs x 3 batches of 16 (48 training rows), every 2nd batch


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="update_freq"):
        keras.callbacks.TensorBoard(update_freq="sometimes")
    with pytest.raises(ValueError, match="histogram_freq"):
        keras.callbacks.TensorBoard(histogram_freq=-1)


def test_tf_summary_file_writer_round_trip(tmp_path: Any) -> None:
    logdir = str(tmp_path / "run")
    writer = tf.summary.create_file_writer(logdir)
    assert tf.summary.scalar("ignored", 1.0, step=0) is False  # no default writer: records nothing
    with writer.as_default():
        for step in range(3):
            assert tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
        tf.summary.experimental.set_step(7)
        tf.summary.histogram("w", np.arange(10.0))
        tf.summary.experimental.set_step(None)
        with pytest.raises(ValueError, match="No step set"):
            tf.summary.scalar("loss", 0.0)
        with pytest.raises(ValueError, match="single number"):
            tf.summary.scalar("loss", [1.0, 2.0], step=1)
    writer.flush()
    writer.close()
    acc = _read(logdir)
    assert _scalars(acc, "loss") == [(0, 1.0), (1, 0.5), (2, pytest.approx(1 / 3))]
    assert acc.Histograms("w")[0].step == 7
    with pytest.raises(ValueError, match="directory path"):
        tf.summary.create_file_writer("")


def test_missing_tensorboard_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # what an absent package looks like
    with pytest.raises(ImportError, match=r"pip install unison\[tensorboard\]"):
        keras.callbacks.TensorBoard(log_dir=str(tmp_path))
    with pytest.raises(ImportError, match="tensorboard"):
        tf.summary.create_file_writer(str(tmp_path))
