"""ClusterCoordinator: schedule functions onto workers asynchronously (TF's coordinator API).

``schedule(fn, args)`` queues a function and returns a :class:`RemoteValue` at once; one thread
per worker takes the next queued function whenever its worker is free, so fast workers do more
steps. A function reaches each worker once (pickled with its closure, see ``codec``); each
``schedule`` then sends only its arguments. Failures, as TF promises and a little more:

- a worker that dies or is cut off: its in-flight function goes back to the front of the queue
  and runs on another worker (at-least-once), and the worker is polled until it answers again;
  a restarted worker gets the functions and per-worker datasets again and rejoins;
- no worker reachable for ``timeout_seconds``: ``join`` raises, naming them (never a hang);
- a parameter server that dies (or restarts, losing its variables): every ``schedule``, ``join``
  and ``fetch`` raises :class:`ParameterServerUnavailableError` naming it;
- a function that raises: the next ``schedule``/``join``/``done`` raises it with the worker's
  traceback and the still-queued functions are cancelled; then the coordinator can go on.

Example::

    coordinator = ClusterCoordinator(strategy)
    iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))
    for _ in range(steps):
        coordinator.schedule(step_fn, args=(iterator,))
    coordinator.join()                      # all ran; the coordinator's weights are refreshed
    print(coordinator.schedule(step_fn, args=(iterator,)).fetch())
"""

from __future__ import annotations

import collections
import itertools
import pickle
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from unison.comm.auth import GOOD_TOKEN_HINT
from unison.comm.rpc import RemoteError, RpcClient, TaskUnavailableError, UnauthenticatedError
from unison.distribute.parameter_server import codec, protocol
from unison.distribute.parameter_server.strategy import ParameterServerStrategy
from unison.errors import (
    CancelledError,
    FunctionError,
    NoWorkerAvailableError,
    ParameterServerUnavailableError,
    WorkerRestartedError,
)

_PING_S = 0.5


class RemoteValue:
    """The result of a scheduled function, available once it ran (TF's ``RemoteValue``)."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def _set(self, value: Any) -> None:
        self._value = value
        self._done.set()

    def _fail(self, error: BaseException) -> None:
        self._error = error
        self._done.set()

    def fetch(self) -> Any:
        """Wait for the function and return its result (tensors as torch tensors); raise its error."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    get = fetch


class PerWorkerValues:
    """One value per worker, created on each worker (TF's ``PerWorkerValues``)."""

    def __init__(self, coordinator: ClusterCoordinator, rid: str) -> None:
        self._coordinator, self._rid = coordinator, rid


class PerWorkerDataset(PerWorkerValues):
    """A dataset built on every worker by ``create_per_worker_dataset``; ``iter()`` it."""

    def __iter__(self) -> PerWorkerIterator:
        return self._coordinator._add_resource("iterator", source=self._rid, cls=PerWorkerIterator)


class PerWorkerIterator(PerWorkerValues):
    """Each worker's iterator over its own dataset; pass it to ``schedule`` as an argument."""

    def __iter__(self) -> PerWorkerIterator:
        return self

    def __next__(self) -> Any:
        raise TypeError(
            "A per-worker iterator is read on the workers: call next(iterator) inside the function "
            "you schedule, and pass the iterator to coordinator.schedule(fn, args=(iterator,))."
        )


_MAX_ATTEMPTS = 5  # a function whose worker vanished this many times is reported, not retried


class _Closure:
    __slots__ = ("fid", "tree", "tensors", "value", "lost_on")

    def __init__(self, fid: str, tree: Any, tensors: list[torch.Tensor]) -> None:
        self.fid, self.tree, self.tensors = fid, tree, tensors
        self.value = RemoteValue()
        self.lost_on: list[str] = []  # workers that vanished while running it


