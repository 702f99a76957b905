"""Elastic membership: the generations of workers an elastic agent publishes, and re-forming in place.

``unison launch --min-workers A --max-workers B`` runs an agent that serves an authenticated
store on the loopback interface and publishes *generations*: generation ``g`` is the list of
worker ids that form the job from then on (a worker's rank is its index in that list, so the
survivors keep their order and a new worker comes last). A worker lost (its process exits
with an error) or added makes the agent publish ``g + 1``. The workers' side is an
:class:`ElasticGroup`: it joins the process group of a generation and, when told, leaves it
and joins the next one **in the same process** (:meth:`Communicator.reform`): the
:class:`Communicator` object that the optimizers and ``unison.rank()/size()`` hold stays the
same, only its rank, size and process group change.

Across hosts (``--master CHIEF:PORT`` and a discovery script naming several hosts) the store
listens on the chief's address and the workers of every host join it over TCP; the store is
then signed with the secret derived from ``UNISON_CLUSTER_TOKEN``, set on every host. Each
generation also names each worker's host, from which a worker's local rank and local size
(its place among the workers of its host) follow.

Store keys (values signed with the job's secret, :class:`AuthenticatedStore`):

- ``unison/elastic/generation``: the latest generation number;
- ``unison/elastic/members/<g>``: generation ``g``'s worker ids (JSON);
- ``unison/elastic/hosts/<g>``: their hosts, in the same order (JSON);
- ``unison/elastic/error``: why the job cannot go on (fewer workers than ``--min-workers``);
- ``unison/elastic/failed/<g>`` (a counter): workers that saw a collective of ``g`` fail.

Example (the agent's side; workers use :func:`join_elastic`)::

    publish(store, Generation(0, (0, 1, 2)))
    read_latest(store)        # Generation(number=0, workers=(0, 1, 2))
"""

from __future__ import annotations

import datetime
import json
import os
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist

from unison.comm.communicator import Communicator, check_collectives, register_joined
from unison.comm.store import AuthenticatedStore
from unison.errors import ElasticMembershipError, UnisonError

ENV_ELASTIC_STORE = "UNISON_ELASTIC_STORE"  # host:port of the agent's store
ENV_ELASTIC_WORKER = "UNISON_ELASTIC_WORKER"  # this worker's id, stable across generations
KEY_GENERATION = "unison/elastic/generation"
KEY_ERROR = "unison/elastic/error"
_POLL_S = 0.02


def members_key(number: int) -> str:
    return f"unison/elastic/members/{number}"


def hosts_key(number: int) -> str:
    return f"unison/elastic/hosts/{number}"


def failed_key(number: int) -> str:
    return f"unison/elastic/failed/{number}"


@dataclass(frozen=True)
class Generation:
    """One membership of the job: its number, its workers' ids in rank order and their hosts.

    Example:
        >>> Generation(3, (0, 2, 5)).rank_of(5)
        2
        >>> Generation(3, (0, 2, 5), ("a", "b", "b")).local_of(5)
        (1, 2)
    """

    number: int
    workers: tuple[int, ...]
    hosts: tuple[str, ...] = ()  # one per worker; empty: every worker on one host

    @property
    def size(self) -> int:
        return len(self.workers)

    def rank_of(self, worker: int) -> int:
        return self.workers.index(worker)

    def local_of(self, worker: int) -> tuple[int, int]:
        """``(local rank, local size)``: ``worker``'s place among the workers of its host."""
        if len(self.hosts) != len(self.workers):
            return self.rank_of(worker), self.size
        host = self.hosts[self.rank_of(worker)]
        mates = [w for w, h in zip(self.workers, self.hosts) if h == host]
        return mates.index(worker), len(mates)


def publish(store: dist.Store, generation: Generation) -> None:
    """Make ``generation`` the job's latest (the agent; members first, then the number)."""
    store.set(members_key(generation.number), json.dumps(list(generation.workers)))
    store.set(hosts_key(generation.number), json.dumps(list(generation.hosts)))
    store.set(KEY_GENERATION, str(generation.number))


