"""Functions the distributed tests run inside replica processes (module level, so picklable)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

import unison as tf


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 12)).astype("float32")
    y = (x[:, :4].argmax(1) + (x[:, 4] > 1)).astype("int64") % 4
    return x, y


def keras_fit(devices: list[str] | None, n: int, batch_size: int, epochs: int = 1) -> dict:
    """Train a small MLP with BatchNorm through Keras fit; return weights and history."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(32, activation="relu", input_shape=(12,)),
                tf.keras.layers.BatchNormalization(),
                tf.keras.layers.Dense(4, activation="softmax"),
            ]
        )
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = make_data(n)
    xv, yv = make_data(101, seed=1)
    history = model.fit(x, y, batch_size=batch_size, epochs=epochs, validation_data=(xv, yv), verbose=0)
    return {
        "weights": [w.copy() for w in model.get_weights()],
        "history": history.history,
        "evaluate": model.evaluate(xv, yv, batch_size=7, verbose=0),
        "predict": model.predict(xv, batch_size=9, verbose=0),
        "replicas": strategy.num_replicas_in_sync,
    }


def custom_loop(devices: list[str] | None, n: int, batch_size: int) -> list[np.ndarray]:
    """20-ish steps of a raw PyTorch loop through strategy.run; return the final parameters."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = make_data(n)
    batches = [
        (torch.from_numpy(x[i : i + batch_size]), torch.from_numpy(y[i : i + batch_size]))
        for i in range(0, n, batch_size)
    ]

    def step(xb: torch.Tensor, yb: torch.Tensor, global_n: int) -> torch.Tensor:
        per_example = F.cross_entropy(model(xb), yb, reduction="none")
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_n)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return per_example.sum().detach()

    total = torch.zeros(())
    for (xb, yb), (gx, _) in zip(strategy.experimental_distribute_dataset(batches), batches):
        total += strategy.run(step, args=(xb, yb, len(gx)))
    mean_loss = strategy.reduce(tf.distribute.ReduceOp.SUM, total).item() / n
    return [p.detach().numpy().copy() for p in model.parameters()] + [np.array(mean_loss)]


def reduce_and_gather(_: int) -> dict:
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])
    rank = strategy.extended.replica_id
    rows = torch.arange(rank + 1, dtype=torch.float32).reshape(-1, 1) + 10 * rank  # uneven sizes
    ctx_seen = []
    ds = strategy.distribute_datasets_from_function(lambda ctx: ctx_seen.append(ctx) or [rows])
    list(ds)
    ctx = ctx_seen[0]
    with strategy.scope():
        in_cross = tf.distribute.in_cross_replica_context()
        no_replica_ctx = tf.distribute.get_replica_context() is None
    replica_all_reduce = strategy.run(
        lambda: tf.distribute.get_replica_context().all_reduce("SUM", torch.tensor(1.0))
    ).item()
    return {
        "sum": strategy.reduce("SUM", torch.tensor(float(rank))).item(),
        "mean": strategy.reduce("MEAN", torch.tensor(float(rank))).item(),
        "sum_axis": strategy.reduce("SUM", rows, axis=0).tolist(),
        "mean_axis": strategy.reduce("MEAN", rows, axis=0).tolist(),
        "gather": strategy.gather(rows, axis=0).flatten().tolist(),
        "ctx": (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync),
        "replica_all_reduce": replica_all_reduce,
        "in_cross": in_cross,
        "no_replica_ctx": no_replica_ctx,
    }


def raise_on_rank(bad_rank: int) -> int:
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    if strategy.extended.replica_id == bad_rank:
        raise ValueError(f"deliberate failure on rank {bad_rank}")
    strategy.reduce("SUM", torch.tensor(1.0))
    return strategy.extended.replica_id


def sleep_on_rank(bad_rank: int) -> int:
    import time

    if tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).extended.replica_id == bad_rank:
        time.sleep(60)
    return 0


def _thread_count() -> int:
    import os

    return len(os.listdir("/proc/self/task"))


def teardown_after_optimizer(_: int) -> dict:
    """Join, train one step (the first torch optimizer of the process), leave; count threads.

    A process group that outlives ``shutdown()`` keeps gloo's threads running into interpreter
    exit, where one of them can abort the process after all the work is done.
    """
    import sys
    import time

    fresh = "torch._dynamo" not in sys.modules
    before = _thread_count()
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((8, 3), "float32"), np.zeros((8, 2), "float32"), epochs=1, verbose=0)
    joined = _thread_count()
    strategy.extended.communicator.shutdown()
    deadline = time.monotonic() + 5.0
    while _thread_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    return {"fresh": fresh, "before": before, "joined": joined, "after": _thread_count()}


def keras_custom_loop(devices: list[str] | None, n: int, batch_size: int) -> dict:
    """TF's custom-training tutorial loop: Keras model, loss with reduction NONE, gradients taken
    in the replica, ``optimizer.apply_gradients`` inside ``strategy.run``, metrics read outside."""
    strategy = tf.distribute.MirroredStrategy(devices)
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.layers.Dense(16, activation="tanh", input_shape=(12,)), tf.keras.layers.Dense(4)]
        )
        optimizer = tf.keras.optimizers.Adam(learning_rate=1e-2)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE
        )
        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    x, y = make_data(n)
    batches = [
        (torch.from_numpy(x[i : i + batch_size]), torch.from_numpy(y[i : i + batch_size]))
        for i in range(0, n, batch_size)
    ]

    def train_step(xb: torch.Tensor, yb: torch.Tensor, global_n: int) -> torch.Tensor:
        predictions = model(xb, training=True)
        loss = tf.nn.compute_average_loss(loss_object(yb, predictions), global_batch_size=global_n)
        gradients = torch.autograd.grad(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_accuracy.update_state(yb, predictions)
        return loss.detach()

    total = torch.zeros(())
    for (xb, yb), (gx, _) in zip(strategy.experimental_distribute_dataset(batches), batches):
        total += strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(train_step, args=(xb, yb, len(gx))))
    return {
        "weights": [p.detach().numpy().copy() for p in model.trainable_variables],
        "accuracy": float(train_accuracy.result()),
        "iterations": int(optimizer.iterations),
        "mean_loss": float(total) / len(batches),
    }


def missing_gpus_strategy() -> dict:
    """MirroredStrategy(["/gpu:0", "/gpu:1"]) on a host without GPUs: warnings seen and replicas."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        strategy = tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    messages = [str(w.message) for w in caught if "not available" in str(w.message)]
    rank = strategy.extended.replica_id
    total = strategy.reduce(tf.distribute.ReduceOp.SUM, torch.tensor(float(rank + 1)))
    return {"replicas": strategy.num_replicas_in_sync, "warnings": messages, "sum": float(total)}


