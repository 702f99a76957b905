"""Joining the job: this process's place in the process group, found and joined once.

torch's default process group is process-wide state, so a program that builds a second
strategy (or calls ``unison.init()`` after one) must reuse the first join, not launch or
rendezvous again. One cache here records what each kind of join set up:

- :data:`LOCAL_JOB`: ``MirroredStrategy`` run as a plain ``python script.py`` made this process
  replica 0 and started the others (the job and its store);
- a :class:`~unison.cluster.plan.JobPlan`: ``MultiWorkerMirroredStrategy`` joined that
  multi-worker job (communicator, device, store, heartbeat monitor).

:func:`join_replica` is the part every join shares: pick the device, share the cores, connect.
``unison.init()`` (Horovod's API) joins through :func:`join_environment`.

Example::

    comm, device = join_environment(timeout_s=300)   # under `unison launch` / torchrun
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import torch

from unison.cluster.placement import UNISON_SOURCE, ProcessPlacement, resolve_placement
from unison.cluster.plan import JobPlan
from unison.cluster.secret import cluster_secret, job_secret
from unison.comm.communicator import Communicator, connect, joined
from unison.comm.elastic import elastic_address, join_elastic
from unison.comm.liveness import PeerMonitor, TaskAwareCommunicator
from unison.debug.hang import HangExplainer
from unison.distribute.devices import DeviceSpec
from unison.launch.doctor import preflight
from unison.launch.local import install_replica_hooks, start_local_job
from unison.launch.rendezvous import open_store, use_interface_of, use_interface_toward, wait_for_tasks
from unison.launch.worker_replicas import install_elastic_error_hook, start_worker_replicas

LOCAL_JOB = "local-job"  # the key of the one-host job this process launched as replica 0


@dataclass
class Joined:
    """What one join set up; kept for the life of the process.

    Attributes:
        placement: this process's rank and world (for a local job).
        store: the rendezvous store.
        comm: the communicator (for a multi-worker job; a local job's replicas connect each time).
        device: this replica's device.
        keep: objects that must live as long as the process (the launched job, the monitor).
    """

    placement: ProcessPlacement | None = None
    store: Any = None
    comm: Communicator | None = None
    device: torch.device | None = None
    keep: tuple[Any, ...] = ()


# The one cache of joins (see the module docstring): process-wide because the process group is.
_JOINED: dict[Hashable, Joined] = {}


def _share_cores(local_world_size: int) -> None:
    """Each CPU replica gets an equal share of the cores (oversubscription slows everyone)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    torch.set_num_threads(max(1, cores // local_world_size))


def keep_gloo_on_loopback() -> None:
    """One host: keep gloo's traffic on the loopback interface (unless the user chose one)."""
    if "GLOO_SOCKET_IFNAME" not in os.environ and os.path.exists("/sys/class/net/lo"):
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"


def join_replica(
    placement: ProcessPlacement,
    devices: list[DeviceSpec],
    timeout_s: float,
    store: Any = None,
    secret: bytes | None = None,
) -> tuple[Communicator, torch.device]:
    """Pick this replica's device, share the cores, and join the process group (every strategy).

    ``secret`` (the job's, see :mod:`unison.cluster.secret`) signs every value in the store.
    """
    spec = devices[placement.local_rank] if len(devices) > 1 else devices[0]
    if spec.kind == "gpu" and len(devices) == 1 and placement.world_size > 1:
        spec = DeviceSpec("gpu", placement.local_rank, f"/gpu:{placement.local_rank}")
    device = spec.to_torch()
    return connect_on(placement, device, timeout_s, store, secret), device


def connect_on(
    placement: ProcessPlacement, device: torch.device, timeout_s: float, store: Any = None, secret: bytes | None = None
) -> Communicator:
    """Join the process group from ``device`` (NCCL on CUDA, gloo with a share of the cores on CPU)."""
    if device.type == "cuda":
        torch.cuda.set_device(device)
    else:
        _share_cores(placement.local_world_size)
    backend = "nccl" if device.type == "cuda" else "gloo"
    return connect(placement, backend, device, timeout_s, store=store, secret=secret)


def launch_local_job(num_replicas: int, timeout_s: float) -> tuple[ProcessPlacement, Any]:
    """Become replica 0 of a one-host job and start replicas 1..N-1 (once per process).

    Returns this process's placement and the store it serves; a later call returns the same.
    """
    entry = _JOINED.get(LOCAL_JOB)
    if entry is None:
        keep_gloo_on_loopback()
        placement, store, job = start_local_job(num_replicas, timeout_s)
        entry = _JOINED[LOCAL_JOB] = Joined(placement=placement, store=store, keep=(job,))
    return entry.placement, entry.store  # type: ignore[return-value]  # always set for LOCAL_JOB


def join_job(plan: JobPlan, devices: list[DeviceSpec], timeout_s: float) -> tuple[Communicator, torch.device]:
    """Start this worker's other replicas, rendezvous, create the process group, start heartbeats.

    A second call for the same plan returns the first join's communicator and device.
    """
    entry = _JOINED.get(plan)
    if entry is not None and entry.comm is not None and entry.device is not None:
        return entry.comm, entry.device
    if plan.launched:
        install_replica_hooks(plan.placement())
    elif plan.local_world_size > 1:
        start_worker_replicas(plan)
    install_elastic_error_hook()
    use_interface_of(plan.local_host)
    store = open_store(plan, timeout_s)
    wait_for_tasks(store, plan, timeout_s)
    preflight(store, plan, timeout_s)  # versions and clocks agree with the chief's (unison doctor's cheap part)
    # A failed collective is followed by the heartbeat post-mortem that names the missing task;
    # gloo gets what is left of timeout_seconds, so the whole error arrives within it.
    collective_s = max(1.0, timeout_s - PeerMonitor.diagnosis_s(timeout_s) - HangExplainer.budget_s(timeout_s))
    comm, device = join_replica(plan.placement(), devices, collective_s, store, cluster_secret())
    monitor = PeerMonitor(plan, timeout_s)
    monitor.start()
    comm = TaskAwareCommunicator(comm, plan, monitor)
    comm.timeout_s = timeout_s  # what messages report: the user's bound, diagnosis included
    atexit.register(monitor.stop)  # before connect()'s process-group shutdown (atexit is LIFO)
    _JOINED[plan] = Joined(store=store, comm=comm, device=device, keep=(monitor,))
    return comm, device


def join_environment(timeout_s: float) -> Communicator | None:
    """Join the job the environment describes (``unison launch``/torchrun); ``None`` when alone.

    Horovod's ``init()``: one replica per process, the GPU of its local rank where there are
    GPUs, else the CPU. A process that already joined (through a strategy) keeps that join.
    """
    comm = joined()
    if comm is not None:
        return comm
    elastic = elastic_address()
    if elastic is not None:  # started by `unison launch --min-workers`: membership comes from its agent
        use_interface_toward(elastic[0].rpartition(":")[0])  # across hosts: the link to the chief's store
        return join_elastic(elastic[0], elastic[1], job_secret(), timeout_s)
    placement = resolve_placement()
    if placement is None or placement.world_size == 1:
        return None
    if placement.source == UNISON_SOURCE and placement.master_addr in ("127.0.0.1", "localhost"):
        keep_gloo_on_loopback()
    if torch.cuda.is_available():
        device = torch.device("cuda", placement.local_rank % torch.cuda.device_count())
    else:
        device = torch.device("cpu")
    return connect_on(placement, device, timeout_s, secret=job_secret())


__all__ = [
    "LOCAL_JOB",
    "Joined",
    "connect_on",
    "join_environment",
    "join_job",
    "join_replica",
    "keep_gloo_on_loopback",
    "launch_local_job",
]
