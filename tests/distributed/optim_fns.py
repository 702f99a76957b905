"""Replica functions for the DistributedOptimizer tests (module level, so picklable)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

import unison
from unison.distribute.input import shard_bounds

IN, HIDDEN, OUT = 10, 16, 3


def make_model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, OUT))


def make_batches(steps: int, batch: int, seed: int = 1) -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(batch, IN, generator=gen), torch.randint(0, OUT, (batch,), generator=gen)) for _ in range(steps)
    ]


def make_optimizer(kind: str, model: torch.nn.Module) -> torch.optim.Optimizer:
    if kind == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return torch.optim.Adam(model.parameters(), lr=1e-2)


def reference(kind: str, steps: int, batch: int, clip: float | None = None) -> list[np.ndarray]:
    """One process on the global batch."""
    model = make_model()
    opt = make_optimizer(kind, model)
    for x, y in make_batches(steps, batch):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def _local(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = shard_bounds(len(x), unison.size(), unison.rank())
    return x[a:b], y[a:b]


def train(
    kind: str, steps: int, batch: int, options: dict[str, Any] | None = None, set_to_none: bool = True
) -> dict[str, Any]:
    """Horovod-style raw loop: each replica its shard, op=Average over equal shards."""
    unison.init(timeout_seconds=60)
    model = make_model(seed=unison.rank())  # different on purpose: the broadcast must fix it
    opt = unison.DistributedOptimizer(
        make_optimizer(kind, model), named_parameters=model.named_parameters(), **(options or {})
    )
    unison.broadcast_parameters(model.state_dict(), root_rank=0)
    unison.broadcast_optimizer_state(opt, root_rank=0)
    bytes_before = opt.comm.bytes_reduced
    for x, y in make_batches(steps, batch):
        xl, yl = _local(x, y)
        opt.zero_grad(set_to_none=set_to_none)
        F.cross_entropy(model(xl), yl).backward()
        opt.step()
    return {
        "params": [p.detach().numpy().copy() for p in model.parameters()],
        "bytes": opt.comm.bytes_reduced - bytes_before,
        "state_bytes": opt.optimizer_state_bytes(),
        "buckets": len(opt._buckets),
        "in_arena": _buckets_in_arena(opt),
    }


def _buckets_in_arena(opt: Any) -> list[bool]:
    """Per bucket: whether its wire buffer lies in the shared-memory segment (read in place)."""
    shared = getattr(opt.comm, "shared_memory", None)
    if shared is None:
        return []
    return [
        b.buffer is not None and shared._arena_offset(b.buffer, b.buffer.numel() * b.buffer.element_size()) >= 0
        for b in opt._buckets
    ]


def accumulate(k: int, batch: int) -> dict[str, Any]:
    """k micro-batches per step: no collective on the first k-1 backward passes."""
    unison.init(timeout_seconds=60)
    model = make_model()
    opt = unison.DistributedOptimizer(
        make_optimizer("sgd", model), named_parameters=model.named_parameters(), backward_passes_per_step=k
    )
    counts = []
    for x, y in make_batches(3, batch):
        xl, yl = _local(x, y)
        opt.zero_grad()
        for part_x, part_y in zip(xl.chunk(k), yl.chunk(k)):
            before = opt.comm.collective_count
            F.cross_entropy(model(part_x), part_y).backward()
            counts.append(opt.comm.collective_count - before)
        opt.step()
    return {"params": [p.detach().numpy().copy() for p in model.parameters()], "counts": counts}


def inconsistent(what: str) -> str:
    unison.init(timeout_seconds=60)
    torch.manual_seed(0)
    width = HIDDEN + (unison.rank() if what == "shape" else 0)
    model = torch.nn.Sequential(torch.nn.Linear(IN, width), torch.nn.Linear(width, OUT))
    if what == "value" and unison.rank() == 1:
        with torch.no_grad():
            model[1].bias.add_(1.0)
    opt = unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1), named_parameters=model.named_parameters()
    )
    try:
        model(torch.randn(4, IN)).sum().backward()  # the first bucket's launch runs the check
        opt.step()
    except unison.optim.ReplicaMismatchError as exc:
        return str(exc)
    return "no error"


def nonfinite(policy: str) -> dict[str, Any]:
    unison.init(timeout_seconds=60)
    model = make_model()
    opt = unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1), named_parameters=model.named_parameters(), nonfinite=policy
    )
    before = [p.detach().clone() for p in model.parameters()]
    x, y = make_batches(1, 8)[0]
    if unison.rank() == 1:
        x[0, 0] = float("nan")  # poisons every gradient of rank 1 during backward
    try:
        F.cross_entropy(model(x), y).backward()
        opt.step()
    except unison.optim.NonFiniteGradientError as exc:
        return {"error": str(exc)}
    unchanged = all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    return {"skipped": opt.skipped_steps, "unchanged": unchanged}


def partly_unused() -> dict[str, Any]:
    """Rank 0 uses branch b, rank 1 does not; branch c is used by nobody."""
    unison.init(timeout_seconds=60)
    torch.manual_seed(0)
    a, b, c = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)
    params = list(a.parameters()) + list(b.parameters()) + list(c.parameters())
    named = [(f"{m}.{n}", p) for m, mod in zip("abc", (a, b, c)) for n, p in mod.named_parameters()]
    opt = unison.DistributedOptimizer(torch.optim.SGD(params, lr=0.1), named_parameters=named, bucket_cap_mb=1e-4)
    x = torch.ones(2, 4)
    out = a(x)
    if unison.rank() == 0:
        out = b(out)
    out.sum().backward()
    opt.synchronize()
    return {
        "a": a.weight.grad.clone().numpy(),
        "b": None if b.weight.grad is None else b.weight.grad.numpy(),
        "c": c.weight.grad is None,
        "buckets": len(opt._buckets),
    }


def sleeper(sleep_rank: int) -> str:
    unison.init(timeout_seconds=3)
    model = make_model()
    opt = unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1), named_parameters=model.named_parameters()
    )
    x, y = make_batches(1, 8)[0]
    opt._checked = True  # start straight with the gradient collectives
    if unison.rank() == sleep_rank:
        # past the 3 s timeout, so the peer fails naming this rank; and back before this rank's
        # watchdog (timeout + its report budget after the peer's failure) ends it as stuck
        time.sleep(6)
    F.cross_entropy(model(x), y).backward()
    try:
        opt.step()
    except unison.errors.UnisonError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "no error"


def adasum_grads() -> dict[str, Any]:
    unison.init(timeout_seconds=60)
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.zeros(3))
    opt = unison.DistributedOptimizer(torch.optim.SGD([w], lr=1.0), named_parameters=[("w", w)], op=unison.Adasum)
    local = torch.tensor([1.0, 0.0, 0.0]) if unison.rank() == 0 else torch.tensor([1.0, 1.0, 0.0])
    (w * local).sum().backward()
    opt.synchronize()
    return {"grad": w.grad.numpy().copy()}


def mnist_compressed(compression: str, error_feedback: bool) -> float:
    """Train the seed MLP on 12,000 MNIST images with compressed gradients; return test accuracy."""
    unison.init(timeout_seconds=60)
    (x, y), (xt, yt) = unison.keras.datasets.mnist.load_data()
    x = torch.from_numpy(x[:12000].reshape(-1, 784).astype("float32") / 255)
    y = torch.from_numpy(y[:12000].astype("int64"))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = unison.DistributedOptimizer(
        torch.optim.Adam(model.parameters(), lr=1e-3),
        named_parameters=model.named_parameters(),
        compression=compression,
        error_feedback=error_feedback,
    )
    unison.broadcast_parameters(model.state_dict())
    for i in range(0, len(x), 32):
        xl, yl = _local(x[i : i + 32], y[i : i + 32])
        opt.zero_grad()
        F.cross_entropy(model(xl), yl).backward()
        opt.step()
    with torch.no_grad():
        pred = model(torch.from_numpy(xt[:2000].reshape(-1, 784).astype("float32") / 255)).argmax(1)
    return float((pred.numpy() == yt[:2000]).mean())
