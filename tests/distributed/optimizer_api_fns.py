"""Replica functions for test_optimizer_api.py: DistributedOptimizer as a torch.optim.Optimizer
(LR schedulers, GradScaler) and Horovod's gradient_predivide_factor, on real processes."""

from __future__ import annotations

import numpy as np
import torch

import unison as hvd


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 1))


def _batch(step: int, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(100 * step + rank)
    return torch.randn(5, 4, generator=g), torch.randn(5, 1, generator=g)


def scheduled(steps: int, predivide: float) -> dict:
    """Horovod loop with StepLR on the DistributedOptimizer; returns lrs and parameters."""
    hvd.init()
    model = _model()
    opt = hvd.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1 * hvd.size()),
        named_parameters=model.named_parameters(),
        op=hvd.Average,
        compression=hvd.Compression.none,
        gradient_predivide_factor=predivide,
    )
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(opt, root_rank=0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    lrs = []
    for step in range(steps):
        x, y = _batch(step, hvd.rank())
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    return {
        "lrs": lrs,
        "params": [p.detach().numpy().copy() for p in model.parameters()],
        "is_optimizer": isinstance(opt, torch.optim.Optimizer),
    }


def scheduled_both(steps: int) -> dict:
    """``scheduled`` without and with a predivide factor, in one set of processes."""
    return {factor: scheduled(steps, factor) for factor in (1.0, 2.0)}


def reference(steps: int, world: int) -> list[np.ndarray]:
    """One process: the average of the replicas' gradients, same schedule."""
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1 * world)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for step in range(steps):
        opt.zero_grad()
        for rank in range(world):
            x, y = _batch(step, rank)
            (torch.nn.functional.mse_loss(model(x), y) / world).backward()
        opt.step()
        sched.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def scaled(steps: int, overflow_step: int) -> dict:
    """GradScaler in Horovod's order; rank 1 overflows at ``overflow_step``: every replica skips it."""
    hvd.init()
    model = _model()
    opt = hvd.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.05), named_parameters=model.named_parameters(), nonfinite="keep"
    )
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    scales, params_after = [], []
    for step in range(steps):
        x, y = _batch(step, hvd.rank())
        if step == overflow_step and hvd.rank() == 1:
            x = x * float("inf")
        opt.zero_grad()
        scaler.scale(torch.nn.functional.mse_loss(model(x), y)).backward()
        opt.synchronize()
        scaler.unscale_(opt)
        with opt.skip_synchronize():
            scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        params_after.append(np.concatenate([p.detach().numpy().ravel() for p in model.parameters()]))
    return {"scales": scales, "params": params_after}
