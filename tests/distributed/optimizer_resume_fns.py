"""A custom loop with ExponentialDecay + Adam interrupted at step K and resumed from a
``tf.train.Checkpoint`` into a fresh model and optimizer (directly, or through
``PreemptionCheckpointHandler``); module level so the replica processes can import it."""

from __future__ import annotations

import os
import signal
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

import unison as tf

STEPS, K, BATCH = 6, 3, 8


class Stopped(Exception):
    """Raised by the handler's exit_fn instead of sys.exit, so the same process can resume."""


def _strategy(replicas: int) -> Any:
    if replicas == 1:
        return tf.distribute.get_strategy()
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])


def _batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(size=(BATCH * STEPS, 6)).astype("float32"))
    y = torch.from_numpy(rng.integers(0, 3, size=BATCH * STEPS))
    return [(x[i : i + BATCH], y[i : i + BATCH]) for i in range(0, len(x), BATCH)]


def _fresh(strategy: Any, ema: bool) -> tuple[torch.nn.Module, Any]:
    torch.manual_seed(0)
    with strategy.scope():
        model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
        schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)
        optimizer = tf.keras.optimizers.Adam(schedule, use_ema=ema, ema_momentum=0.9)
    return model, optimizer


def _train(strategy: Any, model: torch.nn.Module, optimizer: Any, batches: list, on_step: Any = None) -> None:
    def step(xb: torch.Tensor, yb: torch.Tensor) -> None:
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(F.cross_entropy(model(xb), yb, reduction="none"), global_batch_size=BATCH)
        grads = tape.gradient(loss, list(model.parameters()))
        optimizer.apply_gradients(zip(grads, model.parameters()))

    for xb, yb in strategy.experimental_distribute_dataset(batches) if strategy.num_replicas_in_sync > 1 else batches:
        if on_step is None:
            strategy.run(step, args=(xb, yb))
        else:
            on_step(lambda xb=xb, yb=yb: strategy.run(step, args=(xb, yb)))


def _state(model: torch.nn.Module, optimizer: Any) -> dict[str, Any]:
    return {
        # numpy, not tensors: a tensor returned from a replica process travels by shared memory
        "params": [p.detach().numpy().copy() for p in model.parameters()],
        "slots": [v.detach().numpy().copy() for v in optimizer.variables[1:]],
        "iterations": int(optimizer.iterations),
        "ema": [v.detach().numpy().copy() for v in getattr(optimizer._ema_state, "averages", [])],
    }


def resume(directory: str, replicas: int, through_handler: bool, ema: bool = False) -> dict[str, Any]:
    """The uninterrupted run's state and the resumed run's, after STEPS steps each."""
    strategy = _strategy(replicas)
    batches = _batches()
    model, optimizer = _fresh(strategy, ema)
    _train(strategy, model, optimizer, batches)
    uninterrupted = _state(model, optimizer)

    model, optimizer = _fresh(strategy, ema)
    if not through_handler:
        _train(strategy, model, optimizer, batches[:K])
        path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(os.path.join(directory, "ckpt"))
        saved_iterations = int(optimizer.iterations)
        model, optimizer = _fresh(strategy, ema)
        tf.train.Checkpoint(model=model, optimizer=optimizer).restore(path)
        restored_iterations = int(optimizer.iterations)
        _train(strategy, model, optimizer, batches[K:])
        return {
            "uninterrupted": uninterrupted,
            "resumed": _state(model, optimizer),
            "saved_iterations": saved_iterations,
            "restored_iterations": restored_iterations,
        }

    def stop() -> None:
        raise Stopped()

    config = tf.distribute.experimental.TerminationConfig(exit_fn=stop)
    resolver = getattr(strategy, "cluster_resolver", None)
    handler = tf.distribute.experimental.PreemptionCheckpointHandler(
        resolver, tf.train.Checkpoint(model=model, optimizer=optimizer), directory, config
    )
    rank = strategy.extended.replica_id if replicas > 1 else 0

    def on_step(run: Any) -> None:
        if handler.total_run_calls == K - 1 and rank == replicas - 1:
            signal.raise_signal(signal.SIGTERM)  # the last replica is preempted before step K
        handler.run(run)

    try:
        _train(strategy, model, optimizer, batches, on_step)
    except Stopped:
        pass
    saved_at = handler.saved_at
    model, optimizer = _fresh(strategy, ema)
    handler = tf.distribute.experimental.PreemptionCheckpointHandler(
        resolver, tf.train.Checkpoint(model=model, optimizer=optimizer), directory, config
    )
    restored_iterations = int(optimizer.iterations)
    _train(strategy, model, optimizer, batches[handler.total_run_calls :], lambda run: handler.run(run))
    handler.close()
    return {
        "uninterrupted": uninterrupted,
        "resumed": _state(model, optimizer),
        "saved_iterations": saved_at,
        "restored_iterations": restored_iterations,
    }
