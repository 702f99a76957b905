"""``tf.distribute.experimental.PreemptionCheckpointHandler``: save at the same step on a preemption.

TF's semantics: when the handler is made it restores the latest checkpoint of its directory
(and with it :attr:`PreemptionCheckpointHandler.total_run_calls`); then it watches for a
termination notice, ``SIGTERM`` by default or ``TerminationConfig.termination_watcher_fn``.
A notice to *any* worker makes *every* worker save a checkpoint after the same
``run(distributed_train_function)`` call and exit with ``TerminationConfig.exit_fn`` (by
default ``sys.exit(42)``, TF's restartable code), so a restarted job (``unison launch
--max-restarts``) resumes at exactly that step.

How the workers agree: after each ``run`` call every worker adds its vote (1 once it has a
notice whose grace period is used up) to one all-reduce of a single integer (MAX). The same
collective, at the same call, gives every worker the same answer, so they save together:
no worker can be a step ahead, because each ``run`` call is a synchronous training step. The
vote costs one 8-byte all-reduce per step (tens of microseconds over shared memory).

Example:
    >>> import tempfile, torch, unison as tf
    >>> model = torch.nn.Linear(2, 1)
    >>> ckpt = tf.train.Checkpoint(model=model)
    >>> handler = tf.distribute.experimental.PreemptionCheckpointHandler(None, ckpt, tempfile.mkdtemp())
    >>> handler.run(lambda: 1.0) + handler.run(lambda: 2.0)
    3.0
    >>> handler.total_run_calls
    2
    >>> handler.close()
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import torch

RESTARTABLE_EXIT_CODE = 42  # TF's exit code after a preemption checkpoint (a restart is expected)
_COUNTER = "checkpointed_runs"  # the name TF gives the run counter in the checkpoint


class TerminationConfig:
    """How a :class:`PreemptionCheckpointHandler` learns of, waits for and ends a termination (TF's).

    Args:
        termination_watcher_fn: called about once a second in a thread; returns True when a
            termination notice is available. Default: the process receives ``SIGTERM``.
        exit_fn: called after the checkpoint is saved. Default: ``sys.exit(42)``.
        grace_period: seconds between the notice and the termination; training goes on until
            about then (less twice the last save's duration) before saving. Default 0.
        save_fn: called instead of the handler's ``CheckpointManager.save`` to save.
    """

    def __init__(
        self,
        termination_watcher_fn: Callable[[], bool] | None = None,
        exit_fn: Callable[[], Any] | None = None,
        grace_period: float | None = None,
        save_fn: Callable[..., Any] | None = None,
    ) -> None:
        for name, fn in (
            ("termination_watcher_fn", termination_watcher_fn),
            ("exit_fn", exit_fn),
            ("save_fn", save_fn),
        ):
            if fn is not None and not callable(fn):
                raise TypeError(f"TerminationConfig: {name} must be a function. Received: {fn!r:.80}")
        if grace_period is not None and (isinstance(grace_period, bool) or float(grace_period) < 0):
            raise ValueError(f"TerminationConfig: grace_period must be >= 0 seconds. Received: {grace_period!r}")
        self.termination_watcher_fn = termination_watcher_fn
        self.exit_fn = exit_fn
        self.grace_period = float(grace_period or 0.0)
        self.save_fn = save_fn


def barrier(name: str) -> None:
    """Wait for every worker of the job (nothing to wait for in a single process)."""
    from unison.comm.communicator import joined

    comm = joined()
    if comm is not None and comm.is_distributed:
        comm.barrier(name=name)


def exit_for_restart() -> None:
    """TF's default ``exit_fn``: exit with code 42, the code a launcher restarts on."""
    sys.exit(RESTARTABLE_EXIT_CODE)


class PreemptionCheckpointHandler:
    """Save a checkpoint on every worker at the same step when any of them is preempted (TF's).

    Args:
        cluster_resolver: the job's cluster resolver (``strategy.cluster_resolver``); ``None``
            for a single process. The workers are the strategy's replicas.
        checkpoint_or_checkpoint_manager: a ``tf.train.Checkpoint`` (then ``checkpoint_dir`` is
            required) or a ``tf.train.CheckpointManager``. The handler adds a variable that
            counts the ``run`` calls to the checkpoint.
        checkpoint_dir: where the handler keeps its checkpoints (give it a directory of its own).
        termination_config: a :class:`TerminationConfig` (default: ``SIGTERM``, exit code 42).

    Every worker builds the handler and calls ``run`` the same number of times (as each calls
    the distributed training step). The handler restores the latest checkpoint when it is made.
    """

    def __init__(
        self,
        cluster_resolver: Any,
        checkpoint_or_checkpoint_manager: Any,
        checkpoint_dir: str | os.PathLike[str] | None = None,
        termination_config: TerminationConfig | None = None,
    ) -> None:
        from unison.core.variables import Variable
        from unison.train import Checkpoint, CheckpointManager

        config = termination_config or TerminationConfig()
        if not isinstance(config, TerminationConfig):
            raise TypeError(
                "PreemptionCheckpointHandler: termination_config must be a "
                f"tf.distribute.experimental.TerminationConfig. Received: {type(config).__name__}"
            )
        target = checkpoint_or_checkpoint_manager
        if isinstance(target, CheckpointManager):
            checkpoint, manager = target.checkpoint, target
        elif isinstance(target, Checkpoint):
            if checkpoint_dir is None:
                raise ValueError(
                    "PreemptionCheckpointHandler: checkpoint_dir is required with a tf.train.Checkpoint "
                    "(where the preemption checkpoints go). Pass checkpoint_dir=..., or a CheckpointManager."
                )
            checkpoint, manager = target, None
        else:
            raise TypeError(
                "PreemptionCheckpointHandler expects a tf.train.Checkpoint or a tf.train.CheckpointManager. "
                f"Received: {type(target).__name__}"
            )
        if checkpoint_dir is not None:
            from unison.train.directories import check_checkpoint_dir

            # at construction: a bad directory found at the SIGTERM would lose the preemption save
            checkpoint_dir = check_checkpoint_dir(checkpoint_dir, "PreemptionCheckpointHandler", "checkpoint_dir")
        self._cluster_resolver = cluster_resolver
        self._config = config
        self._exit_fn = config.exit_fn or exit_for_restart
        self._counter = Variable(0, trainable=False, dtype=torch.int64, name="checkpointed_runs")
        if _COUNTER not in checkpoint._objects:
            setattr(checkpoint, _COUNTER, self._counter)
        else:
            self._counter = checkpoint._objects[_COUNTER]
        self._checkpoint = checkpoint
        self._manager = manager or CheckpointManager(checkpoint, os.fspath(checkpoint_dir or ""), max_to_keep=1)
        self._manager.restore_or_initialize()
        self._runs = int(self._counter)
        self.restored_from: int | None = self._runs if self._manager.latest_checkpoint is not None else None
        self.saved_at: int | None = None  # the run call after which the preemption checkpoint was saved
        self._watcher = PreemptionWatcher(config)

    # --- TF's API ----------------------------------------------------------------------------
    @property
    def total_run_calls(self) -> int:
        """The ``run`` calls made so far, counted across restarts (restored from the checkpoint)."""
        return self._runs

    def run(self, distributed_train_function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run one training step; afterwards save and exit if any worker was preempted.

        ``distributed_train_function`` must be one synchronous step (it calls ``strategy.run``);
        its return value is returned.
        """
        result = distributed_train_function(*args, **kwargs)
        self._runs += 1
        self._save_and_exit_if_agreed()
        return result

    def save_checkpoint_if_preempted(self, *args: Any, **kwargs: Any) -> None:
        """Save and exit now if any worker was preempted (call it once per step on every worker)."""
        self._save_and_exit_if_agreed()

    @contextlib.contextmanager
    def watch_preemption_scope(self) -> Iterator[None]:
        """TF's scope around a training loop. With synchronous collectives (MultiWorkerMirrored)
        the handler acts in ``run``/``save_checkpoint_if_preempted``; the scope only makes sure
        the watcher stops when the loop ends."""
        try:
            yield
        finally:
            self.close()

    def _save_and_exit_if_agreed(self) -> None:
        if not self._watcher.agreed():
            return
        started = time.monotonic()
        self._counter.assign(self._runs)
        if self._config.save_fn is not None:
            self._config.save_fn()
        else:
            self._manager.save(checkpoint_number=self._runs)
        barrier("preemption.saved")  # nobody exits (and gets the job torn down) before the chief wrote
        self._watcher.last_save_s = time.monotonic() - started
        self.saved_at = self._runs
        self.close()
        self._exit_fn()

    def close(self) -> None:
        """Stop watching (restore the previous SIGTERM handler)."""
        self._watcher.close()


class PreemptionWatcher:
    """This worker's termination notice, and the job's agreement to save (one all-reduce).

    Args:
        config: what the notice is (``SIGTERM`` or ``termination_watcher_fn``) and the grace period.
    """

    def __init__(self, config: TerminationConfig) -> None:
        self._config = config
        self.notice_at: float | None = None  # monotonic time of this worker's termination notice
        self.last_save_s = 0.0  # how long the last save took (the grace period keeps twice that)
        self._stop = threading.Event()
        self._previous_handler: Any = None
        if config.termination_watcher_fn is not None:
            threading.Thread(target=self._poll, name="PreemptionWatcher", daemon=True).start()
        elif threading.current_thread() is threading.main_thread():
            self._previous_handler = signal.signal(signal.SIGTERM, self._on_sigterm)
        else:
            raise RuntimeError(
                "Watching for preemption uses SIGTERM, which only the main thread can handle. Start "
                "training in the main thread, or pass TerminationConfig(termination_watcher_fn=...)."
            )

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        if self.notice_at is None:
            self.notice_at = time.monotonic()

    def _poll(self) -> None:
        while not self._stop.wait(1.0):
            if self._poll_once():
                return

    def _poll_once(self) -> bool:
        """Ask ``termination_watcher_fn`` once; a notice is remembered (True)."""
        fn = self._config.termination_watcher_fn
        if fn is not None and self.notice_at is None and fn():
            self.notice_at = time.monotonic()
        return self.notice_at is not None

    def vote(self) -> int:
        """1 once this worker has a notice and (with a grace period) no time left to train."""
        if self.notice_at is None:
            return 0
        margin = max(2 * self.last_save_s, 1.0) if self._config.grace_period else 0.0
        return int(time.monotonic() - self.notice_at >= self._config.grace_period - margin)

    def agreed(self) -> bool:
        """Whether any worker voted to save now (one MAX all-reduce: the same answer everywhere)."""
        from unison.comm.communicator import joined

        vote = self.vote()
        comm = joined()
        if comm is None or not comm.is_distributed:
            return bool(vote)
        flag = torch.tensor([vote], dtype=torch.int64)
        return bool(comm.all_reduce(flag, op="max", name="preemption.vote").item())

    def close(self) -> None:
        """Stop watching; the previous SIGTERM handler is back."""
        self._stop.set()
        if self._previous_handler is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._previous_handler)
            self._previous_handler = None


__all__ = ["RESTARTABLE_EXIT_CODE", "PreemptionCheckpointHandler", "PreemptionWatcher", "TerminationConfig"]
