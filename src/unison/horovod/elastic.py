"""Horovod's elastic API (``hvd.elastic``): in place under ``--min-workers``, or by restarting under ``--max-restarts``.

Horovod Elastic keeps a *state* (model, optimizer, counters) that is committed during training;
when a process fails, the survivors roll back to the last commit, re-form the job and go on;
``hvd.elastic.run`` wraps the training function to do that. unison does it two ways:

- **In place** (``unison launch --min-workers A --max-workers B``, the elastic agent of
  :mod:`unison.launch.elastic_agent`): no process restarts. A failed collective makes ``run``
  restore the last commit from memory, re-form the process group at the new size in the same
  process (:class:`unison.comm.elastic.ElasticGroup`), run the reset callbacks, ``state.sync()``
  and call the function again. Workers added by the agent are noticed at ``state.commit()`` /
  ``state.check_host_updates()``, which raise :class:`HostsUpdatedInterrupt` on every worker.
- **By restarting** (``unison launch --max-restarts K``, torchrun's agent): every process
  restarts when one fails. ``state.commit()`` then also writes the state to
  ``$UNISON_ELASTIC_DIR`` (default: a folder of the system's temporary directory named after the
  run) on rank 0, atomically, and ``run`` loads it after the restart, calls the reset callbacks,
  broadcasts rank 0's state and calls the function.

So ``for state.epoch in range(state.epoch, epochs)`` loops resume where the last commit was,
as under ``horovodrun --min-np``.

Example:
    >>> import torch, unison as hvd
    >>> hvd.init()
    >>> model = torch.nn.Linear(2, 1)
    >>> state = hvd.elastic.TorchState(model, torch.optim.SGD(model.parameters(), lr=0.1), epoch=0)
    >>> @hvd.elastic.run
    ... def train(state):
    ...     for state.epoch in range(state.epoch, 2):
    ...         state.commit()
    ...     return state.epoch
    >>> train(state)
    1
"""

from __future__ import annotations

import copy
import functools
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch

from unison.comm.elastic import current as _elastic_group
from unison.errors import CollectiveTimeoutError, ElasticMembershipError, HostsUpdatedInterrupt, UnisonError
from unison.horovod.basics import _comm, broadcast_optimizer_state, broadcast_parameters
from unison.horovod.collectives import broadcast_object
from unison.horovod.tape import broadcast_variables
from unison.keras.callbacks import Callback
from unison.optim.distributed import discard_in_flight

# Horovod's name for "a collective failed": unison's collectives raise UnisonError (its subclass
# CollectiveTimeoutError when a process stopped answering), so `except HorovodInternalError` works.
HorovodInternalError = UnisonError


def _restarts() -> tuple[int, int]:
    """(restarts allowed, restarts so far) as torchrun's agent tells its workers."""

    def read(key: str) -> int:
        try:
            return int(os.environ.get(key, "0"))
        except ValueError:
            return 0

    return read("TORCHELASTIC_MAX_RESTARTS"), read("TORCHELASTIC_RESTART_COUNT")


def _commit_file(name: str) -> Path | None:
    """Where rank 0 keeps committed state across restarts; None when the job cannot restart."""
    if _elastic_group() is not None:
        return None  # in place (`--min-workers`): the commit stays in memory, nothing restarts
    folder = os.environ.get("UNISON_ELASTIC_DIR")
    if not folder:
        if _restarts()[0] <= 0:
            return None
        run_id = os.environ.get("TORCHELASTIC_RUN_ID", "run")
        folder = os.path.join(tempfile.gettempdir(), f"unison-elastic-{os.getuid()}-{run_id}")
    return Path(folder) / f"{name}.pt"


