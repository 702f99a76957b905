"""One timed training run, in the child processes ``unison bench`` starts (unison or DDP).

``--system unison``: started as ``python -m unison.bench._worker --system unison ...``; the
strategy makes this process replica 0 and re-runs the same command for replicas 1..N-1, as it
does for any user script. ``--system ddp``: started once per rank by
``python -m torch.distributed.run --standalone --nproc-per-node N -m unison.bench._worker``.

Every process writes ``<result-dir>/rank<k>.json``:

* ``startup_s``: from the moment the command started the child (``$UNISON_BENCH_T0``) to the
  start of training: interpreter, imports, process start and rendezvous, model, data;
* ``data_s``: the data-loading part of it;
* ``epoch_times_s``: each epoch of training alone, from a barrier (every replica ready) to the
  end of the epoch's last step and the epoch's metric reduction;
* ``eval_s``, ``val_accuracy``, ``val_loss``: the validation pass after training;
* ``peak_rss_mb``: this process's peak resident memory (``getrusage``'s ``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from typing import Any

from unison.core.atomic_io import atomic_write_text

T_PROCESS = time.time()

ENV_T0 = "UNISON_BENCH_T0"


def launch_time() -> float:
    """When the bench command started this child (wall clock); our own start if unknown."""
    return float(os.environ.get(ENV_T0, T_PROCESS))


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MiB (Linux reports KiB, macOS bytes)."""
    import sys

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024.0 * 1024.0) if sys.platform == "darwin" else rss / 1024.0


def write_result(result_dir: str, rank: int, result: dict[str, Any]) -> None:
    """Write this process's result atomically (the runner never reads half a file)."""
    path = os.path.join(result_dir, f"rank{rank}.json")
    atomic_write_text(path, json.dumps(result))


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run_unison(args: argparse.Namespace) -> None:
    import torch

    import unison as tf
    from unison.bench import data, models
    from unison.keras.callbacks import Callback

    devices = [f"/{args.device}:{i}" for i in range(args.replicas)]
    strategy: tf.distribute.Strategy
    if args.strategy == "multi_worker":
        # One process per worker, each started by the bench with its TF_CONFIG.
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    else:
        strategy = tf.distribute.MirroredStrategy(devices)
    rank = strategy.extended.replica_id
    with strategy.scope():
        model = models.build_keras_model(args.model)
        if getattr(model, "optimizer", None) is None:
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    t_data = time.time()
    (x, y), (x_val, y_val) = data.read(args.data, args.input_shape)
    data_s = time.time() - t_data

    class EpochTimer(Callback):
        def __init__(self) -> None:
            super().__init__()
            self.times: list[float] = []
            self.logs: dict[str, float] = {}

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self.t0 = time.perf_counter()

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            self.times.append(time.perf_counter() - self.t0)
            self.logs = dict(logs or {})

    timer = EpochTimer()
    strategy.reduce("SUM", torch.ones(1), axis=None)  # barrier: every replica is ready
    t_train = time.time()
    model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, verbose=0, callbacks=[timer])
    t_eval = time.perf_counter()
    val = model.evaluate(x_val, y_val, batch_size=args.batch_size, verbose=0, return_dict=True)
    eval_s = time.perf_counter() - t_eval
    write_result(
        args.result_dir,
        rank,
        {
            "system": "unison",
            "rank": rank,
            "world_size": strategy.num_replicas_in_sync,
            "strategy": type(strategy).__name__,
            "device": str(strategy.extended.device),
            "threads": torch.get_num_threads(),
            "startup_s": t_train - launch_time(),
            "data_s": data_s,
            "epoch_times_s": timer.times,
            "eval_s": eval_s,
            "train_loss": timer.logs.get("loss"),
            "train_accuracy": timer.logs.get("accuracy"),
            "val_loss": val.get("loss"),
            "val_accuracy": val.get("accuracy"),
            "peak_rss_mb": peak_rss_mb(),
            "pid": os.getpid(),
        },
    )


def _bounds(n: int, world: int, rank: int) -> tuple[int, int]:
    """Rows [a, b) of n for this rank, split as evenly as possible (like unison's split)."""
    base, extra = divmod(n, world)
    a = rank * base + min(rank, extra)
    return a, a + base + (1 if rank < extra else 0)