class _Worker:
    """One worker task and the thread that feeds it."""

    def __init__(self, coordinator: ClusterCoordinator, index: int, address: str) -> None:
        strategy = coordinator.strategy
        self.task = f"worker:{index}"
        self.client = RpcClient(address, self.task, timeout_s=strategy.timeout_s, sender=strategy.task_name)
        self.up = False
        self.incarnation: str | None = None
        self.functions: set[str] = set()
        self.resources = 0  # how many of the coordinator's resources this worker has built
        self.down_since = time.monotonic()
        self._coordinator = coordinator
        self.thread = threading.Thread(target=self._loop, name=f"unison-{self.task}", daemon=True)

    def _connect(self) -> bool:
        if not self.client.wait_ready(_PING_S):
            return False
        try:
            header, _ = self.client.call(
                protocol.WORKER_RESET,
                {"session": self._coordinator.strategy.session},
                timeout_s=self._coordinator.strategy.timeout_s,
            )
        except (TaskUnavailableError, RemoteError):
            return False
        except UnauthenticatedError as exc:  # nothing will run anywhere: say so now, not after a timeout
            self._coordinator._set_fatal(exc)
            return False
        if header["incarnation"] != self.incarnation:  # a new (restarted) worker: send everything again
            self.incarnation, self.functions, self.resources = header["incarnation"], set(), 0
        self.up = True
        return True

    def _sync(self, fid: str) -> None:
        c = self._coordinator
        for kind, rid, rfid, source in c._resources[self.resources :]:
            if rfid is not None:
                self._register(rfid)
            self.client.call(
                protocol.WORKER_RESOURCE,
                {"rid": rid, "kind": kind, "fid": rfid, "source": source, "incarnation": self.incarnation},
                timeout_s=None,
            )
            self.resources += 1
        self._register(fid)

    def _register(self, fid: str) -> None:
        if fid not in self.functions:
            payload = self._coordinator._payloads[fid]
            self.client.call(
                protocol.WORKER_REGISTER,
                {"fid": fid, "incarnation": self.incarnation},
                [payload],
                timeout_s=self._coordinator.strategy.timeout_s,
            )
            self.functions.add(fid)

    def _loop(self) -> None:
        c = self._coordinator
        while not c._stopping.is_set():
            if not self.up and not self._connect():
                c._stopping.wait(_PING_S)
                continue
            closure = c._take()
            if closure is None:
                return
            try:
                self._sync(closure.fid)
                header, tensors = self.client.call(
                    protocol.WORKER_RUN,
                    {"fid": closure.fid, "args": closure.tree, "incarnation": self.incarnation},
                    closure.tensors,
                    timeout_s=None,
                )
            except TaskUnavailableError:
                self.up, self.down_since = False, time.monotonic()
                closure.lost_on.append(self.task)
                c._requeue(closure)  # at-least-once: it runs again on whichever worker is free
                continue
            except RemoteError as exc:
                if protocol.is_remote(exc, WorkerRestartedError):
                    self.up = False  # restarted between two functions: reconnect, send everything, retry
                    c._requeue(closure)
                else:
                    c._failed(closure, self.task, exc)
                continue
            except Exception as exc:  # noqa: BLE001 - never let a worker thread die silently (join would hang)
                c._failed(
                    closure,
                    self.task,
                    RemoteError(str(exc), "coordinator", protocol.WORKER_RUN, type(exc).__name__, "", str(exc)),
                )
                continue
            c._finished(closure, header, tensors)


