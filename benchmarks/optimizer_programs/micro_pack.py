"""Cost of unison's bucket pack / write-back next to vectorised alternatives (one process, no comm).

The many-tensor model (75 x Linear(64, 64), 150 gradients, one 1.25 MB bucket) with gradients
present; every variant produces the same buffer / the same ``p.grad`` values (checked).

    python benchmarks/optimizer_programs/micro_pack.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models

from unison.optim.buckets import plan_buckets
from unison.optim.compression import Compression


def bench(fn, n=200, rounds=7):
    for _ in range(20):
        fn()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n)
    return statistics.median(out), min(out)


def main() -> None:
    torch.set_num_threads(1)
    model = models.build(sys.argv[1] if len(sys.argv) > 1 else "many")
    params = list(model.parameters())
    g = torch.Generator().manual_seed(0)
    for p in params:
        p.grad = torch.randn(p.shape, generator=g)
    (bucket,) = plan_buckets(params, 25 * 1024 * 1024)
    bucket.pack(Compression.none, 1.0, False)
    buf = bucket.buffer
    n = bucket.numel
    bp = bucket.params
    bgrads = [p.grad for p in bp]
    views = [buf[off : off + p.numel()].view(p.shape) for p, off in zip(bp, bucket.offsets)]
    ones = torch.ones(len(bp))
    rows = []

    def current_pack():
        bucket.pack(Compression.none, 1.0, False)

    def foreach_pack():
        torch._foreach_copy_(views, bgrads)
        flags = buf[n:]
        flags[:-1].copy_(torch.tensor([0.0 if p.grad is None else 1.0 for p in bp]))
        torch.any(~torch.isfinite(buf[:n]), out=None)  # same work as the current check
        flags[-1:].copy_((~torch.isfinite(buf[:n])).any().reshape(1))

    def cat_pack():
        torch.cat([t.reshape(-1) for t in bgrads], out=buf[:n])
        buf[n:-1].copy_(ones)
        buf[-1:].copy_((~torch.isfinite(buf[:n])).any().reshape(1))

    def proposed_pack():
        torch.cat([t.reshape(-1) for t in bgrads], out=buf[:n])
        buf[n:-1].fill_(1)
        buf[-1:].copy_(torch.isfinite(buf[:n].sum()).logical_not().reshape(1))

    ref = buf.clone()
    for fn, label in (
        (current_pack, "pack: current (per-param slice + copy_ + flags[i]=1)"),
        (proposed_pack, "pack: proposed (torch.cat(out=) + fill_ + isfinite(sum))"),
        (foreach_pack, "pack: torch._foreach_copy_ into cached views + one flags copy"),
        (cat_pack, "pack: torch.cat(out=bucket slice) + one flags copy"),
    ):
        buf.zero_()
        fn()
        assert torch.equal(buf, ref), label
        rows.append((label, *bench(fn)))

    # pieces of the current pack
    stage = buf[:n]
    rows.append(
        (
            "  piece: 150 x (slice + copy_) only",
            *bench(lambda: [stage[o : o + p.numel()].copy_(p.grad.reshape(-1)) for p, o in zip(bp, bucket.offsets)]),
        )
    )
    flags = buf[n:]
    rows.append(
        (
            "  piece: 150 x flags[i] = 1 (python scalar setitem)",
            *bench(lambda: [flags.__setitem__(i, 1) for i in range(len(bp))]),
        )
    )
    rows.append(
        (
            "  piece: isfinite(stage.sum()) into the flag slot",
            *bench(lambda: buf[-1:].copy_(torch.isfinite(stage.sum()).logical_not().reshape(1))),
        )
    )
    rows.append(
        (
            "  piece: (~isfinite(stage)).any() + setitem",
            *bench(lambda: flags.__setitem__(-1, (~torch.isfinite(stage)).any().to(buf.dtype))),
        )
    )

    bucket.tail = buf[n:].float().tolist()

    def current_wb():
        bucket.write_back(0.5)

    def foreach_wb():
        torch._foreach_copy_(bgrads, views)
        torch._foreach_mul_(bgrads, 0.5)

    def scale_then_copy():
        buf[:n].mul_(0.5)
        torch._foreach_copy_(bgrads, views)
        buf[:n].mul_(2.0)  # undo, so the benchmark is repeatable (not part of the proposal)

    def as_view():
        buf[:n].mul_(0.5)
        for p, v in zip(bp, views):
            p.grad = v
        buf[:n].mul_(2.0)  # undo (not part of the proposal)

    for fn, label in (
        (current_wb, "write_back: current (per-param view + copy_ + mul_)"),
        (foreach_wb, "write_back: _foreach_copy_ + _foreach_mul_"),
        (scale_then_copy, "write_back: buf.mul_ once + _foreach_copy_ (+undo mul)"),
        (as_view, "write_back: grads as views of the bucket (+undo mul)"),
    ):
        rows.append((label, *bench(fn)))
    for p, g0 in zip(bp, bgrads):
        p.grad = g0

    print(f"{'operation':78s} median µs   min µs")
    for label, m, lo in rows:
        print(f"{label:78s} {m * 1e6:9.1f} {lo * 1e6:9.1f}")


if __name__ == "__main__":
    main()
