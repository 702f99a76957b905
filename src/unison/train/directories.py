"""Checking a checkpoint or backup directory when the object that writes there is made.

A file given where a directory is expected, a directory under a file, or one that cannot be
written fails only at the first save otherwise, which for a preemption checkpoint is the SIGTERM:
the save is lost. :func:`check_checkpoint_dir` raises a named error at construction instead.
It creates nothing (TF creates the directory at the first save).

Example:
    >>> import tempfile
    >>> from unison.train.directories import check_checkpoint_dir
    >>> check_checkpoint_dir(tempfile.mkdtemp() + "/new", "BackupAndRestore", "backup_dir").endswith("new")
    True
"""

from __future__ import annotations

import os

from unison.errors import CheckpointDirectoryError

__all__ = ["check_checkpoint_dir"]


def check_checkpoint_dir(path: str | os.PathLike[str], owner: str, arg: str) -> str:
    """``path`` as a string, after checking that ``owner`` will be able to write checkpoints there.

    Args:
        path: the directory (it may not exist yet).
        owner: who takes it, for the message (``"PreemptionCheckpointHandler"``).
        arg: the argument's name, for the message (``"checkpoint_dir"``).

    Raises:
        CheckpointDirectoryError: ``path`` is an existing file, lies under a file, or its nearest
            existing folder cannot be written by this process.
    """
    where = os.fspath(path)
    if os.path.exists(where) and not os.path.isdir(where):
        raise CheckpointDirectoryError(
            f"{owner}: {arg} must be a directory, but {where!r} is a file. Received: {arg}={where!r}. "
            f"Pass a directory of its own (it is created at the first save), e.g. {where + '_dir'!r}."
        )
    existing = os.path.abspath(where)
    while not os.path.exists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    if not os.path.isdir(existing):
        raise CheckpointDirectoryError(
            f"{owner}: {arg}={where!r} cannot be created: {existing!r} is a file, not a directory. "
            "Pass a path whose folders are directories."
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise CheckpointDirectoryError(
            f"{owner}: {arg}={where!r} cannot be written: this process may not write in {existing!r}. "
            "Pass a directory this user can write, or change its permissions."
        )
    return where
