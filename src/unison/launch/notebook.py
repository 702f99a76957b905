"""Several replicas from a notebook: ``notebook_launcher(fn, num_replicas=2)``.

In a script, ``MirroredStrategy(["/cpu:0", "/cpu:1"])`` makes the process replica 0 and re-runs the
script's command to start the others. A notebook has no command to re-run, so the training goes
into a function, and this launcher runs that function once per replica, each in a fresh process
(``spawn``: forking a kernel that already ran torch's OpenMP threads can hang the child). Inside
the function ``MirroredStrategy(...)`` joins the launcher's job instead of starting processes, so
the function is written exactly as the script would be. The function and what it uses from the
notebook (arrays, models defined in cells) travel to the replicas by value with ``cloudpickle`` (a
dependency of unison) through each replica's private pipe; the replicas meet in a
fresh 0700 store folder whose values are signed with a secret only they hold.

Replica 0's printed output (Keras's epoch lines) appears in the cell; the other replicas' output
is dropped, as a script's is. The call returns replica 0's return value (make it picklable:
``history.history`` rather than the ``History`` object); in the replica of a ``MirroredStrategy``
created in a cell (``unison.launch.notebook_cells``), which re-runs the kernel's earlier cells, the
call does nothing and returns ``None``. A replica that raises stops the others,
and the error names it with its traceback; a replica that hangs is stopped after ``timeout``.

Example (a notebook cell)::

    from unison.launch.notebook import notebook_launcher

    def train(epochs):
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        with strategy.scope():
            model = make_model()          # defined in an earlier cell
        return model.fit(x_train, y_train, epochs=epochs, verbose=2).history

    history = notebook_launcher(train, args=(2,), num_replicas=2)
"""

from __future__ import annotations

import io
import multiprocessing as mp
import os
import pickle
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

from unison.cluster.placement import (
    local_replica_env,
)
from unison.cluster.secret import launcher_secret_env
from unison.errors import ReplicaFailedError
from unison.launch.notebook_cells import ENV_MIRRORED_REPLICA

__all__ = ["notebook_launcher"]


class _ToParent(io.TextIOBase):
    """Replica 0's stdout: each write goes to the notebook process, which prints it in the cell."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if text:
            self._conn.send(("out", text))
        return len(text)


def _replica(payload: bytes, rank: int, world_size: int, store_dir: str, env: dict[str, str], conn: Any) -> None:
    os.environ.update(env)
    os.environ.update(local_replica_env(rank, world_size, store_dir))
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    sys.stdout = _ToParent(conn) if rank == 0 else open(os.devnull, "w")  # noqa: SIM115 - lives as long as the replica
    try:
        # the payload comes from this replica's own parent (the kernel that spawned it), through the
        # argument of the spawned process: nothing here is read from the network
        fn, args, kwargs = pickle.loads(payload)
        result = fn(*args, **kwargs)
        sys.stdout.flush()
        conn.send(("ok", result if rank == 0 else None))
    except BaseException as exc:  # report everything, SystemExit included
        conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
    finally:
        conn.close()
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()


def _dumps(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes:
    try:
        import cloudpickle
    except ImportError:
        raise ImportError(
            "notebook_launcher sends the function defined in the notebook (and what it uses) to the replica "
            "processes by value, which needs cloudpickle (a dependency of unison): pip install cloudpickle."
        ) from None
    return bytes(cloudpickle.dumps((fn, args, kwargs)))


def notebook_launcher(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    num_replicas: int = 2,
    timeout: float = 3600.0,
) -> Any:
    """Run ``fn(*args, **kwargs)`` on ``num_replicas`` replica processes; return replica 0's result.

    Raises:
        ValueError: ``num_replicas`` < 1.
        ImportError: cloudpickle is missing (a broken install; the error says how to fix it).
        ReplicaFailedError: a replica raised or died; the message names it, with its traceback.
        TimeoutError: the replicas did not all finish within ``timeout`` seconds.
    """
    if isinstance(num_replicas, bool) or not isinstance(num_replicas, int) or num_replicas < 1:
        raise ValueError(f"num_replicas must be an integer >= 1. Received: num_replicas={num_replicas!r}")
    if os.environ.get(ENV_MIRRORED_REPLICA):
        # a replica of a MirroredStrategy created in a cell re-runs the kernel's earlier cells: the
        # launch (and its replicas) is the kernel's alone
        return None
    payload = _dumps(fn, args, kwargs or {})
    store_dir = tempfile.mkdtemp(prefix="unison-notebook-job-")  # 0700: this user only
    env = launcher_secret_env()
    ctx = mp.get_context("spawn")
    procs, conns = [], []
    for rank in range(num_replicas):
        parent_end, child_end = ctx.Pipe(duplex=False)
        p = ctx.Process(
            target=_replica,
            name=f"unison-replica-{rank}",
            daemon=True,
            args=(payload, rank, num_replicas, store_dir, env, child_end),
        )
        p.start()
        child_end.close()
        procs.append(p)
        conns.append(parent_end)
    try:
        return _collect(procs, conns, num_replicas, timeout)
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
        shutil.rmtree(store_dir, ignore_errors=True)


def _collect(procs: list[Any], conns: list[Any], world: int, timeout: float) -> Any:
    from multiprocessing.connection import wait

    results: dict[int, Any] = {}
    deadline = time.monotonic() + timeout
    while len(results) < world:
        left = deadline - time.monotonic()
        if left <= 0:
            missing = sorted(set(range(world)) - set(results))
            raise TimeoutError(
                f"notebook_launcher: replicas {missing} of {world} did not finish within {timeout:.0f}s; they were "
                "stopped. A replica probably waits in a collective another replica never issued."
            )
        pending = {conns[r]: r for r in range(world) if r not in results}
        ready = wait(list(pending) + [procs[r].sentinel for r in pending.values()], timeout=min(left, 1.0))
        for conn, rank in pending.items():
            while rank not in results and conn.poll():
                try:
                    message = conn.recv()
                except EOFError:
                    message = ("error", "exited without a result", "")
                if message[0] == "out":
                    sys.stdout.write(message[1])
                    continue
                if message[0] == "error":
                    raise ReplicaFailedError(
                        f"Replica {rank} of {world} failed: {message[1]}\n--- traceback of replica {rank} ---\n"
                        f"{message[2]}",
                        rank=rank,
                        remote_traceback=message[2],
                    )
                results[rank] = message[1]
            if rank not in results and procs[rank].sentinel in ready and not conn.poll():
                raise ReplicaFailedError(
                    f"Replica {rank} of {world} died with exit code {procs[rank].exitcode} before reporting a "
                    "result (killed, or crashed in native code).",
                    rank=rank,
                )
    sys.stdout.flush()
    return results[0]
