"""Collectives with named errors over one torch.distributed process group.

The rest of unison talks to other replicas only through a :class:`Communicator`. It knows
nothing of models: it moves tensors. ``LocalCommunicator`` is the one-replica case (every
collective is the identity), so callers never branch on the world size.

Example:
    >>> import torch
    >>> comm = LocalCommunicator()
    >>> comm.all_reduce(torch.ones(2)).tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import datetime
from typing import Any, Callable

import torch
import torch.distributed as dist

from unison.cluster.placement import TORCHRUN_SOURCE, ProcessPlacement
from unison.errors import CollectiveTimeoutError, UnisonError

_REDUCE_OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}


class Communicator:
    """Collectives of this replica's process group; every call takes part on every replica.

    Args:
        rank: this replica's global rank.
        world_size: number of replicas.
        device: where this replica's tensors live (collective buffers go there).
        timeout_s: seconds a collective may take before it fails with a named error.

    The contract: every replica issues the same collectives in the same order (the sequence
    number in error messages is that order), so a mismatch shows up as a named failure.
    """

    def __init__(self, rank: int, world_size: int, device: torch.device, timeout_s: float) -> None:
        self.rank = rank
        self.world_size = world_size
        self.device = device
        self.timeout_s = timeout_s
        self._seq = 0

    # The failure path: a torch RuntimeError from deep inside gloo/NCCL becomes an error that
    # names the operation, its sequence number and this rank (DESIGN section 5).
    def _run(self, op_name: str, fn: Callable[[], Any]) -> Any:
        self._seq += 1
        try:
            return fn()
        except RuntimeError as exc:
            text = str(exc)
            kind = CollectiveTimeoutError if "imeout" in text or "timed out" in text else UnisonError
            raise kind(
                f"Collective '{op_name}' (#{self._seq}) failed on rank {self.rank} of "
                f"{self.world_size} after at most {self.timeout_s:.0f}s: {text.splitlines()[0]}. "
                f"Another replica probably stopped (crashed, was killed, or took a different "
                f"code path and issued different collectives); its own error says why."
            ) from exc

    @property
    def is_distributed(self) -> bool:
        """True when there is more than one replica."""
        return self.world_size > 1

    def all_reduce(self, tensor: torch.Tensor, op: str = "sum", name: str = "all_reduce") -> torch.Tensor:
        """Reduce ``tensor`` in place across replicas and return it."""
        self._run(name, lambda: dist.all_reduce(tensor, op=_REDUCE_OPS[op]))
        return tensor

    def all_reduce_async(self, tensor: torch.Tensor, name: str = "all_reduce") -> "dist.Work":
        """Start a SUM all-reduce of ``tensor`` in place; ``wait()`` the returned work."""
        return self._run(name, lambda: dist.all_reduce(tensor, op=dist.ReduceOp.SUM, async_op=True))

    def wait(self, work: "dist.Work", name: str = "all_reduce") -> None:
        """Wait for asynchronous work, translating failures like the blocking calls."""
        self._run(name + ".wait", work.wait)

    def broadcast(self, tensor: torch.Tensor, src: int = 0, name: str = "broadcast") -> torch.Tensor:
        """Overwrite ``tensor`` on every replica with rank ``src``'s value."""
        self._run(name, lambda: dist.broadcast(tensor, src=src))
        return tensor

    def all_gather(self, tensor: torch.Tensor, name: str = "all_gather") -> list[torch.Tensor]:
        """Gather ``tensor`` from every replica; sizes along dim 0 may differ between replicas."""
        local_n = torch.tensor([tensor.shape[0]], dtype=torch.int64, device=self.device)
        sizes = [torch.zeros_like(local_n) for _ in range(self.world_size)]
        self._run(name + ".sizes", lambda: dist.all_gather(sizes, local_n))
        counts = [int(s.item()) for s in sizes]
        longest = max(counts)
        padded = tensor.new_zeros((longest, *tensor.shape[1:]))
        padded[: tensor.shape[0]] = tensor
        out = [torch.empty_like(padded) for _ in range(self.world_size)]
        self._run(name, lambda: dist.all_gather(out, padded.contiguous()))
        return [t[:n] for t, n in zip(out, counts)]

    def broadcast_object(self, obj: Any, src: int = 0, name: str = "broadcast_object") -> Any:
        """Send a picklable object from ``src`` to every replica (small control data only)."""
        payload = [obj if self.rank == src else None]
        self._run(name, lambda: dist.broadcast_object_list(payload, src=src))
        return payload[0]

    def all_gather_object(self, obj: Any, name: str = "all_gather_object") -> list[Any]:
        """Gather one picklable object from every replica (small control data only)."""
        out: list[Any] = [None] * self.world_size
        self._run(name, lambda: dist.all_gather_object(out, obj))
        return out

    def barrier(self, name: str = "barrier") -> None:
        """Block until every replica arrives."""
        self._run(name, lambda: dist.barrier())

    def shutdown(self) -> None:
        """Leave the process group (idempotent)."""
        if dist.is_initialized():
            dist.destroy_process_group()


