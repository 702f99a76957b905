"""EinsumDense forward + backward, unison against Keras 3 on TensorFlow eager (CPU), same shapes.

Each framework runs in its own process (``--worker unison|keras``); the driver alternates them for
``--repeats`` rounds and reports per equation the median over rounds of each round's median step
time (a forward pass and the gradients of the kernel, bias and input under ``GradientTape``), and
the ratio unison / Keras (below 1.0: unison is faster). Both sides use ``--threads`` threads.

    python benchmarks/einsum_dense_vs_keras.py --repeats 3 --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

# name -> (equation, output_shape, bias_axes, input shape)
CASES: dict[str, tuple[str, Any, str, tuple[int, ...]]] = {
    "dense abc,cd->abd": ("abc,cd->abd", (None, 512), "d", (16, 64, 256)),
    "dense ...b,bc->...c": ("...b,bc->...c", 512, "c", (16, 64, 256)),
    "heads abc,cde->abde": ("abc,cde->abde", (None, 8, 32), "de", (16, 64, 256)),
    "merge abde,dec->abc": ("abde,dec->abc", (None, 256), "c", (16, 64, 8, 32)),
}


def worker(framework: str, steps: int, threads: int) -> dict[str, float]:
    if framework == "keras":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    else:
        import torch

        torch.set_num_threads(threads)
        import unison as tf  # type: ignore[no-redef]
    out = {}
    for name, (equation, output_shape, bias_axes, shape) in CASES.items():
        layer = tf.keras.layers.EinsumDense(equation, output_shape, bias_axes=bias_axes)
        x = tf.constant(np.random.RandomState(0).rand(*shape).astype("float32"))

        def step(layer: Any = layer, x: Any = x) -> None:
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(tf.square(layer(x)))
            grads = tape.gradient(loss, [x, *layer.trainable_weights])
            np.asarray(grads[0])  # wait for the result

        for _ in range(3):
            step()
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
        out[name] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=("unison", "keras"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps, args.threads)))
        return
    rounds: dict[str, list[dict[str, float]]] = {"unison": [], "keras": []}
    for _ in range(args.repeats):
        for framework in ("unison", "keras"):
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--worker",
                    framework,
                    "--steps",
                    str(args.steps),
                    "--threads",
                    str(args.threads),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            rounds[framework].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print("| equation (forward + backward) | unison ms | Keras 3 (TF) ms | unison / Keras |")
    print("|---|---|---|---|")
    for name in CASES:
        ours = statistics.median(r[name] for r in rounds["unison"]) * 1e3
        theirs = statistics.median(r[name] for r in rounds["keras"]) * 1e3
        print(f"| `{name}` | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
