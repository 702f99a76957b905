"""Replica functions for tests/distributed/test_tf_core.py (module level, so picklable)."""

from __future__ import annotations

import os

import numpy as np
import torch
import torch.nn.functional as F

import unison as tf


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def train_with_tape_and_checkpoint(directory: str, steps: int) -> dict:
    """A TF custom loop (GradientTape inside strategy.run) on 2 replicas, then a managed save."""
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        model = make_model()
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
        checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=tf.Variable(0))
    manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=2)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(8 * steps, 6)).astype("float32"))
    y = torch.from_numpy(rng.integers(0, 3, size=8 * steps))
    batches = [(x[i : i + 8], y[i : i + 8]) for i in range(0, len(x), 8)]

    def step(xb: torch.Tensor, yb: torch.Tensor) -> None:
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(F.cross_entropy(model(xb), yb, reduction="none"))
        grads = tape.gradient(loss, list(model.parameters()))
        for p, g in zip(model.parameters(), grads):
            p.grad = g
        optimizer.step()
        checkpoint.step.assign_add(1)

    paths = []
    for xb, yb in strategy.experimental_distribute_dataset(batches):
        strategy.run(step, args=(xb, yb))
        paths.append(manager.save())
    # Each replica saves into a directory of its own: only the chief's may appear on disk.
    own = f"{directory}-replica{strategy.extended.replica_id}"
    tf.train.Checkpoint(model=model).save(os.path.join(own, "ckpt"))
    return {
        "wrote_own": os.path.exists(own),
        "rank": strategy.extended.replica_id,
        "paths": paths,
        "latest": tf.train.latest_checkpoint(directory),
        "params": [p.detach().numpy().copy() for p in model.parameters()],
        "exp_avg": optimizer.state_dict()["state"][0]["exp_avg"].numpy().copy(),
        "files": sorted(os.listdir(directory)) if os.path.isdir(directory) else [],
    }


def reference_loop(steps: int) -> list[np.ndarray]:
    """The same loop in one process on the global batches (what 2 replicas must equal)."""
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(8 * steps, 6)).astype("float32"))
    y = torch.from_numpy(rng.integers(0, 3, size=8 * steps))
    for i in range(0, len(x), 8):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(F.cross_entropy(model(x[i : i + 8]), y[i : i + 8], reduction="none"))
        for p, g in zip(model.parameters(), tape.gradient(loss, list(model.parameters()))):
            p.grad = g
        optimizer.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def sharded_optimizer_checkpoint(directory: str) -> dict:
    """ZeRO-1 sharded DistributedOptimizer: a checkpoint holds every shard's state."""
    hvd = tf
    hvd.init()
    model = make_model()
    opt = hvd.DistributedOptimizer(
        torch.optim.Adam(model.parameters(), lr=0.05),
        named_parameters=model.named_parameters(),
        shard_optimizer_state=True,
    )
    for step in range(2):
        g = torch.Generator().manual_seed(10 * step + hvd.rank())
        opt.zero_grad()
        F.mse_loss(model(torch.randn(4, 6, generator=g)), torch.zeros(4, 3)).backward()
        opt.step()
    local_entries = len(opt.optimizer.state)
    path = tf.train.Checkpoint(model=model, optimizer=opt).save(os.path.join(directory, "ckpt"))
    return {
        "path": path,
        "local_entries": local_entries,
        "params": [p.detach().numpy().copy() for p in model.parameters()],
    }
