"""Multi-process test harness: run a function on N real replicas and get their results.

The pattern of TF's ``multi_process_runner``: every replica is a real process joined by a real
torch.distributed process group (gloo on CPU); the replicas meet in a private ``FileStore`` (a
fresh 0700 folder, removed afterwards) with a job secret that signs every value in it, the
harness bounds the whole run by a timeout, and re-raises a replica's exception in
the caller with that replica's rank and traceback. Use it to test your own multi-replica code.

Example::

    import unison as tf
    from unison.testing import run_distributed

    def replica_fn(scale):
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        rank = strategy.extended.replica_id
        return strategy.reduce("SUM", torch.tensor(float(rank) * scale)).item()

    assert run_distributed(replica_fn, world_size=2, args=(2.0,)) == [2.0, 2.0]
"""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

import torch.distributed as dist

from unison.cluster.placement import (
    ENV_CPU_OVERSUBSCRIBE,
    local_replica_env,
)
from unison.cluster.secret import launcher_secret_env
from unison.errors import ReplicaFailedError

__all__ = ["ReplicaFailedError", "run_distributed", "run_multi_worker"]


def _replica_main(
    fn: Callable[..., Any],
    rank: int,
    world_size: int,
    store_dir: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    env: dict[str, str],
    conn: Any,
) -> None:
    os.environ.update(env)
    os.environ.update(local_replica_env(rank, world_size, store_dir))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    try:
        result = fn(*args, **kwargs)
        conn.send(("ok", result))
    except BaseException as exc:  # report everything, SystemExit included
        conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
    finally:
        conn.close()
        if dist.is_initialized():
            dist.destroy_process_group()


def run_distributed(
    fn: Callable[..., Any],
    world_size: int = 2,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    timeout: float = 120.0,
    env: dict[str, str] | None = None,
) -> list[Any]:
    """Run ``fn(*args, **kwargs)`` in ``world_size`` replica processes; return results by rank.

    ``fn`` must be picklable (defined at module level). Inside it, create the strategy as usual
    (``MirroredStrategy(["/cpu:0", "/cpu:1"])``): it joins this harness's job instead of
    launching processes.

    Raises:
        ReplicaFailedError: a replica raised; the message holds its rank and traceback.
        TimeoutError: not every replica finished within ``timeout`` seconds (names which).
    """
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1. Received: world_size={world_size}")
    store_dir = tempfile.mkdtemp(prefix="unison-test-job-")  # 0700: this user only
    # Tests run N replicas whatever the number of cores (each a process sharing them).
    env = {**launcher_secret_env(), ENV_CPU_OVERSUBSCRIBE: "1", **(env or {})}
    ctx = mp.get_context("spawn")
    procs, conns = [], []
    for rank in range(world_size):
        parent_end, child_end = ctx.Pipe(duplex=False)
        p = ctx.Process(
            target=_replica_main,
            name=f"unison-replica-{rank}",
            daemon=True,
            args=(fn, rank, world_size, store_dir, args, kwargs or {}, env, child_end),
        )
        p.start()
        child_end.close()
        procs.append(p)
        conns.append(parent_end)
    results: dict[int, Any] = {}
    deadline = time.monotonic() + timeout
    try:
        while len(results) < world_size:
            if time.monotonic() > deadline:
                missing = sorted(set(range(world_size)) - set(results))
                raise TimeoutError(
                    f"run_distributed: replicas {missing} of {world_size} did not finish within "
                    f"{timeout:.0f}s (finished: {sorted(results)}). A replica is probably waiting in a "
                    "collective that another replica never issued."
                )
            for rank, (p, conn) in enumerate(zip(procs, conns)):
                if rank in results:
                    continue
                if conn.poll():
                    try:
                        message = conn.recv()
                    except EOFError:
                        message = ("error", "exited without a result", "")
                    if message[0] == "error":
                        raise ReplicaFailedError(
                            f"Replica {rank} of {world_size} failed: {message[1]}\n"
                            f"--- traceback of replica {rank} ---\n{message[2]}",
                            rank=rank,
                            remote_traceback=message[2],
                        )
                    results[rank] = message[1]
                elif not p.is_alive() and not conn.poll():
                    raise ReplicaFailedError(
                        f"Replica {rank} of {world_size} died with exit code {p.exitcode} before "
                        "reporting a result (killed, or crashed in native code).",
                        rank=rank,
                    )
            time.sleep(0.01)
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
        shutil.rmtree(store_dir, ignore_errors=True)
    return [results[r] for r in range(world_size)]


def run_multi_worker(
    target: str,
    num_workers: int = 2,
    kwargs: dict[str, Any] | None = None,
    timeout: float = 120.0,
    sys_path: list[str] | None = None,
    netns: list[str] | None = None,
) -> list[Any]:
    """Run ``target(**kwargs)`` on the workers of a loopback ``TF_CONFIG`` cluster.

    See :func:`unison.testing.multi_worker.run_multi_worker` (loaded on first use).
    """
    from unison.testing import multi_worker

    return multi_worker.run_multi_worker(target, num_workers, kwargs, timeout, sys_path, netns)
