"""What the shared-memory all-reduce's passes over memory cost, in one process, beside one memcpy.

For 2 replicas and a tensor of N bytes, each replica runs (see ``unison/comm/shm.py``):

- arena tensor (gradient buckets): ``add`` of its half from both replicas into its own tensor
  (reads N, writes N/2), then a copy of the other replica's summed half (reads N/2, writes N/2);
- staged tensor: a copy of the other replica's half into the segment (N/2 in, N/2 out), the
  same ``add`` into the segment, and a copy of the whole result out (N in, N out).

Timing those kernels alone (no second replica, no barrier) on one core gives the all-reduce's
floor on this machine as a fraction of memcpy's time, medians of ``--repeats`` interleaved rounds.

    python benchmarks/allreduce_passes.py [--mib 64] [--repeats 7] [--dtype float32]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import torch


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    dtype = getattr(torch, args.dtype)
    n = (args.mib << 20) // torch.empty((), dtype=dtype).element_size()
    h = n // 2
    mine, other, out = torch.ones(n, dtype=dtype), torch.ones(n, dtype=dtype), torch.empty(n, dtype=dtype)
    kernels = {
        "memcpy N": lambda: out.copy_(mine),
        "add N/2 (2 reads, 1 write)": lambda: torch.add(mine[:h], other[:h], out=mine[:h]),
        "copy N/2": lambda: out[h:].copy_(other[h:]),
    }
    times: dict[str, list[float]] = {k: [] for k in kernels}
    for fn in kernels.values():
        fn()
    for _ in range(args.repeats):
        for name, fn in kernels.items():
            start = time.perf_counter()
            for _ in range(3):
                fn()
            times[name].append((time.perf_counter() - start) / 3)
    t = {k: statistics.median(v) for k, v in times.items()}
    print("$ python " + " ".join(["benchmarks/allreduce_passes.py", *sys.argv[1:]]))
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"{args.mib} MiB {args.dtype}, one core, medians of {args.repeats}\n")
    print("| kernel | ms | x memcpy's time |")
    print("| --- | ---: | ---: |")
    for k, v in t.items():
        print(f"| {k} | {v * 1e3:.2f} | {v / t['memcpy N']:.2f} |")
    arena = t["add N/2 (2 reads, 1 write)"] + t["copy N/2"]
    staged = t["copy N/2"] + t["add N/2 (2 reads, 1 write)"] + t["memcpy N"]
    print(f"| arena all-reduce's kernels (add + copy N/2) | {arena * 1e3:.2f} | {arena / t['memcpy N']:.2f} |")
    print(
        f"| staged all-reduce's kernels (copy N/2 + add + memcpy N) | {staged * 1e3:.2f} | {staged / t['memcpy N']:.2f} |"
    )
    print(
        f"\nfloor without synchronisation: arena {t['memcpy N'] / arena:.2f}x memcpy's bandwidth, "
        f"staged {t['memcpy N'] / staged:.2f}x (issue 28's target: 0.7x)"
    )


if __name__ == "__main__":
    main()
