"""Atomic, verified, numbered checkpoint files (what ``BackupAndRestore`` writes).

unison's own backups, beside TF's ``tf.train.Checkpoint`` (:mod:`unison.train.checkpoint`) and
``tf.train.CheckpointManager`` (:mod:`unison.train.manager`); hence the name :class:`BackupFiles`,
so that the library has one class called ``CheckpointManager``, TF's.

Only the chief writes (the caller decides who that is). A checkpoint is written under a
temporary name in the same directory, flushed and fsynced, then renamed into place and the
directory fsynced: a crash at any moment leaves the previous checkpoints intact and, at worst,
a stray temporary file. Each file carries a SHA-256 of its contents, so a damaged file is
detected on reading; :meth:`BackupFiles.restore_latest` then falls back to the previous
checkpoint with a warning. The newest ``max_to_keep`` checkpoints are kept, so the previous one
is only deleted once the new one is complete. Payloads are plain dicts of tensors and numbers
(read back with ``weights_only=True``): nothing in them depends on the number of replicas.

Example:
    >>> import tempfile, torch
    >>> manager = BackupFiles(tempfile.mkdtemp(), max_to_keep=2)
    >>> for step in range(3):
    ...     _ = manager.save({"step": step, "w": torch.full((2,), float(step))})
    >>> [os.path.basename(p) for p in manager.checkpoints()]
    ['ckpt-000002.unison', 'ckpt-000003.unison']
    >>> manager.restore_latest()["step"]
    2
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import warnings
from typing import Any

import torch

from unison.core.atomic_io import atomic_write_bytes, fsync_directory
from unison.debug.timeline import span
from unison.errors import CorruptCheckpointError, UnreadableCheckpointsError

# The one atomic writer of the package, under the name this module has always exported.
write_atomically = atomic_write_bytes

MAGIC = b"UNISON-CHECKPOINT-1\n"
_DIGEST = 32


def dumps(payload: Any) -> bytes:
    """Serialise ``payload`` (tensors, numbers, strings, lists, dicts) with a checksum."""
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    body = buffer.getvalue()
    return MAGIC + hashlib.sha256(body).digest() + body


def loads(data: bytes, where: str = "checkpoint") -> Any:
    """Verify and deserialise bytes written by :func:`dumps` (raises :class:`CorruptCheckpointError`)."""
    head = len(MAGIC) + _DIGEST
    if len(data) < head or not data.startswith(MAGIC):
        raise CorruptCheckpointError(f"{where} is not a complete unison checkpoint ({len(data)} bytes).")
    digest, body = data[len(MAGIC) : head], data[head:]
    if hashlib.sha256(body).digest() != digest:
        raise CorruptCheckpointError(f"{where} is damaged: its checksum does not match its contents.")
    try:
        return torch.load(io.BytesIO(body), map_location="cpu", weights_only=True)
    except Exception as exc:  # a verified file that torch cannot read: a different format
        raise CorruptCheckpointError(f"{where} cannot be read: {exc}") from exc


class BackupFiles:
    """Numbered checkpoints ``<prefix>-NNNNNN.unison`` in one directory, newest ``max_to_keep`` kept.

    Args:
        directory: where the checkpoints live (created on the first save).
        prefix: the file name prefix.
        max_to_keep: how many complete checkpoints to keep (>= 2 keeps a fallback).
    """

    def __init__(self, directory: str | os.PathLike[str], prefix: str = "ckpt", max_to_keep: int = 2) -> None:
        self.directory = os.fspath(directory)
        if not self.directory:
            raise ValueError("The checkpoint directory must be a non-empty path. Received: directory=''")
        from unison.train.directories import check_checkpoint_dir

        # now, not at the first backup (which may be the one taken at a preemption's SIGTERM);
        # BackupAndRestore makes these in its constructor
        check_checkpoint_dir(self.directory, "BackupAndRestore", "backup_dir")
        if not re.match(r"^[\w.-]+$", prefix):
            raise ValueError(f"prefix must be a plain file name prefix. Received: prefix={prefix!r}")
        if isinstance(max_to_keep, bool) or not isinstance(max_to_keep, int) or max_to_keep < 1:
            raise ValueError(f"max_to_keep must be an integer >= 1. Received: max_to_keep={max_to_keep!r}")
        self.prefix = prefix
        self.max_to_keep = max_to_keep
        self._pattern = re.compile(rf"^{re.escape(prefix)}-(\d+)\.unison$")
        self.damaged: list[tuple[str, str]] = []  # (path, reason) found by the last restore_latest

    def checkpoints(self) -> list[str]:
        """Complete checkpoint files, oldest first (temporary files are never listed)."""
        if not os.path.isdir(self.directory):
            return []
        numbered = []
        for name in os.listdir(self.directory):
            m = self._pattern.match(name)
            if m:
                numbered.append((int(m.group(1)), os.path.join(self.directory, name)))
        return [path for _, path in sorted(numbered)]

    def _number(self, path: str) -> int:
        m = self._pattern.match(os.path.basename(path))
        return int(m.group(1)) if m else 0

    def save(self, payload: Any) -> str:
        """Write ``payload`` as the next checkpoint; then drop the ones beyond ``max_to_keep``."""
        existing = self.checkpoints()
        number = self._number(existing[-1]) + 1 if existing else 1
        path = os.path.join(self.directory, f"{self.prefix}-{number:06d}.unison")
        self._remove_stale_temporaries()
        with span("checkpoint", "save"):
            write_atomically(path, dumps(payload))
        for old in self.checkpoints()[: -self.max_to_keep]:
            os.remove(old)
        return path

    def _remove_stale_temporaries(self) -> None:
        # Left by a writer that was killed mid-write; only the chief writes, so none is live.
        if os.path.isdir(self.directory):
            for name in os.listdir(self.directory):
                if name.startswith(".tmp-"):
                    try:
                        os.remove(os.path.join(self.directory, name))
                    except OSError:
                        pass

    def restore_latest(self) -> Any:
        """The newest readable checkpoint's payload, or ``None`` if there is no checkpoint.

        A damaged newest checkpoint is skipped with a warning naming it, and the previous one is
        read instead; the damaged files are listed in :attr:`damaged` (and left where they are).

        Raises:
            UnreadableCheckpointsError: there are checkpoints but none can be read; the message
                names every file and why it failed.
        """
        self.damaged = []
        candidates = list(reversed(self.checkpoints()))
        for i, path in enumerate(candidates):
            try:
                with open(path, "rb") as fh:
                    return loads(fh.read(), where=path)
            except (CorruptCheckpointError, OSError) as exc:
                self.damaged.append((path, str(exc)))
                if i + 1 < len(candidates):
                    warnings.warn(
                        f"Skipping checkpoint {path}: {exc} Falling back to the previous one.",
                        RuntimeWarning,
                        stacklevel=2,
                    )
        if self.damaged:
            raise UnreadableCheckpointsError(self.directory, self.damaged)
        return None

    def set_aside(self, paths: list[str]) -> list[str]:
        """Rename damaged checkpoints to ``<name>.damaged``: kept for the user, never rotated out.

        Numbered files are what :meth:`save` rotates and :meth:`delete_all` removes; a damaged
        one renamed out of that pattern stays until the user deletes it.
        """
        kept = []
        for path in paths:
            target = path + ".damaged"
            os.replace(path, target)
            kept.append(target)
        fsync_directory(self.directory)
        return kept

    def delete_all(self) -> None:
        """Remove every checkpoint (and the directory, if nothing else is in it)."""
        for path in self.checkpoints():
            os.remove(path)
        self._remove_stale_temporaries()
        if os.path.isdir(self.directory) and not os.listdir(self.directory):
            shutil.rmtree(self.directory, ignore_errors=True)
