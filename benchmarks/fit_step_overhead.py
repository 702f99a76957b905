"""Per-step time of ``model.fit`` on one replica: built-in step vs a custom ``train_step``, and two trees.

Runs the seed program's MLP (784-128-10, Adam, batch 64) for a fixed number of steps in a fresh
process per measurement, alternating the source trees given with ``--src`` (e.g. the tree before
and after a change), and prints the median per-step time of each. Use it side by side in one
run: the machine's load moves both the same way.

    python benchmarks/fit_step_overhead.py --src /path/before/src --src /path/after/src --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_CHILD = r"""
import json, sys, time
import numpy as np, torch
torch.set_num_threads(1)
import unison as tf
keras = tf.keras
style = sys.argv[1]
steps = int(sys.argv[2])

class Custom(keras.Sequential):
    def train_step(self, data):
        x, y = data
        self.zero_grad()
        y_pred = self(x, training=True)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        loss.backward()
        w = list(self.trainable_weights)
        with torch.no_grad():
            self.optimizer.apply([v.grad for v in w], w)
        return self.compute_metrics(x, y, y_pred, None)

cls = Custom if style == "custom" else keras.Sequential
torch.manual_seed(0)
model = cls([keras.layers.Dense(128, activation="relu", input_shape=(784,)), keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
rng = np.random.default_rng(0)
x = rng.random((64 * steps, 784), dtype=np.float32)
y = rng.integers(0, 10, 64 * steps)
model.fit(x[:640], y[:640], batch_size=64, epochs=1, verbose=0)  # warm-up
t = time.perf_counter()
model.fit(x, y, batch_size=64, epochs=1, verbose=0)
print(json.dumps({"us_per_step": (time.perf_counter() - t) / steps * 1e6}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", required=True, help="a tree's src/ directory (repeatable)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--custom", action="store_true", help="also time a custom train_step (trees that have it)")
    args = parser.parse_args()
    styles = ["builtin", "custom"] if args.custom else ["builtin"]
    times: dict[str, list[float]] = {}
    for _ in range(args.repeats):
        for src in args.src:
            for style in styles:
                env = dict(os.environ, PYTHONPATH=src)
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, style, str(args.steps)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                times.setdefault(f"{src} {style}", []).append(json.loads(out.splitlines()[-1])["us_per_step"])
    for key, values in times.items():
        print(f"{key}: median {statistics.median(values):.1f} us/step over {len(values)} runs")


if __name__ == "__main__":
    main()
