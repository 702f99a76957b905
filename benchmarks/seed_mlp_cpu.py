"""CPU time of the seed model's training step: unison's ``fit`` against the plain PyTorch loop.

The wall-clock table of ``seed_mlp.py`` needs a quiet machine; on a shared one (5 engineers on 2
cores) other programs inflate it by 2-20x. With one torch thread, a process's CPU time
(``time.process_time``) is the work itself, which that load barely moves. Each run is a fresh
interpreter that trains the seed program's model (784-128-10 relu/softmax, Adam lr 1e-3 eps 1e-7,
sparse categorical cross-entropy, accuracy, batch 32) on ``--rows`` random MNIST-shaped rows for
one epoch after a 640-row warm-up, and prints the CPU seconds of that epoch:

* ``unison``: ``model.fit(x, y, epochs=1, batch_size=32, verbose=0)`` (one replica);
* ``plain``: ``benchmarks/seed_mlp_programs/plain_torch.py``'s loop (``randperm`` per epoch, rows
  indexed per step, ``torch.optim.Adam`` as a PyTorch user writes it, metrics as tensors);
* ``plain_fused``: the same loop with ``torch.optim.Adam(fused=True)`` (what a plain loop gets by
  asking for torch's fused kernel itself).

The systems alternate within each pair (order rotated); medians and the median of the per-pair
ratios are printed with the command and the load average.

    python benchmarks/seed_mlp_cpu.py --pairs 9
    python benchmarks/seed_mlp_cpu.py --pairs 9 --before <another checkout's src>   # + an older unison
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMMON = """
import sys, time, numpy as np, torch
torch.set_num_threads(1)
rows = int(sys.argv[1])
rng = np.random.default_rng(0)
x = rng.random((rows, 784), dtype=np.float32); y = rng.integers(0, 10, rows)
"""
UNISON = (
    COMMON
    + """
import unison as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu", input_shape=(784,)),
                             tf.keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x[:640], y[:640], epochs=1, batch_size=32, verbose=0)
c = time.process_time()
model.fit(x, y, epochs=1, batch_size=32, verbose=0)
print(time.process_time() - c)
"""
)
PLAIN = (
    COMMON
    + """
from torch import nn
fused = sys.argv[2] == "fused"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7, **({"fused": True} if fused else {}))
loss_fn = nn.CrossEntropyLoss()
xt, yt = torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))

def epoch(n):
    perm = torch.randperm(n)
    loss_sum = torch.zeros((), dtype=torch.float64)
    correct = torch.zeros((), dtype=torch.int64)
    for step in range((n + 31) // 32):
        idx = perm[step * 32 : (step + 1) * 32]
        xb, yb = xt[idx], yt[idx]
        logits = model(xb)
        loss = loss_fn(logits, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            loss_sum += loss.detach().double() * len(yb)
            correct += (logits.argmax(1) == yb).sum()
    return float(loss_sum) / n, float(correct) / n

epoch(640)
c = time.process_time()
epoch(rows)
print(time.process_time() - c)
"""
)


def run(system: str, rows: int, src: str) -> float:
    env = dict(os.environ, PYTHONPATH=src, OMP_NUM_THREADS="1")
    if system.startswith("unison"):
        cmd = [sys.executable, "-c", UNISON, str(rows)]
    else:
        cmd = [sys.executable, "-c", PLAIN, str(rows), "fused" if system == "plain_fused" else "default"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=900)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--rows", type=int, default=12800, help="training rows (400 steps of 32)")
    parser.add_argument("--src", default=os.path.join(os.path.dirname(HERE), "src"), help="unison's src folder")
    parser.add_argument("--before", help="another unison's src folder, run as the system unison_before")
    parser.add_argument("--systems", default="unison,plain,plain_fused")
    args = parser.parse_args(argv)
    systems = args.systems.split(",") + (["unison_before"] if args.before else [])
    load0 = os.getloadavg()[0]
    times: dict[str, list[float]] = {s: [] for s in systems}
    for i in range(args.pairs):
        k = i % len(systems)
        for system in systems[k:] + systems[:k]:
            src = args.before if system == "unison_before" else args.src
            times[system].append(run(system, args.rows, src))
    load1 = os.getloadavg()[0]
    steps = (args.rows + 31) // 32
    print(f"command: python benchmarks/seed_mlp_cpu.py {shlex.join(argv if argv is not None else sys.argv[1:])}")
    print(f"load average (1 min) at start {load0:.2f}, at end {load1:.2f}; {os.cpu_count()} cores; 1 torch thread")
    print(
        f"| system | CPU s per epoch of {steps} steps, median (all runs) | us per step "
        "| vs plain (median of per-round ratios) |"
    )
    print("|---|---|---:|---|")
    for system, values in times.items():
        ratio = ""
        if system != "plain" and "plain" in times:
            ratios = [a / b for a, b in zip(values, times["plain"])]
            ratio = f"{statistics.median(ratios):.3f}x ({min(ratios):.3f}-{max(ratios):.3f})"
        print(
            f"| {system} | {statistics.median(values):.3f} ({', '.join(f'{v:.3f}' for v in values)}) "
            f"| {statistics.median(values) / steps * 1e6:.0f} | {ratio} |"
        )


if __name__ == "__main__":
    main()
