"""The seed program's model and training, written as a plain PyTorch loop (the 1-replica baseline).

Same model (Linear 784->128, ReLU, Linear 128->10), same data (the arrays
``unison.keras.datasets.mnist.load_data()`` returns), Adam(lr=1e-3, eps=1e-7) like Keras's
defaults, batch 32, a fresh shuffle every epoch, cross-entropy on logits, and per epoch the
training loss/accuracy and the validation loss/accuracy, like ``fit(verbose=2)`` prints.
Tensors are indexed with a ``randperm`` per epoch (no DataLoader), metrics are accumulated as
tensors (no ``.item()`` per step). Threads: torch's default (all cores), as unison's one replica.

    python plain_torch.py --epochs 5
"""

import argparse
import time

import _record
import numpy as np
import torch
from torch import nn

from unison.keras.datasets import mnist  # only to get the very same arrays as the seed program


def evaluate(model, loss_fn, x, y, batch_size):
    model.eval()
    loss_sum = torch.zeros((), dtype=torch.float64)
    correct = torch.zeros((), dtype=torch.int64)
    with torch.no_grad():
        for i in range(0, len(x), batch_size):
            xb, yb = x[i : i + batch_size], y[i : i + batch_size]
            logits = model(xb)
            loss_sum += loss_fn(logits, yb).double() * len(yb)
            correct += (logits.argmax(1) == yb).sum()
    return float(loss_sum) / len(x), float(correct) / len(x)


def train(model, opt, loss_fn, x_train, y_train, x_test, y_test, epochs, batch_size, verbose):
    history = {"loss": [], "accuracy": [], "val_loss": [], "val_accuracy": []}
    n = len(x_train)
    steps = (n + batch_size - 1) // batch_size
    for epoch in range(epochs):
        t0 = time.time()
        model.train()
        perm = torch.randperm(n)
        loss_sum = torch.zeros((), dtype=torch.float64)
        correct = torch.zeros((), dtype=torch.int64)
        for step in range(steps):
            idx = perm[step * batch_size : (step + 1) * batch_size]
            xb, yb = x_train[idx], y_train[idx]
            logits = model(xb)
            loss = loss_fn(logits, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                loss_sum += loss.detach().double() * len(yb)
                correct += (logits.argmax(1) == yb).sum()
        val_loss, val_acc = evaluate(model, loss_fn, x_test, y_test, batch_size)
        logs = {
            "loss": float(loss_sum) / n,
            "accuracy": float(correct) / n,
            "val_loss": val_loss,
            "val_accuracy": val_acc,
        }
        for k, v in logs.items():
            history[k].append(v)
        if verbose:
            print(
                f"Epoch {epoch + 1}/{epochs}: {steps}/{steps} - {time.time() - t0:.0f}s - "
                + " - ".join(f"{k}: {v:.4f}" for k, v in sorted(logs.items())),
                flush=True,
            )
    return history


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--verbose", type=int, default=2)
    args = p.parse_args()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    t_ready = time.time()

    (x_train, y_train), (x_test, y_test) = mnist.load_data()
    x_train = torch.from_numpy(x_train.reshape(-1, 784).astype("float32") / 255)
    x_test = torch.from_numpy(x_test.reshape(-1, 784).astype("float32") / 255)
    y_train = torch.from_numpy(y_train.astype(np.int64))
    y_test = torch.from_numpy(y_test.astype(np.int64))
    t_loaded = time.time()

    t_fit0, cpu_fit0 = time.time(), time.process_time()
    history = train(model, opt, loss_fn, x_train, y_train, x_test, y_test, args.epochs, args.batch_size, args.verbose)
    t_fit1, cpu_fit1 = time.time(), time.process_time()
    _record.emit(
        "plain",
        0,
        1,
        t_ready=t_ready,
        t_loaded=t_loaded,
        t_fit0=t_fit0,
        t_fit1=t_fit1,
        cpu_fit0=cpu_fit0,
        cpu_fit1=cpu_fit1,
        history=history,
        threads=torch.get_num_threads(),
    )


if __name__ == "__main__":
    main()
