"""``BackupAndRestore``: survive an interrupted ``fit`` (Keras's ``keras.callbacks.BackupAndRestore``)."""

from __future__ import annotations

import os
import warnings
from typing import Any

from unison.keras.callbacks._common import is_chief, print_msg
from unison.keras.callbacks.callback import Callback, Logs
from unison.train.files import BackupFiles as CheckpointManager  # the callback's old name for it
from unison.train.files import UnreadableCheckpointsError

_FORMAT = "unison.backup/1"
_ON_UNREADABLE = ("raise", "restart")


class BackupAndRestore(Callback):
    """Back up the training state regularly; a restarted ``fit`` resumes where the backup left off.

    At the start of ``fit`` the newest backup in ``backup_dir`` (if any) is restored on every
    replica: weights, optimizer state, the shuffling seed, the RNG state, and the position in
    the data, so training continues at the exact epoch and step with the same data order as an
    uninterrupted run (for arrays, tensors and map-style datasets; an iterable is resumed by
    skipping the batches already done). At the end of a ``fit`` that completes, the backups are
    deleted (``delete_checkpoint=True``); a ``fit`` that dies keeps them for the next attempt.

    Contract in multi-replica training: every replica runs the callback; only the chief writes,
    atomically (temporary file, fsync, rename), keeping the previous backup until the new one is
    complete; the chief reads the newest complete backup (falling back to the previous one, with
    a warning, if the newest is damaged) and sends it to every replica, so all resume from the
    same state even without a shared file system. When no backup can be read, ``fit`` stops
    with an error naming every file and why it failed, and leaves them in place (unless
    ``on_unreadable_backup="restart"``). Damaged backups are never deleted: a damaged one
    skipped on the way to an older one, or set aside by a restart, is renamed
    ``<name>.damaged`` and kept. A backup records nothing that depends on the
    number of replicas: one written by 2 workers restores on 1 or 3.

    Args:
        backup_dir: the directory of the backups (give each training job its own).
        save_freq: ``"epoch"`` (back up at the end of every epoch) or an integer N (back up
            every N training batches).
        delete_checkpoint: delete the backups when ``fit`` completes.
        save_before_preemption: also back up when the job is preempted (TF's meaning): a
            ``SIGTERM`` to any worker makes every worker back up after the same batch and exit
            with code 42 (a restart under ``unison launch --max-restarts`` resumes from that
            batch, exactly). One 8-byte all-reduce per batch decides it.
        on_unreadable_backup: what to do when backups exist but none can be read: ``"raise"``
            (default) stops ``fit`` with an error naming each file and why; ``"restart"``
            renames them ``<name>.damaged`` (kept, never deleted), warns, and trains from
            epoch 0.

    Example::

        model.fit(x, y, epochs=10,
                  callbacks=[keras.callbacks.BackupAndRestore("/shared/job-42/backup", save_freq=50)])
    """

    def __init__(
        self,
        backup_dir: str | os.PathLike[str],
        save_freq: str | int = "epoch",
        delete_checkpoint: bool = True,
        save_before_preemption: bool = False,
        on_unreadable_backup: str = "raise",
    ) -> None:
        super().__init__()
        if not backup_dir:
            raise ValueError(
                "BackupAndRestore: backup_dir must be a directory path, e.g. '/tmp/backup'. Received: backup_dir=''"
            )
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq <= 0):
            raise ValueError(
                "BackupAndRestore: save_freq must be 'epoch' (back up at the end of every epoch) or "
                f"a positive integer (back up every that many batches). Received: save_freq={save_freq!r}"
            )
        if not isinstance(save_before_preemption, bool):
            raise ValueError(
                "BackupAndRestore: save_before_preemption must be True or False. "
                f"Received: save_before_preemption={save_before_preemption!r}"
            )
        self.save_before_preemption = save_before_preemption
        self._watcher: Any = None
        if on_unreadable_backup not in _ON_UNREADABLE:
            raise ValueError(
                "BackupAndRestore: on_unreadable_backup must be 'raise' (stop when no backup can be "
                "read) or 'restart' (keep the damaged files aside and train from epoch 0). "
                f"Received: on_unreadable_backup={on_unreadable_backup!r}"
            )
        self.on_unreadable_backup = on_unreadable_backup
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.delete_checkpoint = delete_checkpoint
        self._manager = CheckpointManager(self.backup_dir, prefix="backup", max_to_keep=2)
        self._every = None if save_freq == "epoch" else int(save_freq)
        self._epoch = 0
        self._batches = 0
        self.restored_from: tuple[int, int] | None = None  # (epoch, step) of the restored backup
        self.saved_at: tuple[int, int] | None = None  # (epoch, step) of a backup made on preemption

    def _communicator(self) -> Any:
        if getattr(self.model, "fit_state_dict", None) is None:
            raise RuntimeError("BackupAndRestore works inside model.fit(); pass it in callbacks=[...].")
        return self.model.distribute_strategy.extended.communicator

    # --- restore ------------------------------------------------------------------------------
    def on_train_begin(self, logs: Logs | None = None) -> None:
        comm = self._communicator()
        if self.save_before_preemption and self._watcher is None:
            from unison.distribute.preemption import PreemptionWatcher, TerminationConfig

            self._watcher = PreemptionWatcher(TerminationConfig())
        chief = comm.rank == 0
        payload = self._read_backup() if chief else None
        if comm.is_distributed:
            payload = comm.broadcast_object(payload, name="backup_and_restore.restore")
        self._batches = 0
        self.restored_from = None
        if payload is None:
            return
        if isinstance(payload, dict) and "unreadable" in payload:
            # Raised on every replica (the chief read the files), so none waits for the others.
            raise UnreadableCheckpointsError(
                payload["unreadable"][0],
                payload["unreadable"][1],
                fix="Fix: restore the backups from a copy, or pass BackupAndRestore(..., "
                "on_unreadable_backup='restart') to keep them aside and train from epoch 0.",
            )
        if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
            raise ValueError(
                f"BackupAndRestore: {self.backup_dir!r} holds a backup this version cannot "
                "read. Delete the directory to start training afresh."
            )
        self._restore(payload)
        self.restored_from = (int(payload["epoch"]), int(payload["step"]))
        if self.params.get("verbose", 0):
            print_msg(
                self.model,
                f"BackupAndRestore: resuming from epoch {payload['epoch'] + 1}, "
                f"step {payload['step']} (backup in {self.backup_dir}).",
            )

    def _read_backup(self) -> Any:
        """The newest readable backup (chief only); damaged ones are kept aside, never deleted."""
        try:
            payload = self._manager.restore_latest()
        except UnreadableCheckpointsError as exc:
            if self.on_unreadable_backup == "raise":
                return {"unreadable": (exc.directory, exc.failures)}
            kept = self._manager.set_aside([path for path, _ in exc.failures])
            warnings.warn(
                f"BackupAndRestore: no backup in {self.backup_dir!r} can be read; training starts "
                f"again from epoch 0 (on_unreadable_backup='restart'). The damaged files are kept "
                f"as: {', '.join(kept)}.",
                RuntimeWarning,
                stacklevel=2,
            )
            return None
        # Older backups after a damaged newest one would be rotated out by the next saves:
        # move the damaged ones out of the numbering so they outlive this fit.
        self._manager.set_aside([path for path, _ in self._manager.damaged])
        return payload

    def _restore(self, payload: dict[str, Any]) -> None:
        try:
            # A sharded model (keras.distribution.ModelParallel) keeps its shard of the whole state.
            self.model.load_fit_state_dict(payload, int(payload["epoch"]), int(payload["step"]))
        except (RuntimeError, ValueError, KeyError) as exc:
            if "inside model.fit()" in str(exc):
                raise
            raise ValueError(
                f"BackupAndRestore: the backup in {self.backup_dir!r} does not fit this model or "
                f"optimizer ({str(exc).splitlines()[0]}). It was written by a different program; "
                "delete the directory to start training afresh."
            ) from exc

    # --- back up ------------------------------------------------------------------------------
    def on_epoch_begin(self, epoch: int, logs: Logs | None = None) -> None:
        self._epoch = epoch

    def on_train_batch_end(self, batch: int, logs: Logs | None = None) -> None:
        if self._watcher is not None and self._watcher.agreed():
            self._save_and_exit(self._epoch, batch + 1)
        if self._every is None:
            return
        self._batches += 1
        if self._batches >= self._every:
            self._batches = 0
            self._backup(self._epoch, batch + 1)

    def on_epoch_end(self, epoch: int, logs: Logs | None = None) -> None:
        if self._every is None:
            self._backup(epoch + 1, 0)

    def _backup(self, epoch: int, step: int) -> None:
        """Write the state that resumes at ``step`` batches into ``epoch`` (collective, chief writes)."""
        state = self.model.fit_state_dict(step)  # every replica: metric sums and shards are collectives
        if is_chief(self.model):
            self._manager.save({"format": _FORMAT, "epoch": epoch, "step": step, **state})

    def _save_and_exit(self, epoch: int, step: int) -> None:
        """A worker was preempted: back up after this batch on every worker, then exit (code 42)."""
        from unison.distribute.preemption import barrier, exit_for_restart

        self._backup(epoch, step)
        barrier("backup_and_restore.preempted")  # the chief has written before anyone exits
        self.saved_at = (epoch, step)
        self._stop_watching()
        exit_for_restart()

    def _stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def on_train_end(self, logs: Logs | None = None) -> None:
        self._stop_watching()
        if self.delete_checkpoint and is_chief(self.model):
            self._manager.delete_all()
