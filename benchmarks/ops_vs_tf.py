"""The 50 most-used tensor ops, unison against TensorFlow eager, side by side on the same inputs (CPU).

Each framework runs in its own process (``--worker unison|tf``), so neither one's thread pools or
allocator settings touch the other's; the driver alternates them for ``--repeats`` rounds and
reports, per op, the median over rounds of each round's median call time, and the ratio
unison / TF (below 1.0: unison is faster). Both sides use ``--threads`` intra-op threads.

    python benchmarks/ops_vs_tf.py --repeats 5 --size 256 --threads 1

prints a Markdown table (and ``--json PATH`` writes the figures). TensorFlow must be importable by
``--tf-python`` (default: this Python; ``pip install -e '.[conformance]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

# name -> body(tf, x, y, m, img, ids, labels, logits) ; all inputs built once per worker
OPS: dict[str, Callable[..., Any]] = {
    "reduce_mean": lambda tf, d: tf.reduce_mean(d["x"]),
    "reduce_sum(axis=1)": lambda tf, d: tf.reduce_sum(d["x"], axis=1),
    "reduce_max": lambda tf, d: tf.reduce_max(d["x"], axis=0),
    "matmul": lambda tf, d: tf.matmul(d["x"], d["y"]),
    "add": lambda tf, d: tf.add(d["x"], d["y"]),
    "multiply": lambda tf, d: tf.multiply(d["x"], d["y"]),
    "subtract": lambda tf, d: tf.subtract(d["x"], d["y"]),
    "divide": lambda tf, d: tf.divide(d["x"], d["y"]),
    "cast": lambda tf, d: tf.cast(d["x"], tf.int32),
    "reshape": lambda tf, d: tf.reshape(d["x"], [-1]),
    "concat": lambda tf, d: tf.concat([d["x"], d["y"]], axis=0),
    "stack": lambda tf, d: tf.stack([d["x"], d["y"]]),
    "transpose": lambda tf, d: tf.transpose(d["x"]),
    "expand_dims": lambda tf, d: tf.expand_dims(d["x"], 0),
    "squeeze": lambda tf, d: tf.squeeze(d["col"], axis=1),
    "gather": lambda tf, d: tf.gather(d["x"], d["ids"]),
    "gather_nd": lambda tf, d: tf.gather_nd(d["x"], d["pairs"]),
    "one_hot": lambda tf, d: tf.one_hot(d["labels"], 10),
    "argmax": lambda tf, d: tf.argmax(d["x"], axis=1),
    "softmax": lambda tf, d: tf.nn.softmax(d["x"]),
    "relu": lambda tf, d: tf.nn.relu(d["x"]),
    "sigmoid": lambda tf, d: tf.sigmoid(d["x"]),
    "tanh": lambda tf, d: tf.tanh(d["x"]),
    "exp": lambda tf, d: tf.exp(d["x"]),
    "log": lambda tf, d: tf.math.log(d["pos"]),
    "sqrt": lambda tf, d: tf.sqrt(d["pos"]),
    "square": lambda tf, d: tf.square(d["x"]),
    "maximum": lambda tf, d: tf.maximum(d["x"], 0.5),
    "clip_by_value": lambda tf, d: tf.clip_by_value(d["x"], -0.5, 0.5),
    "where": lambda tf, d: tf.where(d["x"] > 0, d["x"], d["y"]),
    "equal": lambda tf, d: tf.equal(d["x"], d["y"]),
    "greater": lambda tf, d: tf.greater(d["x"], d["y"]),
    "logical_and": lambda tf, d: tf.logical_and(d["b1"], d["b2"]),
    "zeros": lambda tf, d: tf.zeros([d["n"], d["n"]]),
    "ones_like": lambda tf, d: tf.ones_like(d["x"]),
    "fill": lambda tf, d: tf.fill([d["n"], d["n"]], 3.0),
    "range": lambda tf, d: tf.range(d["n"] * d["n"]),
    "tile": lambda tf, d: tf.tile(d["x"], [2, 1]),
    "pad": lambda tf, d: tf.pad(d["x"], [[1, 1], [2, 2]]),
    "split": lambda tf, d: tf.split(d["x"], 4, axis=1),
    "unstack": lambda tf, d: tf.unstack(d["small"]),
    "cumsum": lambda tf, d: tf.cumsum(d["x"], axis=1),
    "top_k": lambda tf, d: tf.math.top_k(d["x"], k=5),
    "sort": lambda tf, d: tf.sort(d["x"], axis=1),
    "boolean_mask": lambda tf, d: tf.boolean_mask(d["x"], d["mask"]),
    "einsum": lambda tf, d: tf.einsum("ij,jk->ik", d["x"], d["y"]),
    "conv2d": lambda tf, d: tf.nn.conv2d(d["img"], d["kernel"], strides=1, padding="SAME"),
    "max_pool2d": lambda tf, d: tf.nn.max_pool2d(d["img"], 2, 2, "SAME"),
    "sparse_softmax_xent": lambda tf, d: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=d["labels"], logits=d["logits"]
    ),
    "l2_normalize": lambda tf, d: tf.math.l2_normalize(d["x"], axis=1),
}


def _inputs(tf: Any, n: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, n)).astype(np.float32)
    y = rng.standard_normal((n, n)).astype(np.float32)
    return {
        "n": n,
        "x": tf.constant(x),
        "y": tf.constant(y),
        "pos": tf.constant(np.abs(x) + 0.1),
        "col": tf.constant(x[:, :1]),
        "small": tf.constant(x[:16]),
        "ids": tf.constant(rng.integers(0, n, n // 2).astype(np.int32)),
        "pairs": tf.constant(rng.integers(0, n, (n, 2)).astype(np.int32)),
        "labels": tf.constant(rng.integers(0, 10, n).astype(np.int32)),
        "logits": tf.constant(rng.standard_normal((n, 10)).astype(np.float32)),
        "b1": tf.constant(x > 0),
        "b2": tf.constant(y > 0),
        "mask": tf.constant(x[:, 0] > 0),
        "img": tf.constant(rng.standard_normal((8, 32, 32, 16)).astype(np.float32)),
        "kernel": tf.constant(rng.standard_normal((3, 3, 16, 16)).astype(np.float32)),
    }


def worker(framework: str, size: int, threads: int, calls: int) -> dict[str, float]:
    """Median seconds per call of every op, in this process."""
    if framework == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    else:
        import torch

        import unison as tf

        torch.set_num_threads(threads)
    data = _inputs(tf, size)
    result = {}
    for name, body in OPS.items():
        for _ in range(3):  # warm-up: first calls build kernels and caches
            body(tf, data)
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            out = body(tf, data)
            if framework == "tf":  # TF eager returns when the kernel ran; touch it as unison's caller would
                _ = out
            times.append(time.perf_counter() - start)
        result[name] = statistics.median(times)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--tf-python", default=sys.executable)
    parser.add_argument("--json", default=None)
    parser.add_argument("--worker", choices=["unison", "tf"], default=None)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.size, args.threads, args.calls)))
        return
    rounds: dict[str, list[dict[str, float]]] = {"unison": [], "tf": []}
    for _ in range(args.repeats):
        for framework in ("unison", "tf"):
            python = args.tf_python if framework == "tf" else sys.executable
            cmd = [python, __file__, "--worker", framework, "--size", str(args.size), "--threads", str(args.threads)]
            cmd += ["--calls", str(args.calls)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            rounds[framework].append(json.loads(out.strip().splitlines()[-1]))
    print(f"command: python benchmarks/ops_vs_tf.py {' '.join(sys.argv[1:])}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    print("\n| op | unison (us) | TF eager (us) | unison / TF |\n|---|---:|---:|---:|")
    ratios = []
    table = {}
    for name in OPS:
        ours = statistics.median(r[name] for r in rounds["unison"]) * 1e6
        theirs = statistics.median(r[name] for r in rounds["tf"]) * 1e6
        ratios.append(ours / theirs)
        table[name] = {"unison_us": ours, "tf_us": theirs, "ratio": ours / theirs}
        print(f"| `{name}` | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} |")
    print(
        f"\nmedian ratio over {len(ratios)} ops: {statistics.median(ratios):.2f}; above 2x: {sum(r > 2 for r in ratios)}"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