def publish_error(store: dist.Store, message: str) -> None:
    """Tell every worker that the job cannot go on (they raise :class:`ElasticMembershipError`)."""
    store.set(KEY_ERROR, message)


def read_latest(store: dist.Store) -> Generation | None:
    """The latest generation, or ``None`` before the first; raises the agent's error if it published one."""
    if store.check([KEY_ERROR]):
        raise ElasticMembershipError(store.get(KEY_ERROR).decode())
    if not store.check([KEY_GENERATION]):
        return None
    number = int(store.get(KEY_GENERATION).decode())
    workers = tuple(int(w) for w in json.loads(store.get(members_key(number)).decode()))
    hosts = tuple(str(h) for h in json.loads(store.get(hosts_key(number)).decode()))
    return Generation(number, workers, hosts)


def wait_for_generation(store: dist.Store, worker: int, newer_than: int, timeout_s: float, why: str) -> Generation:
    """Wait (bounded) for a generation numbered above ``newer_than`` that includes ``worker``.

    Raises:
        ElasticMembershipError: the agent published an error, this worker is not in the new
            generation (it was removed), or none came within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        latest = read_latest(store)
        if latest is not None and latest.number > newer_than:
            if worker not in latest.workers:
                raise ElasticMembershipError(
                    f"Worker {worker} is not a member of the elastic job's generation {latest.number} "
                    f"(workers {list(latest.workers)}): the agent removed it. It stops here."
                )
            return latest
        if time.monotonic() >= deadline:
            raise ElasticMembershipError(
                f"Worker {worker} waited {timeout_s:.0f}s for the elastic agent to publish a generation after "
                f"{newer_than} ({why}) and none came. Is the agent (`unison launch --min-workers ...`) still "
                f"running? Raise UNISON_COLLECTIVE_TIMEOUT if re-forming is slow on this machine."
            )
        time.sleep(_POLL_S)


class ElasticGroup:
    """This worker's place in an elastic job: the generation it is in, and re-forming to the next.

    Args:
        store: the agent's store (authenticated).
        worker: this worker's id.
        comm: the communicator to re-form in place.
        generation: the generation ``comm`` is in.
    """

    def __init__(self, store: dist.Store, worker: int, comm: Communicator, generation: Generation) -> None:
        self.store = store
        self.worker = worker
        self.comm = comm
        self.generation = generation
        self.reforms = 0

    def _join(self, generation: Generation) -> None:
        """Meet the other members of ``generation`` (bounded), then re-form the process group there.

        The members first count themselves in the store: while they wait, a newer generation
        that includes this worker (another change) replaces the one they wait for, so a
        membership that changes twice in a row never leaves some workers waiting in the old one.
        """
        deadline = time.monotonic() + self.comm.timeout_s
        while True:
            arrived_key = f"unison/elastic/arrived/{generation.number}"
            self.store.set(f"{arrived_key}/{self.worker}", "1")  # who came, to name who did not
            self.store.add(arrived_key, 1)
            newer = None
            while newer is None and self.store.add(arrived_key, 0) < generation.size:
                latest = read_latest(self.store)
                if latest is not None and latest.number > generation.number:
                    newer = wait_for_generation(self.store, self.worker, generation.number, 0.0, "")
                    break
                if time.monotonic() >= deadline:
                    arrived = self.store.add(arrived_key, 0)
                    missing = [w for w in generation.workers if not self.store.check([f"{arrived_key}/{w}"])]
                    who = f"worker{'s' if len(missing) != 1 else ''} {', '.join(map(str, missing))}"
                    raise ElasticMembershipError(
                        f"Only {arrived} of the {generation.size} workers of the elastic job's generation "
                        f"{generation.number} arrived within {self.comm.timeout_s:g}s (worker {self.worker} "
                        f"waited): {who} did not arrive. A worker died or hangs while the job re-formed, or "
                        f"cannot reach the agent: look at {who}'s log."
                    )
                time.sleep(_POLL_S)
            if newer is None:
                break
            generation = newer  # the membership changed again while we waited: meet in the newest
        rank = generation.rank_of(self.worker)
        group_store = dist.PrefixStore(f"unison/elastic/group/{generation.number}", self.store)
        self.comm.reform(group_store, rank, generation.size, local=generation.local_of(self.worker))
        self.generation = generation

    def latest_for_all(self) -> int:
        """The latest generation number as rank 0 reads it, the same on every worker (a collective)."""
        latest = read_latest(self.store) if self.comm.rank == 0 else None
        number = latest.number if latest is not None else self.generation.number
        return int(self.comm.broadcast_object(number, src=0, name="elastic.generation"))

    def hosts_updated(self) -> bool:
        """Whether the agent published a newer generation (every worker gets rank 0's answer)."""
        return self.latest_for_all() > self.generation.number

    def reform_after_update(self) -> None:
        """Re-form at the newest generation (workers were added): no failure happened."""
        self.comm.leave_group()
        latest = wait_for_generation(self.store, self.worker, self.generation.number, self.comm.timeout_s, "update")
        self._join(latest)
        self.reforms += 1

    def reform_after_failure(self) -> None:
        """A collective failed: leave the group, tell the agent, wait for the next generation, re-form there."""
        self.comm.leave_group()  # first: a survivor still waiting for us in the old group fails now
        self.store.add(failed_key(self.generation.number), 1)
        latest = wait_for_generation(
            self.store, self.worker, self.generation.number, self.comm.timeout_s, "a collective failed"
        )
        self._join(latest)
        self.reforms += 1


# The process's elastic membership (one per process, like the process group).
_GROUP: list[ElasticGroup] = []


def current() -> ElasticGroup | None:
    """This process's :class:`ElasticGroup` when it runs under an elastic agent, else ``None``."""
    return _GROUP[0] if _GROUP else None


def join_elastic(address: str, worker: int, secret: bytes | None, timeout_s: float) -> Communicator:
    """Join the elastic job whose agent serves ``address`` (``host:port``) as worker ``worker``.

    Waits (bounded by ``timeout_s``) for a generation that includes this worker, forms its
    process group (gloo; the shared-memory all-reduce and the hang explainer stay off, so a lost
    worker fails the next collective at once) and returns the communicator.

    Raises:
        ElasticMembershipError: the agent reported that the job cannot start or go on.
    """
    existing = current()
    if existing is not None:
        return existing.comm
    host, _, port = address.rpartition(":")
    timeout = datetime.timedelta(seconds=timeout_s)
    raw: dist.Store = dist.TCPStore(host, int(port), is_master=False, timeout=timeout)
    store: dist.Store = AuthenticatedStore(raw, secret) if secret is not None else raw
    first = wait_for_generation(store, worker, -1, timeout_s, "joining")
    if torch.cuda.is_available():
        raise UnisonError("Elastic jobs run on CPU (gloo) in this version; unset CUDA_VISIBLE_DEVICES.")
    comm = Communicator(0, 1, torch.device("cpu"), timeout_s, store=store)
    comm.elastic = True
    comm.check_signatures = check_collectives("gloo")
    group = ElasticGroup(store, worker, comm, Generation(-1, ()))
    group._join(first)
    _GROUP.append(group)
    register_joined(comm)
    return comm


def elastic_address() -> tuple[str, int] | None:
    """``(agent address, worker id)`` when this process was started by an elastic agent."""
    address = os.environ.get(ENV_ELASTIC_STORE)
    if not address:
        return None
    return address, int(os.environ.get(ENV_ELASTIC_WORKER, "0"))


__all__ = [
    "ENV_ELASTIC_STORE",
    "ENV_ELASTIC_WORKER",
    "ElasticGroup",
    "Generation",
    "current",
    "elastic_address",
    "join_elastic",
    "publish",
    "publish_error",
    "read_latest",
    "wait_for_generation",
]
