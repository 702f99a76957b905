"""Where a training step of the seed program goes: unison against the plain loop / DDP.

Times each phase of every training step with ``time.perf_counter`` (about 1 us per timer, small
against steps of 1-6 ms) and prints the mean per step, so the gap between unison and its baseline
can be read phase by phase. unison is instrumented from outside (wrapping its methods here; the
library is not modified), the baselines are the loops of ``seed_mlp_programs/`` with timers.

    python benchmarks/seed_mlp_breakdown.py --system unison1 --epochs 1
    python benchmarks/seed_mlp_breakdown.py --system plain --epochs 1
    python benchmarks/seed_mlp_breakdown.py --system unison2 --epochs 1      # re-runs itself as replica 1
    GLOO_SOCKET_IFNAME=lo torchrun --standalone --nproc-per-node 2 benchmarks/seed_mlp_breakdown.py --system ddp2 --epochs 1

Run one at a time on an otherwise idle machine; the numbers are per step, rank 0.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
import torch.optim.optimizer as torch_optimizer

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("UNISON_DATA_DIR", os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data")))

TOTALS: dict[str, float] = collections.defaultdict(float)  # wall seconds
CPU: dict[str, float] = collections.defaultdict(float)  # this thread's CPU seconds
COUNTS: dict[str, int] = collections.defaultdict(int)
STATE = {"in_train_step": False}


@contextlib.contextmanager
def timed(name: str) -> Iterator[None]:
    t0, c0 = time.perf_counter(), time.thread_time()
    try:
        yield
    finally:
        TOTALS[name] += time.perf_counter() - t0
        CPU[name] += time.thread_time() - c0
        COUNTS[name] += 1


def wrap(owner: Any, attr: str, name: str, only_in_train_step: bool = True) -> None:
    """Replace ``owner.attr`` by a timed version (counted only inside training steps)."""
    original: Callable[..., Any] = getattr(owner, attr)

    @functools.wraps(original)
    def timed_call(*args: Any, **kwargs: Any) -> Any:
        if only_in_train_step and not STATE["in_train_step"]:
            return original(*args, **kwargs)
        with timed(name):
            return original(*args, **kwargs)

    setattr(owner, attr, timed_call)


def install_optimizer_step_timer() -> None:
    """Time every ``torch.optim`` step (global hooks: works for unison's and the loops' Adam)."""
    start: list[tuple[float, float]] = []

    def pre(opt: Any, args: Any, kwargs: Any) -> None:
        start.append((time.perf_counter(), time.thread_time()))

    def post(opt: Any, args: Any, kwargs: Any) -> None:
        if start:
            t0, c0 = start.pop()
            TOTALS["optimizer.step (Adam)"] += time.perf_counter() - t0
            CPU["optimizer.step (Adam)"] += time.thread_time() - c0
            COUNTS["optimizer.step (Adam)"] += 1

    torch_optimizer.register_optimizer_step_pre_hook(pre)
    torch_optimizer.register_optimizer_step_post_hook(post)


def report(system: str, steps: int, fit_s: float, rank: int) -> None:
    if rank != 0:
        return
    print(
        f"\n{system}: {fit_s:.2f}s for the whole fit, {steps} training steps, threads "
        f"{torch.get_num_threads()}; per training step (mean over steps, rank 0).\n"
        "  wall us = elapsed; CPU us = this thread's CPU time (with one thread it is the work "
        "itself, unaffected by other programs; wall - CPU = waiting or preempted)"
    )
    step = TOTALS.get("train step (total)", 0.0)
    print(f"  {'wall us':>9}  {'share':>6}  {'CPU us':>8}  phase")
    for name in sorted(TOTALS, key=lambda k: (not k.startswith("train step"), k)):
        per = TOTALS[name] / max(steps, 1) * 1e6
        cpu = CPU[name] / max(steps, 1) * 1e6
        share = f"{100 * TOTALS[name] / step:5.1f}%" if step and not name.startswith("evaluation") else "      "
        print(f"  {per:9.1f}  {share}  {cpu:8.1f}  {name}  (calls {COUNTS[name]})")
    print(
        f"  training steps: {step:.2f}s of {fit_s:.2f}s fit; evaluation + epoch ends: "
        f"{TOTALS.get('evaluation (total)', 0.0):.2f}s"
    )


# --- unison (1 or 2 replicas), instrumented from outside ----------------------------------------
def run_unison(replicas: int, epochs: int) -> None:
    import unison as tf
    from unison.comm import communicator as comm_mod
    from unison.keras.models import model as model_mod
    from unison.keras.trainers import data_adapters, step_loss
    from unison.keras.trainers import loop as trainer
    from unison.keras.trainers import trainer as trainer_mod
    from unison.optim import buckets, distributed

    TS = trainer_mod.Trainer
    original_step = TS._train_on

    def train_step(self: Any, batch: Any) -> None:
        STATE["in_train_step"] = True
        try:
            with timed("train step (total)"):
                original_step(self, batch)
        finally:
            STATE["in_train_step"] = False

    TS._train_on = train_step  # type: ignore[method-assign]
    wrap(model_mod.Model, "forward", "forward")
    wrap(step_loss, "loss_sum", "loss")
    wrap(step_loss, "global_size", "global batch size")
    wrap(TS, "_track", "metrics update")
    wrap(torch.Tensor, "backward", "backward (incl. unison's gradient hooks)")
    wrap(distributed.DistributedOptimizer, "_on_grad", "  in backward: gradient hooks (_on_grad, all 4)")
    wrap(buckets.Bucket, "pack", "  in backward: Bucket.pack")
    wrap(comm_mod.Communicator, "all_reduce_async", "  in backward: all_reduce_async (launch)")
    wrap(distributed.DistributedOptimizer, "synchronize", "synchronize (wait + flags + write back)")
    wrap(comm_mod.Communicator, "wait", "  in synchronize: wait for the all-reduce")
    wrap(buckets.Bucket, "read_flags", "  in synchronize: Bucket.read_flags")
    wrap(buckets.Bucket, "write_back", "  in synchronize: Bucket.write_back")
    wrap(torch.optim.Optimizer, "zero_grad", "zero_grad")
    wrap(data_adapters.ArrayAdapter, "_take", "data: take rows", only_in_train_step=False)
    original_eval = trainer._Evaluation.run

    def run_eval(*args: Any, **kwargs: Any) -> Any:
        with timed("evaluation (total)"):
            return original_eval(*args, **kwargs)

    trainer._Evaluation.run = run_eval  # type: ignore[method-assign]
    install_optimizer_step_timer()

    strategy = (
        tf.distribute.MirroredStrategy() if replicas == 1 else tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    )
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(128, activation="relu", input_shape=(784,)),
                tf.keras.layers.Dense(10, activation="softmax"),
            ]
        )
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    x_train = x_train.reshape(-1, 784).astype("float32") / 255
    x_test = x_test.reshape(-1, 784).astype("float32") / 255
    # The first fit builds the torch optimizer (importing torch._dynamo, once per process);
    # build it before the timed fit so that one-time cost is not mixed into the step times.
    t = time.perf_counter()
    torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))])
    print(f"one-time import inside the first torch optimizer: {time.perf_counter() - t:.2f}s")
    t0 = time.perf_counter()
    model.fit(x_train, y_train, epochs=epochs, validation_data=(x_test, y_test), verbose=2)
    fit_s = time.perf_counter() - t0
    # "data: take rows" also counts evaluation batches; keep it as a total per training step.
    report(f"unison{replicas}", COUNTS["train step (total)"], fit_s, strategy.extended.replica_id)


# --- the baselines: the loops of seed_mlp_programs with timers ----------------------------------
def load() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    from unison.keras.datasets import mnist

    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    return (
        torch.from_numpy(x_train.reshape(-1, 784).astype("float32") / 255),
        torch.from_numpy(y_train.astype(np.int64)),
        torch.from_numpy(x_test.reshape(-1, 784).astype("float32") / 255),
        torch.from_numpy(y_test.astype(np.int64)),
    )


def run_torch(ddp: bool, epochs: int) -> None:
    import torch.distributed as dist
    from torch import nn

    rank, world = 0, 1
    if ddp:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        torch.set_num_threads(max(1, len(os.sched_getaffinity(0)) // world))
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    model: Any = torch.nn.parallel.DistributedDataParallel(net) if ddp else net
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    install_optimizer_step_timer()
    x_train, y_train, x_test, y_test = load()
    n, batch = len(x_train), 32
    local = batch // world
    t0 = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(1234 + epoch))
        loss_sum = torch.zeros((), dtype=torch.float64)
        correct = torch.zeros((), dtype=torch.int64)
        for step in range(n // batch):
            ts, cs = time.perf_counter(), time.thread_time()
            with timed("data: take rows"):
                idx = perm[step * batch + rank * local : step * batch + (rank + 1) * local]
                xb, yb = x_train[idx], y_train[idx]
            with timed("forward" + (" (DDP)" if ddp else "")):
                logits = model(xb)
            with timed("loss"):
                loss = loss_fn(logits, yb)
            with timed("zero_grad"):
                opt.zero_grad(set_to_none=True)
            with timed("backward" + (" (incl. DDP's all-reduce)" if ddp else "")):
                loss.backward()
            opt.step()
            with timed("metrics update"):
                with torch.no_grad():
                    loss_sum += loss.detach().double() * len(yb)
                    correct += (logits.argmax(1) == yb).sum()
            TOTALS["train step (total)"] += time.perf_counter() - ts
            CPU["train step (total)"] += time.thread_time() - cs
            COUNTS["train step (total)"] += 1
        with timed("evaluation (total)"):
            stats = torch.stack([loss_sum, correct.double()])
            if ddp:
                dist.all_reduce(stats)
            net.eval()
            with torch.no_grad():
                a = rank * len(x_test) // world
                b = (rank + 1) * len(x_test) // world
                for i in range(a, b, local):
                    net(x_test[i : min(i + local, b)])
    fit_s = time.perf_counter() - t0
    report("ddp2" if ddp else "plain", COUNTS["train step (total)"], fit_s, rank)
    if ddp:
        dist.destroy_process_group()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--system", choices=["unison1", "unison2", "plain", "ddp2"], required=True)
    p.add_argument("--epochs", type=int, default=1)
    args = p.parse_args()
    if args.system.startswith("unison"):
        run_unison(int(args.system[-1]), args.epochs)
    else:
        run_torch(args.system == "ddp2", args.epochs)


if __name__ == "__main__":
    sys.exit(main())
