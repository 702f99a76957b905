"""All-reduce bytes/s and latency on one host: unison's shared-memory path vs gloo vs memcpy.

Every size runs in the same replica processes; within each repeat the systems are interleaved
(memcpy, shm through the communicator, the reducer itself on an ordinary tensor, the reducer on
a tensor in its arena, gloo), and each figure is the median of ``--repeats`` timed rounds, as
rank 0 saw them. Systems:

- ``memcpy``: one ``copy_`` of a tensor of that size into another on every rank at once (what
  the all-reduce competes with: every rank moves memory at the same time); ``memcpy1`` the same
  on rank 0 alone while the others wait.
- ``comm``: ``Communicator.all_reduce`` (shared memory where it applies), what a user calls.
- ``staged``: ``SharedMemoryReducer.all_reduce`` on an ordinary tensor (copied into the segment
  and out), without the communicator's bookkeeping.
- ``arena``: the same on a tensor allocated in the segment (``SharedMemoryReducer.empty``), as
  the DistributedOptimizer's gradient buckets are: no copy in, only the others' slices out.
- ``gloo``: ``torch.distributed.all_reduce`` on the same process group.

Bandwidth is the algorithm bandwidth: tensor bytes / time; ``x memcpy`` is memcpy's time over
the all-reduce's (1.0: an all-reduce as fast as one copy of the tensor).

    python benchmarks/allreduce.py [--world-size 2] [--repeats 7] [--max-mib 64] [--dtype float32] [--pin]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import torch
import torch.distributed as dist

SYSTEMS = ("memcpy", "memcpy1", "comm", "staged", "arena", "gloo")


def _time(fn: Any, iters: int) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds) per call."""
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - start) / iters, (time.process_time() - cpu) / iters


def _systems(comm: Any, red: Any, t: torch.Tensor, src: torch.Tensor, dst: torch.Tensor, arena: Any) -> dict[str, Any]:
    """What each system runs once (``None``: not on this rank)."""
    return {
        "memcpy": lambda: dst.copy_(src),
        "memcpy1": (lambda: dst.copy_(src)) if comm.rank == 0 else None,
        "comm": lambda: comm.all_reduce(t, name="bench"),
        "staged": (lambda: red.all_reduce(t)) if red is not None else None,
        "arena": (lambda: red.all_reduce(arena)) if arena is not None else None,
        "gloo": lambda: dist.all_reduce(t),
    }


def replica(sizes: list[int], repeats: int, dtype_name: str, pin: bool) -> dict[str, Any]:
    """Time every system per size (interleaved within each repeat)."""
    import unison
    from unison.comm.communicator import joined

    torch.set_num_threads(1)
    unison.init(timeout_seconds=120)
    comm = joined()
    if pin:
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[comm.rank % len(cores)]})
    red = comm.shared_memory
    dtype = getattr(torch, dtype_name)
    size = torch.empty((), dtype=dtype).element_size()
    rows: dict[str, Any] = {"shared_memory": red is not None, "arena_bytes": getattr(red, "arena_bytes", 0)}
    rows["sizes"], rows["cpu"] = {}, {}
    # one arena tensor, sliced (an older unison, run through PYTHONPATH for comparison, has none)
    whole = red.empty(max(sizes) // size, dtype) if hasattr(red, "empty") else None
    for nbytes in sizes:
        n = max(1, nbytes // size)
        t = torch.ones(n, dtype=dtype)
        src, dst = torch.ones(n, dtype=dtype), torch.empty(n, dtype=dtype)
        if whole is not None:
            whole[:n].fill_(1)
        iters = max(3, min(300, int(3e7 // max(nbytes, 1))))
        fns = _systems(comm, red, t, src, dst, whole[:n] if whole is not None else None)
        times: dict[str, list[tuple[float, float]]] = {s: [] for s in SYSTEMS}
        for fn in fns.values():  # warm-up: page faults, views, caches
            dist.barrier()
            if fn is not None:
                fn()
        for _ in range(repeats):
            for system, fn in fns.items():
                dist.barrier()  # (memcpy1: the other ranks wait here while rank 0 copies)
                if fn is not None:
                    times[system].append(_time(fn, iters))
        # (the sums grow to inf in fp16 and fp32 over the repeats; adding infs is no slower here)
        rows["sizes"][nbytes] = {s: statistics.median(w for w, _ in v) for s, v in times.items() if v}
        rows["cpu"][nbytes] = {s: statistics.median(c for _, c in v) for s, v in times.items() if v}
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--max-mib", type=int, default=64)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--pin", action="store_true", help="pin each replica to one core (rank modulo cores)")
    args = parser.parse_args(argv)
    from unison.testing import run_distributed

    sizes = [4, 4096, 65536, 1 << 20, 16 << 20, args.max_mib << 20]
    sizes = sorted({s for s in sizes if s <= args.max_mib << 20})
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    env = {"UNISON_SHM_ARENA_MIB": str(args.max_mib + 1)}
    rows = run_distributed(
        replica, args.world_size, args=(sizes, args.repeats, args.dtype, args.pin), timeout=1800, env=env
    )[0]
    after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print("$ python " + " ".join(["benchmarks/allreduce.py", *sys.argv[1:]]))
    print(f"uptime before: {load}\nuptime after:  {after}")
    print(
        f"world size {args.world_size}, {args.dtype}, shared memory in use: {rows['shared_memory']}, "
        f"arena {rows['arena_bytes'] >> 20} MiB/rank, pinned: {args.pin}, medians of {args.repeats} repeats (rank 0)"
    )
    print()
    print(
        "| bytes | memcpy GB/s (all ranks) | memcpy1 GB/s | comm us | staged us | arena us | gloo us "
        "| staged x memcpy | arena x memcpy | arena x memcpy1 | arena GB/s | gloo/arena | CPU us: comm, staged, arena "
        "| CPU arena x memcpy |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

    def us(r: dict[str, float], s: str) -> str:
        return f"{r[s] * 1e6:.1f}" if s in r else "-"

    def ratio(r: dict[str, float], base: str, s: str) -> str:
        return f"{r[base] / r[s]:.2f}" if s in r and r[s] > 0 else "-"

    for nbytes, r in rows["sizes"].items():
        c = rows["cpu"][nbytes]
        best = r.get("arena", r.get("staged", r["comm"]))
        print(
            f"| {nbytes} | {nbytes / r['memcpy'] / 1e9:.2f} | {nbytes / r['memcpy1'] / 1e9:.2f} | {us(r, 'comm')} | "
            f"{us(r, 'staged')} | {us(r, 'arena')} | {us(r, 'gloo')} | {ratio(r, 'memcpy', 'staged')} | "
            f"{ratio(r, 'memcpy', 'arena')} | {ratio(r, 'memcpy1', 'arena')} | {nbytes / best / 1e9:.2f} | "
            f"{r['gloo'] / best:.1f} | {us(c, 'comm')}, {us(c, 'staged')}, {us(c, 'arena')} | "
            f"{ratio(c, 'memcpy', 'arena')} |"
        )
    print(
        "\nx memcpy: memcpy's time / the all-reduce's (>= 0.7 is issue 28's target for large buckets); "
        "CPU: rank 0's CPU time per call (no time spent waiting for a core, but its spinning and yielding while "
        "it waits for the others)"
    )


if __name__ == "__main__":
    main()
