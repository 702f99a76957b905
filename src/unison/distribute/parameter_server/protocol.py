"""The parameter-server protocol: every operation a task serves, and the errors that cross the wire.

A coordinator, its workers and its parameter servers talk through :mod:`unison.comm.rpc`: a
message names its operation (``header["op"]``), and a handler that raises sends the error back
with a stable code. This module is the one list of both, so a server's handler table, a caller
and a test cannot drift apart. It imports no gRPC.

An error travels as its ``wire_code`` (see :mod:`unison.errors`); the caller gets a
:class:`~unison.errors.RemoteError` and asks :func:`is_remote` which one it was, never by the
remote class's name.

Example:
    >>> from unison.errors import RemoteError, WorkerRestartedError
    >>> err = RemoteError("worker:0 failed", "worker:0", WORKER_RUN, "WorkerRestartedError", "",
    ...                   remote_code=WorkerRestartedError.wire_code)
    >>> is_remote(err, WorkerRestartedError), PS_PULL
    (True, 'ps.pull')
"""

from __future__ import annotations

from unison.errors import (
    DatasetExhaustedError,
    ParameterServerUnavailableError,
    RemoteError,
    UnisonError,
    WorkerRestartedError,
)

# --- every task -----------------------------------------------------------------------------------
PING = "ping"  # is the task up, and which incarnation of it answers

# --- a parameter server (distribute.parameter_server.store.ParameterStore) ------------------------
PS_CREATE = "ps.create"  # place shards (if absent, or overwrite)
PS_PULL = "ps.pull"  # read whole shards
PS_PULL_ROWS = "ps.pull_rows"  # read rows of an embedding shard
PS_PUSH = "ps.push"  # apply dense gradients
PS_PUSH_ROWS = "ps.push_rows"  # apply gradients of embedding rows
PS_ASSIGN = "ps.assign"  # overwrite shards (a restore on the coordinator)
PS_SET_OPTIMIZER = "ps.set_optimizer"  # the optimizer (class and hyper-parameters) of shards
PS_RESET = "ps.reset"  # a new coordinator session: forget the old one's variables
PS_STATS = "ps.stats"  # counters (updates per shard)
PS_OPTIMIZER_STATE = "ps.optimizer_state"  # read the optimizer state of shards
PS_LOAD_OPTIMIZER_STATE = "ps.load_optimizer_state"  # restore it

# --- a worker (distribute.parameter_server.worker.WorkerRuntime) ----------------------------------
WORKER_RESET = "worker.reset"  # a new coordinator session
WORKER_REGISTER = "worker.register"  # a scheduled function, pickled
WORKER_RESOURCE = "worker.resource"  # a per-worker resource (a dataset) to build
WORKER_RUN = "worker.run"  # run a registered function on arguments
WORKER_STATS = "worker.stats"  # bytes moved

PS_OPS = (
    PS_CREATE,
    PS_PULL,
    PS_PULL_ROWS,
    PS_PUSH,
    PS_PUSH_ROWS,
    PS_ASSIGN,
    PS_SET_OPTIMIZER,
    PS_RESET,
    PS_STATS,
    PS_OPTIMIZER_STATE,
    PS_LOAD_OPTIMIZER_STATE,
)
WORKER_OPS = (WORKER_RESET, WORKER_REGISTER, WORKER_RESOURCE, WORKER_RUN, WORKER_STATS)

# --- the errors that cross the wire, by code ------------------------------------------------------
WIRE_ERRORS: dict[str, type[UnisonError]] = {
    cls.wire_code: cls
    for cls in (ParameterServerUnavailableError, WorkerRestartedError, DatasetExhaustedError)
    if cls.wire_code is not None
}


def is_remote(exc: BaseException, error: type[UnisonError]) -> bool:
    """True when ``exc`` is a :class:`RemoteError` whose handler raised ``error`` (matched by code)."""
    return isinstance(exc, RemoteError) and error.wire_code is not None and exc.remote_code == error.wire_code


__all__ = [
    "PING",
    "PS_ASSIGN",
    "PS_CREATE",
    "PS_LOAD_OPTIMIZER_STATE",
    "PS_OPS",
    "PS_OPTIMIZER_STATE",
    "PS_PULL",
    "PS_PULL_ROWS",
    "PS_PUSH",
    "PS_PUSH_ROWS",
    "PS_RESET",
    "PS_SET_OPTIMIZER",
    "PS_STATS",
    "WIRE_ERRORS",
    "WORKER_OPS",
    "WORKER_REGISTER",
    "WORKER_RESET",
    "WORKER_RESOURCE",
    "WORKER_RUN",
    "WORKER_STATS",
    "is_remote",
]
