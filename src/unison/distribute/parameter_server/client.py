"""The parameter servers seen as one: calls grouped per server, sent together, failures named.

A variable is split into shards that live on different parameter servers; reading, writing or
updating several variables means one message per (server, operation) holding every shard that
server keeps. :class:`ShardCalls` collects those messages and :meth:`ParameterServers.send`
sends them concurrently and waits for all; a server that does not answer becomes one
:class:`~unison.errors.ParameterServerUnavailableError` naming it, whoever the caller is
(the coordinator or a worker).

Example::

    servers = ParameterServers(clients, consequence="worker:0 cannot update its variables.")
    calls = ShardCalls()
    for shard, grad in zip(spec.shards, spec.split(grad)):
        calls.add(shard.ps, PS_PUSH, shard.name, [grad])
    servers.send(calls)
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import torch

from unison.comm.rpc import RpcClient
from unison.errors import ParameterServerUnavailableError, TaskUnavailableError

Reply = tuple[dict, list[torch.Tensor]]


@dataclass
class _Message:
    names: list[str] = field(default_factory=list)
    tensors: list[torch.Tensor] = field(default_factory=list)
    into: list[torch.Tensor] = field(default_factory=list)


class ShardCalls:
    """Shards to send, grouped into one message per (parameter server, operation)."""

    def __init__(self) -> None:
        self.messages: dict[tuple[int, str], _Message] = {}

    def add(
        self, ps: int, op: str, name: str, tensors: Sequence[torch.Tensor] = (), into: Sequence[torch.Tensor] = ()
    ) -> None:
        """Add shard ``name`` (on server ``ps``) with its ``tensors`` to the ``op`` message for ``ps``.

        ``into``: tensors the reply's tensors are written into (a pull into the local copies).
        """
        message = self.messages.setdefault((ps, op), _Message())
        message.names.append(name)
        message.tensors.extend(tensors)
        message.into.extend(into)


class ParameterServers:
    """One :class:`~unison.comm.rpc.RpcClient` per parameter server, with grouped calls.

    Args:
        clients: the clients, in the order of the cluster spec's ``ps`` tasks.
        consequence: what the caller cannot do without a server, appended to the error.
    """

    def __init__(self, clients: Sequence[RpcClient], consequence: str) -> None:
        self.clients = list(clients)
        self.consequence = consequence
        self.bytes_sent = 0
        self.bytes_received = 0

    def __len__(self) -> int:
        return len(self.clients)

    def unavailable(self, exc: TaskUnavailableError) -> ParameterServerUnavailableError:
        """The error a caller raises when ``exc`` says a parameter server did not answer."""
        return ParameterServerUnavailableError(f"{exc} {self.consequence}", exc.task, exc.op)

    def submit(
        self,
        ps: int,
        op: str,
        header: dict | None = None,
        tensors: Sequence[torch.Tensor] = (),
        reply_bytes: int = 0,
        into: Sequence[torch.Tensor] | None = None,
    ) -> Future[Reply]:
        """Start one call to server ``ps``; :meth:`result` waits for it."""
        self.bytes_sent += sum(t.nbytes for t in tensors)
        try:
            return self.clients[ps].submit(op, header, list(tensors), reply_bytes=reply_bytes, into=into)
        except TaskUnavailableError as exc:
            raise self.unavailable(exc) from None

    def result(self, future: Future[Reply]) -> Reply:
        """The reply of a submitted call, or the named error if its server did not answer."""
        try:
            header, tensors = future.result()
        except TaskUnavailableError as exc:
            raise self.unavailable(exc) from None
        self.bytes_received += sum(t.nbytes for t in tensors)
        return header, tensors

    def call(
        self,
        ps: int,
        op: str,
        header: dict | None = None,
        tensors: Sequence[torch.Tensor] = (),
        reply_bytes: int = 0,
        into: Sequence[torch.Tensor] | None = None,
    ) -> Reply:
        """One call to server ``ps``, waited for."""
        return self.result(self.submit(ps, op, header, tensors, reply_bytes, into))

    def send(self, calls: ShardCalls, header: dict[str, Any] | None = None) -> None:
        """Send every grouped message (with ``header`` added to each) together; wait for all."""
        pending = []
        for (ps, op), message in calls.messages.items():
            into = message.into or None
            reply_bytes = sum(t.nbytes for t in message.into)
            pending.append(
                self.submit(ps, op, {"names": message.names, **(header or {})}, message.tensors, reply_bytes, into)
            )
        for future in pending:
            self.result(future)


__all__ = ["ParameterServers", "ShardCalls"]
