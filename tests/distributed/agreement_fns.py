"""Programs whose replicas disagree (a learning rate, a global batch) or whose model was built
outside strategy.scope(): each must fail at its first step, naming the rank and the value."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

import unison as tf
from unison import keras


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.normal(size=(32, 4)).astype("float32"), rng.normal(size=(32, 3)).astype("float32")


def _strategy(kind: str) -> Any:
    if kind == "mirrored":
        return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=60)
    return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)


def fit(kind: str, learning_rates: list[float], outside_scope: bool = False, log_dir: str = "") -> list:
    """``model.fit`` with replica r's learning rate ``learning_rates[r]``; logs each step begun."""
    strategy = _strategy(kind)
    rank = strategy.extended.replica_id
    torch.manual_seed(0)

    def build() -> Any:
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
        model.compile(optimizer=keras.optimizers.SGD(learning_rates[rank]), loss="mse")
        return model

    if outside_scope:
        model = build()
    else:
        with strategy.scope():
            model = build()

    class Steps(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            if log_dir:
                with open(os.path.join(log_dir, f"steps.{rank}"), "a") as fh:
                    fh.write(f"{batch}\n")

    x, y = _data()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[Steps()])
    return [w.detach().numpy().copy() for w in model.weights]


def custom_loop(global_batches: list[int]) -> list:
    """A custom loop whose replicas pass different ``global_batch_size`` to compute_average_loss."""
    strategy = _strategy("mirrored")
    rank = strategy.extended.replica_id
    torch.manual_seed(0)
    with strategy.scope():
        model = torch.nn.Linear(4, 3)
        optimizer = keras.optimizers.SGD(0.1)
    x, y = (torch.from_numpy(a) for a in _data())

    def step(xb: torch.Tensor, yb: torch.Tensor) -> None:
        per_example = ((model(xb) - yb) ** 2).mean(dim=1)
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batches[rank])
        grads = torch.autograd.grad(loss, list(model.parameters()))
        optimizer.apply_gradients(zip(grads, model.parameters()))

    for _ in range(2):
        strategy.run(step, args=(x[:4], y[:4]))
    return [p.detach().numpy().copy() for p in model.parameters()]


def fit_disagreeing(what: str, log_dir: str) -> list:
    """``model.fit`` whose replica 1 differs from replica 0 in ``what``: its compiled loss, its
    ``batch_size`` or its training data; logs each step begun."""
    strategy = _strategy("mirrored")
    rank = strategy.extended.replica_id
    odd = rank == 1
    torch.manual_seed(0)
    with strategy.scope():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
        loss = keras.losses.MeanAbsoluteError() if what == "loss" and odd else keras.losses.MeanSquaredError()
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)

    class Steps(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            with open(os.path.join(log_dir, f"steps.{rank}"), "a") as fh:
                fh.write(f"{batch}\n")

    x, y = _data()
    if what == "data" and odd:
        x, y = x[:24], y[:24]
    batch_size = 16 if what == "batch" and odd else 8
    model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, callbacks=[Steps()])
    return [w.detach().numpy().copy() for w in model.weights]


def drift_after(steps_before: int, recheck_every: int) -> int:
    """A torch loop under DistributedOptimizer(recheck_every=...); replica 1 changes a weight by
    itself after ``steps_before`` steps. Returns the steps taken (the re-check must stop it)."""
    import unison

    strategy = _strategy("mirrored")
    rank = strategy.extended.replica_id
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    unison.broadcast_parameters(model.state_dict(), root_rank=0)
    opt = unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1),
        named_parameters=model.named_parameters(),
        recheck_every=recheck_every,
    )
    x, y = (torch.from_numpy(a) for a in _data())
    for step in range(12):
        if step == steps_before and rank == 1:
            with torch.no_grad():
                model.bias[0] += 1.0  # a replica that stepped alone
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
    return opt.consistency_checks


def torch_loop(learning_rates: list[float]) -> int:
    """A torch loop under DistributedOptimizer whose replica r steps with ``learning_rates[r]``."""
    import unison

    strategy = _strategy("mirrored")
    rank = strategy.extended.replica_id
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    opt = unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=learning_rates[rank]), named_parameters=model.named_parameters()
    )
    x, y = (torch.from_numpy(a) for a in _data())
    opt.zero_grad()
    ((model(x) - y) ** 2).mean().backward()
    opt.step()
    return opt.steps
