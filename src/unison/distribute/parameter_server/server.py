"""``tf.distribute.Server``: the process of a ``ps`` or ``worker`` task, and ``unison server``.

A ``ps`` task serves its variable shards (:class:`~unison.distribute.parameter_server.store.ParameterStore`); a
``worker`` task runs the functions the coordinator schedules
(:class:`~unison.distribute.parameter_server.worker.WorkerRuntime`). The server binds exactly
the address the cluster spec gives its task. It accepts a call only with the cluster's shared
token (``UNISON_CLUSTER_TOKEN``, at least 128 bits), which never travels: each call proves its
sender holds it before anything in the call is read, and each reply proves the same of this
task (see :mod:`unison.comm.auth`); it does not start without one (a worker runs the code it is sent). TLS: set ``UNISON_TLS_CERT``/``UNISON_TLS_KEY``
(servers) and ``UNISON_TLS_CA`` (every process).

Example (TF's parameter-server tutorial, the non-coordinator tasks)::

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if resolver.task_type in ("worker", "ps"):
        server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                      task_index=resolver.task_id, protocol="grpc", start=True)
        server.join()

or, from a shell with ``TF_CONFIG`` set: ``unison server``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from unison.cluster.spec import PS, WORKER, ClusterSpec, parse_address
from unison.comm.auth import GOOD_TOKEN_HINT
from unison.comm.rpc import RpcServer, TlsConfig, cluster_token, keep_freed_memory
from unison.distribute.parameter_server import protocol
from unison.distribute.parameter_server.store import ParameterStore
from unison.errors import format_choices

_PROTOCOLS = ("grpc", "grpc+tls")


class Server:
    """An in-process server for one task of the cluster (TF's ``tf.distribute.Server``).

    Args:
        server_or_cluster_def: the cluster (a ``ClusterSpec`` or a ``{job: [addresses]}`` dict).
        job_name: ``"ps"`` or ``"worker"``.
        task_index: this task's index within its job.
        protocol: ``"grpc"`` (TLS when ``UNISON_TLS_CERT`` is set) or ``"grpc+tls"``.
        config: accepted for TF compatibility; unused.
        start: start serving now (else call :meth:`start`).
        token: the cluster token (default ``$UNISON_CLUSTER_TOKEN``).
        timeout_seconds: deadline of a worker's calls to the parameter servers.
    """

    def __init__(
        self,
        server_or_cluster_def: Any,
        job_name: str | None = None,
        task_index: int | None = None,
        protocol: str | None = None,
        config: Any = None,
        start: bool = True,
        token: str | None = None,
        timeout_seconds: float = 60.0,
    ) -> None:
        spec = ClusterSpec(server_or_cluster_def)
        if job_name not in (PS, WORKER):
            raise ValueError(
                f"A unison Server runs a 'ps' or a 'worker' task (the chief runs your program). "
                f"Received: job_name={job_name!r}; the cluster's jobs: {format_choices(spec.jobs)}."
            )
        if job_name not in spec:
            raise ValueError(f"job_name={job_name!r} is not a job of the cluster (jobs: {format_choices(spec.jobs)}).")
        if task_index not in spec.task_indices(job_name):
            raise ValueError(
                f"task_index={task_index!r} is not a task of job {job_name!r} (indices: {spec.task_indices(job_name)})."
            )
        protocol = protocol or "grpc"
        if protocol not in _PROTOCOLS:
            raise ValueError(f"protocol must be one of {format_choices(_PROTOCOLS)}. Received: protocol={protocol!r}")
        self.cluster_spec, self.job_name, self.task_index = spec, job_name, int(task_index)
        self.address = spec.task_address(job_name, self.task_index)
        self.tls = TlsConfig.from_env()
        if protocol == "grpc+tls" and self.tls is None:
            raise ValueError(
                "protocol='grpc+tls' needs UNISON_TLS_CERT and UNISON_TLS_KEY (PEM files) on this "
                "task and UNISON_TLS_CA on every task."
            )
        parse_address(self.address, f"cluster.{job_name}[{task_index}]")
        self.token = cluster_token(token)  # a weak token raises WeakTokenError (a ValueError)
        if self.token is None:
            # a worker runs the code it is sent: without a token anyone who can reach the port
            # (any local user, on loopback) could run theirs
            raise ValueError(
                f"{self.task} would listen on {self.address} without authentication, and a worker runs the code "
                f"it is sent. {GOOD_TOKEN_HINT}"
            )
        self._timeout_s = timeout_seconds
        self._rpc: RpcServer | None = None
        self.role: Any = None
        if start:
            self.start()

    @property
    def task(self) -> str:
        return f"{self.job_name}:{self.task_index}"

    @property
    def target(self) -> str:
        """``grpc://host:port`` (TF's ``Server.target``)."""
        return f"grpc://{self.address}"

    def start(self) -> None:
        """Bind the task's address and serve (idempotent)."""
        if self._rpc is not None:
            return
        if self.job_name == PS:
            self.role = ParameterStore(self.task)
        else:
            from unison.distribute.parameter_server.worker import WorkerRuntime

            ps = (
                [self.cluster_spec.task_address(PS, i) for i in self.cluster_spec.task_indices(PS)]
                if PS in self.cluster_spec
                else []
            )
            self.role = WorkerRuntime(
                self.task_index, self.cluster_spec.num_tasks(WORKER), ps, self.token, self.tls, self._timeout_s
            )
        handlers = {
            protocol.PING: lambda h, t: ({"task": self.task, "incarnation": self.role.incarnation}, []),
            **self.role.handlers(),
        }
        self._rpc = RpcServer(self.address, handlers, token=self.token, tls=self.tls, task=self.task)

    def join(self) -> None:
        """Serve until the process is stopped (TF's ``Server.join``)."""
        keep_freed_memory()  # from now on this process serves: large messages without page faults
        if self._rpc is None:
            self.start()
        assert self._rpc is not None
        self._rpc.wait()

    def stop(self) -> None:
        if self._rpc is not None:
            self._rpc.stop(0)
            self._rpc = None
        if hasattr(self.role, "close"):
            self.role.close()


# --- `unison server` -------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run this process's task of a parameter-server cluster (a 'ps' or 'worker' task), "
        "as TF_CONFIG describes it, until it is stopped."
    )
    parser.add_argument("--job", default=None, help="override TF_CONFIG's task.type (ps or worker)")
    parser.add_argument("--index", type=int, default=None, help="override TF_CONFIG's task.index")


