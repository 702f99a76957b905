"""ZeRO stage 2: gradients are reduce-scattered, each replica keeps and steps only its shard.

Every parameter has one owner replica (as in ZeRO-1). A gradient bucket is laid out on the
wire as one segment per replica, each holding the gradients its owner needs plus the bucket's
flags; one reduce-scatter then hands each replica the reduced gradients of the parameters it
owns and nothing else. Gradients of parameters owned elsewhere are dropped as soon as their
bucket is packed, and at most ``inflight`` buckets are on the wire at once, so a replica never
holds the whole model's gradients after backward: gradients shrink to about 1/N, optimizer
state too (each owner steps only its parameters), and the owners' updated values are then
shared with everyone (:class:`unison.optim.zero.ShardedState`).

Layout of one bucket on the wire (N segments of ``length`` elements)::

    [ rank 0's gradients, zero padded | used flag per bucket parameter (P) | non-finite (1) ]
    [ rank 1's gradients, zero padded | used flags (P)                     | non-finite (1) ]
    ...

The flags are written into every segment, so after the reduce-scatter each replica sees the
summed flags (how many replicas produced each gradient, and NaN if any replica's bucket held a
non-finite value anywhere): the same verdict everywhere with no extra collective. The reduction
is a SUM (gloo has no other reduce-scatter on CPU); averaging is a scale afterwards, as for the
all-reduce path.

Example:
    >>> import torch
    >>> from unison.optim.buckets import plan_buckets
    >>> ps = [torch.nn.Parameter(torch.zeros(n)) for n in (10, 3, 3, 4)]
    >>> plan_owners(plan_buckets(ps, cap_bytes=1 << 20), world_size=2)[0]  # [numel, indices] per rank
    [[10, 3], [10, 0, 1, 2]]
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from unison.comm.communicator import Communicator, Pending
from unison.optim.buckets import Bucket


def plan_owners(buckets: Sequence[Bucket], world_size: int) -> list[list[list[int]]]:
    """For each bucket, per rank: ``[segment numel, *indices of the bucket's parameters it owns]``.

    Inside a bucket the parameters are spread so the segments are about equal (little padding
    on the wire); ties go to the rank holding the fewest elements over all buckets so far, so
    the shards are balanced too. Deterministic: every replica computes the same plan.
    """
    load = [0] * world_size
    plans: list[list[list[int]]] = []
    for bucket in buckets:
        sizes = [0] * world_size
        owned: list[list[int]] = [[] for _ in range(world_size)]
        order = sorted(range(len(bucket.params)), key=lambda i: (-bucket.params[i].numel(), i))
        for i in order:
            rank = min(range(world_size), key=lambda r: (sizes[r], load[r], r))
            owned[rank].append(i)
            sizes[rank] += bucket.params[i].numel()
            load[rank] += bucket.params[i].numel()
        plans.append([[sizes[r], *sorted(owned[r])] for r in range(world_size)])
    return plans


class _Layout:
    """Where each of one bucket's gradients sits on the wire, and which ones this rank keeps."""

    def __init__(self, bucket: Bucket, plan: list[list[int]], rank: int) -> None:
        self.count = len(bucket.params)
        self.widest = max(seg[0] for seg in plan)
        self.length = self.widest + self.count + 1
        self.slots: list[tuple[int, int]] = []  # (parameter index, offset in the flat wire buffer)
        self.mine: list[tuple[int, int]] = []  # (parameter index, offset in this rank's segment)
        self.own = plan[rank][0]  # elements this rank keeps (its segment minus the padding)
        for r, seg in enumerate(plan):
            offset = 0
            for i in seg[1:]:
                self.slots.append((i, r * self.length + offset))
                if r == rank:
                    self.mine.append((i, offset))
                offset += bucket.params[i].numel()


class GradientShards:
    """The ZeRO-2 reduction of a :class:`~unison.optim.distributed.DistributedOptimizer`'s buckets.

    Args:
        buckets: the optimizer's gradient buckets (their parameters and order).
        comm: the replicas (more than one).
        inflight: buckets on the wire at once; launching one more first finishes the oldest,
            which bounds the full-size gradient buffers a replica holds during backward.
    """

    def __init__(self, buckets: Sequence[Bucket], comm: Communicator, inflight: int = 2) -> None:
        self.comm = comm
        self.inflight = inflight
        plans = plan_owners(buckets, comm.world_size)
        self.layouts = [_Layout(b, plan, comm.rank) for b, plan in zip(buckets, plans)]
        self.owner: dict[int, int] = {}
        for bucket, plan in zip(buckets, plans):
            for r, seg in enumerate(plan):
                for i in seg[1:]:
                    self.owner[id(bucket.params[i])] = r
        self._wire: dict[int, torch.Tensor] = {}
        self._out: dict[int, torch.Tensor] = {}
        self._local_bad: dict[int, torch.Tensor] = {}
        self._launched: list[Bucket] = []

    def owned(self, param: torch.Tensor) -> bool:
        """Whether this replica keeps (and steps) ``param``."""
        return self.owner.get(id(param), 0) == self.comm.rank

    def launch(self, bucket: Bucket, prescale: float) -> None:
        """Pack ``bucket``'s local gradients, drop them, and start its reduce-scatter."""
        while len(self._launched) >= self.inflight:
            self._finish_wire(self._launched.pop(0))
        layout = self.layouts[bucket.index]
        first = bucket.params[0]
        world = self.comm.world_size
        wire = torch.zeros(world * layout.length, dtype=first.dtype, device=first.device)
        grads = [p.grad for p in bucket.params]
        targets = [wire[off : off + bucket.params[i].numel()] for i, off in layout.slots if grads[i] is not None]
        sources = [grads[i].reshape(-1) for i, _ in layout.slots if grads[i] is not None]  # type: ignore[union-attr]
        if targets:
            torch._foreach_copy_(targets, sources)
        rows = wire.view(world, layout.length)
        # NaN and Inf survive a sum: 0 * sum is 0 for a finite bucket, NaN otherwise (as the
        # all-reduce path's flag); computed before the flags are written, over gradients only.
        bad = wire.sum() * 0.0
        if prescale != 1.0:
            wire.mul_(prescale)
        rows[:, layout.widest : layout.widest + layout.count] = torch.tensor(
            [g is not None for g in grads], dtype=wire.dtype, device=wire.device
        )
        rows[:, -1] = bad
        for p in bucket.params:
            p.grad = None  # this replica keeps only its own shard: the rest is freed now
        out = torch.empty(layout.length, dtype=wire.dtype, device=wire.device)
        self._wire[bucket.index], self._out[bucket.index], self._local_bad[bucket.index] = wire, out, bad
        bucket.pending = self.comm.reduce_scatter_async(out, wire, name=f"gradients.shard{bucket.index}")
        self._launched.append(bucket)

    def _finish_wire(self, bucket: Bucket) -> None:
        pending: Pending | None = bucket.pending
        if pending is not None:
            self.comm.wait(pending)
            bucket.pending = None
        self._wire.pop(bucket.index, None)  # the full-size buffer goes; the owned segment stays

    def collect(self, buckets: Sequence[Bucket]) -> bool:
        """Wait for every bucket; True when any replica saw a non-finite gradient (same on all)."""
        for bucket in buckets:
            self._finish_wire(bucket)
        self._launched.clear()
        bad = False
        for bucket in buckets:
            out = self._out.get(bucket.index)
            if out is not None and out[-1].item() != 0.0:  # NaN != 0.0 holds
                bad = True
        return bad

    def local_nonfinite(self, buckets: Sequence[Bucket], names: dict[int, str]) -> str | None:
        """A description of where this replica's own non-finite gradient was (its bucket)."""
        for bucket in buckets:
            flag = self._local_bad.get(bucket.index)
            if flag is not None and bool(flag.isnan()):
                listed = ", ".join(names[id(p)] for p in bucket.params[:3])
                return f"one of {listed}" + (", ..." if len(bucket.params) > 3 else "")
        return None

    def write_back(self, buckets: Sequence[Bucket], scale: float, poison: bool = False) -> None:
        """Give this replica's parameters their reduced gradient shard (views, no copy).

        ``poison``: a replica's own shard may be finite while another's is not; setting the
        owned gradients to NaN lets a ``GradScaler`` on every replica see the overflow.
        """
        for bucket in buckets:
            out = self._out.get(bucket.index)
            if out is None:
                continue
            layout = self.layouts[bucket.index]
            used = out[layout.widest : layout.widest + layout.count].tolist()
            grads = out[: layout.own]
            if layout.own < layout.widest:
                # a padded segment (another rank owns the bucket's large parameter): keep a
                # compact copy, or the views would hold the whole padded segment alive
                grads = grads.clone()
            if scale != 1.0:
                grads.mul_(scale)
            if poison:
                grads.fill_(float("nan"))
            for i, offset in layout.mine:
                p = bucket.params[i]
                if used[i] == 0.0:
                    p.grad = None
                    continue
                grad = grads[offset : offset + p.numel()].view(p.shape)
                if not p.is_contiguous():
                    # A parameter stored in another memory order (Keras's conv kernels) gets its
                    # gradient in that order: torch's fused and foreach kernels pair elements by
                    # memory order, and a contiguous view here updated the wrong elements.
                    grad = torch.empty_like(p).copy_(grad)
                p.grad = grad
        self._out.clear()  # the gradients' views keep what this replica owns
        self._local_bad.clear()

    def discard(self) -> None:
        """Forget the buffers of an abandoned step (``zero_grad`` already waited for them)."""
        self._wire.clear()
        self._out.clear()
        self._local_bad.clear()
        self._launched.clear()

    def clip_(self, params: Sequence[torch.Tensor], max_norm: float) -> None:
        """Clip the global norm of the reduced gradients; each replica holds only its shard."""
        grads = [p.grad for p in params if p.grad is not None and self.owned(p)]
        local = torch.zeros((), dtype=torch.float64, device=self.comm.device)
        for g in grads:
            local += g.detach().double().square().sum().to(local.device)
        total = float(self.comm.all_reduce(local.reshape(1), name="zero2.grad_norm").sqrt())
        coef = max_norm / (total + 1e-6)
        if coef < 1.0 and grads:
            torch._foreach_mul_(grads, coef)
