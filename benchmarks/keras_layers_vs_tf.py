"""Issue 35's layers, forward + backward, unison against Keras 3 on TensorFlow 2.21 (CPU).

Each framework runs in its own process (``--worker unison|tf``, both with ``--threads`` intra-op
threads); the driver alternates them for ``--repeats`` rounds and reports, per layer, the median
over rounds of each round's median step time (a forward pass, the sum of the output, and the
gradient with respect to the input and every weight; TF's step is a ``tf.function``, its fast
path), and the ratio unison / TF (below 1.0: unison is faster).

    python benchmarks/keras_layers_vs_tf.py --repeats 3 --threads 1

prints a Markdown table (``--json PATH`` writes the figures).
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

# name -> (layer class, constructor kwargs, input shape)
LAYERS: dict[str, tuple[str, dict[str, Any], tuple[int, ...]]] = {
    "Conv3D 3x3x3 same": ("Conv3D", {"filters": 16, "kernel_size": 3, "padding": "same"}, (4, 8, 16, 16, 8)),
    "Conv3D stride 2": ("Conv3D", {"filters": 16, "kernel_size": 3, "strides": 2}, (4, 9, 17, 17, 8)),
    "Conv3DTranspose s2": (
        "Conv3DTranspose",
        {"filters": 8, "kernel_size": 3, "strides": 2, "padding": "same"},
        (4, 4, 8, 8, 16),
    ),
    "Conv1DTranspose s2": ("Conv1DTranspose", {"filters": 32, "kernel_size": 5, "strides": 2}, (16, 64, 32)),
    "SeparableConv1D": ("SeparableConv1D", {"filters": 64, "kernel_size": 5, "padding": "same"}, (16, 128, 32)),
    "DepthwiseConv1D": ("DepthwiseConv1D", {"kernel_size": 5, "depth_multiplier": 2}, (16, 128, 32)),
    "MaxPooling3D": ("MaxPooling3D", {"pool_size": 2}, (4, 8, 16, 16, 16)),
    "AveragePooling3D same": (
        "AveragePooling3D",
        {"pool_size": 3, "strides": 2, "padding": "same"},
        (4, 8, 16, 16, 16),
    ),
    "AdaptiveAveragePooling2D": ("AdaptiveAveragePooling2D", {"output_size": 7}, (8, 30, 30, 32)),
    "ConvLSTM2D": ("ConvLSTM2D", {"filters": 16, "kernel_size": 3, "padding": "same"}, (4, 8, 16, 16, 8)),
    "ConvLSTM1D seq": ("ConvLSTM1D", {"filters": 16, "kernel_size": 3, "return_sequences": True}, (8, 10, 32, 8)),
    "UpSampling3D": ("UpSampling3D", {"size": 2}, (4, 8, 16, 16, 8)),
}


def _worker(kind: str, steps: int, threads: int) -> dict[str, list[float]]:
    rng = np.random.default_rng(0)
    times: dict[str, list[float]] = {}
    if kind == "tf":
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        import keras

        for name, (cls, kwargs, shape) in LAYERS.items():
            layer = getattr(keras.layers, cls)(**kwargs)
            x = tf.constant(rng.normal(size=shape).astype("float32"))
            layer(x)

            @tf.function  # TF's fast path (what fit() runs); eager Keras 3 is slower still
            def graph_step(x: Any = x, layer: Any = layer) -> Any:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    total = tf.reduce_sum(layer(x))
                return tape.gradient(total, [x, *layer.trainable_weights])

            def step(graph_step: Any = graph_step) -> None:
                _ = [g.numpy() for g in graph_step() if g is not None]

            times[name] = _time(step, steps)
    else:
        import torch

        torch.set_num_threads(threads)
        from unison.keras import layers

        for name, (cls, kwargs, shape) in LAYERS.items():
            layer = getattr(layers, cls)(**kwargs)
            x = torch.tensor(rng.normal(size=shape).astype("float32"), requires_grad=True)
            layer(x)

            def step(x: Any = x, layer: Any = layer) -> None:
                params = [x, *layer.parameters()]
                total = layer(x).sum()
                _ = torch.autograd.grad(total, params)

            times[name] = _time(step, steps)
    return times


def _time(step: Any, steps: int) -> list[float]:
    step()  # warm-up (builds, traces, allocates)
    out = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=["unison", "tf"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.worker, args.steps, args.threads)))
        return
    rounds: dict[str, dict[str, list[float]]] = {"unison": {}, "tf": {}}
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    for _ in range(args.repeats):
        for kind in ("unison", "tf"):
            cmd = [
                sys.executable,
                __file__,
                "--worker",
                kind,
                "--steps",
                str(args.steps),
                "--threads",
                str(args.threads),
            ]
            out = (
                subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout.strip().splitlines()[-1]
            )
            for name, samples in json.loads(out).items():
                rounds[kind].setdefault(name, []).append(statistics.median(samples))
    print("| layer (forward + backward) | unison ms | Keras 3 / TF ms | ratio |\n|---|---:|---:|---:|")
    figures = {}
    for name in LAYERS:
        ours, theirs = statistics.median(rounds["unison"][name]), statistics.median(rounds["tf"][name])
        figures[name] = {"unison_ms": ours * 1e3, "tf_ms": theirs * 1e3, "ratio": ours / theirs}
        print(f"| {name} | {ours * 1e3:.2f} | {theirs * 1e3:.2f} | {ours / theirs:.2f} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
