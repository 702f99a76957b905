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
