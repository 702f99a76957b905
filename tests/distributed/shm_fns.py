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
