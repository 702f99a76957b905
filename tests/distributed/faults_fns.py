"""Replica functions of test_faults.py: a replica stuck in its own code, a replica killed."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import torch

import unison
from unison.comm.communicator import joined
from unison.debug.timeline import span

TIMEOUT_S = 3.0


def stuck_in_user_code(stuck: int, folder: str) -> dict[str, Any]:
    """Rank ``stuck`` loops in its own code forever; the others reach a collective that times out."""
    unison.init(timeout_seconds=TIMEOUT_S)
    comm = joined()
    assert comm is not None
    comm.all_reduce(torch.ones(4))
    if unison.rank() == stuck:
        open(os.path.join(folder, "stuck"), "w").close()
        while True:  # user code that never returns (a deadlock of its own, a data loader hung...)
            time.sleep(0.05)
    started = time.monotonic()
    try:
        comm.all_reduce(torch.ones(4))
    except unison.errors.UnisonError as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "elapsed": time.monotonic() - started}
    return {"error": "", "elapsed": time.monotonic() - started}


def killed_rank(victim: int, folder: str) -> dict[str, Any]:
    """Every rank records spans and collectives; ``victim`` SIGKILLs itself after a flush."""
    unison.init(timeout_seconds=TIMEOUT_S)
    comm = joined()
    assert comm is not None
    for step in range(5):
        with span("steps", f"step {step}"):
            comm.all_reduce(torch.ones(4))
    time.sleep(0.6)  # more than UNISON_TIMELINE_FLUSH_S: the events are on disk
    if unison.rank() == victim:
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        comm.all_reduce(torch.ones(4))
    except unison.errors.UnisonError as exc:
        os.kill(os.getpid(), signal.SIGKILL)  # as a launcher tearing the job down would (no atexit)
        return {"error": str(exc)}
    return {"error": ""}


def horovod_names(same: bool) -> dict[str, Any]:
    """Every rank allreduces a tensor of one shape, under its own name unless ``same``."""
    import unison as hvd

    hvd.init()
    name = "metric" if same else f"metric_of_rank_{hvd.rank()}"
    try:
        value = hvd.allreduce(torch.full((4,), float(hvd.rank())), name=name, op=hvd.Sum)
    except unison.errors.UnisonError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"error": "", "value": value.tolist()}


def mwms_stuck_in_user_code(stuck: int, folder: str) -> dict[str, Any]:
    """MultiWorkerMirroredStrategy, no launcher: worker ``stuck`` loops in its own code forever."""
    import unison as tf

    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=TIMEOUT_S)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    rank = strategy.extended.replica_id
    strategy.reduce("SUM", torch.ones(2))
    if rank == stuck:
        open(os.path.join(folder, "stuck"), "w").close()
        while True:
            time.sleep(0.05)
    try:
        strategy.reduce("SUM", torch.ones(2))
    except unison.errors.UnisonError as exc:
        with open(os.path.join(folder, f"failed.{rank}"), "w") as fh:
            fh.write(str(exc))
        raise
    return {}


def stopped_rank(stopped: int, folder: str) -> dict[str, Any]:
    """Rank ``stopped`` freezes itself with SIGSTOP (as a debugger or an OOM-thrashing host would);
    the others' next collective times out and raises its report."""
    unison.init(timeout_seconds=TIMEOUT_S)
    comm = joined()
    assert comm is not None
    comm.all_reduce(torch.ones(4))
    if unison.rank() == stopped:
        with open(os.path.join(folder, "stopped.pid"), "w") as fh:
            fh.write(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGSTOP)
    comm.all_reduce(torch.ones(4))
    return {"error": ""}
