"""ZeRO stage 1: each replica keeps the optimizer state of its own shard of the parameters.

Gradients are still all-reduced in full; then each replica steps only the parameters it owns
(so optimizer state such as Adam's two moments exists only for those) and the updated values
are broadcast from their owners. Parameters end exactly as in the unsharded run.

Example:
    >>> import torch
    >>> ps = [torch.nn.Parameter(torch.zeros(n)) for n in (10, 3, 3, 4)]
    >>> partition(ps, 2)
    [0, 1, 1, 1]
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

import torch

from unison.comm.communicator import Communicator


def partition(params: Sequence[torch.Tensor], world_size: int) -> list[int]:
    """Owner rank of each parameter: greedy by size, largest first, deterministic."""
    load = [0] * world_size
    owner = [0] * len(params)
    for i in sorted(range(len(params)), key=lambda i: (-params[i].numel(), i)):
        rank = min(range(world_size), key=lambda r: (load[r], r))
        owner[i] = rank
        load[rank] += params[i].numel()
    return owner


class ShardedState:
    """Which parameters this replica steps, and how updated values reach the others."""

    def __init__(
        self, optimizer: torch.optim.Optimizer, comm: Communicator, owners: Mapping[int, int] | None = None
    ) -> None:
        self.optimizer = optimizer
        self.comm = comm
        self.params = [p for g in optimizer.param_groups for p in g["params"]]
        self.owner = partition(self.params, comm.world_size)
        if owners is not None:  # ZeRO-2 chose the owners (per gradient bucket); the rest keep theirs
            self.owner = [owners.get(id(p), r) for p, r in zip(self.params, self.owner)]
        self._owned_ids = {id(p) for p, r in zip(self.params, self.owner) if r == comm.rank}

    @contextlib.contextmanager
    def owned_only(self) -> Iterator[None]:
        """Inside: the optimizer's groups list only this replica's parameters (state stays sharded)."""
        saved = [g["params"] for g in self.optimizer.param_groups]
        for g in self.optimizer.param_groups:
            g["params"] = [p for p in g["params"] if id(p) in self._owned_ids]
        try:
            yield
        finally:
            for g, params in zip(self.optimizer.param_groups, saved):
                g["params"] = params

    def share_updates(self) -> None:
        """Broadcast each owner's updated parameters to every replica (one flat buffer per owner)."""
        for rank in range(self.comm.world_size):
            mine = [p for p, r in zip(self.params, self.owner) if r == rank]
            if not mine:
                continue
            flat = torch.cat([p.detach().reshape(-1) for p in mine])
            self.comm.broadcast(flat, src=rank, name=f"zero.params_from_rank{rank}")
            offset = 0
            with torch.no_grad():
                for p in mine:
                    p.copy_(flat[offset : offset + p.numel()].view_as(p))
                    offset += p.numel()

    def state_bytes(self) -> int:
        """Bytes of optimizer state held by this replica."""
        total = 0
        for state in self.optimizer.state.values():
            for v in state.values():
                if isinstance(v, torch.Tensor):
                    total += v.numel() * v.element_size()
        return total