def _check_private(path: Path) -> None:
    """Refuse a commit file (or its folder) that another user owns or can write.

    The commit is unpickled on restart, and its default folder lies in the shared temporary
    directory under a predictable name: another local user could have created it first and
    left a file there to be unpickled by this job.
    """
    for item in (path.parent, path):
        if not item.exists():
            continue
        info = item.stat()
        if info.st_uid != os.getuid() or info.st_mode & 0o022:
            raise UnisonError(
                f"hvd.elastic: {item} is owned by uid {info.st_uid} with mode {oct(info.st_mode & 0o777)}; "
                f"the job's commits must be this user's (uid {os.getuid()}) and writable by nobody else, "
                f"because a restart unpickles them. Fix: remove it, or set UNISON_ELASTIC_DIR to a folder "
                f"of your own (mode 700)."
            )


class State:
    """Training state that survives a failure: ``commit``, ``restore``, ``sync`` (Horovod's ``State``).

    Subclasses implement :meth:`save` / :meth:`restore` (the in-memory copy), :meth:`sync` (rank 0's
    state to everyone) and :meth:`state_dict` / :meth:`load_state_dict` (the committed file).
    """

    def __init__(self, name: str = "state") -> None:
        self._reset_callbacks: list[Callable[[], None]] = []
        self._file_name = name

    def register_reset_callbacks(self, callbacks: Iterable[Callable[[], None]]) -> None:
        """Functions called after the job re-forms (its size may differ): adjust the learning rate here."""
        for cb in callbacks:
            if not callable(cb):
                raise TypeError(f"register_reset_callbacks expects callables. Received: {cb!r}")
            self._reset_callbacks.append(cb)

    def on_reset(self) -> None:
        """Run the reset callbacks (``run`` does, after a restart)."""
        for cb in self._reset_callbacks:
            cb()

    def on_hosts_updated(self, timestamp: float, update_res: Any) -> None:
        """Horovod's host-change notification; torchrun restarts the job instead (no-op)."""

    def commit(self) -> None:
        """Save the state (a roll-back point) and, when the job can restart, write it to disk on rank 0."""
        self.save()
        path = _commit_file(self._file_name)
        if path is not None and _comm().rank == 0:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # this user only
            _check_private(path)  # a folder that existed before may be another user's
            tmp = path.with_suffix(".tmp")
            torch.save(self.state_dict(), tmp)
            os.replace(tmp, path)  # a restart never reads a half-written commit
        self.check_host_updates()

    def check_host_updates(self) -> None:
        """Raise :class:`HostsUpdatedInterrupt` on every worker when workers joined the elastic job.

        A collective (rank 0's view of the membership goes to everyone), so every worker calls it
        at the same point; ``commit()`` calls it. Outside ``unison launch --min-workers`` (and
        under ``--max-restarts``, where membership changes restart the job) it does nothing.
        """
        group = _elastic_group()
        if group is not None and group.hosts_updated():
            raise HostsUpdatedInterrupt(skip_sync=False)

    def resume(self) -> bool:
        """Load the last commit written before a restart (rank 0); True when there was one."""
        path = _commit_file(self._file_name)
        if path is None or _comm().rank != 0 or _restarts()[1] == 0 or not path.is_file():
            return False
        _check_private(path)  # written by this user's rank 0 (commit), so safe to unpickle
        self.load_state_dict(torch.load(path, weights_only=False))
        self.save()
        return True

    def save(self) -> None:
        raise NotImplementedError

    def restore(self) -> None:
        raise NotImplementedError

    def sync(self) -> None:
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def load_state_dict(self, state: dict[str, Any]) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        """Horovod's hook after a re-formed job; nothing to rebuild here (torchrun rebuilt the group)."""


