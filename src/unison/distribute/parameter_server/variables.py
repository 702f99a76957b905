"""Where each variable lives: its shards, their rows and the parameter server of each.

A :class:`VariableSpec` is the whole, serialisable description every task shares: the
coordinator decides it once (:class:`Placement`), workers receive it with the functions that
use the variable. Shards are row ranges along axis 0; each shard goes to the parameter server
holding the fewest bytes so far (round-robin by size), so tables of different sizes spread
evenly and consecutive shards of one variable mostly land on different servers.

Example:
    >>> import torch
    >>> from unison.distribute.parameter_server.partitioners import FixedShardsPartitioner
    >>> placement = Placement(num_ps=2, partitioner=FixedShardsPartitioner(3))
    >>> spec = placement.place("s/0", (10, 4), torch.float32, sparse=True)
    >>> [(s.ps, s.offset, s.rows) for s in spec.shards]
    [(0, 0, 4), (1, 4, 3), (1, 7, 3)]
    >>> [t.shape[0] for t in spec.split(torch.zeros(10, 4))]
    [4, 3, 3]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from unison.distribute.parameter_server.partitioners import shard_rows


@dataclass(frozen=True)
class ShardSpec:
    """One shard: its name on the PS, the PS index, and its rows ``[offset, offset + rows)``."""

    name: str
    ps: int
    offset: int
    rows: int


@dataclass(frozen=True)
class VariableSpec:
    """A variable as every task sees it.

    Attributes:
        name: unique within the coordinator's session.
        shape: the full shape.
        dtype: torch dtype name, e.g. ``"float32"``.
        shards: its row shards, in order.
        sparse: an embedding table: workers pull and push only the rows a step touches.
        trainable: whether gradients flow to it.
    """

    name: str
    shape: tuple[int, ...]
    dtype: str
    shards: tuple[ShardSpec, ...]
    sparse: bool = False
    trainable: bool = True

    @property
    def torch_dtype(self) -> torch.dtype:
        return getattr(torch, self.dtype)

    def split(self, value: torch.Tensor) -> list[torch.Tensor]:
        """The shards' slices of a full-size tensor (views, no copies)."""
        if len(self.shards) == 1:
            return [value]
        return [value.narrow(0, s.offset, s.rows) for s in self.shards]

    def route(self, ids: torch.Tensor) -> list[tuple[ShardSpec, torch.Tensor, torch.Tensor]]:
        """Split row ``ids`` by shard: ``(shard, positions in ids, local row ids)`` per touched shard."""
        if len(self.shards) == 1:
            return [(self.shards[0], torch.arange(len(ids)), ids)]
        bounds = torch.tensor([s.offset + s.rows for s in self.shards])
        which = torch.bucketize(ids, bounds, right=True)
        out = []
        for i, shard in enumerate(self.shards):
            pos = (which == i).nonzero().reshape(-1)
            if len(pos):
                out.append((shard, pos, ids.index_select(0, pos) - shard.offset))
        return out

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "sparse": self.sparse,
            "trainable": self.trainable,
            "shards": [[s.name, s.ps, s.offset, s.rows] for s in self.shards],
        }

    @classmethod
    def from_json(cls, d: dict) -> VariableSpec:
        return cls(
            d["name"],
            tuple(d["shape"]),
            d["dtype"],
            tuple(ShardSpec(*s) for s in d["shards"]),
            d["sparse"],
            d["trainable"],
        )


class Placement:
    """Decides the shards of each new variable and the PS of each shard (round-robin by size).

    Args:
        num_ps: parameter servers in the cluster.
        partitioner: ``partitioner(shape, dtype) -> partitions per axis`` or ``None`` (one shard).
    """

    def __init__(self, num_ps: int, partitioner: Callable[..., Sequence[int]] | None = None) -> None:
        self.num_ps = num_ps
        self.partitioner = partitioner
        self.bytes_per_ps = [0] * num_ps

    def place(
        self, name: str, shape: Sequence[int], dtype: torch.dtype, sparse: bool = False, trainable: bool = True
    ) -> VariableSpec:
        shape = tuple(int(s) for s in shape)
        n = 1
        if self.partitioner is not None and shape and shape[0] > 1:
            parts = list(self.partitioner(shape, dtype))
            if any(p != 1 for p in parts[1:]):
                raise ValueError(
                    f"Variables are sharded along axis 0 only; the partitioner asked for {parts} "
                    f"partitions of variable {name!r} with shape {shape}."
                )
            n = max(1, min(int(parts[0]) if parts else 1, shape[0]))
        row_bytes = torch.empty((), dtype=dtype).element_size() * (
            int(torch.tensor(shape[1:]).prod().item()) if len(shape) > 1 else 1
        )
        shards, offset = [], 0
        for i, rows in enumerate(shard_rows(shape[0], n) if shape else [1]):
            ps = min(range(self.num_ps), key=lambda k: (self.bytes_per_ps[k], k))
            self.bytes_per_ps[ps] += rows * row_bytes
            shards.append(ShardSpec(f"{name}/part_{i}" if n > 1 else name, ps, offset, rows))
            offset += rows
        return VariableSpec(name, shape, str(dtype).removeprefix("torch."), tuple(shards), sparse, trainable)


def describe(spec: VariableSpec, ps_tasks: Sequence[str]) -> list[dict[str, Any]]:
    """Human-readable shard table of a variable (for ``strategy.variable_shards``)."""
    return [{"shard": s.name, "task": ps_tasks[s.ps], "rows": (s.offset, s.offset + s.rows)} for s in spec.shards]


__all__ = ["Placement", "ShardSpec", "VariableSpec", "describe"]
