"""Replica functions of the reshard tests (module level, so picklable): ZeRO-1/2 optimizer state
through ShardedCheckpoint, and tf.train.Checkpoint under MirroredStrategy, on N and M replicas."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import unison
from unison.distribute.input import shard_bounds
from unison.distribute.sharded_checkpoint import ShardedCheckpoint

GLOBAL = 12  # rows per step: splits evenly on 1, 2 and 3 replicas


def make_model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)
    )


def _batches(steps: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    rng = np.random.default_rng(0)
    return [
        (
            torch.from_numpy(rng.normal(size=(GLOBAL, 6)).astype("float32")),
            torch.from_numpy(rng.normal(size=(GLOBAL, 3)).astype("float32")),
        )
        for _ in range(steps)
    ]


def _zero(model: torch.nn.Module, stage: int, lr: float = 1e-2) -> Any:
    extra = {"shard_gradients": True} if stage == 2 else {"shard_optimizer_state": True}
    return unison.DistributedOptimizer(
        torch.optim.Adam(model.parameters(), lr=lr), named_parameters=model.named_parameters(), **extra
    )


def by_name(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, dict[str, np.ndarray]]:
    """The optimizer state this process holds, keyed by parameter name."""
    names = {id(p): n for n, p in model.named_parameters()}
    return {
        names[id(p)]: {k: v.detach().clone().numpy() for k, v in s.items() if isinstance(v, torch.Tensor)}
        for p, s in optimizer.state.items()
    }


def params(model: torch.nn.Module) -> dict[str, np.ndarray]:
    return {k: v.detach().clone().numpy() for k, v in model.state_dict().items()}


def train_zero_and_save(path: str, stage: int, steps: int = 4) -> dict[str, Any]:
    """ZeRO-``stage`` training on this job, then a sharded checkpoint; returns the full state."""
    unison.init(timeout_seconds=60)
    model = make_model(seed=unison.rank())
    opt = _zero(model, stage)
    unison.broadcast_parameters(model.state_dict(), root_rank=0)
    for x, y in _batches(steps):
        a, b = shard_bounds(GLOBAL, unison.size(), unison.rank())
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x[a:b]), y[a:b]).backward()
        opt.step()
    ShardedCheckpoint(model, opt).save(path)
    full = opt.state_dict()  # gathered from every shard (a collective)
    names = [n for n, _ in model.named_parameters()]
    state = {names[i]: {k: v.numpy() for k, v in s.items()} for i, s in full["state"].items()}
    return {"params": params(model), "state": state, "owned": sorted(by_name(model, opt.optimizer))}


def restore_zero(path: str, stage: int) -> dict[str, Any]:
    """A fresh ZeRO-``stage`` optimizer on this job restores the checkpoint: its own shard."""
    unison.init(timeout_seconds=60)
    model = make_model(seed=99)
    opt = _zero(model, stage, lr=0.5)
    ShardedCheckpoint(model, opt).restore(path)
    return {"params": params(model), "state": by_name(model, opt.optimizer), "lr": opt.optimizer.param_groups[0]["lr"]}


def mirrored_save(path: str, replicas: int, steps: int = 3) -> dict[str, Any]:
    """Keras fit under MirroredStrategy on ``replicas`` replicas, then tf.train.Checkpoint.write."""
    import unison as tf

    strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.layers.Dense(5, activation="tanh", input_shape=(6,)), tf.keras.layers.Dense(3)]
        )
        model.compile(optimizer="adam", loss="mse")
    x, y = (np.concatenate([b[i].numpy() for b in _batches(steps)]) for i in (0, 1))
    model.fit(x, y, batch_size=GLOBAL, epochs=1, verbose=0, shuffle=False)
    tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(path)
    return keras_state(model)


def keras_state(model: Any) -> dict[str, Any]:
    opt = model.optimizer.torch_optimizer
    return {"params": params(model), "state": by_name(model, opt)}


def mirrored_restore(path: str, replicas: int) -> dict[str, Any]:
    """A model built under MirroredStrategy on ``replicas`` replicas (or the default strategy) restores."""
    import unison as tf

    strategy = (
        tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
        if replicas > 1
        else tf.distribute.get_strategy()
    )
    torch.manual_seed(5)
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.layers.Dense(5, activation="tanh", input_shape=(6,)), tf.keras.layers.Dense(3)]
        )
        model.compile(optimizer="adam", loss="mse")
    x, y = _batches(1)[0]
    model.fit(x.numpy(), y.numpy(), batch_size=GLOBAL, epochs=1, verbose=0)  # builds the optimizer's slots
    tf.train.Checkpoint(model=model, optimizer=model.optimizer).read(path).assert_consumed()
    return keras_state(model)