class ObjectState(State):
    """Picklable attributes (``epoch=0, batch=0``) kept, restored and broadcast from rank 0.

    Example:
        >>> import unison as hvd
        >>> hvd.init(); s = hvd.elastic.ObjectState(epoch=3); s.epoch = 5; s.restore(); s.epoch
        3
    """

    def __init__(self, bcast_object: Callable[..., Any] | None = None, get_rank: Any = None, **kwargs: Any) -> None:
        super().__init__()
        self._bcast_object = bcast_object or broadcast_object
        self._saved_state = dict(kwargs)
        self._set_attrs()

    def _set_attrs(self) -> None:
        for name, value in self._saved_state.items():
            setattr(self, name, value)

    def save(self) -> None:
        self._saved_state = {name: copy.deepcopy(getattr(self, name)) for name in self._saved_state}

    def restore(self) -> None:
        self._set_attrs()

    def sync(self) -> None:
        if self._saved_state:
            self._saved_state = self._bcast_object(self._saved_state)
            self._set_attrs()

    def state_dict(self) -> dict[str, Any]:
        return {"objects": dict(self._saved_state)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._saved_state = dict(state["objects"])
        self._set_attrs()


class TorchState(ObjectState):
    """A torch model and optimizer plus picklable attributes (Horovod's ``hvd.elastic.TorchState``).

    Args:
        model: a ``torch.nn.Module`` (its ``state_dict`` is saved and broadcast).
        optimizer: a torch optimizer or ``hvd.DistributedOptimizer`` (its state likewise).
        **kwargs: other values to keep (``epoch=1, batch=0``), reachable as attributes.
    """

    def __init__(self, model: torch.nn.Module | None = None, optimizer: Any = None, **kwargs: Any) -> None:
        if model is not None and not isinstance(model, torch.nn.Module):
            raise TypeError(f"TorchState(model=...) expects a torch.nn.Module. Received: {type(model).__name__}")
        if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(
                f"TorchState(optimizer=...) expects a torch optimizer. Received: {type(optimizer).__name__}"
            )
        self.model = model
        self.optimizer = optimizer
        self._saved_model: dict[str, Any] | None = None
        self._saved_optimizer: dict[str, Any] | None = None
        super().__init__(**kwargs)
        self._save_handlers()

    def _save_handlers(self) -> None:
        if self.model is not None:
            self._saved_model = copy.deepcopy(self.model.state_dict())
        if self.optimizer is not None:
            self._saved_optimizer = copy.deepcopy(self.optimizer.state_dict())

    def save(self) -> None:
        self._save_handlers()
        super().save()

    def restore(self) -> None:
        if self.model is not None and self._saved_model is not None:
            self.model.load_state_dict(self._saved_model)
        if self.optimizer is not None and self._saved_optimizer is not None:
            self.optimizer.load_state_dict(self._saved_optimizer)
        super().restore()

    def sync(self) -> None:
        if self.model is not None:
            broadcast_parameters(self.model.state_dict(), root_rank=0)
        if self.optimizer is not None:
            broadcast_optimizer_state(self.optimizer, root_rank=0)
        super().sync()

    def state_dict(self) -> dict[str, Any]:
        out = super().state_dict()
        out.update(model=self._saved_model, optimizer=self._saved_optimizer)
        return out

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._saved_model, self._saved_optimizer = state.get("model"), state.get("optimizer")
        super().load_state_dict(state)
        self.restore()


class TensorFlowKerasState(ObjectState):
    """A Keras model (and its optimizer) plus attributes: Horovod's ``TensorFlowKerasState``/``KerasState``.

    Args:
        model: a ``keras.Model`` (unison's: a ``torch.nn.Module``).
        optimizer: its Keras optimizer; default ``model.optimizer``.
        backend: accepted for Horovod compatibility.
        **kwargs: other values to keep (``epoch=0, batch=0``).
    """

    def __init__(self, model: Any, optimizer: Any = None, backend: Any = None, **kwargs: Any) -> None:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"{type(self).__name__}(model=...) expects a Keras model. Received: {type(model).__name__}")
        self.model = model
        self._optimizer = optimizer
        self._saved_model: dict[str, Any] | None = None
        self._saved_optimizer: dict[str, Any] | None = None
        super().__init__(**kwargs)
        self._save_handlers()

    @property
    def optimizer(self) -> Any:
        return self._optimizer if self._optimizer is not None else getattr(self.model, "optimizer", None)

    def _torch_optimizer(self) -> torch.optim.Optimizer | None:
        built = getattr(self.optimizer, "torch_optimizer", None)
        return built if isinstance(built, torch.optim.Optimizer) else None

    def _save_handlers(self) -> None:
        if not any(torch.nn.parameter.is_lazy(p) for p in self.model.parameters()):
            self._saved_model = copy.deepcopy(self.model.state_dict())
        torch_opt = self._torch_optimizer()
        self._saved_optimizer = copy.deepcopy(torch_opt.state_dict()) if torch_opt is not None else None

    def save(self) -> None:
        self._save_handlers()
        super().save()

    def restore(self) -> None:
        if self._saved_model is not None:
            self.model.load_state_dict(self._saved_model)
        torch_opt = self._torch_optimizer()
        if torch_opt is not None and self._saved_optimizer is not None:
            torch_opt.load_state_dict(self._saved_optimizer)
        super().restore()

    def sync(self) -> None:
        weights = [*self.model.parameters(), *self.model.buffers()]
        if not any(torch.nn.parameter.is_lazy(p) for p in weights):
            broadcast_variables(weights, root_rank=0)
        torch_opt = self._torch_optimizer()
        if torch_opt is not None:
            broadcast_optimizer_state(torch_opt, root_rank=0)
        super().sync()

    def state_dict(self) -> dict[str, Any]:
        out = super().state_dict()
        out.update(model=self._saved_model, optimizer=self._saved_optimizer)
        return out

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._saved_model, self._saved_optimizer = state.get("model"), state.get("optimizer")
        super().load_state_dict(state)
        self.restore()