def run_ddp(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from unison.bench import data, models

    cuda = args.device == "gpu"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
        torch.set_num_threads(max(1, _cores() // int(os.environ.get("LOCAL_WORLD_SIZE", "1"))))
    # torch.optim imports torch._dynamo; imported after init_process_group it keeps the group
    # alive past destroy_process_group and gloo may abort the rank at interpreter exit
    # ("terminate called without an active exception", about 1 run in 12 here). unison's
    # communicator does the same before joining; the baseline must not fail for it either.
    import torch._dynamo

    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    module = models.build_torch_model(args.model).to(device)
    loss_fn = models.torch_loss(args.model, module)
    model = DDP(module, device_ids=[local_rank] if cuda else None)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)  # Keras's Adam defaults
    t_data = time.time()
    shape = args.input_shape if models.is_custom(args.model) else models.torch_input_shape(args.model)
    (x_np, y_np), (xv_np, yv_np) = data.read(args.data, shape)
    x, y = torch.from_numpy(x_np).to(device), torch.from_numpy(y_np).to(device)
    x_val, y_val = torch.from_numpy(xv_np).to(device), torch.from_numpy(yv_np).to(device)
    data_s = time.time() - t_data

    n, gb = len(x), args.batch_size
    times: list[float] = []
    stats = torch.zeros(3, dtype=torch.float64, device=device)
    dist.barrier()  # every rank is ready
    t_train = time.time()
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        model.train()
        # One shuffle shared by all ranks (same seed), each rank takes its share of every batch.
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(epoch)).to(device)
        stats = torch.zeros(3, dtype=torch.float64, device=device)  # loss sum, correct, count
        for g0 in range(0, n, gb):
            a, b = _bounds(min(g0 + gb, n) - g0, world, rank)
            idx = perm[g0 + a : g0 + b]
            xb, yb = x[idx], y[idx]
            out = model(xb)
            losses = loss_fn(out, yb)
            opt.zero_grad(set_to_none=True)
            losses.mean().backward()  # DDP averages the gradients across ranks here
            opt.step()
            with torch.no_grad():
                stats[0] += losses.detach().sum().double()
                stats[1] += (out.argmax(1) == yb).sum()
                stats[2] += len(yb)
        dist.all_reduce(stats)  # the epoch's metrics, as fit reports them
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    t_eval = time.perf_counter()
    model.eval()
    a, b = _bounds(len(x_val), world, rank)
    val = torch.zeros(3, dtype=torch.float64, device=device)
    with torch.no_grad():
        for i in range(a, b, gb):
            xb, yb = x_val[i : min(i + gb, b)], y_val[i : min(i + gb, b)]
            out = module(xb)
            val[0] += loss_fn(out, yb).sum().double()
            val[1] += (out.argmax(1) == yb).sum()
            val[2] += len(yb)
    dist.all_reduce(val)
    eval_s = time.perf_counter() - t_eval
    write_result(
        args.result_dir,
        rank,
        {
            "system": "ddp",
            "rank": rank,
            "world_size": world,
            "strategy": "DistributedDataParallel",
            "device": str(device),
            "threads": torch.get_num_threads(),
            "startup_s": t_train - launch_time(),
            "data_s": data_s,
            "epoch_times_s": times,
            "eval_s": eval_s,
            "train_loss": float(stats[0] / stats[2]),
            "train_accuracy": float(stats[1] / stats[2]),
            "val_loss": float(val[0] / val[2]),
            "val_accuracy": float(val[1] / val[2]),
            "peak_rss_mb": peak_rss_mb(),
            "pid": os.getpid(),
        },
    )
    # Tear down in an order torch's gloo survives. Left to the end of this function, DDP's
    # reducer is the group's last owner and destroys it while holding the GIL, whose thread may
    # be releasing a finished collective (which needs the GIL): a deadlock at exit, or an abort
    # at interpreter shutdown, about one run in twelve here. So: the reducer goes first, a
    # barrier lets the group's threads finish (and free) every earlier collective, then the
    # group goes.
    del model, opt
    dist.barrier()
    dist.destroy_process_group()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m unison.bench._worker", description="One timed run of `unison bench` (started by it)."
    )
    p.add_argument("--system", choices=["unison", "ddp"], required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True, help="the .npz the bench command wrote")
    p.add_argument(
        "--input-shape",
        required=True,
        type=lambda s: tuple(int(d) for d in s.split(",")),
        help="one example's shape as the Keras model takes it, e.g. 28,28,1",
    )
    p.add_argument("--replicas", type=int, required=True)
    p.add_argument("--strategy", choices=["mirrored", "multi_worker"], default="mirrored")
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--epochs", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True, help="global batch")
    p.add_argument("--result-dir", required=True)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    (run_unison if args.system == "unison" else run_ddp)(args)


if __name__ == "__main__":
    main()
