"""Checkpoint files and BackupAndRestore in one process: atomic writes, verified reads, fallback to
the previous backup, and a resumed ``fit`` that ends exactly where an uninterrupted one ends."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import torch

import unison as tf
from unison.train.files import (
    BackupFiles,
    CorruptCheckpointError,
    UnreadableCheckpointsError,
    dumps,
    loads,
    write_atomically,
)


def test_checkpoint_files_are_verified() -> None:
    data = dumps({"w": torch.arange(4.0), "step": 3})
    assert loads(data)["step"] == 3
    with pytest.raises(CorruptCheckpointError, match="not a complete unison checkpoint"):
        loads(data[:10])
    damaged = bytearray(data)
    damaged[-5] ^= 0xFF
    with pytest.raises(CorruptCheckpointError, match="checksum does not match"):
        loads(bytes(damaged), where="ckpt-1")


def test_manager_keeps_the_previous_checkpoint_and_ignores_temporaries(tmp_path) -> None:
    manager = BackupFiles(tmp_path / "b", max_to_keep=2)
    assert manager.restore_latest() is None
    for step in range(4):
        manager.save({"step": step})
    names = sorted(os.listdir(tmp_path / "b"))
    assert names == ["ckpt-000003.unison", "ckpt-000004.unison"]
    # a writer killed mid-write leaves only a temporary file: it is never read, and cleaned up later
    (tmp_path / "b" / ".tmp-half").write_bytes(b"UNISON-CHECK")
    assert manager.restore_latest()["step"] == 3
    manager.save({"step": 4})
    assert ".tmp-half" not in os.listdir(tmp_path / "b")
    manager.delete_all()
    assert not (tmp_path / "b").exists()
    with pytest.raises(ValueError, match="max_to_keep"):
        BackupFiles(tmp_path, max_to_keep=0)


def test_corrupt_newest_checkpoint_falls_back_to_the_previous_with_a_warning(tmp_path) -> None:
    manager = BackupFiles(tmp_path, max_to_keep=2)
    manager.save({"step": 1})
    newest = manager.save({"step": 2})
    data = bytearray(open(newest, "rb").read())
    data[len(data) // 2] ^= 0xFF  # one flipped byte, e.g. a bad disk block
    with open(newest, "wb") as fh:
        fh.write(data)
    with pytest.warns(RuntimeWarning, match=r"Skipping checkpoint .*ckpt-000002.unison.*checksum.*previous one"):
        assert manager.restore_latest()["step"] == 1


def test_write_atomically_replaces_whole_files(tmp_path) -> None:
    path = tmp_path / "f"
    write_atomically(str(path), b"old")
    write_atomically(str(path), b"new contents")
    assert path.read_bytes() == b"new contents" and os.listdir(tmp_path) == ["f"]


# --- BackupAndRestore ------------------------------------------------------------------------------------
class Interrupt(tf.keras.callbacks.Callback):
    """Stops fit (as a crash would) after ``at`` training batches."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at, self.seen = at, 0

    def on_train_batch_end(self, batch: int, logs: object = None) -> None:
        self.seen += 1
        if self.seen == self.at:
            raise KeyboardInterrupt


class IterationsSeen(tf.keras.callbacks.Callback):
    """Records ``optimizer.iterations`` at the start of every training batch (module-wide list)."""

    log: list[int] = []

    def on_train_batch_begin(self, batch: int, logs: object = None) -> None:
        IterationsSeen.log.append(int(self.model.optimizer.iterations))


