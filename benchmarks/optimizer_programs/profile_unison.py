"""Where a unison step spends its time, next to DDP and the no-communication loop (torchrun, 2 ranks).

Splits every step into forward / backward / optimizer step (wall clock per phase, mean over the
timed steps, max over ranks) for ``ddp``, ``unison`` and ``compute``, and times unison's own
pieces by wrapping them in this process only (nothing in ``src/`` changes):
``DistributedOptimizer._on_grad`` (the post-accumulate-grad hook), ``Bucket.pack``,
``Communicator.all_reduce_async`` (launch), ``Communicator.wait``, ``Bucket.read_flags``,
``Bucket.write_back`` and the wrapped ``torch.optim.Adam.step``.

    GLOO_SOCKET_IFNAME=lo python -m torch.distributed.run --standalone --nproc-per-node 2 \\
        benchmarks/optimizer_programs/profile_unison.py --model many --out prof.json
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import sys
import time
from typing import Any

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models

import unison
from unison.comm.communicator import Communicator
from unison.optim import buckets as buckets_mod
from unison.optim import distributed as distributed_mod

TIMES: dict[str, float] = collections.defaultdict(float)
CALLS: dict[str, int] = collections.defaultdict(int)
ON = [False]


def wrap(owner: Any, attr: str, label: str) -> None:
    original = getattr(owner, attr)

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        if not ON[0]:
            return original(*args, **kwargs)
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            TIMES[label] += time.perf_counter() - t0
            CALLS[label] += 1

    setattr(owner, attr, timed)


def _views(bucket: Any, stage: torch.Tensor) -> list[torch.Tensor]:
    key = (stage.data_ptr(), stage.dtype)
    cache = bucket.__dict__.setdefault("_bench_views", {})
    if key not in cache:
        cache[key] = [stage[o : o + p.numel()].view(p.shape) for p, o in zip(bucket.params, bucket.offsets)]
    return cache[key]


def pack_vectorised(self: Any, compression: Any, prescale: float, error_feedback: bool) -> torch.Tensor:
    """Bucket.pack with one torch.cat, one flags write and a sum-based non-finite flag.

    Same buffer as Bucket.pack except that the non-finite flag is also raised when the sum of
    the bucket overflows (finite gradients whose sum passes 3.4e38).
    """
    buf, stage = self._buffers(compression, error_feedback)
    present = [p.grad is not None for p in self.params]
    if all(present):
        torch.cat([p.grad.reshape(-1) for p in self.params], out=stage)
        buf[self.numel : -1].fill_(1)
    else:
        views = _views(self, stage)
        for v, p, ok in zip(views, self.params, present):
            v.copy_(p.grad) if ok else v.zero_()
        buf[self.numel : -1].copy_(torch.tensor(present, dtype=buf.dtype))
    buf[-1:].copy_(torch.isfinite(stage.sum()).logical_not().reshape(1))
    if prescale != 1.0:
        stage.mul_(prescale)
    if self.staging is not None:
        if self.residual is not None:
            stage.add_(self.residual)
        buf[: self.numel].copy_(stage)
        if self.residual is not None:
            torch.sub(stage, buf[: self.numel].to(stage.dtype), out=self.residual)
    self.packed = True
    return buf


def write_back_vectorised(self: Any, scale: float) -> None:
    """Bucket.write_back with one flat mul_ and one _foreach_copy_ (same p.grad values)."""
    buf = self.buffer
    if buf is None:
        return
    used = self.tail[:-1] if self.tail else self.read_flags()[0]
    views = _views(self, buf[: self.numel])
    dst, src = [], []
    for p, v, u in zip(self.params, views, used):
        if u == 0.0:
            p.grad = None
            continue
        if p.grad is None:
            p.grad = torch.empty_like(p)
        dst.append(p.grad)
        src.append(v)
    if dst:
        if scale != 1.0 and buf.dtype == dst[0].dtype:
            buf[: self.numel].mul_(scale)  # once on the flat buffer (fp32 wire only)
            torch._foreach_copy_(dst, src)
        else:
            torch._foreach_copy_(dst, src)
            if scale != 1.0:
                torch._foreach_mul_(dst, scale)


def max_over_ranks(values: list[float]) -> list[float]:
    t = torch.tensor(values, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def phases(model: torch.nn.Module, opt: Any, data: list, warmup: int, steps: int, instrument: bool) -> dict[str, float]:
    loss_fn = torch.nn.CrossEntropyLoss()
    acc = collections.defaultdict(float)
    for i in range(warmup + steps):
        if i == warmup:
            dist.barrier()
            acc.clear()
            TIMES.clear()
            CALLS.clear()
            ON[0] = instrument
        x, y = data[i % len(data)]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        t1 = time.perf_counter()
        loss = loss_fn(model(x), y)
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        opt.step()
        t4 = time.perf_counter()
        acc["zero_grad"] += t1 - t0
        acc["forward"] += t2 - t1
        acc["backward"] += t3 - t2
        acc["step"] += t4 - t3
        acc["total"] += t4 - t0
    ON[0] = False
    keys = sorted(acc)
    vals = max_over_ranks([acc[k] / steps for k in keys])
    out = dict(zip(keys, vals))
    if instrument:
        ukeys = sorted(TIMES)
        uvals = max_over_ranks([TIMES[k] / steps for k in ukeys])
        out.update({f"unison.{k}": v for k, v in zip(ukeys, uvals)})
        out.update({f"calls.{k}": CALLS[k] / steps for k in ukeys})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="many")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", required=True)
    ap.add_argument(
        "--vectorised",
        action="store_true",
        help="also run 'unison_vec': Bucket.pack/write_back replaced (in this process only) "
        "by the vectorised versions above",
    )
    args = ap.parse_args()
    torch.set_num_threads(1)
    unison.init()
    rank, world = unison.rank(), unison.size()
    cfg = models.DEFAULTS[args.model]
    data = models.batches(args.model, cfg["batch"] // world, rank)

    wrap(distributed_mod.DistributedOptimizer, "_on_grad", "hook(_on_grad)")
    orig_pack, orig_wb = buckets_mod.Bucket.pack, buckets_mod.Bucket.write_back
    buckets_mod.Bucket.pack, buckets_mod.Bucket.write_back = pack_vectorised, write_back_vectorised
    wrap(buckets_mod.Bucket, "pack", "pack")
    wrap(buckets_mod.Bucket, "write_back", "write_back")
    pack_timed_vec, wb_timed_vec = buckets_mod.Bucket.pack, buckets_mod.Bucket.write_back
    buckets_mod.Bucket.pack, buckets_mod.Bucket.write_back = orig_pack, orig_wb
    wrap(buckets_mod.Bucket, "pack", "pack")
    wrap(buckets_mod.Bucket, "read_flags", "read_flags")
    wrap(buckets_mod.Bucket, "write_back", "write_back")
    pack_timed_orig, wb_timed_orig = buckets_mod.Bucket.pack, buckets_mod.Bucket.write_back
    wrap(Communicator, "all_reduce_async", "all_reduce_async(launch)")
    wrap(Communicator, "wait", "wait")
    wrap(torch.optim.Adam, "step", "inner Adam.step")

    systems: dict[str, Any] = {}
    m = models.build(args.model)
    ddp = torch.nn.parallel.DistributedDataParallel(m)
    systems["ddp"] = (ddp, torch.optim.Adam(ddp.parameters(), lr=1e-3), False)
    m = models.build(args.model)
    systems["unison"] = (
        m,
        unison.DistributedOptimizer(torch.optim.Adam(m.parameters(), lr=1e-3), named_parameters=m.named_parameters()),
        True,
    )
    if args.vectorised:
        m = models.build(args.model)
        systems["unison_vec"] = (
            m,
            unison.DistributedOptimizer(
                torch.optim.Adam(m.parameters(), lr=1e-3), named_parameters=m.named_parameters()
            ),
            True,
        )
    m = models.build(args.model)
    systems["compute"] = (m, torch.optim.Adam(m.parameters(), lr=1e-3), False)
    rows: dict[str, list[dict[str, float]]] = {k: [] for k in systems}
    for r in range(args.rounds):
        names = list(systems)
        names = names[r % len(names) :] + names[: r % len(names)]
        for name in names:
            model, opt, instrument = systems[name]
            vec = name == "unison_vec"
            buckets_mod.Bucket.pack = pack_timed_vec if vec else pack_timed_orig
            buckets_mod.Bucket.write_back = wb_timed_vec if vec else wb_timed_orig
            rows[name].append(phases(model, opt, data, args.warmup, args.steps, instrument))
    if rank == 0:
        med = {}
        for name, rs in rows.items():
            med[name] = {k: sorted(r[k] for r in rs)[len(rs) // 2] for k in rs[0]}
        for name, rs in rows.items():
            ratios = sorted(r["total"] / d["total"] for r, d in zip(rs, rows["ddp"]))
            med[name]["total/ddp (median of per-round ratios)"] = ratios[len(ratios) // 2]
        with open(args.out, "w") as f:
            json.dump({"model": args.model, "config": cfg, "rounds": rows, "median": med}, f, indent=1)
        for name, vals in med.items():
            print(
                name,
                " ".join(
                    f"{k}={v * 1e3:.3f}ms" if not (k.startswith("calls") or "/" in k) else f"{k}={v:.2f}"
                    for k, v in vals.items()
                ),
            )
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
