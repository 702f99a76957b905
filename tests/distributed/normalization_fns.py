"""Replica functions of test_normalization_replicas.py: the normalisation layers of the model suite
(benchmarks/models_programs/keras_models.py) run on each replica's rows of one global batch.

Module level, so the harness can pickle them. Each replica returns its own rows' outputs and input
gradients, its local gradients of ``gamma``/``beta`` and the moving statistics; the test puts the
replicas' pieces together and compares them with formulas computed on the whole batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import unison as tf

# name -> (layer kind, global input shape, layer kwargs); the layer each model of the suite uses
CASES: dict[str, tuple[str, tuple[int, ...], dict[str, Any]]] = {
    "resnet50: BatchNorm on NHWC": ("batch", (8, 5, 5, 6), {"momentum": 0.9, "epsilon": 1.001e-5}),
    "fcn: BatchNorm on (batch, steps, channels)": ("batch", (8, 7, 4), {}),
    "dcgan: BatchNorm after Dense": ("batch", (8, 12), {"momentum": 0.8}),
    "dcgan: BatchNorm on NHWC, no beta": ("batch", (6, 3, 3, 5), {"center": False}),
    "transformer: LayerNorm": ("layer", (8, 5, 6), {"epsilon": 1e-6}),
}
STEPS = 3


def global_batch(name: str, step: int) -> tuple[np.ndarray, np.ndarray]:
    """The step's global input and the upstream gradient ``seed`` (loss = sum(y * seed))."""
    shape = CASES[name][1]
    rng = np.random.default_rng([step, len(name)])
    x = (rng.normal(size=shape) * (step + 1) + step).astype("float32")
    return x, rng.normal(size=shape).astype("float32")


def start_weights(name: str) -> tuple[np.ndarray, np.ndarray]:
    """gamma and beta away from Keras's ones/zeros, so their gradients and effect are seen."""
    features = CASES[name][1][-1]
    rng = np.random.default_rng(len(name) + 100)
    return (rng.random(features) + 0.5).astype("float32"), rng.normal(size=features).astype("float32")


def _rows(array: np.ndarray, rank: int, world: int) -> np.ndarray:
    """This replica's contiguous share of the batch (uneven when the batch does not divide)."""
    bounds = np.linspace(0, len(array), world + 1).round().astype(int)
    return array[bounds[rank] : bounds[rank + 1]]


def run_cases(devices: list[str]) -> dict[str, dict[str, Any]]:
    """Each case's STEPS training steps and one inference step on this replica's rows."""
    strategy = tf.distribute.MirroredStrategy(devices)
    rank, world = strategy.extended.replica_id, strategy.num_replicas_in_sync
    out: dict[str, dict[str, Any]] = {}
    for name, (kind, shape, kwargs) in CASES.items():
        with strategy.scope():
            cls = tf.keras.layers.BatchNormalization if kind == "batch" else tf.keras.layers.LayerNormalization
            layer = cls(**kwargs)
            layer.build(shape)
        gamma, beta = start_weights(name)
        with torch.no_grad():
            if layer.gamma is not None:
                layer.gamma.copy_(torch.from_numpy(gamma))
            if layer.beta is not None:
                layer.beta.copy_(torch.from_numpy(beta))
        params = [p for p in (layer.gamma, layer.beta) if p is not None]
        record: dict[str, Any] = {"y": [], "dx": [], "dparams": [], "moving": []}

        def step(
            x: torch.Tensor, seed: torch.Tensor, training: bool, layer: Any = layer, params: list = params
        ) -> tuple[torch.Tensor, ...]:
            x = x.requires_grad_()
            y = layer(x, training=training)
            grads = torch.autograd.grad((y * seed).sum(), [x, *params])
            return (y.detach(), *grads)

        for s in range(STEPS + 1):
            x, seed = global_batch(name, s)
            training = s < STEPS  # the last step is inference with the moving statistics
            x_local, seed_local = (torch.from_numpy(_rows(a, rank, world)) for a in (x, seed))
            y, dx, *dparams = strategy.run(step, args=(x_local, seed_local, training))
            record["y"].append(y.numpy())
            record["dx"].append(dx.numpy())
            record["dparams"].append([g.numpy() for g in dparams])
            if kind == "batch":
                record["moving"].append([layer.moving_mean.numpy().copy(), layer.moving_variance.numpy().copy()])
        out[name] = record
    return out
