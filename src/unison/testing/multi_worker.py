"""Test multi-worker code: N real worker processes, each with its own ``TF_CONFIG``, on loopback.

``run_multi_worker(fn, num_workers)`` starts the workers of a ``TF_CONFIG`` cluster as a TF user
starts them by hand (one process per worker, ``TF_CONFIG`` in its environment), runs
``fn(**kwargs)`` in each, and returns the results by worker index. A worker that fails or
outlives ``timeout`` fails the call with every worker's log.

Workers are forked from a *zygote*: one process that imports torch and unison once and forks a
worker per request. Each worker is still a real process with its own sockets, process group and
exit code, but starts in milliseconds instead of the seconds that importing torch costs (which
on a small CI machine adds up to minutes over a test run). A worker can be placed in a network
namespace (``netns=``) before it runs, to give it an address of its own. Programs that re-run
their own command (several local replicas per worker) need real ``python`` processes:
:func:`start_worker` starts those.

Example::

    # my_tests/programs.py
    def train(steps):
        import unison as tf
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        ...
        return strategy.cluster_resolver.task_id

    # my_tests/test_train.py
    from unison.testing import run_multi_worker
    assert run_multi_worker("programs:train", num_workers=2, kwargs={"steps": 5},
                            sys_path=[os.path.dirname(__file__)]) == [0, 1]
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from unison.errors import ReplicaFailedError

__all__ = [
    "Worker",
    "Zygote",
    "clean_env",
    "free_ports",
    "log_of",
    "run_multi_worker",
    "shared_zygote",
    "start_worker",
    "tf_config",
    "wait_all",
]

# Variables of pytest, of launchers and of an enclosing job: a worker must see only its own.
_FOREIGN = (
    "PYTEST_",
    "UNISON_",
    "TF_CONFIG",
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "MASTER_",
    "TORCHELASTIC",
    "GLOO_SOCKET_IFNAME",
)


class _Process(Protocol):
    returncode: int | None

    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def kill(self) -> None: ...


@dataclass
class Worker:
    """One started worker: its index, its process and where its pickled result will be."""

    index: int
    proc: _Process
    result_file: str
    log_file: str = field(default="")

    def result(self) -> Any:
        """The value the worker's function returned (unpickled from the worker's own file).

        The file is unpickled only if this user owns it and nobody else can write into its
        folder (``run_multi_worker`` uses a private temporary folder; pytest's ``tmp_path`` is
        one too): a file another user could have placed there is refused, not decoded.
        """
        folder = os.path.dirname(os.path.abspath(self.result_file))
        if os.stat(folder).st_mode & 0o022 or os.stat(self.result_file).st_uid != os.getuid():
            raise PermissionError(
                f"Refusing to unpickle {self.result_file!r}: its folder is writable by other users, or "
                "another user owns the file. Give start_worker/Zygote.start a private folder (mode 0700)."
            )
        with open(self.result_file, "rb") as fh:
            return pickle.load(fh)


def tf_config(addresses: list[str], index: int, job: str = "worker") -> str:
    """TF's ``TF_CONFIG`` JSON for task ``index`` of a cluster with one job."""
    return json.dumps({"cluster": {job: addresses}, "task": {"type": job, "index": index}})


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without pytest's, launchers' and a job's variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN)}
    env.update(extra)
    return env


def free_ports(n: int) -> list[int]:
    """``n`` distinct TCP ports that were free on this machine a moment ago."""
    from torch.distributed.elastic.utils.distributed import get_free_port

    ports: set[int] = set()
    while len(ports) < n:
        ports.add(get_free_port())  # type: ignore[no-untyped-call]  # torch leaves this helper unannotated
    return sorted(ports)


def log_of(folder: str, index: int) -> str:
    """What worker ``index`` printed (stdout and stderr together)."""
    with open(os.path.join(folder, f"worker.{index}.log"), encoding="utf-8", errors="replace") as fh:
        return fh.read()


