"""Replica functions for torch.amp.GradScaler through DistributedOptimizer (module level, so picklable)."""

from __future__ import annotations

import warnings
from typing import Any

import torch
import torch.nn.functional as F

import unison
from unison.distribute.input import shard_bounds

BATCH, STEPS, BAD_STEP = 8, 12, 7


def _batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(3)
    out = []
    for step in range(STEPS):
        x, y = torch.randn(BATCH, 10, generator=gen), torch.randint(0, 3, (BATCH,), generator=gen)
        if step == BAD_STEP:
            x[BATCH - 1, 0] = float("nan")  # a row of rank 1's half: only rank 1's gradient goes bad
        out.append((x, y))
    return out


def train(options: dict[str, Any] | None = None, manual: bool = False) -> dict[str, Any]:
    """fp16 autocast + GradScaler, the plain three lines; rank 1 alone overflows at BAD_STEP.

    ``manual``: the documented hand-clipping form (synchronize, unscale_, clip, step).
    """
    unison.init(timeout_seconds=60)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    opt = unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1),
        bucket_cap_mb=1e-4,
        named_parameters=model.named_parameters(),
        **(options or {}),
    )
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**17, growth_interval=3)
    scales, local_nonfinite = [], []
    with warnings.catch_warnings(record=True) as caught:
        for x, y in _batches():
            a, b = shard_bounds(BATCH, unison.size(), unison.rank())
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.float16):
                loss = F.cross_entropy(model(x[a:b]), y[a:b])
            local_nonfinite.append(not bool(torch.isfinite(loss)))
            scaler.scale(loss).backward()
            if manual:
                opt.synchronize()
                scaler.unscale_(opt)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
    return {
        "params": [p.detach().numpy().copy() for p in model.parameters()],
        "scales": scales,
        "skipped": opt.skipped_steps,
        "local_nonfinite": local_nonfinite,
        "future_warnings": [str(w.message) for w in caught if issubclass(w.category, FutureWarning)],
    }


def unscale_before_reduction() -> str:
    """The mistake: scaler.unscale_(opt) on local gradients, then scaler.step(opt)."""
    unison.init(timeout_seconds=60)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    opt = unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1), named_parameters=model.named_parameters()
    )
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(model(torch.ones(2, 4)).sum()).backward()
    scaler.unscale_(opt)
    try:
        scaler.step(opt)
    except RuntimeError as exc:
        return str(exc)
    return "no error"