KerasState = TensorFlowKerasState


def run(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a training function ``func(state, ...)`` so that it survives membership changes.

    Under ``unison launch --min-workers A --max-workers B`` (Horovod's ``horovodrun --min-np``)
    the job re-forms **in place**: when a collective fails because a worker was lost
    (``HorovodInternalError``, i.e. unison's ``UnisonError``), the survivors roll ``state`` back to
    the last commit in memory, re-form the process group at the new size, run the reset
    callbacks, take rank 0's state (``state.sync()``) and call ``func(state, ...)`` again; when
    workers were added (``state.commit()`` raises ``HostsUpdatedInterrupt``) they do the same
    without the roll-back. No process restarts and nothing is read from disk.

    Under ``unison launch --max-restarts K`` (torchrun) every process restarts instead: rank 0
    loads the last commit from its file, the reset callbacks run, ``state.sync()`` and ``func``;
    a failed collective rolls back and re-raises so that torchrun restarts the job.
    """

    @functools.wraps(func)
    def wrapper(state: State, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(state, State):
            raise TypeError(
                f"hvd.elastic.run: the decorated function's first argument must be a hvd.elastic State "
                f"(TorchState, ObjectState, KerasState, ...). Received: {type(state).__name__}"
            )
        if _elastic_group() is not None:
            return _run_in_place(func, state, *args, **kwargs)
        if not state.resume():
            state.save()  # the starting point is the first roll-back point
        if _restarts()[1] > 0:
            state.on_reset()  # the job re-formed (perhaps with another size), as after Horovod's reset
        state.sync()
        try:
            return func(state, *args, **kwargs)
        except UnisonError:
            # roll back, and let this process fail so that `unison launch --max-restarts K`
            # restarts the job from the commit
            state.restore()
            raise

    return wrapper


def _run_in_place(func: Callable[..., Any], state: State, *args: Any, **kwargs: Any) -> Any:
    """``hvd.elastic.run`` under the elastic agent: roll back, re-form and go on in this process."""
    group = _elastic_group()
    assert group is not None
    state.save()  # the starting point is the first roll-back point
    skip_sync = False
    while True:
        failed = False
        try:
            if not skip_sync:
                state.sync()
            return func(state, *args, **kwargs)
        except ElasticMembershipError:
            raise  # too few workers, or this one was removed: nothing to re-form
        except HostsUpdatedInterrupt as exc:
            skip_sync = exc.skip_sync  # just committed: nothing to roll back
        except UnisonError as exc:
            if type(exc) not in (UnisonError, CollectiveTimeoutError):
                raise  # a program's error (non-finite gradients, different models): re-forming repeats it
            failed = True  # a collective failed: a worker was lost (or its connection broke)
        # Re-form outside the except clause: its traceback holds the old process group, which
        # must be freed (its sockets closed) so that a survivor still blocked in it fails at once.
        discard_in_flight()  # gradients launched in the old group never complete
        if failed:
            state.restore()  # the last commit, in memory
            skip_sync = False
        _reform(group.reform_after_failure if failed else group.reform_after_update)
        state.on_reset()


def _reform(first_try: Callable[[], None]) -> None:
    """Re-form the group; a member lost while it re-forms makes it wait for the next generation."""
    group = _elastic_group()
    assert group is not None
    attempt = first_try
    while True:
        try:
            attempt()
            return
        except ElasticMembershipError:
            raise
        except UnisonError:
            attempt = group.reform_after_failure


class CommitStateCallback(Callback):
    """Keras callback: ``state.commit()`` every ``batches_per_commit`` batches and at each epoch end."""

    def __init__(self, state: State, batches_per_commit: int = 1) -> None:
        super().__init__()
        if isinstance(batches_per_commit, bool) or not isinstance(batches_per_commit, int) or batches_per_commit < 1:
            raise ValueError(f"batches_per_commit must be an integer >= 1. Received: {batches_per_commit!r}")
        self.state = state
        self.batches_per_commit = batches_per_commit
        self.batches_remaining = batches_per_commit

    def needs_batch_logs(self) -> bool:
        return False

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        # Every fit (the first, and each re-entry after a re-form) counts from the same point on
        # every worker: a worker that joined counts from here too, so they all commit together.
        self.batches_remaining = self.batches_per_commit

    def on_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self.batches_remaining -= 1
        if self.batches_remaining <= 0:
            # reset before committing: commit() raises HostsUpdatedInterrupt when workers join,
            # and a count left at 0 would go negative and never commit again (the survivors then
            # skipped the commits, and their collectives, that a joined worker issued)
            self.batches_remaining = self.batches_per_commit
            self.state.commit()

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        self.batches_remaining = self.batches_per_commit
        self.state.commit()


class UpdateBatchStateCallback(Callback):
    """Keras callback: keep ``state.batch`` at the next batch to run (0 at each epoch start)."""

    def __init__(self, state: State) -> None:
        super().__init__()
        self.state = state

    def needs_batch_logs(self) -> bool:
        return False

    def on_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self.state.batch = batch + 1  # type: ignore[attr-defined]

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        self.state.batch = 0  # type: ignore[attr-defined]


class UpdateEpochStateCallback(Callback):
    """Keras callback: keep ``state.epoch`` counting across restarts (``fit(epochs=N - state.epoch)``)."""

    def __init__(self, state: State) -> None:
        super().__init__()
        self.state = state
        self.initial_epoch = 0

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self.initial_epoch = int(self.state.epoch)  # type: ignore[attr-defined]

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        self.state.epoch = self.initial_epoch + epoch + 1  # type: ignore[attr-defined]


__all__ = [
    "CommitStateCallback",
    "HorovodInternalError",
    "HostsUpdatedInterrupt",
    "KerasState",
    "ObjectState",
    "State",
    "TensorFlowKerasState",
    "TorchState",
    "UpdateBatchStateCallback",
    "UpdateEpochStateCallback",
    "run",
]
