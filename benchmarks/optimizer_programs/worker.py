"""One repeat of the optimizer benchmark (started by ``benchmarks/optimizer.py``).

Under torchrun (world size 2) it measures, per model and with the systems interleaved (the timed
steps cut into ``--chunks`` slices, the systems taking turns slice by slice, order rotated by
``--repeat``):

* ``ddp``: ``DistributedDataParallel`` (defaults: bucket_cap_mb=25, first bucket 1 MB);
* ``unison``: ``unison.DistributedOptimizer`` with its defaults (bucket_cap_mb=25);
* ``unison_fp16``: the same with ``compression=unison.Compression.fp16``;
* ``unison_small``: the same with a small ``bucket_cap_mb`` (several buckets, launched during
  backward: the overlap case);
* ``unison_gloo``: unison's defaults through a Communicator without the shared-memory
  all-reduce (gloo, as DDP uses), to show what that path is worth;
* ``compute``: the same loop with the plain optimizer and no communication at all (both ranks
  compute at the same time, so they share the machine as in the distributed runs);
* ``comm_1`` / ``comm_small``: only the all-reduces of one step (unison's bucket layout for the
  default and the small cap: same buffers, flags included) through unison's Communicator,
  no compute;

then the all-reduce throughput section (flat buffer: raw ``dist.all_reduce`` vs unison's
Communicator (shared memory between the ranks of this host, and ``comm_gloo``: gloo) vs the
full DistributedOptimizer bucket path; fused vs one all-reduce per tensor).

Alone (no torchrun env) it runs ``plain1``: the plain loop on the global batch in one process.
Every rank uses ``torch.set_num_threads(1)``. Rank 0 writes the JSON result to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models

import unison
from unison.comm.communicator import Communicator, joined
from unison.optim.buckets import plan_buckets

STEP_SYSTEMS = ("ddp", "unison", "unison_fp16", "unison_small", "unison_gloo", "compute", "comm_1", "comm_small")


def gloo_communicator() -> Communicator:
    """The joined job's communicator without its shared-memory all-reduce (gloo only)."""
    comm = joined()
    return Communicator(comm.rank, comm.world_size, comm.device, comm.timeout_s, store=comm.store)


def rotate(seq: list[Any], k: int) -> list[Any]:
    k %= max(1, len(seq))
    return seq[k:] + seq[:k]


