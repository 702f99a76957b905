"""Replica functions for the shared-memory all-reduce tests (module level, so picklable)."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

import unison
from unison.comm.communicator import joined


def _inputs(rank: int) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(100 + rank)
    return {
        "f32": torch.randn(1000, generator=gen),
        "f64": torch.randn(7, 3, generator=gen, dtype=torch.float64),
        "i64": torch.randint(-50, 50, (33,), generator=gen),
        "bf16": torch.randn(64, generator=gen).to(torch.bfloat16),
        "tiny": torch.randn(2, generator=gen),  # fewer elements than 3 ranks: empty slices
        "empty": torch.randn(0, generator=gen),
        "strided": torch.randn(6, 5, generator=gen).t(),  # not contiguous
        "param": torch.nn.Parameter(torch.randn(9, generator=gen)),  # a leaf that requires grad
        # 4 MiB slots: 1.5M floats (6 MB) go through in two pieces
        "big": torch.randn(1_500_000, generator=gen),
    }


def reduce_everything() -> dict[str, Any]:
    """Every op and dtype through the communicator, and the same sums through gloo."""
    unison.init(timeout_seconds=60)
    comm = joined()
    out: dict[str, Any] = {"shared_memory": comm.shared_memory is not None}
    for name, tensor in _inputs(comm.rank).items():
        for op in ("sum", "max", "min"):
            if name == "param":
                got = torch.nn.Parameter(tensor.detach().clone())
            elif name == "strided":
                got = tensor.clone().t().contiguous().t()  # same strides as the input
            else:
                got = tensor.clone()
            comm.all_reduce(got, op=op, name=f"{name}.{op}")  # in place, as gloo does
            out[f"{name}.{op}"] = to_numpy(got)
        gloo = tensor.detach().clone().contiguous()
        dist.all_reduce(gloo)  # gloo itself, for comparison
        out[f"{name}.gloo"] = to_numpy(gloo)
    pending = comm.all_reduce_async(torch.full((5,), float(comm.rank + 1)), name="async")
    comm.wait(pending)
    out["collectives"] = comm.collective_count
    # rank 0 unlinks the segment before it takes part in any collective
    out["shm_files"] = sorted(f for f in os.listdir("/dev/shm") if f.startswith("unison-"))
    return out


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """Results cross the pipe as numpy (a tensor would be shared through a file descriptor of a
    process that may have exited); bfloat16 widens to float32 exactly."""
    t = t.detach()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy().copy()


def expected(world: int) -> dict[str, np.ndarray]:
    """What every replica must get: the reductions of every rank's inputs, in rank order."""
    per_rank = [_inputs(r) for r in range(world)]
    want = {}
    for name in per_rank[0]:
        stacked = torch.stack([p[name].detach() for p in per_rank])
        want[f"{name}.sum"] = stacked[0].clone()
        for r in range(1, world):
            want[f"{name}.sum"] += stacked[r]
        if stacked[0].numel():
            want[f"{name}.max"] = stacked.max(0).values
            want[f"{name}.min"] = stacked.min(0).values
    return {k: to_numpy(v) for k, v in want.items()}


def die_or_survive(rank: int, port: int, conn: Any) -> None:
    """Rank 1 exits without arriving; rank 0 sends how long it took to notice, and its error."""
    import datetime

    from unison.comm.communicator import Communicator
    from unison.comm.shm import attach

    store = dist.TCPStore("127.0.0.1", port, 2, is_master=False, timeout=datetime.timedelta(seconds=60))
    cpu = torch.device("cpu")
    comm = Communicator(rank, 2, cpu, 120.0, store=store, shared_memory=attach(store, rank, 2, cpu, "gloo", 120.0))
    comm.all_reduce(torch.ones(4), name="warm-up")
    if rank == 1:
        os._exit(3)
    start = time.monotonic()
    try:
        comm.all_reduce(torch.ones(4), name="after.the.death")
        conn.send((time.monotonic() - start, "no error"))
    except unison.errors.UnisonError as exc:
        conn.send((time.monotonic() - start, f"{type(exc).__name__}: {exc}"))


