"""What tests/distributed/test_one_update_path.py runs in each replica (module level, so picklable)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch

import unison as tf
from unison.optim.distributed import DistributedOptimizer


def _counting() -> Counter[str]:
    """Count every DistributedOptimizer.step() and synchronize() call in this process."""
    calls: Counter[str] = Counter()
    step, synchronize = DistributedOptimizer.step, DistributedOptimizer.synchronize

    def counted_step(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls["step"] += 1
        return step(self, *args, **kwargs)

    def counted_synchronize(self):  # type: ignore[no-untyped-def]
        calls["synchronize"] += 1
        return synchronize(self)

    DistributedOptimizer.step = counted_step  # type: ignore[method-assign]
    DistributedOptimizer.synchronize = counted_synchronize  # type: ignore[method-assign]
    return calls


def update_calls(_: int) -> dict:
    """Three fit steps, then three custom-loop steps (Keras apply_gradients, a torch step()) in
    strategy.run; the calls each made to the synchroniser."""
    calls = _counting()
    strategy = tf.distribute.MirroredStrategy() if _ else tf.distribute.get_strategy()
    replicas = strategy.num_replicas_in_sync
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(24, 5)).astype("float32"), rng.integers(0, 3, 24)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(5,))])
        model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    out = {"replicas": replicas, "fit": dict(calls)}

    calls.clear()
    optimizer = tf.keras.optimizers.SGD(0.1)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(reduction="none")

    def keras_step(xb: torch.Tensor, yb: torch.Tensor) -> None:
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_fn(yb, model(xb, training=True)), global_batch_size=8)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    rows = slice(strategy.extended.replica_id * 8 // replicas, (strategy.extended.replica_id + 1) * 8 // replicas)
    for _step in range(3):
        strategy.run(keras_step, args=(torch.as_tensor(x[:8][rows]), torch.as_tensor(y[:8][rows])))
    out["keras_loop"] = dict(calls)

    calls.clear()
    with strategy.scope():
        linear = torch.nn.Linear(5, 3)  # fit's synchroniser watches the model's gradients: another module
    torch_opt = torch.optim.SGD(linear.parameters(), lr=0.1)

    def torch_step(xb: torch.Tensor) -> None:
        torch_opt.zero_grad()
        linear(xb).sum().backward()
        torch_opt.step()

    for _step in range(3):
        strategy.run(torch_step, args=(torch.as_tensor(x[:8][rows]),))
    out["torch_loop"] = dict(calls)
    return out
