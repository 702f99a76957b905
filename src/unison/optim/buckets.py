"""Gradient buckets: many gradients packed into a few flat buffers, all-reduced while backward runs.

Parameters are assigned to buckets in reverse order of registration (the order backward produces
their gradients) up to ``bucket_cap_mb`` each. A post-accumulate-grad hook counts each gradient;
when every gradient of a bucket is in, the bucket's asynchronous all-reduce starts, so
communication overlaps the rest of backward. Buckets are launched strictly in index order on
every replica: collectives are matched by issue order, so this is what keeps replicas whose hooks
fire in a different order (or that skip a parameter) from pairing the wrong buffers.

Each bucket carries one extra slot per parameter, 1.0 if this replica produced a gradient for it.
After the reduction a parameter that no replica touched keeps ``grad = None`` (exactly what a
single process would see), and one touched by some replicas gets the sum of what they produced.

Example:
    >>> import torch
    >>> p = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(2))]
    >>> [len(b.params) for b in plan_buckets(p, cap_bytes=1 << 20)]
    [2]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import torch


@dataclass
class Bucket:
    """A flat buffer holding the gradients of ``params`` plus one 'was used' slot per parameter."""

    index: int
    params: list[torch.nn.Parameter]
    offsets: list[int]
    numel: int
    buffer: torch.Tensor | None = None
    ready: int = 0
    work: Any = None
    produced: set[int] = field(default_factory=set)

    def allocate(self, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        if self.buffer is None or self.buffer.dtype != dtype or self.buffer.device != device:
            self.buffer = torch.zeros(self.numel + len(self.params), dtype=dtype, device=device)
        return self.buffer

    def pack(self) -> torch.Tensor:
        """Copy the current gradients (zeros where absent) and 'used' flags into the buffer."""
        first = self.params[0]
        buf = self.allocate(first.dtype, first.device)
        flags = buf[self.numel:]
        for i, (p, off) in enumerate(zip(self.params, self.offsets)):
            view = buf[off: off + p.numel()]
            if p.grad is None:
                view.zero_()
                flags[i] = 0.0
            else:
                view.copy_(p.grad.reshape(-1))
                flags[i] = 1.0
        return buf

    def unpack(self, scale: float) -> None:
        """Write the reduced buffer back into each parameter's ``grad`` (scaled)."""
        buf = self.buffer
        if buf is None:  # nothing was packed this step: nothing to write back
            return
        used = buf[self.numel:].tolist()
        for i, (p, off) in enumerate(zip(self.params, self.offsets)):
            if used[i] == 0.0:
                p.grad = None
                continue
            reduced = buf[off: off + p.numel()].view_as(p)
            if p.grad is None:
                p.grad = torch.empty_like(p)
            if scale != 1.0:
                torch.mul(reduced, scale, out=p.grad)
            else:
                p.grad.copy_(reduced)

    def reset(self) -> None:
        self.ready = 0
        self.work = None
        self.produced.clear()


def plan_buckets(params: Sequence[torch.nn.Parameter], cap_bytes: int) -> list[Bucket]:
    """Group ``params`` (given in registration order) into buckets, last-registered first.

    A bucket never mixes dtypes or devices (it is one flat buffer), and closes when adding the
    next parameter would pass ``cap_bytes`` (a single larger parameter gets a bucket of its own).
    """
    buckets: list[Bucket] = []
    current: list[torch.nn.Parameter] = []
    size = 0

    def close() -> None:
        nonlocal current, size
        if current:
            offsets, total = [], 0
            for p in current:
                offsets.append(total)
                total += p.numel()
            buckets.append(Bucket(len(buckets), current, offsets, total))
        current, size = [], 0

    for p in reversed(list(params)):
        nbytes = p.numel() * p.element_size()
        if current and (size + nbytes > cap_bytes or p.dtype != current[0].dtype
                        or p.device != current[0].device):
            close()
        current.append(p)
        size += nbytes
    close()
    return buckets