def run(args: argparse.Namespace) -> int:
    # Ctrl-C is how a task is stopped by hand: one line, no traceback, the shell's code for SIGINT
    started: list[Server] = []
    try:
        return _run(args, started)
    except KeyboardInterrupt:
        name = "stopped"
        for server in started:
            server.stop()
            name = f"{server.task} stopped"
        print(f"unison server: {name} (interrupted).", file=sys.stderr, flush=True)
        return 130


def _run(args: argparse.Namespace, started: list[Server]) -> int:
    from unison.cluster.resolvers import TFConfigClusterResolver

    keep_freed_memory()  # before any thread has an arena of its own
    if not os.environ.get("TF_CONFIG", "").strip():
        print(
            "unison server: TF_CONFIG is not set. Set it to the cluster and this task, e.g. "
            '\'{"cluster": {"chief": ["h0:2222"], "worker": ["h1:2222"], "ps": ["h2:2222"]}, '
            '"task": {"type": "ps", "index": 0}}\'.',
            file=sys.stderr,
        )
        return 2
    resolver = TFConfigClusterResolver(task_type=args.job, task_id=args.index)
    try:
        server = Server(
            resolver.cluster_spec(),
            job_name=resolver.task_type,
            task_index=resolver.task_id,
            protocol=resolver.rpc_layer or "grpc",
        )
    except (ValueError, OSError) as exc:
        print(f"unison server: {exc}", file=sys.stderr)
        return 2
    started.append(server)
    print(f"unison server: {server.task} serving on {server.address}", file=sys.stderr, flush=True)
    server.join()
    return 0


__all__ = ["Server"]
