"""All-reduce bytes/s and latency on one host: unison's shared-memory path vs gloo vs memcpy.

Every size runs in the same replica processes, interleaved (shm, gloo, shm, gloo, ...), and each
figure is the median of ``--repeats`` timed rounds; the machine's copy bandwidth (one
``torch.Tensor.copy_`` of the largest buffer) is measured in the same run. Bandwidth is the
algorithm bandwidth: tensor bytes / time.

    python benchmarks/allreduce.py [--world-size 2] [--repeats 7] [--max-mib 64]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import torch
import torch.distributed as dist


def _time(fn: Any, iters: int) -> float:
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - start) / iters


def replica(sizes: list[int], repeats: int) -> dict[str, Any]:
    """Time comm.all_reduce (shared memory where it applies) and dist.all_reduce (gloo) per size."""
    import unison
    from unison.comm.communicator import joined

    torch.set_num_threads(1)
    unison.init(timeout_seconds=120)
    comm = joined()
    rows: dict[str, Any] = {"shared_memory": comm.shared_memory is not None, "sizes": {}}
    for nbytes in sizes:
        t = torch.ones(max(1, nbytes // 4))
        iters = max(3, min(200, int(2e7 // max(nbytes, 1))))
        shm, gloo = [], []
        for _ in range(repeats):
            dist.barrier()
            shm.append(_time(lambda t=t: comm.all_reduce(t, name="bench"), iters))
            dist.barrier()
            gloo.append(_time(lambda t=t: dist.all_reduce(t), iters))
        rows["sizes"][nbytes] = {"shm": statistics.median(shm), "gloo": statistics.median(gloo)}
    big = torch.ones(max(sizes) // 4)
    out = torch.empty_like(big)
    rows["memcpy"] = statistics.median(_time(lambda: out.copy_(big), 5) for _ in range(repeats))
    rows["memcpy_bytes"] = big.numel() * 4
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--max-mib", type=int, default=64)
    args = parser.parse_args(argv)
    from unison.testing import run_distributed

    sizes = [4, 4096, 65536, 1 << 20, 16 << 20, args.max_mib << 20]
    sizes = sorted({s for s in sizes if s <= args.max_mib << 20})
    rows = run_distributed(replica, args.world_size, args=(sizes, args.repeats), timeout=1800)[0]
    print("$ python " + " ".join(["benchmarks/allreduce.py", *sys.argv[1:]]))
    print(f"world size {args.world_size}, shared memory in use: {rows['shared_memory']}")
    print(f"memcpy: {rows['memcpy_bytes'] / rows['memcpy'] / 1e9:.2f} GB/s ({rows['memcpy_bytes'] >> 20} MiB copy_)")
    print(f"{'bytes':>10} {'shm us':>10} {'shm GB/s':>9} {'gloo us':>10} {'gloo GB/s':>9} {'gloo/shm':>9}")
    for nbytes, r in rows["sizes"].items():
        print(
            f"{nbytes:>10} {r['shm'] * 1e6:>10.1f} {nbytes / r['shm'] / 1e9:>9.2f} "
            f"{r['gloo'] * 1e6:>10.1f} {nbytes / r['gloo'] / 1e9:>9.2f} {r['gloo'] / r['shm']:>9.2f}"
        )


if __name__ == "__main__":
    main()
