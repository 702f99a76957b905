"""A parameter-server cluster of real processes on loopback, for tests and examples.

Each ``ps`` and ``worker`` task is a ``unison server`` process with its own ``TF_CONFIG``; this
process is the chief (the coordinator). Tasks can be killed (``kill -9``) and restarted at the
same address to test failures. Every process is stopped when the ``with`` block ends.

Example::

    with LocalParameterServerCluster(num_workers=2, num_ps=2) as cluster:
        strategy = tf.distribute.ParameterServerStrategy(cluster.resolver())
        ...
        cluster.kill("worker:1")
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from typing import Any

from unison.cluster import ClusterSpec, SimpleClusterResolver
from unison.comm.rpc import TOKEN_ENV, RpcClient


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports that were free on 127.0.0.1 a moment ago."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class LocalParameterServerCluster:
    """``num_ps`` parameter servers and ``num_workers`` workers as processes on 127.0.0.1.

    Args:
        num_workers: worker tasks.
        num_ps: parameter-server tasks.
        token: the cluster token (default: a fresh random one, also put in this process's
            environment so the coordinator sends it).
        env: extra environment variables for the task processes.
        startup_timeout_s: how long to wait for every task to accept connections.
    """

    def __init__(
        self,
        num_workers: int = 2,
        num_ps: int = 2,
        token: str | None = None,
        env: dict[str, str] | None = None,
        startup_timeout_s: float = 90.0,
    ) -> None:
        ports = free_ports(1 + num_workers + num_ps)
        self.cluster = {
            "chief": [f"127.0.0.1:{ports[0]}"],
            "worker": [f"127.0.0.1:{p}" for p in ports[1 : 1 + num_workers]],
            "ps": [f"127.0.0.1:{p}" for p in ports[1 + num_workers :]],
        }
        self.token = token or secrets.token_hex(32)
        self._env = dict(env or {})
        self._timeout = startup_timeout_s
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._logdir = tempfile.mkdtemp(prefix="unison-ps-cluster-")
        self._old_token: str | None = None

    def __enter__(self) -> LocalParameterServerCluster:
        self._old_token = os.environ.get(TOKEN_ENV)
        os.environ[TOKEN_ENV] = self.token
        try:
            for job in ("ps", "worker"):
                for i in range(len(self.cluster[job])):
                    self.start(f"{job}:{i}", wait=False)
            for task in self._procs:
                self.wait_ready(task)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def resolver(self) -> SimpleClusterResolver:
        """The chief's view of the cluster (this process)."""
        return SimpleClusterResolver(ClusterSpec(self.cluster), task_type="chief", task_id=0, rpc_layer="grpc")

    def tf_config(self, task: str) -> str:
        job, index = task.split(":")
        return json.dumps({"cluster": self.cluster, "task": {"type": job, "index": int(index)}})

    def start(self, task: str, wait: bool = True) -> None:
        """Start (or restart, at the same address) one task's ``unison server`` process."""
        old = self._procs.get(task)
        if old is not None and old.poll() is None:
            raise RuntimeError(f"{task} is still running (pid {old.pid}); kill() it before starting it again.")
        env = {
            **os.environ,
            "TF_CONFIG": self.tf_config(task),
            TOKEN_ENV: self.token,
            "OMP_NUM_THREADS": "1",
            **self._env,
        }
        log = open(os.path.join(self._logdir, task.replace(":", "-") + ".log"), "ab")
        self._procs[task] = subprocess.Popen(
            [sys.executable, "-m", "unison.cli", "server"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        if wait:
            self.wait_ready(task)

    def wait_ready(self, task: str) -> None:
        job, index = task.split(":")
        client = RpcClient(self.cluster[job][int(index)], task, self.token, sender="chief:0")
        try:
            if not client.wait_ready(self._timeout):
                raise TimeoutError(f"{task} did not start within {self._timeout:g} s. Its log:\n{self.log(task)}")
        finally:
            client.close()

    def kill(self, task: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` (default ``SIGKILL``, a crash) to a task and wait for it to exit."""
        proc = self._procs[task]
        proc.send_signal(sig)
        proc.wait(timeout=30)

    def log(self, task: str) -> str:
        path = os.path.join(self._logdir, task.replace(":", "-") + ".log")
        try:
            with open(path, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        for proc in self._procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in self._procs.values():
            proc.wait(timeout=30)
        self._procs.clear()
        shutil.rmtree(self._logdir, ignore_errors=True)
        if self._old_token is None:
            os.environ.pop(TOKEN_ENV, None)
        else:
            os.environ[TOKEN_ENV] = self._old_token


__all__ = ["LocalParameterServerCluster", "free_ports"]