# Sizes around a 2 KiB region (slot_bytes=4096) and the one-barrier path's bound: every chunk
# boundary, a last partial chunk, fewer elements than ranks, and the empty tensor.
SWEEP_SLOT_BYTES = 4096
SWEEP_DTYPES = ("float32", "bfloat16", "float16", "float64", "int32", "int64")
ARENA_MODES = ("arena", "mixed")


def sweep_sizes(element_size: int) -> list[int]:
    """Element counts to reduce for one dtype (bytes relative to the 2 KiB chunk)."""
    chunk = SWEEP_SLOT_BYTES // 2 // element_size
    return sorted({0, 1, 2, 3, 5, 16, 17, chunk - 1, chunk, chunk + 1, 2 * chunk, 3 * chunk + 7, 10 * chunk + 3})


def _sweep_input(rank: int, dtype_name: str, n: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(1000 * rank + 7 * n + len(dtype_name))
    dtype = getattr(torch, dtype_name)
    if dtype.is_floating_point:
        return (torch.randn(n, generator=gen, dtype=torch.float64) * 3).to(dtype)
    return torch.randint(-1000, 1000, (n,), generator=gen, dtype=dtype)


def sweep_expected(world: int, dtype_name: str, n: int, op: str) -> torch.Tensor:
    """The reduction of every rank's input in rank order, computed in this one process."""
    parts = [_sweep_input(r, dtype_name, n) for r in range(world)]
    fn = {"sum": torch.add, "max": torch.maximum, "min": torch.minimum}[op]
    out = parts[0].clone()
    for part in parts[1:]:
        out = fn(out, part)
    return out


def sweep_float64_sum(world: int, dtype_name: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The float64 sum the rounded one is compared with, and the sum of magnitudes that scales
    the rounding bound (partial sums can exceed the final one)."""
    parts = [_sweep_input(r, dtype_name, n).double() for r in range(world)]
    return sum(parts).numpy(), sum(p.abs() for p in parts).numpy()  # type: ignore[union-attr]


def reduce_sweep() -> dict[str, Any]:
    """Every dtype and size through a reducer with 2 KiB chunks, sum/max/min, plus a few
    calls through the communicator's default (1 MiB chunk) reducer."""
    from unison.comm.shm import attach

    unison.init(timeout_seconds=60)
    comm = joined()
    reducer = attach(comm.store, comm.rank, comm.world_size, torch.device("cpu"), "gloo", 60.0, SWEEP_SLOT_BYTES)
    assert reducer is not None, "the small-slot reducer fell back to gloo"
    out: dict[str, Any] = {}
    for dtype_name in SWEEP_DTYPES:
        size = torch.empty((), dtype=getattr(torch, dtype_name)).element_size()
        for n in sweep_sizes(size):
            for op in ("sum", "max", "min"):
                got = _sweep_input(comm.rank, dtype_name, n)
                reducer.all_reduce(got, op)
                out[f"{dtype_name}.{n}.{op}"] = to_numpy(got)
                # the same in the arena (read in place by the other ranks, summed in place);
                # "mixed": only the even ranks' tensors there, the others staged
                for mode in ARENA_MODES:
                    if mode == "mixed" and op != "sum":
                        continue
                    source = _sweep_input(comm.rank, dtype_name, n)
                    placed = reducer.empty(n, source.dtype) if mode == "arena" or comm.rank % 2 == 0 else None
                    if placed is None:
                        placed = torch.empty_like(source)
                    else:
                        assert reducer._arena_offset(placed, max(1, n) * size) >= 0 or n == 0
                    placed.copy_(source)
                    reducer.all_reduce(placed, op)
                    out[f"{dtype_name}.{n}.{op}.{mode}"] = to_numpy(placed)
    for n in (3, 5000, 300_000, 700_001):  # the default reducer: small path, one chunk, several
        got = _sweep_input(comm.rank, "float32", n)
        comm.all_reduce(got, name=f"default.{n}")
        out[f"default.{n}"] = to_numpy(got)
    return out
