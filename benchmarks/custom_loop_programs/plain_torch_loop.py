"""The same model and loop as tutorial_loop.py, written in plain PyTorch (what a torch user writes).

NCHW images, the tutorial's layers with PyTorch's default initialisation, L2(1e-5) on the
kernels added to the loss, Adam(lr=1e-3, eps=1e-7 as Keras), a shuffled index per epoch, the
running accuracy counted per step. Same rows, batch and timing as tutorial_loop.py.
"""

import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tutorial_cnn import tutorial_cnn  # noqa: E402

ROWS = int(os.environ.get("BENCH_ROWS", 6400))
EPOCHS = int(os.environ.get("BENCH_EPOCHS", 1))
BATCH = 64
rng = np.random.default_rng(0)
images = torch.from_numpy(rng.random((ROWS, 1, 28, 28), dtype=np.float32))
labels = torch.from_numpy(rng.integers(0, 10, ROWS).astype(np.int64))

model = tutorial_cnn()
if os.environ.get("BENCH_COMPILE"):
    # The model's forward (and its backward) through torch.compile (inductor): what unison's
    # tf.function could use; measured beside the eager loop by custom_loop.py's "plain-compiled".
    model = torch.compile(model)
kernels = [
    m.weight
    for m in (model._orig_mod if hasattr(model, "_orig_mod") else model)
    if isinstance(m, (nn.Conv2d, nn.Linear))
]
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
correct = torch.zeros((), dtype=torch.int64)
seen = 0


def epoch():
    global correct, seen
    total_loss, steps = 0.0, 0
    order = torch.randperm(ROWS)
    for start in range(0, ROWS, BATCH):
        idx = order[start : start + BATCH]
        x, y = images[idx], labels[idx]
        logits = model(x)
        loss = F.cross_entropy(logits, y) + 1e-5 * sum(k.square().sum() for k in kernels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            correct += (logits.argmax(1) == y).sum()
            seen += len(y)
        total_loss += loss.detach()
        steps += 1
    return float(total_loss / steps), steps


warm_begin = time.perf_counter()
epoch()
warmup_seconds = time.perf_counter() - warm_begin  # includes torch.compile's compilation
correct.zero_()
seen = 0
begin = time.perf_counter()
for _ in range(EPOCHS):
    loss, steps = epoch()
seconds = time.perf_counter() - begin
print(
    json.dumps(
        {
            "seconds": seconds,
            "warmup_seconds": warmup_seconds,
            "steps": steps * EPOCHS,
            "loss": loss,
            "accuracy": float(correct) / seen,
        }
    )
)