class ClusterCoordinator:
    """Schedules functions onto the workers of a :class:`ParameterServerStrategy`.

    Args:
        strategy: the strategy whose workers run the functions (one coordinator per strategy).
    """

    _unison_coordinator = True  # a scheduled function that captures the coordinator is refused

    def __new__(cls, strategy: ParameterServerStrategy) -> ClusterCoordinator:
        if not isinstance(strategy, ParameterServerStrategy):
            raise TypeError(
                "ClusterCoordinator needs a ParameterServerStrategy. Received: "
                f"{type(strategy).__name__}. Create it with "
                "tf.distribute.ParameterServerStrategy(cluster_resolver)."
            )
        existing = getattr(strategy, "_coordinator", None)
        if existing is not None:
            return existing  # TF: one coordinator per strategy
        self = super().__new__(cls)
        self._init(strategy)
        strategy._coordinator = self
        return self

    def _init(self, strategy: ParameterServerStrategy) -> None:
        self.strategy = strategy
        strategy._connect()
        self._cv = threading.Condition()
        self._queue: collections.deque[_Closure] = collections.deque()
        self._pending = 0
        self.requeued = 0  # functions put back in the queue after their worker vanished
        self._error: BaseException | None = None
        self._fatal: BaseException | None = None
        self._stopping = threading.Event()
        self._functions: dict[int, tuple[Any, str]] = {}
        self._payloads: dict[str, torch.Tensor] = {}
        self._resources: list[tuple[str, str, str | None, str | None]] = []
        self._ids = itertools.count()
        self._workers = [_Worker(self, i, a) for i, a in enumerate(strategy.worker_addresses)]
        unsigned = [w.task for w in self._workers if not w.client.authenticated]
        if unsigned:
            # the workers' results are unpickled: without the token an impostor's would be too
            raise ValueError(
                f"ClusterCoordinator needs the cluster token to talk to {', '.join(unsigned)}: "
                "UNISON_CLUSTER_TOKEN was unset after the strategy connected to its parameter servers. "
                "Keep it set in the coordinator's environment to the value every `unison server` of "
                f"the cluster has. {GOOD_TOKEN_HINT}"
            )
        for w in self._workers:
            w.thread.start()
        self._monitor = threading.Thread(target=self._watch_parameter_servers, name="unison-ps-monitor", daemon=True)
        self._monitor.start()

    # --- the queue (worker threads) -------------------------------------------------------------
    def _take(self) -> _Closure | None:
        with self._cv:
            while not self._queue and not self._stopping.is_set():
                self._cv.wait()
            return self._queue.popleft() if self._queue else None

    def _requeue(self, closure: _Closure) -> None:
        with self._cv:
            error = self._fatal
            if error is None and self._stopping.is_set():
                error = CancelledError("Cancelled: the coordinator was shut down.")
            if error is None and len(closure.lost_on) >= _MAX_ATTEMPTS:
                error = FunctionError(
                    f"A scheduled function was lost {len(closure.lost_on)} times, its worker vanishing each time "
                    f"({', '.join(closure.lost_on)}): it may be what kills them (memory, a crash in native code). "
                    "Check those workers' logs.",
                    closure.lost_on[-1],
                    "WorkerLost",
                    "",
                )
                if self._error is None:
                    self._error = error
            if error is not None:
                closure.value._fail(error)
                self._pending -= 1
            else:
                self.requeued += 1
                self._queue.appendleft(closure)
            self._cv.notify_all()

    def _finished(self, closure: _Closure, header: dict, tensors: list[torch.Tensor]) -> None:
        try:
            for key, index in header["metrics"].items():
                self.strategy.merge_metric_state(key, tensors[index])
            closure.value._set(codec.decode_tree(header["result"], tensors))
        except Exception as exc:  # noqa: BLE001 - a result that cannot be read is this closure's error
            closure.value._fail(exc)
        with self._cv:
            self._pending -= 1
            self._cv.notify_all()

    def _failed(self, closure: _Closure, task: str, exc: RemoteError) -> None:
        if protocol.is_remote(exc, ParameterServerUnavailableError):
            ps = exc.remote_task or "a parameter server"
            self._set_fatal(
                ParameterServerUnavailableError(
                    f"Parameter server {ps} became unavailable while {task} ran a scheduled function ({exc.remote_message}). "
                    "Its variables are lost: restart it and the coordinator, and resume from the last checkpoint.",
                    ps,
                )
            )
            closure.value._fail(self._fatal)  # type: ignore[arg-type]
            with self._cv:
                self._pending -= 1
                self._cv.notify_all()
            return
        error = FunctionError(
            f"A scheduled function failed on {task}: {exc.remote_type}: {exc.remote_message}\n"
            f"--- traceback on {task} ---\n{exc.remote_traceback}",
            task,
            exc.remote_type,
            exc.remote_traceback,
        )
        closure.value._fail(error)
        with self._cv:
            if self._error is None:
                self._error = error
            self._cancel_queued(CancelledError(f"Cancelled: an earlier scheduled function failed on {task}."))
            self._pending -= 1
            self._cv.notify_all()

    def _cancel_queued(self, error: BaseException) -> None:
        while self._queue:
            self._queue.popleft().value._fail(error)
            self._pending -= 1

    def _set_fatal(self, error: BaseException) -> None:
        with self._cv:
            if self._fatal is None:
                self._fatal = error
            self._cancel_queued(self._fatal)
            self._cv.notify_all()

    def _watch_parameter_servers(self) -> None:
        clients = self.strategy._servers.clients
        last_ok = [time.monotonic()] * len(clients)
        incarnations: list[str | None] = [None] * len(clients)
        while not self._stopping.wait(_PING_S) and self._fatal is None:
            with self._cv:
                if self._pending:
                    self._check_workers_alive()
                    self._cv.notify_all()
            for i, client in enumerate(clients):
                try:
                    header, _ = client.call(protocol.PING, timeout_s=min(2.0, self.strategy.timeout_s))
                except (TaskUnavailableError, RemoteError):
                    if time.monotonic() - last_ok[i] > min(self.strategy.timeout_s, 3.0):
                        self._set_fatal(
                            ParameterServerUnavailableError(
                                f"Parameter server {client.task} ({client.address}) stopped answering. Its variables "
                                "are lost: restart it and the coordinator, and resume from the last checkpoint.",
                                client.task,
                                protocol.PING,
                            )
                        )
                    continue
                if incarnations[i] not in (None, header["incarnation"]):
                    self._set_fatal(
                        ParameterServerUnavailableError(
                            f"Parameter server {client.task} restarted and lost its variables. Restart the coordinator "
                            "and resume from the last checkpoint.",
                            client.task,
                            protocol.PING,
                        )
                    )
                incarnations[i], last_ok[i] = header["incarnation"], time.monotonic()

    # --- the API ---------------------------------------------------------------------------------------
    def _raise_pending_error(self) -> None:
        with self._cv:
            if self._fatal is not None:
                raise self._fatal
            error, self._error = self._error, None
        if error is not None:
            raise error

    def _function_id(self, fn: Any) -> str:
        entry = self._functions.get(id(fn))
        if entry is not None and entry[0] is fn:
            return entry[1]
        fid = f"f{next(self._ids)}"
        try:
            payload = codec.dumps(fn, lambda o: self.strategy.reduce_for_worker(o, self._ref))
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise TypeError(
                f"Could not send {getattr(fn, '__qualname__', fn)!r} to the workers: {exc}. A scheduled "
                "function, and everything it refers to, must be picklable (no open files, locks or "
                "threads in its closure)."
            ) from exc
        self._payloads[fid] = codec.as_bytes_tensor(payload)
        self._functions[id(fn)] = (fn, fid)
        return fid

    def _ref(self, obj: Any) -> str | None:
        return obj._rid if isinstance(obj, PerWorkerValues) and obj._coordinator is self else None

    def _add_resource(self, kind: str, cls: type, fid: str | None = None, source: str | None = None) -> Any:
        rid = f"r{next(self._ids)}"
        self._resources.append((kind, rid, fid, source))
        return cls(self, rid)

    def create_per_worker_dataset(self, dataset_fn: Any) -> PerWorkerDataset:
        """Build a dataset on every worker with ``dataset_fn()`` (a worker that rejoins builds it again).

        ``dataset_fn`` takes no argument and returns an iterable; inside it,
        ``strategy.distribute_datasets_from_function(fn)`` calls ``fn`` with the worker's
        ``InputContext``. The result of that call on the coordinator is accepted too, and so is a
        ``tf.data`` dataset (each worker iterates its own copy, as in TF).
        """
        if isinstance(dataset_fn, PerWorkerDataset):
            return dataset_fn
        from unison.distribute.input import as_dataset_fn

        dataset_fn = as_dataset_fn(dataset_fn)  # a tf.data dataset: every worker iterates its own copy
        if not callable(dataset_fn):
            raise TypeError(
                "create_per_worker_dataset takes a function that returns a dataset (or "
                "strategy.distribute_datasets_from_function(dataset_fn)). Received: "
                f"{type(dataset_fn).__name__}"
            )
        self._raise_pending_error()
        return self._add_resource("dataset", PerWorkerDataset, fid=self._function_id(dataset_fn))

    def schedule(self, fn: Callable[..., Any], args: tuple = (), kwargs: dict | None = None) -> RemoteValue:
        """Queue ``fn(*args, **kwargs)`` to run on a free worker; returns at once."""
        if self._stopping.is_set():
            raise RuntimeError("This ClusterCoordinator was shut down; create a new one for the strategy.")
        self._raise_pending_error()
        if not callable(fn):
            raise TypeError(f"schedule needs a callable. Received: fn={fn!r}")
        fid = self._function_id(fn)
        self.strategy.push_local_changes()
        self.strategy.sync_optimizers()
        tree, tensors = codec.encode_tree((tuple(args), dict(kwargs or {})), self._ref, self.strategy.reduce_argument)
        closure = _Closure(fid, tree, tensors)
        with self._cv:
            self._queue.append(closure)
            self._pending += 1
            self._cv.notify_all()
        return closure.value

    def join(self) -> None:
        """Wait until every scheduled function ran; raise the first error; refresh local weights."""
        with self._cv:
            while self._pending > 0 and self._fatal is None:
                self._cv.wait(_PING_S)
        self._raise_pending_error()
        self.strategy.sync_to_coordinator()

    def _check_workers_alive(self) -> None:
        if any(w.up for w in self._workers):
            return
        since = max(w.down_since for w in self._workers)
        if time.monotonic() - since > self.strategy.timeout_s:
            # say why (nothing listening, a TLS mismatch...): a probe of 0.3 s each, once, as it fails
            names = ", ".join(
                f"{w.task} ({w.client.address}: {w.client.unreachable_reason(0.3)})" for w in self._workers
            )
            error = NoWorkerAvailableError(
                f"No worker answered for {self.strategy.timeout_s:g} s ({names}) while {self._pending} scheduled "
                "function(s) waited. Start the workers (`unison server`) or check their addresses."
            )
            self._error = error
            self._cancel_queued(error)

    def done(self) -> bool:
        """True when every scheduled function ran (raises the first error, as ``join``)."""
        self._raise_pending_error()
        with self._cv:
            return self._pending == 0

    def fetch(self, val: Any) -> Any:
        """``RemoteValue``s (possibly nested in lists, tuples, dicts) replaced by their results."""
        if isinstance(val, RemoteValue):
            return val.fetch()
        if isinstance(val, (list, tuple)):
            return type(val)(self.fetch(v) for v in val)
        if isinstance(val, dict):
            return {k: self.fetch(v) for k, v in val.items()}
        return val

    def shutdown(self) -> None:
        """Stop the coordinator's threads and close its connections (a unison extension).

        Queued functions are cancelled; the strategy can get a new coordinator afterwards.
        """
        self._stopping.set()
        with self._cv:
            self._cancel_queued(CancelledError("Cancelled: the coordinator was shut down."))
            self._cv.notify_all()
        for w in self._workers:
            w.thread.join(timeout=self.strategy.timeout_s)
            w.client.close()
        self._monitor.join(timeout=self.strategy.timeout_s)
        self.strategy._coordinator = None

    def worker_stats(self) -> list[dict]:
        """Per worker: tensor bytes it sent to and received from the parameter servers (lifetime totals)."""
        out = []
        for w in self._workers:
            try:
                header, _ = w.client.call(protocol.WORKER_STATS, timeout_s=self.strategy.timeout_s)
                out.append({"task": w.task, "available": True, **header})
            except (TaskUnavailableError, RemoteError):
                out.append({"task": w.task, "available": False, "bytes_sent": 0, "bytes_received": 0})
        return out


__all__ = [
    "CancelledError",
    "ClusterCoordinator",
    "FunctionError",
    "NoWorkerAvailableError",
    "PerWorkerDataset",
    "PerWorkerIterator",
    "PerWorkerValues",
    "RemoteValue",
]
