"""Gradient buckets: many gradients packed into a few flat buffers, all-reduced while backward runs.

Parameters are assigned to buckets in reverse order of registration (the order backward produces
their gradients) up to ``bucket_cap_mb`` each. When every gradient of a bucket is in, the
bucket's asynchronous all-reduce starts, so communication overlaps the rest of backward.
Buckets are launched strictly in index order on every replica: collectives are matched by issue
order, so this keeps replicas whose hooks fire in a different order (or that skip a parameter)
from pairing the wrong buffers.

Layout of a bucket on the wire::

    [ gradients (numel) | used flag per parameter (P) | non-finite flag (1) ]

The flags travel with the gradients, so every replica reaches the same verdict with no extra
collective: a parameter no replica touched keeps ``grad = None`` (exactly what one process would
see), and a non-finite gradient anywhere is seen everywhere. The non-finite flag is
``0 * sum(gradients)``: 0 for finite gradients, NaN as soon as one is NaN or Inf (or their sum
overflows), and NaN survives the all-reduce's sum.

Example:
    >>> import torch
    >>> p = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(2))]
    >>> [len(b.params) for b in plan_buckets(p, cap_bytes=1 << 20)]
    [2]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from unison.optim.adasum import adasum_tree
from unison.optim.compression import Compressor


@dataclass
class Bucket:
    """One flat buffer of gradients plus their flags."""

    index: int
    params: list[torch.nn.Parameter]
    offsets: list[int]
    numel: int
    buffer: torch.Tensor | None = None
    staging: torch.Tensor | None = None
    residual: torch.Tensor | None = None
    ready: int = 0
    pending: Any = None
    packed: bool = False
    tail: list[float] = field(default_factory=list)
    views: list[torch.Tensor] = field(default_factory=list)  # each parameter's slice of buffer
    used_flags: Any = None  # the buffer's flag slots, as views
    bad_flag: Any = None
    lent: bool = False  # write_back made some grads views of the buffer
    # Where the wire buffer is allocated when it can be: the shared-memory all-reduce's arena
    # (SharedMemoryReducer.empty; None when full), so the replicas read it in place.
    allocate: Callable[[int, torch.dtype], torch.Tensor | None] | None = None

    @property
    def nbytes(self) -> int:
        """Bytes of this bucket's buffer on the wire."""
        return 0 if self.buffer is None else self.buffer.numel() * self.buffer.element_size()

    def _zeros(self, numel: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        placed = self.allocate(numel, dtype) if self.allocate is not None and device.type == "cpu" else None
        return placed.zero_() if placed is not None else torch.zeros(numel, dtype=dtype, device=device)

    def _buffers(self, compression: Compressor, error_feedback: bool) -> tuple[torch.Tensor, torch.Tensor]:
        first = self.params[0]
        wire = compression.wire_dtype(first.dtype)
        if self.buffer is None or self.buffer.dtype != wire:
            self.buffer = self._zeros(self.numel + len(self.params) + 1, wire, first.device)
            self.staging = (
                torch.zeros(self.numel, dtype=first.dtype, device=first.device) if wire != first.dtype else None
            )
            self.residual = torch.zeros_like(self.staging) if (self.staging is not None and error_feedback) else None
            self.views = [self.buffer[off : off + p.numel()].view(p.shape) for p, off in zip(self.params, self.offsets)]
            self.used_flags, self.bad_flag = self.buffer[self.numel : -1], self.buffer[-1]
        stage = self.staging if self.staging is not None else self.buffer[: self.numel]
        return self.buffer, stage

    def pack(self, compression: Compressor, prescale: float, error_feedback: bool) -> torch.Tensor:
        """Copy gradients (zeros where absent) and flags into the wire buffer; returns it."""
        buf, stage = self._buffers(compression, error_feedback)
        grads = [p.grad for p in self.params]
        every = all(g is not None for g in grads)
        # After a step the gradients are views of this buffer (see write_back); a loop that
        # zeroes them in place (zero_grad(set_to_none=False)) accumulates straight into it.
        aliased = self.lent and any(g is not None and g.data_ptr() == v.data_ptr() for g, v in zip(grads, self.views))
        if every and not aliased:
            # the common case: one fused copy instead of a loop of small ops
            torch.cat([g.view(-1) if g.is_contiguous() else g.reshape(-1) for g in grads], out=stage)  # type: ignore[union-attr]
        else:
            for p, off, g, view in zip(self.params, self.offsets, grads, self.views):
                if g is not None and g.data_ptr() == view.data_ptr():
                    continue  # already in place
                part = stage[off : off + p.numel()]
                if g is None:
                    part.zero_()
                else:
                    part.copy_(g.reshape(-1))
        if every:
            self.used_flags.fill_(1)
        else:
            self.used_flags.copy_(torch.tensor([g is not None for g in grads], dtype=buf.dtype))
        # NaN and Inf survive a sum, so one reduction decides (a finite bucket whose fp32 sum
        # overflows is flagged too, which is what a user wants to hear about anyway); times 0
        # it is 0 or NaN. Two kernels: isfinite() on a scalar plus a setitem cost four more.
        torch.mul(stage.sum(), 0.0, out=self.bad_flag)
        if prescale != 1.0:
            stage.mul_(prescale)
        if self.staging is not None:
            if self.residual is not None:
                stage.add_(self.residual)
            buf[: self.numel].copy_(stage)
            if self.residual is not None:
                # error feedback: what the cast lost this step is added back next step
                torch.sub(stage, buf[: self.numel].to(stage.dtype), out=self.residual)
        self.packed = True
        return buf

    def combine_adasum(self, parts: Sequence[torch.Tensor]) -> None:
        """Replace the buffer by the Adasum of every replica's buffer (flags are summed)."""
        buf = self.buffer
        if buf is None:
            return
        for p, off in zip(self.params, self.offsets):
            buf[off : off + p.numel()] = adasum_tree([part[off : off + p.numel()] for part in parts])
        buf[self.numel :] = torch.stack([part[self.numel :] for part in parts]).sum(0)

    def read_flags(self) -> tuple[list[float], bool]:
        """(replicas that produced each gradient, whether any replica saw a non-finite value)."""
        if self.buffer is None:
            return [0.0] * len(self.params), False
        self.tail = self.buffer[self.numel :].float().tolist()
        return self.tail[:-1], self.tail[-1] != 0.0  # NaN != 0.0 holds

    def write_back(self, scale: float) -> None:
        """Hand the reduced gradients to the parameters (scaled).

        An uncompressed bucket lends its slices: each ``grad`` becomes a view of the buffer,
        no copy (what DDP calls ``gradient_as_bucket_view``). The next ``pack`` overwrites the
        buffer, so the views hold this step's gradients until the next backward, as usual.
        """
        buf = self.buffer
        if buf is None:
            return
        used = self.tail[:-1] if self.tail else self.read_flags()[0]
        same_dtype = buf.dtype == self.params[0].dtype
        if same_dtype and scale != 1.0:
            buf[: self.numel].mul_(scale)  # one pass over the bucket, not one per parameter
        targets, sources = [], []
        for p, view, n_used in zip(self.params, self.views, used):
            if n_used == 0.0:
                p.grad = None
                continue
            if same_dtype and p.is_contiguous():
                p.grad = view
                self.lent = True
                continue
            if p.grad is None:
                p.grad = torch.empty_like(p)
            targets.append(p.grad)
            sources.append(view)
        if targets:
            torch._foreach_copy_(targets, sources)
            if not same_dtype and scale != 1.0:
                # compressed buckets: scale after the cast back, an fp16 product could overflow
                torch._foreach_mul_(targets, scale)

    def reset(self) -> None:
        self.ready = 0
        self.pending = None
        self.packed = False
        self.tail = []


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
        if current and (size + nbytes > cap_bytes or p.dtype != current[0].dtype or p.device != current[0].device):
            close()
        current.append(p)
        size += nbytes
    close()
    return buckets
