"""Which task stopped answering: heartbeats in the job's store, read when a collective fails.

A collective that fails (a peer was killed, the network was cut) only knows that *some* peer is
gone. Every replica of a multi-worker job therefore bumps a counter in the rendezvous store once
per interval from a daemon thread; when a collective fails, the communicator reads all counters
twice, a few intervals apart, and names the tasks whose counters stood still (or the chief, if
its store no longer answers). Cost: one small store request per replica per interval.

Example::

    monitor = PeerMonitor(plan, timeout_s=300)
    monitor.start()
    comm = TaskAwareCommunicator(comm, plan, monitor)   # errors now name the missing task
"""

from __future__ import annotations

import atexit
import datetime
import threading

import torch.distributed as dist

from unison.cluster.plan import SERVE, JobPlan
from unison.comm.communicator import Communicator
from unison.comm.store import bind_address

_GIVE_UP_AFTER = 3  # heartbeats failed in a row before the store counts as gone


class PeerMonitor:
    """Heartbeats of this replica, and the post-mortem that names replicas without them.

    Args:
        plan: the job (ranks, task names, store address).
        timeout_s: the job's collective timeout; the heartbeat interval is derived from it.
    """

    def __init__(self, plan: JobPlan, timeout_s: float) -> None:
        self.plan = plan
        self.interval_s = self.interval_for(timeout_s)
        self.timeout_s = timeout_s
        self._prefix = f"{plan.run_key}/heartbeat/"
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="unison-heartbeat", daemon=True)

    @staticmethod
    def interval_for(timeout_s: float) -> float:
        """Seconds between heartbeats for a job whose collectives time out after ``timeout_s``."""
        return max(0.1, min(1.0, timeout_s / 20.0))

    @classmethod
    def diagnosis_s(cls, timeout_s: float) -> float:
        """The most :meth:`silent_tasks` takes: connecting to the store, then watching 3 beats.

        The process group's own timeout is shortened by this much, so the named error arrives
        within the user's ``timeout_seconds``, not after it.
        """
        interval = cls.interval_for(timeout_s)
        return max(1.0, 2 * interval) + 3 * interval

    def _client(self, timeout_s: float) -> dist.TCPStore:
        # The chief's store listens on the interface of its address (or on all of them when that
        # address is not this machine's): the chief reaches it there, or through loopback, which
        # keeps working when its network is cut (so it can tell that the others are gone).
        host = self.plan.store_host
        if self.plan.store_mode == SERVE and bind_address(host) is None:
            host = "127.0.0.1"
        return dist.TCPStore(
            host, self.plan.store_port, None, is_master=False, timeout=datetime.timedelta(seconds=timeout_s)
        )

    def start(self) -> None:
        self._thread.start()
        atexit.register(self.stop)

    def stop(self) -> None:
        self._stopped.set()

    def _beat(self) -> None:
        try:
            store = self._client(self.timeout_s)
        except RuntimeError:
            return  # the chief is gone already; the failing collective will say so
        key = f"{self._prefix}{self.plan.rank}"
        failures = 0
        while not self._stopped.is_set():
            try:
                store.add(key, 1)
                failures = 0
            except RuntimeError:
                # unreachable: our silence is what peers should observe. The store lives in the
                # chief's process: after a few failures in a row it is gone for good, and every
                # further try only adds a c10d "sendBytes failed ... Broken pipe" line to the log.
                failures += 1
                if failures >= _GIVE_UP_AFTER:
                    return
            self._stopped.wait(self.interval_s)

    def _counters(self, store: dist.Store) -> list[int]:
        return [int(store.add(f"{self._prefix}{r}", 0)) for r in range(self.plan.world_size)]

    def silent_tasks(self) -> str:
        """A sentence naming the tasks that stopped sending heartbeats (takes ~3 intervals)."""
        plan = self.plan
        window = 3 * self.interval_s
        try:
            store = self._client(max(1.0, 2 * self.interval_s))
            before = self._counters(store)
            threading.Event().wait(window)  # observe the counters over a window; not a sync
            after = self._counters(store)
        except RuntimeError:
            return (
                f"The chief {plan.task_of_rank(0)} is unreachable: its rendezvous store at "
                f"{plan.store_address} did not answer, so it stopped or the network to it is cut."
            )
        silent = [r for r in range(plan.world_size) if r != plan.rank and before[r] == after[r]]
        if not silent:
            return (
                "Every task still sends heartbeats, so the failing task is probably stuck "
                "or took a different code path (different collectives)."
            )
        names = sorted({plan.replica_tasks[r] if r < len(plan.replica_tasks) else f"rank {r}" for r in silent})
        return (
            f"Unreachable: {', '.join(names)} sent no heartbeat for {window:.1f}s (it died, "
            "was killed, or the network to it is cut)."
        )


class TaskAwareCommunicator(Communicator):
    """A :class:`Communicator` whose failures name the tasks that stopped answering."""

    def __init__(self, base: Communicator, plan: JobPlan, monitor: PeerMonitor | None) -> None:
        super().__init__(
            base.rank,
            base.world_size,
            base.device,
            base.timeout_s,
            store=base.store,
            local_rank=base.local_rank,
            local_size=base.local_size,
            shared_memory=base.shared_memory,
        )
        self.plan = plan
        self.monitor = monitor
        self.explainer, self.timeline = base.explainer, base.timeline
        self.check_signatures = base.check_signatures

    def _where(self) -> str:
        return f"{self.plan.task_of_rank(self.rank)} (rank {self.rank} of {self.world_size})"

    def _diagnose(self, op_name: str, seq: int, exc: RuntimeError) -> str:
        return self.monitor.silent_tasks() if self.monitor is not None else ""
