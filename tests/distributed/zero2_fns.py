"""Replica functions for the ZeRO-2 tests (module level, so picklable)."""

from __future__ import annotations

from typing import Any

import numpy as np
import sharding_fns as lm
import torch
import torch.nn.functional as F

import unison


def _grad_bytes(model: torch.nn.Module) -> int:
    return sum(p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None)


def lm_plain_vs_zero2(steps: int = 20, op: str = "average", accumulate: int = 1) -> dict[str, Any]:
    """The tiny GPT-style model, plain data parallelism then ZeRO-2, same data and seeds."""
    unison.init(timeout_seconds=60)
    reduce_op = unison.Sum if op == "sum" else unison.Average
    out: dict[str, Any] = {}
    for mode in ("plain", "zero2"):
        model = lm.make_model(seed=unison.rank())  # different seeds: the broadcast fixes it
        extra = {"shard_gradients": True} if mode == "zero2" else {}
        opt = unison.DistributedOptimizer(
            torch.optim.Adam(model.parameters(), lr=1e-2),
            named_parameters=model.named_parameters(),
            op=reduce_op,
            bucket_cap_mb=0.004,
            backward_passes_per_step=accumulate,
            **extra,
        )
        unison.broadcast_parameters(model.state_dict(), root_rank=0)
        for ids in lm.make_batches(steps):
            opt.zero_grad()
            local = lm._local(ids)
            for part in local.chunk(accumulate):
                if reduce_op is unison.Sum:  # strategy style: per-example sum over the global batch
                    loss = lm.lm_loss(model, part, "sum") / (lm.BATCH * (lm.SEQ - 1))
                else:
                    loss = lm.lm_loss(model, part)
                loss.backward()
            opt.step()
        out[mode] = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        out[f"{mode}_grad_bytes"] = _grad_bytes(model)
        out[f"{mode}_state_bytes"] = opt.optimizer_state_bytes()
        out["buckets"] = len(opt._buckets)
        out[f"{mode}_skipped"] = opt.skipped_steps
    out["param_bytes"] = sum(p.numel() * p.element_size() for p in model.parameters())
    return out


def nonfinite(policy: str) -> dict[str, Any]:
    """Rank 1's input is NaN: every replica raises (naming rank 1) or skips together."""
    unison.init(timeout_seconds=60)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    opt = unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1),
        bucket_cap_mb=1e-4,
        named_parameters=model.named_parameters(),
        nonfinite=policy,
        shard_gradients=True,
    )
    before = [p.detach().clone() for p in model.parameters()]
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    if unison.rank() == 1:
        x[0, 0] = float("nan")
    try:
        F.cross_entropy(model(x), y).backward()
        opt.step()
    except unison.optim.NonFiniteGradientError as exc:
        try:
            opt.add_param_group({"params": [torch.nn.Parameter(torch.zeros(2))]})
        except ValueError as late:
            return {"error": str(exc), "add_param_group": str(late)}
        return {"error": str(exc)}
    unchanged = all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    return {"skipped": opt.skipped_steps, "unchanged": unchanged}


def as_arrays(params: dict[str, Any]) -> list[np.ndarray]:
    return [params[k] for k in sorted(params)]


def permuted_kernel_plain_vs_zero2(steps: int = 4) -> dict[str, Any]:
    """A parameter stored in another memory order than its shape's (as Keras's conv kernels are:
    ``conv_base.keep_channels_last_storage``), stepped by torch's fused Adam: plain data
    parallelism then ZeRO-2, whose reduce-scattered gradient is a contiguous slice of the wire
    buffer. torch's fused kernel pairs parameter and gradient elements by memory order."""
    unison.init(timeout_seconds=60)
    out: dict[str, Any] = {}
    for mode in ("plain", "zero2"):
        torch.manual_seed(0)
        base = torch.randn(3, 3, 4, 5)
        kernel = torch.nn.Parameter(base.permute(3, 0, 1, 2).contiguous().permute(1, 2, 3, 0))
        bias = torch.nn.Parameter(torch.zeros(5))
        extra = {"shard_gradients": True} if mode == "zero2" else {}
        opt = unison.DistributedOptimizer(
            torch.optim.Adam([kernel, bias], lr=0.1, fused=True),
            named_parameters=[("kernel", kernel), ("bias", bias)],
            bucket_cap_mb=1e-4,
            **extra,
        )
        gen = torch.Generator().manual_seed(unison.rank())
        for _ in range(steps):
            opt.zero_grad()
            x = torch.randn(8, 3, 3, 4, generator=gen)
            loss = ((torch.einsum("nhwc,hwco->no", x, kernel) + bias) ** 2).mean()
            loss.backward()
            opt.step()
        out[mode] = {"kernel": kernel.detach().contiguous().numpy().copy(), "bias": bias.detach().numpy().copy()}
        out[f"{mode}_strides"] = kernel.stride()
    return out