def synchronised_once(_: int) -> dict:
    """Steps inside strategy.run: a plain torch optimizer and one the program wrapped itself.

    Replica r's gradient is r + 1; summed once over 2 replicas it is 3, so one SGD step with
    lr=1 moves a weight from 0 to -3 (-6 would mean the step was synchronised twice).
    """
    strategy = tf.distribute.MirroredStrategy()
    rank = strategy.extended.replica_id
    results = {}
    for wrapped in (False, True):
        with strategy.scope():
            weight = torch.nn.Parameter(torch.zeros(1))
        torch_opt = torch.optim.SGD([weight], lr=1.0)
        opt = (
            tf.DistributedOptimizer(torch_opt, op=tf.Sum, communicator=strategy.extended.communicator)
            if wrapped
            else torch_opt
        )

        def step(opt: torch.optim.Optimizer, weight: torch.Tensor) -> None:
            opt.zero_grad()
            (weight * (rank + 1)).sum().backward()
            opt.step()

        strategy.run(step, args=(opt, weight))
        results["wrapped" if wrapped else "plain"] = weight.item()
        results[f"same_synchronizer_{wrapped}"] = strategy.gradient_synchronizer(torch_opt) is (
            opt if wrapped else tf.DistributedOptimizer.of(torch_opt)
        )
        results[f"attributes_{wrapped}"] = sorted(k for k in vars(torch_opt) if "unison" in k)
    return results


def two_strategies_in_a_row() -> dict:
    """Two MirroredStrategy objects one after the other in one process (keras.io's distributed
    guide does this): the second reuses the first's join instead of waiting on it (it hung)."""
    sums = []
    for _ in range(2):
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        rank = strategy.extended.replica_id
        sums.append(float(strategy.reduce(tf.distribute.ReduceOp.SUM, torch.tensor(float(rank + 1)))))
    return {"sums": sums, "replicas": strategy.num_replicas_in_sync}
