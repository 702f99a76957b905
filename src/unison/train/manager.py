"""``tf.train.CheckpointManager``: numbered checkpoints in one directory, the newest kept.

Example:
    >>> import tempfile, torch, unison as tf
    >>> ckpt = tf.train.Checkpoint(model=torch.nn.Linear(2, 1))
    >>> manager = tf.train.CheckpointManager(ckpt, tempfile.mkdtemp(), max_to_keep=2)
    >>> paths = [manager.save() for _ in range(3)]
    >>> [p.rsplit("/", 1)[1] for p in manager.checkpoints]
    ['ckpt-2', 'ckpt-3']
    >>> manager.latest_checkpoint == paths[-1]
    True
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from unison.train.checkpoint import (
    SUFFIX,
    Checkpoint,
    _is_chief,
    checkpoint_state,
    write_checkpoint_state,
)
from unison.train.sharded_files import shard_files


class CheckpointManager:
    """Save a :class:`Checkpoint` as ``<directory>/<checkpoint_name>-N``, keeping the newest ``max_to_keep``.

    Args:
        checkpoint: the ``tf.train.Checkpoint`` to save and restore.
        directory: where the files and the ``checkpoint`` state file live (created on save).
        max_to_keep: how many to keep (``None`` keeps all).
        keep_checkpoint_every_n_hours: additionally keep one checkpoint per this many hours.
        checkpoint_name: the file name prefix (TF's default ``"ckpt"``).
        step_counter, checkpoint_interval: save only every ``checkpoint_interval`` steps of
            ``step_counter`` (a variable), as in TF.
        init_fn: called by ``restore_or_initialize`` when there is no checkpoint.
    """

    def __init__(
        self,
        checkpoint: Checkpoint,
        directory: str | os.PathLike[str],
        max_to_keep: int | None,
        keep_checkpoint_every_n_hours: float | None = None,
        checkpoint_name: str = "ckpt",
        step_counter: Any = None,
        checkpoint_interval: int | None = None,
        init_fn: Callable[[], Any] | None = None,
    ) -> None:
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager manages a tf.train.Checkpoint. Received: {type(checkpoint).__name__}")
        if max_to_keep is not None and (
            isinstance(max_to_keep, bool) or not isinstance(max_to_keep, int) or max_to_keep < 1
        ):
            raise ValueError(f"max_to_keep must be an integer >= 1 or None. Received: max_to_keep={max_to_keep!r}")
        if not checkpoint_name or os.sep in checkpoint_name:
            raise ValueError(f"checkpoint_name must be a plain file name prefix. Received: {checkpoint_name!r}")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("checkpoint_interval needs step_counter (the variable that counts steps).")
        self._checkpoint = checkpoint
        from unison.train.directories import check_checkpoint_dir

        self.directory = check_checkpoint_dir(directory, "tf.train.CheckpointManager", "directory")
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self.directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._init_fn = init_fn
        self._last_step: int | None = None
        self._last_kept_time = time.time()
        recorded = checkpoint_state(self.directory) or []
        self._paths = [p for p in recorded if os.path.exists(p + SUFFIX)]

    @property
    def checkpoints(self) -> list[str]:
        """The managed checkpoints, oldest first."""
        return list(self._paths)

    @property
    def latest_checkpoint(self) -> str | None:
        """The newest managed checkpoint (for ``checkpoint.restore``), or None."""
        return self._paths[-1] if self._paths else None

    @property
    def checkpoint(self) -> Checkpoint:
        return self._checkpoint

    def save(
        self, checkpoint_number: int | None = None, check_interval: bool = True, options: Any = None
    ) -> str | None:
        """Write the next checkpoint; drop the oldest beyond ``max_to_keep``. Returns its path.

        With ``checkpoint_interval``, returns ``None`` (and writes nothing) until enough steps passed.
        """
        if self._interval is not None and check_interval:
            step = int(self._step_counter)
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        # In TF every worker writes its files into its manager's directory; here only the chief
        # writes, but the directory exists on every worker, so a program that removes a non-chief
        # worker's temporary checkpoint directory after saving (the multi-worker custom-loop
        # tutorial does) finds it.
        os.makedirs(self.directory, exist_ok=True)
        self._checkpoint.save_counter.assign_add(1)
        number = int(self._checkpoint.save_counter) if checkpoint_number is None else int(checkpoint_number)
        path = self._checkpoint.write(f"{self._prefix}-{number}", options)
        self._paths = [p for p in self._paths if p != path] + [path]
        if _is_chief():
            self._sweep()
            write_checkpoint_state(self.directory, path, self._paths)
        return path

    def _sweep(self) -> None:
        if self._max_to_keep is None:
            return
        while len(self._paths) > self._max_to_keep:
            old = self._paths.pop(0)
            if self._keep_hours is not None and time.time() - self._last_kept_time >= self._keep_hours * 3600:
                self._last_kept_time = time.time()
                continue  # kept on disk for good, no longer managed (TF's behaviour)
            for file in [old + SUFFIX, *shard_files(old)]:
                try:
                    os.remove(file)
                except FileNotFoundError:
                    pass

    def restore_or_initialize(self) -> str | None:
        """Restore the latest checkpoint, or call ``init_fn`` when there is none."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None
