"""The three models of the optimizer benchmark, their synthetic data and their default settings.

* ``mlp``: the seed MLP (784-128-10, relu), global batch 32 as in the seed program;
* ``cnn``: Keras' ``mnist_convnet`` (28x28x1, Conv 32 3x3 relu, maxpool 2, Conv 64 3x3 relu,
  maxpool 2, flatten, dropout 0.5, dense 10) in NCHW, global batch 128 as in the Keras example;
* ``many``: 75 ``Linear(64, 64)`` layers with biases (150 small parameter tensors), relu between,
  global batch 64.
"""

from __future__ import annotations

import torch
from torch import nn


def mlp() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.5),
        nn.Linear(1600, 10),
    )


def many(layers: int = 75, width: int = 64) -> nn.Module:
    mods: list[nn.Module] = []
    for i in range(layers):
        mods.append(nn.Linear(width, width))
        if i < layers - 1:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods)


BUILDERS = {"mlp": mlp, "cnn": cnn, "many": many}
INPUT_SHAPE = {"mlp": (28, 28), "cnn": (1, 28, 28), "many": (64,)}
CLASSES = {"mlp": 10, "cnn": 10, "many": 64}
# global batch, timed steps per repeat, warm-up steps, bucket_cap_mb for the "small buckets" run
DEFAULTS = {
    "mlp": {"batch": 32, "steps": 200, "warmup": 20, "small_cap_mb": 0.1},
    "cnn": {"batch": 128, "steps": 40, "warmup": 5, "small_cap_mb": 0.07},
    "many": {"batch": 64, "steps": 100, "warmup": 10, "small_cap_mb": 0.3},
}


def build(name: str, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return BUILDERS[name]()


def batches(name: str, local_batch: int, rank: int, count: int = 4) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """A few fixed synthetic batches for this rank (different on every rank), cycled through."""
    g = torch.Generator().manual_seed(1000 + rank)
    out = []
    for _ in range(count):
        x = torch.randn(local_batch, *INPUT_SHAPE[name], generator=g)
        y = torch.randint(0, CLASSES[name], (local_batch,), generator=g)
        out.append((x, y))
    return out