def _fit(
    backup_dir: str,
    interrupt_at: int = 0,
    steps_per_epoch: int | None = None,
    epochs: int = 3,
    save_freq: object = 7,
    on_unreadable_backup: str = "raise",
) -> tuple[list[np.ndarray], dict, tf.keras.callbacks.BackupAndRestore]:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(203, 6)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
            tf.keras.layers.Dropout(0.2),
            tf.keras.layers.Dense(2, activation="softmax"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    backup = tf.keras.callbacks.BackupAndRestore(
        backup_dir, save_freq=save_freq, on_unreadable_backup=on_unreadable_backup
    )
    callbacks = [backup] + ([Interrupt(interrupt_at)] if interrupt_at else []) + [IterationsSeen()]
    try:
        history = model.fit(
            x, y, batch_size=16, epochs=epochs, verbose=0, callbacks=callbacks, steps_per_epoch=steps_per_epoch
        ).history
    except KeyboardInterrupt:
        history = {}
    return model.get_weights(), history, backup


@pytest.mark.parametrize(
    "steps_per_epoch,save_freq,interrupt_at,resumed",
    [
        (None, 7, 20, (1, 1)),  # 13 steps per epoch: backups after steps 7 and 14 -> epoch 1, step 1
        (None, 13, 20, (0, 13)),  # backed up after the epoch's last step: only the epoch's end remains
        (5, 7, 12, (1, 2)),  # steps_per_epoch: epochs start mid-data; the position is restored
        (9, 7, 17, (2, 1)),  # 9 of 13 batches, then 4 (the data ran out, as in Keras 3), then 9
    ],
    ids=["mid-epoch", "end-of-epoch", "steps-per-epoch", "steps-per-epoch-beyond-data"],
)
def test_resumed_fit_ends_exactly_where_an_uninterrupted_one_ends(
    tmp_path, steps_per_epoch, save_freq, interrupt_at, resumed
) -> None:
    want, full_history, _ = _fit(str(tmp_path / "ref"), steps_per_epoch=steps_per_epoch)
    assert not (tmp_path / "ref").exists()  # delete_checkpoint: gone after a completed fit
    _, history, _ = _fit(
        str(tmp_path / "b"), interrupt_at=interrupt_at, steps_per_epoch=steps_per_epoch, save_freq=save_freq
    )
    assert history == {} and 1 <= len(os.listdir(tmp_path / "b")) <= 2  # the newest (and the previous)
    got, resumed_history, backup = _fit(str(tmp_path / "b"), steps_per_epoch=steps_per_epoch, save_freq=save_freq)
    assert backup.restored_from == resumed
    for g, w in zip(got, want):
        assert np.array_equal(g, w)  # same data order, same dropout masks: bit for bit
    # the resumed epoch reports the metrics of the whole epoch, as if never interrupted
    for key, values in resumed_history.items():
        assert values == full_history[key][resumed[0] :], key


def test_epoch_backups_resume_at_the_next_epoch(tmp_path) -> None:
    want, _, _ = _fit(str(tmp_path / "ref"), save_freq="epoch")
    _fit(str(tmp_path / "b"), interrupt_at=30, save_freq="epoch")
    got, history, backup = _fit(str(tmp_path / "b"), save_freq="epoch")
    assert backup.restored_from == (2, 0) and len(history["loss"]) == 1
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


def test_backup_of_another_model_is_refused_with_the_fix(tmp_path) -> None:
    _fit(str(tmp_path / "b"), interrupt_at=10)
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(6,))])
    model.compile(optimizer="adam", loss="mse")
    with pytest.raises(ValueError, match="does not fit this model.*delete the directory"):
        model.fit(
            np.zeros((8, 6), "float32"),
            np.zeros((8, 3), "float32"),
            verbose=0,
            callbacks=[tf.keras.callbacks.BackupAndRestore(str(tmp_path / "b"))],
        )


