"""Replica functions for the full-sharding tests (module level, so picklable)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

import unison
from unison.distribute.input import shard_bounds
from unison.distribute.sharded_checkpoint import ShardedCheckpoint
from unison.distribute.sharding import replica_state_bytes, shard_model

VOCAB, WIDTH, SEQ, STEPS, BATCH = 23, 16, 6, 20, 12


class Block(torch.nn.Module):
    """A pre-norm Transformer block (causal self-attention + MLP), no dropout."""

    def __init__(self, width: int = WIDTH) -> None:
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(width)
        # no attention biases: the key bias has a zero gradient that Adam would turn rounding noise into steps
        self.attn = torch.nn.MultiheadAttention(width, 2, bias=False, batch_first=True)
        self.ln2 = torch.nn.LayerNorm(width)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(width, 2 * width), torch.nn.GELU(), torch.nn.Linear(2 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyLM(torch.nn.Module):
    """Token + position embeddings, N blocks, final norm, head tied to the token embedding."""

    def __init__(self, width: int = WIDTH, blocks: int = 2) -> None:
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, width)
        self.pos = torch.nn.Embedding(SEQ, width)
        self.blocks = torch.nn.ModuleList(Block(width) for _ in range(blocks))
        self.ln = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, VOCAB, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def make_model(seed: int = 0, width: int = WIDTH) -> torch.nn.Module:
    torch.manual_seed(seed)
    return TinyLM(width)


def make_batches(steps: int = STEPS, batch: int = BATCH) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    return [torch.randint(0, VOCAB, (batch, SEQ), generator=gen) for _ in range(steps)]


def lm_loss(model: torch.nn.Module, ids: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    logits = model(ids[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1), reduction=reduction)


def reference(steps: int = STEPS) -> dict[str, np.ndarray]:
    """One process, the global batch, plain Adam."""
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for ids in make_batches(steps):
        opt.zero_grad()
        lm_loss(model, ids).backward()
        opt.step()
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def full_params(model: torch.nn.Module) -> dict[str, np.ndarray]:
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    return {k: v.detach().cpu().numpy().copy() for k, v in sd.items()}


def full_optimizer_moments(model: torch.nn.Module, opt: torch.optim.Optimizer) -> dict[str, np.ndarray]:
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

    sd = get_optimizer_state_dict(model, opt, options=StateDictOptions(full_state_dict=True))
    return {
        f"{k}.{m}": v[m].detach().cpu().numpy().copy()
        for k, v in sd["state"].items()
        for m in ("exp_avg", "exp_avg_sq")
    }


def _local(ids: torch.Tensor) -> torch.Tensor:
    a, b = shard_bounds(len(ids), unison.size(), unison.rank())
    return ids[a:b]


def _train_sharded(op: Any, steps: int) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    model = shard_model(make_model(seed=unison.rank()), op=op)  # different seeds: the broadcast fixes it
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    tokens_per_row = SEQ - 1
    for ids in make_batches(steps):
        opt.zero_grad()
        local = _local(ids)
        if op is unison.Sum:  # strategy style: per-example sum over the global batch size
            loss = lm_loss(model, local, "sum") / (BATCH * tokens_per_row)
        else:
            loss = lm_loss(model, local)
        loss.backward()
        opt.step()
    return model, opt


def train_three_ways(steps: int = STEPS) -> dict[str, Any]:
    """Plain data parallelism (DistributedOptimizer), full sharding (Average and Sum)."""
    unison.init(timeout_seconds=60)
    model = make_model(seed=unison.rank())
    opt = unison.DistributedOptimizer(
        torch.optim.Adam(model.parameters(), lr=1e-2), named_parameters=model.named_parameters()
    )
    unison.broadcast_parameters(model.state_dict(), root_rank=0)
    for ids in make_batches(steps):
        opt.zero_grad()
        lm_loss(model, _local(ids)).backward()
        opt.step()
    plain = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}

    sharded_avg, opt_avg = _train_sharded(unison.Average, steps)
    sizes = replica_state_bytes(sharded_avg, opt_avg)
    moments = sum(
        v.to_local().numel() * v.to_local().element_size()
        for s in opt_avg.state.values()
        for k, v in s.items()
        if k in ("exp_avg", "exp_avg_sq")
    )
    numel_local = sum(p.to_local().numel() for p in sharded_avg.parameters())
    numel_full = sum(p.numel() for p in sharded_avg.parameters())  # a DTensor's numel is global
    sharded_sum, _ = _train_sharded(unison.Sum, steps)
    return {
        "plain": plain,
        "sharded_avg": full_params(sharded_avg),
        "sharded_sum": full_params(sharded_sum),
        "sizes": sizes,
        "moments": moments,
        "numel_local": numel_local,
        "numel_full": numel_full,
        "param_types": sorted({type(p).__name__ for p in sharded_avg.parameters()}),
    }


def train_and_save(path: str, steps: int = 5) -> dict[str, Any]:
    """Train sharded for a few steps and save a sharded checkpoint; return the full state."""
    unison.init(timeout_seconds=60)
    model, opt = _train_sharded(unison.Average, steps)
    ShardedCheckpoint(model, opt).save(path)
    return {"params": full_params(model), "moments": full_optimizer_moments(model, opt)}


def restore(path: str) -> dict[str, Any]:
    """Restore the checkpoint into a meta-device model, sharded, and a fresh optimizer."""
    unison.init(timeout_seconds=60)
    with torch.device("meta"):  # nothing allocated until each replica allocates its shards
        model = make_model(seed=7)
    model = shard_model(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    ShardedCheckpoint(model, opt).restore(path)
    local = sum(p.to_local().numel() if hasattr(p, "to_local") else p.numel() for p in model.parameters())
    return {"params": full_params(model), "moments": full_optimizer_moments(model, opt), "local_numel": local}


def train_model_parallel(steps: int = STEPS) -> dict[str, Any]:
    """keras.distribution.ModelParallel (MLP weights split along dim 1) over rematerialised blocks."""
    from unison.distribute.remat import checkpoint_activations
    from unison.keras import distribution

    unison.init(timeout_seconds=60)
    mesh = distribution.DeviceMesh(shape=(unison.size(),), axis_names=("batch",))
    layout_map = distribution.LayoutMap(mesh)
    layout_map[r"mlp\.\d\.weight"] = (None, "batch")
    model = make_model(seed=unison.rank())
    for block in model.blocks:
        checkpoint_activations(block)
    model = distribution.ModelParallel(layout_map=layout_map, batch_dim_name="batch").distribute_model(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for ids in make_batches(steps):
        opt.zero_grad()
        lm_loss(model, _local(ids)).backward()
        opt.step()
    placements = {n: p.placements[0].dim for n, p in model.named_parameters()}  # Shard(dim)
    return {"params": full_params(model), "placements": placements}


def fit_model_parallel(devices: list[str] | None, folder: str, steps: int = STEPS) -> dict[str, Any]:
    """Keras fit with keras.distribution.ModelParallel set: weights, logs, files written and read back."""
    import os

    keras = unison.keras
    from unison.keras import distribution

    strategy = unison.distribute.MirroredStrategy(devices)
    distribution.set_distribution(distribution.ModelParallel())
    try:

        def build(accumulate: int | None = None) -> Any:
            torch.manual_seed(0)
            with strategy.scope():
                model = keras.Sequential(
                    [
                        keras.Input((12,)),
                        keras.layers.Dense(32, activation="relu"),
                        keras.layers.Dense(32, activation="relu"),
                        keras.layers.Dense(4),
                    ]
                )
                model.compile(
                    optimizer=keras.optimizers.Adam(1e-2, gradient_accumulation_steps=accumulate),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                    metrics=["accuracy"],
                )
            return model

        model = build()
        rng = np.random.default_rng(0)
        x = rng.normal(size=(steps * BATCH, 12)).astype("float32")
        y = (x[:, :4].argmax(1)).astype("int64")
        checkpoint = os.path.join(folder, "epoch{epoch}.weights.h5")
        backup = os.path.join(folder, "backup")
        history = model.fit(
            x,
            y,
            batch_size=BATCH,
            epochs=1,
            shuffle=False,
            verbose=0,
            callbacks=[
                keras.callbacks.ModelCheckpoint(checkpoint, save_weights_only=True),
                keras.callbacks.BackupAndRestore(backup, delete_checkpoint=False),
            ],
        )
        evaluated = model.evaluate(x, y, batch_size=BATCH, verbose=0, return_dict=True)
        iterations = int(model.optimizer.iterations)
        weights = model.get_weights()
        param_types = sorted({type(p).__name__ for p in model.parameters()})
        local = sum(p.to_local().numel() if hasattr(p, "to_local") else p.numel() for p in model.parameters())
        model.save_weights(os.path.join(folder, "final.weights.h5"))
        # Read back into the sharded model after scrambling it: the whole weights again.
        model.set_weights([np.zeros_like(w) for w in weights])
        zeroed = [float(np.abs(w).sum()) for w in model.get_weights()]
        model.load_weights(os.path.join(folder, "epoch1.weights.h5"))
        reloaded = model.get_weights()
        # A new run restores the backup of the finished epoch (model and Adam state) and goes on:
        # one more epoch must equal a second epoch of the first model.
        resumed = build()
        restore = keras.callbacks.BackupAndRestore(backup, delete_checkpoint=False)
        resumed.fit(x, y, batch_size=BATCH, epochs=2, shuffle=False, verbose=0, callbacks=[restore])
        model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
        # gradient_accumulation_steps=2 on half batches: the same updates as whole batches
        accumulated = build(accumulate=2)
        accumulated.fit(x, y, batch_size=BATCH // 2, epochs=1, shuffle=False, verbose=0)
        return {
            "weights": weights,
            "reloaded": reloaded,
            "zeroed": zeroed,
            "history": history.history,
            "evaluated": evaluated,
            "param_types": param_types,
            "local_numel": local,
            "full_numel": sum(w.size for w in weights),
            "iterations": iterations,
            "restored_from": restore.restored_from,
            "resumed": resumed.get_weights(),
            "continued": model.get_weights(),
            "accumulated": accumulated.get_weights(),
        }
    finally:
        distribution.set_distribution(None)
