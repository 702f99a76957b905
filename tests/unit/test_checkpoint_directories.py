"""A file given as a checkpoint or backup directory is refused when the writer is made, not at
its first save (a preemption save at the SIGTERM would be lost)."""

from __future__ import annotations

import os

import pytest
import torch

import unison as tf
from unison.errors import CheckpointDirectoryError
from unison.train.directories import check_checkpoint_dir


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    return str(path)


@pytest.mark.timeout(30)
def test_preemption_handler_refuses_a_file_as_checkpoint_dir(a_file) -> None:
    ckpt = tf.train.Checkpoint(model=torch.nn.Linear(2, 1))
    with pytest.raises(CheckpointDirectoryError, match=r"checkpoint_dir must be a directory.*is a file"):
        tf.distribute.experimental.PreemptionCheckpointHandler(None, ckpt, a_file)


@pytest.mark.timeout(30)
def test_checkpoint_manager_refuses_a_directory_under_a_file(a_file) -> None:
    ckpt = tf.train.Checkpoint(model=torch.nn.Linear(2, 1))
    with pytest.raises(CheckpointDirectoryError, match="is a file, not a directory"):
        tf.train.CheckpointManager(ckpt, os.path.join(a_file, "sub"), max_to_keep=1)


@pytest.mark.timeout(30)
@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_directory_is_named(tmp_path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(CheckpointDirectoryError, match="cannot be written"):
        check_checkpoint_dir(str(locked / "ckpt"), "BackupAndRestore", "backup_dir")


@pytest.mark.timeout(30)
def test_a_new_directory_is_accepted_and_not_created(tmp_path) -> None:
    where = str(tmp_path / "a" / "b")
    assert check_checkpoint_dir(where, "BackupAndRestore", "backup_dir") == where
    assert not os.path.exists(where)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("with_manifest", [True, False], ids=["manifest", "no_manifest"])
def test_an_emptied_sharded_metadata_is_a_named_error(tmp_path, with_manifest) -> None:
    from unison.distribute.shard_manifest import MANIFEST
    from unison.distribute.sharded_checkpoint import ShardedCheckpoint
    from unison.errors import CorruptCheckpointError

    model = torch.nn.Linear(3, 2)
    path = tmp_path / "ckpt"
    ShardedCheckpoint(model).save(path)
    (path / ".metadata").write_bytes(b"")
    if not with_manifest:
        (path / MANIFEST).unlink()
    with pytest.raises(CorruptCheckpointError, match=r"\.metadata"):
        ShardedCheckpoint(torch.nn.Linear(3, 2)).restore(path)


@pytest.mark.timeout(30)
def test_backup_and_restore_refuses_a_file_as_backup_dir(a_file) -> None:
    with pytest.raises(CheckpointDirectoryError, match=r"BackupAndRestore: backup_dir must be a directory"):
        tf.keras.callbacks.BackupAndRestore(a_file)