def test_corrupt_newest_backup_resumes_from_the_previous_one(tmp_path) -> None:
    _fit(str(tmp_path / "b"), interrupt_at=20)
    newest = max(os.listdir(tmp_path / "b"))
    with open(tmp_path / "b" / newest, "r+b") as fh:
        fh.truncate(100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, _, backup = _fit(str(tmp_path / "b"))
    assert backup.restored_from == (0, 7)  # the previous backup, 7 steps in
    assert any("Skipping checkpoint" in str(w.message) and newest in str(w.message) for w in caught)


@pytest.mark.parametrize(
    "kwargs,fragment",
    [
        ({"backup_dir": ""}, "backup_dir must be a directory path"),
        ({"backup_dir": "b", "save_freq": 0}, "save_freq must be 'epoch'"),
        ({"backup_dir": "b", "save_freq": "batch"}, "save_freq must be 'epoch'"),
        ({"backup_dir": "b", "save_before_preemption": "yes"}, "must be True or False"),
    ],
)
def test_backup_and_restore_arguments(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match="BackupAndRestore") as info:
        tf.keras.callbacks.BackupAndRestore(**kwargs)
    assert fragment in str(info.value)


# --- no silent loss of progress (issue 12, item 4) ------------------------------------------------------
def _damage_every_backup(directory) -> dict[str, bytes]:
    """Flip one byte in the middle of every backup file; return their damaged contents by name."""
    damaged = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        with open(path, "rb") as fh:
            data = bytearray(fh.read())
        data[len(data) // 2] ^= 0xFF
        with open(path, "wb") as fh:
            fh.write(data)
        damaged[name] = bytes(data)
    return damaged


def test_every_backup_damaged_stops_fit_naming_each_file_and_leaves_them(tmp_path) -> None:
    _fit(str(tmp_path / "b"), interrupt_at=20)
    damaged = _damage_every_backup(tmp_path / "b")
    assert len(damaged) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(UnreadableCheckpointsError) as info:
            _fit(str(tmp_path / "b"))
    message = str(info.value)
    for name in damaged:
        assert name in message
    assert message.count("checksum does not match") == 2
    assert "on_unreadable_backup='restart'" in message
    # untouched: same names, same bytes
    assert {n: (tmp_path / "b" / n).read_bytes() for n in os.listdir(tmp_path / "b")} == damaged


def test_restart_option_trains_from_scratch_and_keeps_the_damaged_files(tmp_path) -> None:
    want, _, _ = _fit(str(tmp_path / "ref"))
    _fit(str(tmp_path / "b"), interrupt_at=20)
    damaged = _damage_every_backup(tmp_path / "b")
    with pytest.warns(RuntimeWarning, match="training starts again from epoch 0"):
        got, _, backup = _fit(str(tmp_path / "b"), on_unreadable_backup="restart")
    assert backup.restored_from is None
    for g, w in zip(got, want):
        assert np.array_equal(g, w)  # a fresh start, exactly like a run without backups
    # the damaged files are still there, renamed out of the rotation, with their bytes
    kept = {n.removesuffix(".damaged"): (tmp_path / "b" / n).read_bytes() for n in os.listdir(tmp_path / "b")}
    assert kept == damaged


def test_on_unreadable_backup_must_be_raise_or_restart() -> None:
    with pytest.raises(
        ValueError, match=r"on_unreadable_backup must be 'raise'.*Received: on_unreadable_backup='skip'"
    ):
        tf.keras.callbacks.BackupAndRestore("b", on_unreadable_backup="skip")


def test_a_resumed_fit_continues_the_optimizers_iterations(tmp_path) -> None:
    # Keras's optimizer.iterations drives learning-rate schedules and Adam's epsilon (Keras's placement):
    # a backup keeps it, so the resumed steps see 26, 27, ... as the uninterrupted run does
    IterationsSeen.log.clear()
    _fit(str(tmp_path / "ref"), save_freq="epoch")
    want = list(IterationsSeen.log)
    _fit(str(tmp_path / "b"), interrupt_at=30, save_freq="epoch")
    IterationsSeen.log.clear()
    _, _, backup = _fit(str(tmp_path / "b"), save_freq="epoch")
    assert backup.restored_from == (2, 0)
    assert IterationsSeen.log == want[26:] == list(range(26, 39))