class LocalCommunicator(Communicator):
    """The one-replica communicator: every collective returns its input unchanged."""

    def __init__(self, device: torch.device | None = None) -> None:
        super().__init__(0, 1, device or torch.device("cpu"), timeout_s=0.0)

    def all_reduce(self, tensor: torch.Tensor, op: str = "sum", name: str = "all_reduce") -> torch.Tensor:
        return tensor

    def all_reduce_async(self, tensor: torch.Tensor, name: str = "all_reduce") -> "dist.Work":
        raise UnisonError("all_reduce_async needs more than one replica; check is_distributed first.")

    def broadcast(self, tensor: torch.Tensor, src: int = 0, name: str = "broadcast") -> torch.Tensor:
        return tensor

    def all_gather(self, tensor: torch.Tensor, name: str = "all_gather") -> list[torch.Tensor]:
        return [tensor]

    def broadcast_object(self, obj: Any, src: int = 0, name: str = "broadcast_object") -> Any:
        return obj

    def all_gather_object(self, obj: Any, name: str = "all_gather_object") -> list[Any]:
        return [obj]

    def barrier(self, name: str = "barrier") -> None:
        return None

    def shutdown(self) -> None:
        return None


def connect(
    placement: ProcessPlacement,
    backend: str,
    device: torch.device,
    timeout_s: float,
    store: "dist.Store | None" = None,
) -> Communicator:
    """Join (or create) the default process group described by ``placement``.

    Args:
        placement: this process's rank, world size and rendezvous address.
        backend: ``"gloo"`` (CPU) or ``"nccl"`` (CUDA).
        device: this replica's device.
        timeout_s: collective timeout in seconds.
        store: an already-created rendezvous store (the launcher's own process passes the store
            it serves); ``None`` connects to the one at ``placement.master_addr:master_port``.

    Returns:
        A :class:`Communicator` for this replica.
    """
    timeout = datetime.timedelta(seconds=timeout_s)
    if not dist.is_initialized():
        if placement.source == TORCHRUN_SOURCE and store is None:
            dist.init_process_group(
                backend, init_method="env://", rank=placement.rank,
                world_size=placement.world_size, timeout=timeout,
            )
        else:
            if store is None:
                try:
                    store = dist.TCPStore(
                        placement.master_addr, placement.master_port, placement.world_size,
                        is_master=False, timeout=timeout,
                    )
                except RuntimeError as exc:
                    raise UnisonError(
                        f"Replica {placement.rank} could not reach the rendezvous store at "
                        f"{placement.master_addr}:{placement.master_port} within {timeout_s:.0f}s: "
                        f"{str(exc).splitlines()[0]}. The process that owns it (replica 0 or the "
                        f"test harness) has probably exited."
                    ) from exc
            dist.init_process_group(
                backend, store=store, rank=placement.rank,
                world_size=placement.world_size, timeout=timeout,
            )
    return Communicator(placement.rank, placement.world_size, device, timeout_s)

