"""The plain PyTorch loop wrapped in DistributedDataParallel (the 2-replica baseline).

Start it with torchrun, gloo on loopback::

    GLOO_SOCKET_IFNAME=lo torchrun --standalone --nproc-per-node 2 ddp_torch.py --epochs 5

Like unison's MirroredStrategy: global batch 32 split evenly across the ranks (16 rows each), one
shuffle of the whole set per epoch shared by all ranks (same seed) and sharded by rank, so together
the ranks see each sample once per epoch; validation on contiguous blocks of the test set
(16 rows per rank per step); loss sums, correct counts and sample counts all-reduced once at the end
of each epoch. Each rank gets ``cores // ranks`` threads (1 on a 2-core machine), like unison.
"""

import argparse
import os
import time

import _record
import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from unison.keras.datasets import mnist  # only to get the very same arrays as the seed program


def bounds(n, world, rank):
    """Rows [a, b) of n for this rank, as even as possible (like an array_split)."""
    base, extra = divmod(n, world)
    a = rank * base + min(rank, extra)
    return a, a + base + (1 if rank < extra else 0)


def evaluate(module, loss_fn, x, y, batch_size, world, rank):
    a, b = bounds(len(x), world, rank)
    local = (batch_size + world - 1) // world
    module.eval()
    stats = torch.zeros(3, dtype=torch.float64)  # loss sum, correct, count
    with torch.no_grad():
        for i in range(a, b, local):
            xb, yb = x[i : min(i + local, b)], y[i : min(i + local, b)]
            logits = module(xb)
            stats[0] += loss_fn(logits, yb).double() * len(yb)
            stats[1] += (logits.argmax(1) == yb).sum()
            stats[2] += len(yb)
    dist.all_reduce(stats)
    return float(stats[0] / stats[2]), float(stats[1] / stats[2])


def train(model, opt, loss_fn, x_train, y_train, x_test, y_test, epochs, batch_size, verbose, world, rank):
    history = {"loss": [], "accuracy": [], "val_loss": [], "val_accuracy": []}
    n = len(x_train)
    steps = (n + batch_size - 1) // batch_size
    for epoch in range(epochs):
        t0 = time.time()
        model.train()
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(1234 + epoch))
        loss_sum = torch.zeros((), dtype=torch.float64)
        correct = torch.zeros((), dtype=torch.int64)
        count = 0
        for step in range(steps):
            g0 = step * batch_size
            a, b = bounds(min(g0 + batch_size, n) - g0, world, rank)
            idx = perm[g0 + a : g0 + b]
            xb, yb = x_train[idx], y_train[idx]
            logits = model(xb)
            loss = loss_fn(logits, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces (averages) the gradients here
            opt.step()
            with torch.no_grad():
                loss_sum += loss.detach().double() * len(yb)
                correct += (logits.argmax(1) == yb).sum()
                count += len(yb)
        stats = torch.stack([loss_sum, correct.double(), torch.tensor(float(count), dtype=torch.float64)])
        dist.all_reduce(stats)
        val_loss, val_acc = evaluate(model.module, loss_fn, x_test, y_test, batch_size, world, rank)
        logs = {
            "loss": float(stats[0] / stats[2]),
            "accuracy": float(stats[1] / stats[2]),
            "val_loss": val_loss,
            "val_accuracy": val_acc,
        }
        for k, v in logs.items():
            history[k].append(v)
        if verbose and rank == 0:
            print(
                f"Epoch {epoch + 1}/{epochs}: {steps}/{steps} - {time.time() - t0:.0f}s - "
                + " - ".join(f"{k}: {v:.4f}" for k, v in sorted(logs.items())),
                flush=True,
            )
    return history


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=32, help="global batch")
    p.add_argument("--verbose", type=int, default=2)
    args = p.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    torch.set_num_threads(max(1, len(os.sched_getaffinity(0)) // local_world))
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    t_ready = time.time()

    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    x_train = torch.from_numpy(x_train.reshape(-1, 784).astype("float32") / 255)
    x_test = torch.from_numpy(x_test.reshape(-1, 784).astype("float32") / 255)
    y_train = torch.from_numpy(y_train.astype(np.int64))
    y_test = torch.from_numpy(y_test.astype(np.int64))
    t_loaded = time.time()

    t_fit0, cpu_fit0 = time.time(), time.process_time()
    history = train(
        model, opt, loss_fn, x_train, y_train, x_test, y_test, args.epochs, args.batch_size, args.verbose, world, rank
    )
    t_fit1, cpu_fit1 = time.time(), time.process_time()
    _record.emit(
        "ddp2",
        rank,
        world,
        t_ready=t_ready,
        t_loaded=t_loaded,
        t_fit0=t_fit0,
        t_fit1=t_fit1,
        cpu_fit0=cpu_fit0,
        cpu_fit1=cpu_fit1,
        history=history,
        threads=torch.get_num_threads(),
    )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