def max_over_ranks(x: float) -> float:
    if not dist.is_initialized():
        return x
    t = torch.tensor([x], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


def timed(step: Callable[[int], None], warmup: int, steps: int, counters: dict | None = None) -> float:
    """Seconds per step: max over ranks of the time for ``steps`` steps after a common start.

    ``counters``, when given, receives unison's bytes and collectives per timed step.
    """
    for i in range(warmup):
        step(i)
    if dist.is_initialized():
        dist.barrier()
    comm = joined()
    b0, c0 = (comm.bytes_reduced, comm.collective_count) if comm is not None else (0, 0)
    t0 = time.perf_counter()
    for i in range(steps):
        step(i)
    elapsed = time.perf_counter() - t0
    if counters is not None and comm is not None:
        counters["bytes_per_step"] = (comm.bytes_reduced - b0) / steps
        counters["collectives_per_step"] = (comm.collective_count - c0) / steps
    return max_over_ranks(elapsed) / steps


def train_step(model: torch.nn.Module, opt: Any, data: list) -> Callable[[int], None]:
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(i: int) -> None:
        x, y = data[i % len(data)]
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def bucket_sizes(model: torch.nn.Module, cap_mb: float) -> list[int]:
    """Element counts of unison's wire buffers for this model (gradients + flags)."""
    params = [p for p in model.parameters() if p.requires_grad]
    return [b.numel + len(b.params) + 1 for b in plan_buckets(params, int(cap_mb * 1024 * 1024))]


def comm_step(sizes: list[int]) -> Callable[[int], None]:
    comm = joined()
    bufs = [torch.ones(n) for n in sizes]

    def step(i: int) -> None:
        pend = [comm.all_reduce_async(b, name="bench.comm") for b in bufs]
        for p in pend:
            comm.wait(p)

    return step


def step_systems(name: str, cfg: dict, repeat: int, world: int, rank: int, chunks: int) -> dict:
    local = cfg["batch"] // world
    data = models.batches(name, local, rank)
    made: dict[str, tuple[Callable[[int], None], Any]] = {}
    for system in STEP_SYSTEMS:
        model = models.build(name)
        if system == "ddp":
            ddp = torch.nn.parallel.DistributedDataParallel(model)
            made[system] = (train_step(ddp, torch.optim.Adam(ddp.parameters(), lr=1e-3), data), None)
        elif system.startswith("unison"):
            kw: dict[str, Any] = {}
            if system == "unison_fp16":
                kw["compression"] = unison.Compression.fp16
            if system == "unison_small":
                kw["bucket_cap_mb"] = cfg["small_cap_mb"]
            if system == "unison_gloo":
                kw["communicator"] = gloo_communicator()
            opt = unison.DistributedOptimizer(
                torch.optim.Adam(model.parameters(), lr=1e-3), named_parameters=model.named_parameters(), **kw
            )
            unison.broadcast_parameters(model.state_dict(), root_rank=0)
            made[system] = (train_step(model, opt, data), opt)
        elif system == "compute":
            made[system] = (train_step(model, torch.optim.Adam(model.parameters(), lr=1e-3), data), None)
        elif system == "comm_1":
            made[system] = (comm_step(bucket_sizes(model, 25.0)), None)
        elif system == "comm_small":
            made[system] = (comm_step(bucket_sizes(model, cfg["small_cap_mb"])), None)
    # The timed steps are cut into ``chunks`` slices and the systems take turns slice by slice
    # (order rotated by the repeat), so a burst of load from elsewhere hits every system alike.
    order = rotate(list(STEP_SYSTEMS), repeat)
    for system in order:
        for i in range(cfg["warmup"]):
            made[system][0](i)
    per_chunk = max(1, cfg["steps"] // chunks)
    out: dict[str, dict] = {s: {"s_per_step": 0.0, "chunk_s_per_step": []} for s in order}
    for _ in range(chunks):
        for system in order:
            step, opt = made[system]
            counters: dict[str, float] = {}
            t = timed(step, 1, per_chunk, counters)  # one step to re-warm after the others ran
            rec = out[system]
            rec["chunk_s_per_step"].append(t)
            if system.startswith(("unison", "comm")):
                rec.update(counters)  # ddp/compute do not go through unison's Communicator
            if opt is not None:
                rec["buckets"] = len(opt._buckets)
    for rec in out.values():
        rec["s_per_step"] = sum(rec["chunk_s_per_step"]) / len(rec["chunk_s_per_step"])
    return out


def throughput(repeat: int, iters_small: int, iters_big: int, big_mb: float) -> dict:
    """Flat all-reduce: raw torch.distributed vs unison's Communicator vs the bucket path."""
    comm, gloo = joined(), gloo_communicator()
    model = models.build("many")
    opt = unison.DistributedOptimizer(
        torch.optim.Adam(model.parameters(), lr=1e-3), named_parameters=model.named_parameters()
    )
    g = torch.Generator().manual_seed(7)
    params = list(model.parameters())
    for p in params:
        p.grad = torch.randn(p.shape, generator=g)
    grads = [p.grad.detach().clone() for p in params]
    many_elems = sum(p.numel() for p in params) + len(params) + 1  # unison's wire buffer
    results: dict[str, dict] = {}
    for label, elems, iters in (
        ("many_bucket", many_elems, iters_small),
        ("big", int(big_mb * 1024 * 1024 / 4), iters_big),
    ):
        buf = torch.randn(elems)

        def raw(i: int, buf: torch.Tensor = buf) -> None:
            dist.all_reduce(buf)

        def raw_async(i: int, buf: torch.Tensor = buf) -> None:
            dist.all_reduce(buf, async_op=True).wait()

        def via_comm(i: int, buf: torch.Tensor = buf) -> None:
            comm.wait(comm.all_reduce_async(buf, name="bench.flat"))

        def via_gloo_comm(i: int, buf: torch.Tensor = buf) -> None:
            gloo.wait(gloo.all_reduce_async(buf, name="bench.flat"))

        systems: dict[str, Callable[[int], None]] = {
            "raw": raw,
            "raw_async": raw_async,
            "comm": via_comm,
            "comm_gloo": via_gloo_comm,
        }
        if label == "many_bucket":

            def bucket_path(i: int) -> None:
                opt.synchronize()  # pack 150 grads + flags, all-reduce, check flags, write back
                opt.mark_stepped()

            def per_tensor(i: int) -> None:
                for t in grads:
                    dist.all_reduce(t)

            def per_tensor_async(i: int) -> None:
                works = [dist.all_reduce(t, async_op=True) for t in grads]
                for w in works:
                    w.wait()

            def per_tensor_comm(i: int) -> None:
                pend = [comm.all_reduce_async(t, name="bench.tensor") for t in grads]
                for p in pend:
                    comm.wait(p)

            systems.update(
                bucket_path=bucket_path,
                per_tensor=per_tensor,
                per_tensor_async=per_tensor_async,
                per_tensor_comm=per_tensor_comm,
            )
        res = {}
        for name in rotate(list(systems), repeat):
            n = max(3, iters // 5) if name.startswith("per_tensor") else iters  # 150 ops each
            t = timed(systems[name], max(1, n // 10), n)
            res[name] = {"s_per_op": t, "bytes": elems * 4, "GBps": elems * 4 / t / 1e9}
        results[label] = res
    return results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mlp,cnn,many")
    ap.add_argument("--repeat", type=int, default=0)
    ap.add_argument("--steps-scale", type=float, default=1.0)
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--big-mb", type=float, default=25.0)
    ap.add_argument("--chunks", type=int, default=5, help="slices the systems take turns on")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    unison.init()
    world, rank = unison.size(), unison.rank()
    result: dict[str, Any] = {
        "world": world,
        "threads": torch.get_num_threads(),
        "master_addr": os.environ.get("MASTER_ADDR"),
        "gloo_ifname": os.environ.get("GLOO_SOCKET_IFNAME"),
        "host": socket.gethostname(),
        "models": {},
    }
    for name in args.models.split(","):
        cfg = dict(models.DEFAULTS[name])
        cfg["steps"] = max(5, int(cfg["steps"] * args.steps_scale))
        if world == 1:
            model = models.build(name)
            step = train_step(
                model, torch.optim.Adam(model.parameters(), lr=1e-3), models.batches(name, cfg["batch"], 0)
            )
            result["models"][name] = {"plain1": {"s_per_step": timed(step, cfg["warmup"], cfg["steps"])}}
        else:
            result["models"][name] = step_systems(name, cfg, args.repeat, world, rank, args.chunks)
        result["models"][name]["config"] = cfg
    if world > 1 and not args.no_throughput:
        result["throughput"] = throughput(
            args.repeat, max(5, int(50 * args.steps_scale)), max(3, int(10 * args.steps_scale)), args.big_mb
        )
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
