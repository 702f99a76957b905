"""Every Keras layer unison implements, forward + backward: unison vs Keras 3 (TF and torch backends).

Each system runs in its own process (``--worker unison|keras-tf|keras-torch``; the Keras workers set
``KERAS_BACKEND=tensorflow`` / ``torch`` before importing Keras), all with ``--threads`` intra-op
threads. The driver runs ``--repeats`` rounds; each round starts the three workers one after the
other, in an order that rotates from round to round, so that a change of machine load hits every
system alike. A worker times, per layer, ``--steps`` steps after a warm-up and reports their median;
the table gives per layer the median over rounds and the ratio unison / min(keras-tf, keras-torch)
(below 1.0: unison is faster than the faster Keras backend).

A step is a forward pass, the sum of the output and the gradients with respect to every float
input and every trainable weight: ``torch.autograd.grad`` for unison and Keras on torch, a
``tf.function`` around ``GradientTape`` for Keras on TF (its fast path, what ``fit`` runs). Layers
that draw random numbers (dropout, noise) run with ``training=True`` on every system; training-mode
layers (BatchNormalization) too. Shapes are chosen so one step takes about a millisecond or more.

    python benchmarks/layers_vs_keras.py --repeats 5 --threads 1
    python benchmarks/layers_vs_keras.py --quick                    # a few layers, 1 round
    python benchmarks/layers_vs_keras.py --layers Dense,LSTM --repeats 5

prints the command, the load (``uptime``) and a Markdown table (``--json PATH`` writes the figures).
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

SYSTEMS = ("unison", "keras-tf", "keras-torch")

# An input is a float shape, or ("int", shape, high) for integer ids (no gradient).
Input = Any


def _spec(cls: str, kwargs: dict[str, Any], *inputs: Input, call: dict[str, Any] | None = None, **extra: Any) -> dict:
    """One benchmark case: the layer class, its arguments, its inputs and call arguments."""
    return {"cls": cls, "kwargs": kwargs, "inputs": list(inputs), "call": call or {}, **extra}


_TRAIN = {"training": True}
_IMG = (16, 32, 32, 16)  # NHWC activations for pooling/reshaping/elementwise image layers
_SEQ = (32, 128, 64)  # NLC
_VOL = (4, 8, 16, 16, 16)  # NDHWC
_BIG = (64, 128, 128)  # elementwise layers: 1M values

# name -> case. Names are the Keras class names (with a suffix where one class has several cases).
CASES: dict[str, dict[str, Any]] = {
    "Dense": _spec("Dense", {"units": 512}, (128, 512)),
    "EinsumDense": _spec(
        "EinsumDense", {"equation": "abc,cd->abd", "output_shape": (None, 256), "bias_axes": "d"}, (16, 32, 256)
    ),
    "Conv1D": _spec("Conv1D", {"filters": 64, "kernel_size": 5, "padding": "same"}, (16, 128, 32)),
    "Conv2D": _spec("Conv2D", {"filters": 32, "kernel_size": 3, "padding": "same"}, (8, 32, 32, 16)),
    "Conv2D stride 2": _spec("Conv2D", {"filters": 32, "kernel_size": 3, "strides": 2}, (8, 33, 33, 16)),
    "Conv3D": _spec("Conv3D", {"filters": 16, "kernel_size": 3, "padding": "same"}, (4, 8, 16, 16, 8)),
    "Conv1DTranspose": _spec("Conv1DTranspose", {"filters": 32, "kernel_size": 5, "strides": 2}, (16, 64, 32)),
    "Conv2DTranspose": _spec(
        "Conv2DTranspose", {"filters": 16, "kernel_size": 3, "strides": 2, "padding": "same"}, (8, 16, 16, 32)
    ),
    "Conv3DTranspose": _spec(
        "Conv3DTranspose", {"filters": 8, "kernel_size": 3, "strides": 2, "padding": "same"}, (4, 4, 8, 8, 16)
    ),
    "SeparableConv1D": _spec("SeparableConv1D", {"filters": 64, "kernel_size": 5, "padding": "same"}, (16, 128, 32)),
    "SeparableConv2D": _spec("SeparableConv2D", {"filters": 32, "kernel_size": 3, "padding": "same"}, (8, 32, 32, 16)),
    "DepthwiseConv1D": _spec("DepthwiseConv1D", {"kernel_size": 5, "depth_multiplier": 2}, (16, 128, 32)),
    "DepthwiseConv2D": _spec("DepthwiseConv2D", {"kernel_size": 3, "padding": "same"}, (8, 32, 32, 32)),
    "MaxPooling1D": _spec("MaxPooling1D", {"pool_size": 2}, _SEQ),
    "MaxPooling2D": _spec("MaxPooling2D", {"pool_size": 2}, _IMG),
    "MaxPooling3D": _spec("MaxPooling3D", {"pool_size": 2}, _VOL),
    "AveragePooling1D": _spec("AveragePooling1D", {"pool_size": 2}, _SEQ),
    "AveragePooling2D": _spec("AveragePooling2D", {"pool_size": 3, "strides": 2, "padding": "same"}, _IMG),
    "AveragePooling3D": _spec("AveragePooling3D", {"pool_size": 2}, _VOL),
    "GlobalAveragePooling1D": _spec("GlobalAveragePooling1D", {}, _SEQ),
    "GlobalAveragePooling2D": _spec("GlobalAveragePooling2D", {}, _IMG),
    "GlobalAveragePooling3D": _spec("GlobalAveragePooling3D", {}, _VOL),
    "GlobalMaxPooling1D": _spec("GlobalMaxPooling1D", {}, _SEQ),
    "GlobalMaxPooling2D": _spec("GlobalMaxPooling2D", {}, _IMG),
    "GlobalMaxPooling3D": _spec("GlobalMaxPooling3D", {}, _VOL),
    "AdaptiveAveragePooling2D": _spec("AdaptiveAveragePooling2D", {"output_size": 7}, (8, 30, 30, 32)),
    "AdaptiveMaxPooling2D": _spec("AdaptiveMaxPooling2D", {"output_size": 7}, (8, 30, 30, 32)),
    "BatchNormalization": _spec("BatchNormalization", {}, _IMG, call=_TRAIN),
    "BatchNormalization inference": _spec("BatchNormalization", {}, _IMG),
    "LayerNormalization": _spec("LayerNormalization", {}, _SEQ),
    "GroupNormalization": _spec("GroupNormalization", {"groups": 8}, _IMG),
    "UnitNormalization": _spec("UnitNormalization", {}, _SEQ),
    "RMSNormalization": _spec("RMSNormalization", {}, _SEQ),
    "MultiHeadAttention": _spec("MultiHeadAttention", {"num_heads": 4, "key_dim": 32}, (8, 64, 128), (8, 64, 128)),
    "GroupQueryAttention": _spec(
        "GroupQueryAttention",
        {"head_dim": 32, "num_query_heads": 4, "num_key_value_heads": 2},
        (8, 64, 128),
        (8, 64, 128),
    ),
    "Attention": _spec("Attention", {}, (16, 64, 64), (16, 64, 64), list_inputs=True),
    "AdditiveAttention": _spec("AdditiveAttention", {}, (8, 32, 32), (8, 32, 32), list_inputs=True),
    "LSTM": _spec("LSTM", {"units": 64}, (16, 20, 32)),
    "LSTM sequences": _spec("LSTM", {"units": 64, "return_sequences": True}, (16, 20, 32)),
    "GRU": _spec("GRU", {"units": 64}, (16, 20, 32)),
    "SimpleRNN": _spec("SimpleRNN", {"units": 64}, (16, 20, 32)),
    "Bidirectional LSTM": _spec(
        "Bidirectional", {"layer": ("LSTM", {"units": 32, "return_sequences": True})}, (16, 20, 32)
    ),
    "TimeDistributed Dense": _spec("TimeDistributed", {"layer": ("Dense", {"units": 64})}, (32, 20, 64)),
    "ConvLSTM1D": _spec("ConvLSTM1D", {"filters": 16, "kernel_size": 3, "return_sequences": True}, (8, 10, 32, 8)),
    "ConvLSTM2D": _spec("ConvLSTM2D", {"filters": 16, "kernel_size": 3, "padding": "same"}, (4, 8, 16, 16, 8)),
    "Embedding": _spec("Embedding", {"input_dim": 5000, "output_dim": 64}, ("int", (64, 64), 5000)),
    "Rescaling": _spec("Rescaling", {"scale": 1 / 255.0, "offset": -0.5}, _BIG),
    "Normalization": _spec("Normalization", {"mean": 0.5, "variance": 2.0}, _BIG),
    "Resizing": _spec("Resizing", {"height": 64, "width": 64}, _IMG),
    "CenterCrop": _spec("CenterCrop", {"height": 24, "width": 24}, _IMG),
    "Add": _spec("Add", {}, _BIG, _BIG, list_inputs=True),
    "Subtract": _spec("Subtract", {}, _BIG, _BIG, list_inputs=True),
    "Multiply": _spec("Multiply", {}, _BIG, _BIG, list_inputs=True),
    "Average": _spec("Average", {}, _BIG, _BIG, list_inputs=True),
    "Maximum": _spec("Maximum", {}, _BIG, _BIG, list_inputs=True),
    "Minimum": _spec("Minimum", {}, _BIG, _BIG, list_inputs=True),
    "Concatenate": _spec("Concatenate", {}, _BIG, _BIG, list_inputs=True),
    "Dot": _spec("Dot", {"axes": -1}, (64, 128, 64), (64, 128, 64), list_inputs=True),
    "Reshape": _spec("Reshape", {"target_shape": (128 * 128,)}, _BIG),
    "Flatten": _spec("Flatten", {}, _BIG),
    "Permute": _spec("Permute", {"dims": (2, 1)}, _BIG),
    "RepeatVector": _spec("RepeatVector", {"n": 16}, (256, 256)),
    "UpSampling1D": _spec("UpSampling1D", {"size": 2}, _SEQ),
    "UpSampling2D": _spec("UpSampling2D", {"size": 2}, _IMG),
    "UpSampling2D bilinear": _spec("UpSampling2D", {"size": 2, "interpolation": "bilinear"}, _IMG),
    "UpSampling3D": _spec("UpSampling3D", {"size": 2}, (4, 8, 16, 16, 8)),
    "ZeroPadding1D": _spec("ZeroPadding1D", {"padding": 2}, _SEQ),
    "ZeroPadding2D": _spec("ZeroPadding2D", {"padding": 2}, _IMG),
    "ZeroPadding3D": _spec("ZeroPadding3D", {"padding": 1}, _VOL),
    "Cropping1D": _spec("Cropping1D", {"cropping": 2}, _SEQ),
    "Cropping2D": _spec("Cropping2D", {"cropping": 2}, _IMG),
    "Cropping3D": _spec("Cropping3D", {"cropping": 1}, _VOL),
    "ReLU": _spec("ReLU", {}, _BIG),
    "LeakyReLU": _spec("LeakyReLU", {}, _BIG),
    "PReLU": _spec("PReLU", {}, (64, 128, 32)),
    "ELU": _spec("ELU", {}, _BIG),
    "Softmax": _spec("Softmax", {}, _BIG),
    "Activation gelu": _spec("Activation", {"activation": "gelu"}, _BIG),
    "Activation tanh": _spec("Activation", {"activation": "tanh"}, _BIG),
    "Identity": _spec("Identity", {}, _BIG),
    "Masking": _spec("Masking", {}, _SEQ),
    "Dropout": _spec("Dropout", {"rate": 0.5}, _BIG, call=_TRAIN),
    "SpatialDropout2D": _spec("SpatialDropout2D", {"rate": 0.5}, _IMG, call=_TRAIN),
    "GaussianNoise": _spec("GaussianNoise", {"stddev": 0.1}, _BIG, call=_TRAIN),
    "GaussianDropout": _spec("GaussianDropout", {"rate": 0.2}, _BIG, call=_TRAIN),
    "AlphaDropout": _spec("AlphaDropout", {"rate": 0.2}, _BIG, call=_TRAIN),
    "ActivityRegularization": _spec("ActivityRegularization", {"l2": 0.01}, _BIG),
}

QUICK = ("Dense", "Conv2D", "LSTM", "Add")


def _build(layers: Any, cls: str, kwargs: dict[str, Any]) -> Any:
    """The layer ``cls(**kwargs)`` of the module ``layers``; a ("Cls", kw) argument is built too."""
    args = {k: _build(layers, *v) if k == "layer" else v for k, v in kwargs.items()}
    return getattr(layers, cls)(**args)


def _arrays(case: dict[str, Any]) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    out = []
    for spec in case["inputs"]:
        if spec[0] == "int":
            out.append(rng.integers(0, spec[2], size=spec[1]).astype("int32"))
        else:
            out.append(rng.normal(size=spec).astype("float32"))
    return out


def _upstream(shape: tuple[int, ...]) -> np.ndarray:
    """The gradient fed back into the output: random, so no system can fold the backward pass."""
    return np.random.default_rng(1).normal(size=shape).astype("float32")


def _torch_step(layer: Any, case: dict[str, Any], arrays: list[np.ndarray], weights: Any) -> Any:
    """A step for torch-based systems: forward, then ``autograd.grad`` of inputs and weights."""
    import torch

    xs = [torch.tensor(a, requires_grad=a.dtype == np.float32) for a in arrays]
    args = [xs] if case.get("list_inputs") else xs
    upstream = torch.tensor(_upstream(tuple(layer(*args, **case["call"]).shape)))  # also builds
    params = [x for x in xs if x.requires_grad] + list(weights())

    def step() -> None:
        torch.autograd.grad(layer(*args, **case["call"]), params, upstream)

    return step


def _keras_tf_step(keras: Any, tf: Any, case: dict[str, Any]) -> Any:
    layer = _build(keras.layers, case["cls"], case["kwargs"])
    xs = [tf.constant(a) for a in _arrays(case)]
    args = [xs] if case.get("list_inputs") else xs
    upstream = tf.constant(_upstream(tuple(layer(*args, **case["call"]).shape)))  # also builds
    watched = [x for x in xs if x.dtype.is_floating]

    # TF's fast path (what fit() runs). The output's sum is returned too: Grappler would otherwise
    # prune a forward pass that the gradients do not need (those of linear layers).
    @tf.function
    def graph_step(upstream: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(watched)
            y = layer(*args, **case["call"])
        return tf.reduce_sum(y), tape.gradient(y, [*watched, *layer.trainable_weights], upstream)

    def step() -> None:
        total, grads = graph_step(upstream)
        _ = [total.numpy(), *(g.numpy() for g in grads if g is not None and hasattr(g, "numpy"))]

    return step


def _worker(kind: str, names: list[str], steps: int, threads: int) -> dict[str, tuple[float, float]]:
    """Per case, median wall and CPU seconds of a step (NaN, with the error on stderr, on failure)."""
    if kind == "keras-tf":
        os.environ["KERAS_BACKEND"] = "tensorflow"
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        import keras

        def make(case: dict[str, Any]) -> Any:
            return _keras_tf_step(keras, tf, case)
    else:
        import torch

        torch.set_num_threads(threads)
        if kind == "keras-torch":
            os.environ["KERAS_BACKEND"] = "torch"
            import keras

            def make(case: dict[str, Any]) -> Any:
                layer = _build(keras.layers, case["cls"], case["kwargs"])
                return _torch_step(layer, case, _arrays(case), lambda: [w.value for w in layer.trainable_weights])
        else:
            from unison.keras import layers

            def make(case: dict[str, Any]) -> Any:
                layer = _build(layers, case["cls"], case["kwargs"])
                return _torch_step(
                    layer, case, _arrays(case), lambda: [p for p in layer.parameters() if p.requires_grad]
                )

    times: dict[str, tuple[float, float]] = {}
    for name in names:
        try:
            times[name] = _time(make(CASES[name]), steps)
        except Exception as e:  # report and go on: one broken case must not hide the others
            print(f"{kind} {name}: {type(e).__name__}: {e}", file=sys.stderr)
            times[name] = (float("nan"), float("nan"))
    return times


def _time(step: Any, steps: int) -> tuple[float, float]:
    """Median wall-clock and median process CPU seconds of ``steps`` calls, after two warm-ups."""
    step()  # warm-up (builds, traces, allocates)
    step()
    wall, cpu = [], []
    for _ in range(steps):
        start, start_cpu = time.perf_counter(), time.process_time()
        step()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def _select(args: argparse.Namespace) -> list[str]:
    if args.layers:
        names = []
        for want in args.layers.split(","):
            found = [n for n in CASES if n == want or n.split(" ")[0] == want]
            if not found:
                raise SystemExit(f"--layers: unknown layer {want!r}; expected names among: {', '.join(CASES)}")
            names += [n for n in found if n not in names]
        return names
    return list(QUICK) if args.quick else list(CASES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=SYSTEMS)
    parser.add_argument("--names", help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="a few layers, one round, 3 steps")
    parser.add_argument("--layers", help="comma-separated case names or Keras class names")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.worker, args.names.split(","), args.steps, args.threads)))
        return
    names = _select(args)
    repeats, steps = (1, 3) if args.quick else (args.repeats, args.steps)
    print("command:", " ".join(["python", *sys.argv]))
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    rounds: dict[str, dict[str, list[list[float]]]] = {s: {} for s in SYSTEMS}
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    for r in range(repeats):
        for kind in SYSTEMS[r % 3 :] + SYSTEMS[: r % 3]:  # rotate the order round by round
            cmd = [sys.executable, __file__, "--worker", kind, "--names", ",".join(names)]
            cmd += ["--steps", str(steps), "--threads", str(args.threads)]
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if done.returncode != 0:
                raise SystemExit(f"worker {kind} failed:\n{done.stderr[-4000:]}")
            failures = [line for line in done.stderr.splitlines() if line.startswith(kind + " ")]
            print("\n".join(failures[:40]), file=sys.stderr) if failures and r == 0 else None
            for name, seconds in json.loads(done.stdout.strip().splitlines()[-1]).items():
                rounds[kind].setdefault(name, []).append(seconds)
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(
        "\nms: median over rounds of each round's median wall-clock step; the CPU ratio compares process"
        " CPU time per step, which the load of a shared machine disturbs less than wall-clock time."
    )
    print(
        "\n| layer (forward + backward) | unison ms | Keras/TF ms | Keras/torch ms | unison / min(Keras) | CPU ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    figures = {}
    for name in names:
        ms = {s: statistics.median(t[0] for t in rounds[s][name]) * 1e3 for s in SYSTEMS}
        cpu = {s: statistics.median(t[1] for t in rounds[s][name]) * 1e3 for s in SYSTEMS}
        ratio = ms["unison"] / min(ms["keras-tf"], ms["keras-torch"])
        cpu_ratio = cpu["unison"] / min(cpu["keras-tf"], cpu["keras-torch"])
        figures[name] = {**ms, "ratio": ratio, "cpu_ms": cpu, "cpu_ratio": cpu_ratio}
        flag = " **" if ratio > 1.5 else ""
        print(
            f"| {name} | {ms['unison']:.2f} | {ms['keras-tf']:.2f} | {ms['keras-torch']:.2f} | {ratio:.2f}{flag}"
            f" | {cpu_ratio:.2f} |"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
