"""Replica functions of test_horovod_api.py: Horovod's API with `import unison as hvd` (module level, picklable)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import unison as hvd
from unison import keras


def collectives() -> dict[str, Any]:
    """Every collective of hvd.* on two processes, with rank-dependent inputs."""
    hvd.init()
    r = hvd.rank()
    out: dict[str, Any] = {"rank": r, "size": hvd.size(), "initialized": hvd.is_initialized()}
    out["cross"] = (hvd.cross_rank(), hvd.cross_size())
    x = torch.tensor([r + 1.0, 2.0 * r])
    out["average"] = hvd.allreduce(x).tolist()
    out["sum"] = hvd.allreduce(x, op=hvd.Sum).tolist()
    out["average_false"] = hvd.allreduce(x, average=False).tolist()
    out["scaled"] = hvd.allreduce(x, op=hvd.Sum, prescale_factor=2.0, postscale_factor=0.25).tolist()
    out["fp16"] = hvd.allreduce(x, compression=hvd.Compression.fp16)
    out["input_unchanged"] = x.tolist()
    out["adasum_orthogonal"] = hvd.allreduce(torch.eye(2)[r], op=hvd.Adasum).tolist()
    out["adasum_same"] = hvd.allreduce(torch.tensor([2.0, 2.0]), op=hvd.Adasum).tolist()
    inplace = x.clone()
    out["inplace_is_same"] = hvd.allreduce_(inplace, op=hvd.Sum) is inplace
    out["inplace"] = inplace.tolist()
    handle = hvd.allreduce_async(x, op=hvd.Sum)
    out["async"] = hvd.synchronize(handle).tolist()
    out["polled"] = hvd.poll(handle)
    target = x.clone()
    out["async_inplace"] = hvd.synchronize(hvd.allreduce_async_(target)) is target and target.tolist()
    grouped = hvd.grouped_allreduce(
        [torch.full((2,), float(r)), torch.tensor([r], dtype=torch.float64), torch.tensor([[r + 1]])], op=hvd.Sum
    )
    out["grouped"] = [(g.tolist(), str(g.dtype)) for g in grouped]
    out["allgather"] = hvd.allgather(torch.full((r + 1, 2), float(r))).tolist()
    out["broadcast"] = hvd.broadcast(torch.tensor([float(r)]), root_rank=1).tolist()
    b = torch.tensor([float(r)])
    hvd.broadcast_(b, root_rank=1)
    out["broadcast_"] = b.tolist()
    out["alltoall_splits"] = [
        t.tolist() for t in hvd.alltoall(torch.arange(3) + 10 * r, splits=torch.tensor([1, 2] if r == 0 else [2, 1]))
    ]
    out["alltoall_equal"] = hvd.alltoall(torch.arange(4) + 10 * r).tolist()
    out["reducescatter_sum"] = hvd.reducescatter(torch.arange(5.0) * (r + 1), op=hvd.Sum).tolist()
    out["reducescatter_avg"] = hvd.reducescatter(torch.arange(5.0) * (r + 1)).tolist()
    out["allgather_object"] = hvd.allgather_object({"rank": r})
    out["broadcast_object"] = hvd.broadcast_object({"from": r}, root_rank=1)
    # differentiable: d(sum of allreduce(x, Sum))/dx = the sum over processes of the ones
    leaf = torch.ones(3, requires_grad=True)
    hvd.allreduce(leaf * (r + 1), op=hvd.Sum).sum().backward()
    out["grad_allreduce"] = leaf.grad.tolist()  # type: ignore[union-attr]
    leaf2 = torch.ones(r + 1, 1, requires_grad=True)
    (hvd.allgather(leaf2) * torch.tensor([[1.0], [2.0], [3.0]])).sum().backward()
    out["grad_allgather"] = leaf2.grad.reshape(-1).tolist()  # type: ignore[union-attr]
    out["join"] = hvd.join()
    return out


def tape_and_variables() -> dict[str, Any]:
    """DistributedGradientTape averages gradients; local sources are scaled; broadcast_variables."""
    hvd.init()
    r = hvd.rank()
    w = hvd.Variable([1.0, 2.0])
    local = hvd.Variable([3.0])
    with hvd.GradientTape() as tape:
        loss = hvd.reduce_sum(w * (r + 1.0)) + hvd.reduce_sum(local * (r + 1.0))
    dtape = hvd.DistributedGradientTape(tape)
    dtape.register_local_source(local)
    gw, glocal = dtape.gradient(loss, [w, local])
    with hvd.GradientTape() as tape2:
        loss2 = hvd.reduce_sum(w * (r + 1.0))
    (g_sum,) = hvd.DistributedGradientTape(tape2, op=hvd.Sum).gradient(loss2, [w])
    with hvd.GradientTape() as tape3:
        loss3 = hvd.reduce_sum(w * (r + 1.0))
    (g_pre,) = hvd.DistributedGradientTape(tape3, gradient_predivide_factor=2.0).gradient(loss3, [w])
    v = hvd.Variable([float(r), 10.0 * r])
    hvd.broadcast_variables([v, w], root_rank=1)
    return {
        "grad": gw.tolist(),
        "local": glocal.tolist(),
        "sum": g_sum.tolist(),
        "predivided": g_pre.tolist(),
        "broadcast": v.numpy().tolist(),
    }


def keras_fit(x: np.ndarray, y: np.ndarray, passes: int = 1, average_aggregated: bool = False) -> dict[str, Any]:
    """Horovod's Keras recipe: DistributedOptimizer + the three callbacks, each rank its own rows."""
    hvd.init()
    r = hvd.rank()
    torch.manual_seed(100 + r)  # different initial weights: the broadcast callback must unify them
    model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
    initial = [w.copy() for w in model.get_weights()]
    opt = hvd.DistributedOptimizer(
        keras.optimizers.SGD(0.1), backward_passes_per_step=passes, average_aggregated_gradients=average_aggregated
    )
    model.compile(optimizer=opt, loss="mse")
    callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0), hvd.callbacks.MetricAverageCallback()]
    if passes == 1:
        callbacks.append(hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.1, warmup_epochs=1, verbose=0))
    rows = slice(8 * r, 8 * (r + 1))
    history = model.fit(x[rows], y[rows], batch_size=4, epochs=2, shuffle=False, verbose=0, callbacks=callbacks)
    return {
        "initial": initial,
        "weights": [w.copy() for w in model.get_weights()],
        "history": history.history,
        "optimizer": type(model.optimizer).__name__,
    }


def sync_batch_norm(x: np.ndarray, upstream: np.ndarray) -> dict[str, Any]:
    """hvd.SyncBatchNorm on this rank's half of x: output, input gradient, running statistics."""
    hvd.init()
    r = hvd.rank()
    rows = slice(4 * r, 4 * (r + 1))
    bn = hvd.SyncBatchNorm(3, momentum=0.5)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
        bn.bias.copy_(torch.tensor([0.0, 1.0, -1.0]))
    xr = torch.tensor(x[rows], requires_grad=True)
    out = bn(xr)
    (out * torch.tensor(upstream[rows])).sum().backward()
    return {
        "out": out.detach().numpy(),
        "grad": xr.grad.numpy(),  # type: ignore[union-attr]
        "weight_grad": bn.weight.grad.numpy(),  # type: ignore[union-attr]
        "running": (bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()),
    }


__all__ = ["collectives", "keras_fit", "sync_batch_norm", "tape_and_variables"]
