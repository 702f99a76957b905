"""CPU time of the seed model's ``fit``, this tree against another (a refactor's before and after).

Each run is a fresh interpreter that builds the seed program's model (784-128-10, Adam, sparse
categorical cross-entropy, accuracy) on one torch thread, warms up on 640 rows, then times ``fit``
over 12,800 random MNIST-shaped rows (400 steps of batch 32) with ``time.process_time()``, which
other jobs on a shared machine do not inflate. The two trees alternate (order flipped every pair);
the medians and the median of the per-pair ratios are printed.

    python benchmarks/seed_step_cpu.py --before <src of the old tree> --pairs 7
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = """
import time, numpy as np, torch
torch.set_num_threads(1)
import unison as tf
rng = np.random.default_rng(0)
x = rng.random((12800, 784), dtype=np.float32); y = rng.integers(0, 10, 12800)
model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu", input_shape=(784,)),
                             tf.keras.layers.Dense(10, activation="softmax")])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.fit(x[:640], y[:640], epochs=1, batch_size=32, verbose=0)
c = time.process_time()
model.fit(x, y, epochs=1, batch_size=32, verbose=0)
print(time.process_time() - c)
"""


def run(src: str) -> float:
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True, timeout=600
    )
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the other tree's src folder")
    parser.add_argument("--after", default=os.path.join(os.path.dirname(HERE), "src"))
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {"before": [], "after": []}
    for i in range(args.pairs):
        for which in ("before", "after") if i % 2 == 0 else ("after", "before"):
            times[which].append(run(getattr(args, which)))
    ratios = [a / b for a, b in zip(times["after"], times["before"])]
    print(f"command: python benchmarks/seed_step_cpu.py --before {args.before} --pairs {args.pairs}")
    for which, values in times.items():
        print(f"{which:<6} median {statistics.median(values):.3f} s CPU  ({', '.join(f'{v:.3f}' for v in values)})")
    print(
        f"after / before: medians {statistics.median(times['after']) / statistics.median(times['before']):.3f}x, "
        f"median of per-pair ratios {statistics.median(ratios):.3f}x"
    )


if __name__ == "__main__":
    main()