def start_worker(
    target: str,
    folder: str,
    index: int,
    config: str,
    kwargs: dict[str, Any],
    prefix: list[str] | None = None,
    sys_path: list[str] | None = None,
    **extra_env: str,
) -> Worker:
    """Start worker ``index`` as a fresh ``python`` process running ``target`` (``"module:function"``).

    ``prefix`` goes before ``python`` (a launcher such as ``unison launch``); the worker's output
    goes to ``folder/worker.<index>.log`` and its result to ``folder/result.<index>``.
    """
    result = os.path.join(folder, f"result.{index}")
    log_path = os.path.join(folder, f"worker.{index}.log")
    cmd = [*(prefix or []), sys.executable, "-m", "unison.testing.multi_worker", target, result, json.dumps(kwargs)]
    env = clean_env(TF_CONFIG=config, **extra_env)
    if sys_path:
        env["PYTHONPATH"] = os.pathsep.join([*sys_path, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return Worker(index, proc, result, log_path)


def wait_all(workers: list[Worker], folder: str, timeout: float) -> None:
    """Wait for every worker; on a failure or at ``timeout`` kill them all and raise with their logs.

    Raises:
        ReplicaFailedError: a worker exited non-zero or was still running at the deadline; the
            message names each such worker and holds the end of every worker's log.
    """
    deadline = time.monotonic() + timeout
    try:
        for w in workers:
            w.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    finally:
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
                w.proc.wait()
    bad = [w for w in workers if w.proc.returncode != 0]
    if bad:
        late = [w.index for w in bad if w.proc.returncode in (-9, 137)]
        logs = "\n".join(
            f"--- worker {w.index} (exit {w.proc.returncode}) ---\n{log_of(folder, w.index)[-3000:]}" for w in workers
        )
        raise ReplicaFailedError(
            f"workers {[w.index for w in bad]} of {len(workers)} failed"
            + (f" (killed at the {timeout:.0f}s timeout: {late})" if late else "")
            + f":\n{logs}",
            rank=bad[0].index,
        )


class Zygote:
    """A process that imports unison once, then forks workers on request (see the module doc)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "unison.testing.multi_worker", "--zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=clean_env(),
            text=True,
        )
        if self._ask({"op": "ping"}) != {"ok": True}:
            raise RuntimeError(
                "the multi-worker zygote did not start; run `python -m unison.testing.multi_worker --zygote` to see why"
            )

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.proc.stdin is None or self.proc.stdout is None:
            raise RuntimeError("the multi-worker zygote has no pipes")
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return answer

    def start(
        self,
        target: str,
        folder: str,
        index: int,
        config: str,
        kwargs: dict[str, Any],
        netns: str | None = None,
        sys_path: list[str] | None = None,
    ) -> Worker:
        """Fork worker ``index`` running ``target`` (``"module:function"``) with ``TF_CONFIG=config``."""
        result = os.path.join(folder, f"result.{index}")
        log_path = os.path.join(folder, f"worker.{index}.log")
        pid = self._ask(
            {
                "op": "start",
                "target": target,
                "kwargs": kwargs,
                "result": result,
                "env": clean_env(TF_CONFIG=config),
                "netns": netns,
                "log": log_path,
                "sys_path": sys_path or [],
            }
        )["pid"]
        return Worker(index, _ForkedProcess(self, pid), result, log_path)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


_SHARED: list[Zygote] = []


def shared_zygote() -> Zygote:
    """One zygote per test session (its start-up is paid once); closed at interpreter exit."""
    if not _SHARED or _SHARED[0].proc.poll() is not None:
        _SHARED[:] = [Zygote()]
        atexit.register(_SHARED[0].close)
    return _SHARED[0]


def run_multi_worker(
    target: str,
    num_workers: int = 2,
    kwargs: dict[str, Any] | None = None,
    timeout: float = 120.0,
    sys_path: list[str] | None = None,
    netns: list[str] | None = None,
) -> list[Any]:
    """Run ``target(**kwargs)`` on ``num_workers`` workers of a loopback ``TF_CONFIG`` cluster.

    Args:
        target: ``"module:function"``; the module is imported in each worker (``sys_path`` is
            prepended to its ``sys.path``), the function builds its strategy as a user would
            (``MultiWorkerMirroredStrategy()`` reads ``TF_CONFIG``).
        num_workers: how many worker tasks the cluster has.
        kwargs: keyword arguments (JSON-serialisable) for every worker.
        timeout: seconds for the whole run; workers still running then are killed.
        sys_path: folders to import ``target``'s module from.
        netns: one network namespace name per worker (their addresses are then up to the
            caller; by default every worker listens on 127.0.0.1).

    Returns:
        The functions' return values (pickled by each worker), by worker index.

    Raises:
        ValueError: ``num_workers < 1``, a malformed ``target``, or ``netns`` of the wrong length.
        ReplicaFailedError: a worker failed or timed out (every worker's log is in the message).
    """
    if num_workers < 1:
        raise ValueError(f"num_workers must be >= 1. Received: num_workers={num_workers}")
    if target.count(":") != 1:
        raise ValueError(f"target must be 'module:function'. Received: target={target!r}")
    if netns is not None and len(netns) != num_workers:
        raise ValueError(f"netns needs one namespace per worker ({num_workers}). Received: netns={netns}")
    zygote = shared_zygote()
    addresses = [f"127.0.0.1:{p}" for p in free_ports(num_workers)]
    with tempfile.TemporaryDirectory(prefix="unison-multi-worker-") as folder:
        workers = [
            zygote.start(
                target,
                folder,
                i,
                tf_config(addresses, i),
                kwargs or {},
                netns=netns[i] if netns else None,
                sys_path=sys_path,
            )
            for i in range(num_workers)
        ]
        wait_all(workers, folder, timeout)
        return [w.result() if os.path.exists(w.result_file) else None for w in workers]


class _ForkedProcess:
    """The part of ``subprocess.Popen``'s interface callers use, for a worker the zygote forked."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote, self.pid = zygote, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote._ask({"op": "poll", "pid": self.pid})["code"]
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"worker pid {self.pid}", timeout or 0)
            time.sleep(0.02)  # polling a child's exit status; no other event to wait on
        return code

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass


def _resolve(target: str, sys_path: list[str]) -> Any:
    for folder in reversed(sys_path):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _run_forked(request: dict[str, Any]) -> None:
    """In the forked child: redirect output, enter the namespace, run the function, exit."""
    import ctypes
    import traceback

    code = 1
    try:
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        if request["netns"]:
            fd = os.open(f"/var/run/netns/{request['netns']}", os.O_RDONLY)
            if ctypes.CDLL(None, use_errno=True).setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
                raise OSError(ctypes.get_errno(), "setns failed")
        os.environ.clear()
        os.environ.update(request["env"])
        out = _resolve(request["target"], request["sys_path"])(**request["kwargs"])
        if out is not None:
            with open(request["result"], "wb") as fh:
                pickle.dump(out, fh)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()  # what a normal interpreter exit would do
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)


def _zygote_main() -> None:
    """Serve start/poll requests (one JSON object per line) until stdin closes."""
    import torch._dynamo  # noqa: F401  # what the first torch.optim optimizer would import

    import unison  # noqa: F401  # imported once here, inherited by every worker

    exited: dict[int, int] = {}
    for line in sys.stdin:
        request = json.loads(line)
        reply: dict[str, Any]
        if request["op"] == "ping":
            reply = {"ok": True}
        elif request["op"] == "poll":
            pid = request["pid"]
            if pid not in exited:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    exited[pid] = os.waitstatus_to_exitcode(status)
            reply = {"code": exited.get(pid)}
        else:
            pid = os.fork()
            if pid == 0:
                _run_forked(request)
            reply = {"pid": pid}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _main() -> None:
    """``python -m unison.testing.multi_worker (--zygote | TARGET RESULT_FILE KWARGS_JSON)``."""
    if sys.argv[1] == "--zygote":
        _zygote_main()
        return
    target, result_file, kwargs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    replica = os.environ.get("UNISON_WORKER_REPLICA")  # a worker's extra local replica
    if replica:
        result_file += f".replica{replica}"
    if "TORCHELASTIC_RUN_ID" in os.environ:  # started by torchrun / unison launch: one file per rank
        result_file += f".{os.environ['RANK']}"
    out = _resolve(target, [])(**kwargs)
    if out is not None:
        with open(result_file, "wb") as fh:
            pickle.dump(out, fh)


if __name__ == "__main__":
    _main()
