"""The GPU check: one script that a session lent a GPU runs first, within 10 minutes on one GPU.

It writes one JSON file of figures (``--out``) and prints them:

1. ``tests``: the tests that exercise CUDA (and NCCL at world size 1), run with pytest on the GPU;
   their pass/fail/skip counts and the failures' names.
2. ``cnn``: the seed exercise's CNN (keras.io's MNIST convnet) trained with ``model.fit`` under
   ``MirroredStrategy()`` (all visible GPUs) until its test accuracy reaches 99% (at most
   ``--cnn-epochs`` epochs): seconds per epoch, seconds to 99%, the final accuracy.
3. ``gpt``: tokens/s of the small GPT of examples/gpt.py, float32 and bfloat16, under unison's
   ``fit`` and under a plain PyTorch loop with ``DistributedDataParallel`` (world size 1, NCCL on a
   GPU), the two taking turns in one process so that the machine's noise hits both alike.

``--dry-run`` runs every line that does not need a GPU, on the CPU, at toy sizes (CI runs it:
tests/unit/test_gpu_check.py), so the script is known to work before a GPU is ever lent.

    bash benchmarks/gpu_check.sh                     # on the GPU machine: installs what is missing, runs all
    PYTHONPATH=src python benchmarks/gpu_check.py --dry-run --out /tmp/gpu_check.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# Test files whose CUDA paths run when a GPU is present (they skip those parts, or the CPU-only
# checks, otherwise).
GPU_TESTS = [
    "tests/unit/test_keras_ops_gpu.py",
    "tests/unit/test_devices_and_placement.py",
    "tests/unit/test_tf_ops.py",
    "tests/unit/test_cluster.py",
    "tests/distributed/test_missing_gpus.py",
]


def device_info() -> dict[str, Any]:
    """What machine the figures come from."""
    import torch

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda_available": torch.cuda.is_available(),
        "cpu_count": os.cpu_count(),
    }
    if torch.cuda.is_available():
        info.update(
            gpu=torch.cuda.get_device_name(0),
            gpu_count=torch.cuda.device_count(),
            cuda=torch.version.cuda,
            nccl=".".join(map(str, torch.cuda.nccl.version())),
        )
    return info


def run_tests(timeout: float) -> dict[str, Any]:
    """pytest on the CUDA-exercising test files; counts parsed from its summary line."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=-ra", *GPU_TESTS]
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
        out, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out, code = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), -1
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|error|errors)", out)}
    return {
        "command": " ".join(cmd),
        "exit_code": code,
        "seconds": round(time.perf_counter() - start, 1),
        "counts": counts,
        "failures": re.findall(r"^(?:FAILED|ERROR) (\S+)", out, flags=re.M),
    }


def load_mnist(samples: int | None) -> tuple[Any, Any, Any, Any]:
    """MNIST as the convnet example shapes it: (N, 28, 28, 1) floats in [0, 1]."""
    from unison.keras.datasets import mnist

    (x, y), (xt, yt) = mnist.load_data()
    if samples:
        x, y, xt, yt = x[:samples], y[:samples], xt[: samples // 6], yt[: samples // 6]
    x = (x.astype("float32") / 255)[..., None]
    xt = (xt.astype("float32") / 255)[..., None]
    return x, y, xt, yt


def run_cnn(epochs: int, samples: int | None, batch_size: int, target: float) -> dict[str, Any]:
    """keras.io's MNIST convnet under MirroredStrategy() until test accuracy >= target."""
    import unison as tf
    from unison import keras
    from unison.keras import layers

    x, y, xt, yt = load_mnist(samples)
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = keras.Sequential(
            [
                keras.Input(shape=(28, 28, 1)),
                layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
                layers.MaxPooling2D(pool_size=(2, 2)),
                layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
                layers.MaxPooling2D(pool_size=(2, 2)),
                layers.Flatten(),
                layers.Dropout(0.5),
                layers.Dense(10, activation="softmax"),
            ]
        )
        model.compile(loss="sparse_categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    epoch_seconds, accuracies, reached = [], [], None
    start = time.perf_counter()
    for _ in range(epochs):
        t0 = time.perf_counter()
        model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0)
        epoch_seconds.append(time.perf_counter() - t0)
        accuracies.append(float(model.evaluate(xt, yt, batch_size=1000, verbose=0)[1]))
        if accuracies[-1] >= target and reached is None:
            reached = time.perf_counter() - start
            break
    return {
        "device": str(strategy.extended.device),
        "replicas": strategy.num_replicas_in_sync,
        "batch_size": batch_size,
        "epoch_seconds": [round(s, 2) for s in epoch_seconds],
        "test_accuracy": accuracies,
        "target": target,
        "seconds_to_target": None if reached is None else round(reached, 2),
    }


def _gpt_data(seq_len: int, batch: int, steps: int) -> tuple[Any, Any]:
    import torch

    sys.path.insert(0, os.path.join(REPO, "examples"))
    from gpt import make_sequences, read_corpus

    x, y = make_sequences(read_corpus(max(seq_len * batch * (steps + 2), 100_000)), seq_len)
    return torch.from_numpy(x), torch.from_numpy(y)


def run_gpt(args: argparse.Namespace) -> dict[str, Any]:
    """Tokens/s of fit vs a DDP loop, float32 and bfloat16, taking turns in one process."""
    import torch
    import torch.distributed as dist

    results: dict[str, Any] = {"batch": args.gpt_batch, "seq_len": args.seq_len}
    if not dist.is_initialized():  # the DDP baseline: a world of one, NCCL on a GPU as DDP users run it
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(_free_port()))
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo", rank=0, world_size=1)
    try:
        for precision in ("float32", "mixed_bfloat16"):
            results[precision] = _gpt_pair(args, precision)
    finally:
        dist.destroy_process_group()
    return results


class _GPTRun:
    """One precision's two systems on the same data: unison's fit and a plain DDP loop."""

    def __init__(self, args: argparse.Namespace, precision: str) -> None:
        import torch
        from torch.nn.parallel import DistributedDataParallel

        import unison as tf
        from unison import keras

        sys.path.insert(0, os.path.join(REPO, "examples"))
        from gpt import GPT

        self.args, self.cuda = args, torch.cuda.is_available()
        self.device = torch.device("cuda", 0) if self.cuda else torch.device("cpu")
        self.x, self.y = _gpt_data(args.seq_len, args.gpt_batch, args.gpt_steps)
        shape = (256, args.seq_len, args.d_model, args.heads, args.layers)
        keras.mixed_precision.set_global_policy(precision)
        with tf.distribute.MirroredStrategy().scope():
            self.model = GPT(*shape)
            self.model.compile(
                optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.01),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            )
        self.model.build((1, args.seq_len))
        keras.mixed_precision.set_global_policy("float32")
        torch.manual_seed(0)
        plain = GPT(*shape)
        plain.build((1, args.seq_len))
        self.ddp = DistributedDataParallel(plain.to(self.device), device_ids=[0] if self.cuda else None)
        self.opt = torch.optim.AdamW(self.ddp.parameters(), lr=1e-3, weight_decay=0.01)
        self.autocast = torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=precision == "mixed_bfloat16")
        self.stamps: list[float] = []

    def _sync(self) -> None:
        import torch

        if self.cuda:
            torch.cuda.synchronize()

    def fit_round(self) -> float:
        """Median step time of one ``fit`` of ``--gpt-steps`` steps (stamped at each batch end)."""
        from unison import keras

        run = self

        class Clock(keras.callbacks.Callback):
            def needs_batch_logs(self) -> bool:
                return False

            def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
                run._sync()
                run.stamps.append(time.perf_counter())

        self.stamps.clear()
        n = (self.args.gpt_steps + 1) * self.args.gpt_batch
        self.model.fit(
            self.x[:n].numpy(),
            self.y[:n].numpy(),
            batch_size=self.args.gpt_batch,
            epochs=1,
            shuffle=False,
            verbose=0,
            callbacks=[Clock()],
        )
        return statistics.median(b - a for a, b in zip(self.stamps, self.stamps[1:]))

    def ddp_round(self) -> float:
        """Median step time of ``--gpt-steps`` steps of the plain DDP loop."""
        import torch.nn.functional as F

        times, batch = [], self.args.gpt_batch
        for step in range(self.args.gpt_steps):
            rows = slice(step * batch, (step + 1) * batch)
            xb, yb = self.x[rows].to(self.device), self.y[rows].to(self.device)
            t0 = time.perf_counter()
            with self.autocast:
                logits = self.ddp(xb)
            loss = F.cross_entropy(logits.float().reshape(-1, 256), yb.reshape(-1))
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self._sync()
            times.append(time.perf_counter() - t0)
        return statistics.median(times[1:])


def _gpt_pair(args: argparse.Namespace, precision: str) -> dict[str, Any]:
    run = _GPTRun(args, precision)
    fit_times, ddp_times = [], []
    for round_ in range(args.rounds + 1):  # round 0 warms both up and is not counted
        f, d = run.fit_round(), run.ddp_round()
        if round_:
            fit_times.append(f)
            ddp_times.append(d)
    fit_s, ddp_s = statistics.median(fit_times), statistics.median(ddp_times)
    tokens = args.gpt_batch * args.seq_len
    return {
        "unison_fit_tokens_per_s": round(tokens / fit_s),
        "ddp_tokens_per_s": round(tokens / ddp_s),
        "fit_over_ddp_step_time": round(fit_s / ddp_s, 3),
        "device": str(run.device),
    }


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results", "gpu_check.json"))
    parser.add_argument("--dry-run", action="store_true", help="CPU, toy sizes: every line that needs no GPU")
    parser.add_argument("--skip", default="", help="comma-separated sections to skip: tests,cnn,gpt")
    parser.add_argument("--cnn-epochs", type=int, default=15)
    parser.add_argument("--cnn-target", type=float, default=0.99)
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--gpt-batch", type=int, default=32)
    parser.add_argument("--gpt-steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tests-timeout", type=float, default=240)
    args = parser.parse_args(argv)
    samples = None
    if args.dry_run:
        args.cnn_epochs, args.cnn_target, samples = 1, 0.0, 1200
        args.seq_len, args.d_model, args.heads, args.layers = 16, 32, 2, 1
        args.gpt_batch, args.gpt_steps, args.rounds = 4, 3, 1
    skip = {s for s in args.skip.split(",") if s}
    report: dict[str, Any] = {"dry_run": args.dry_run, "machine": device_info()}
    if not args.dry_run and not report["machine"]["cuda_available"]:
        raise SystemExit("gpu_check: torch sees no CUDA device; run with --dry-run on a machine without a GPU.")
    sections = {
        "tests": lambda: run_tests(args.tests_timeout),
        "cnn": lambda: run_cnn(args.cnn_epochs, samples, 128, args.cnn_target),
        "gpt": lambda: run_gpt(args),
    }
    for name, section in sections.items():
        if name in skip:
            continue
        t0 = time.perf_counter()
        try:
            report[name] = section()
        except Exception as e:  # one section's failure must not lose the others' figures
            report[name] = {"error": f"{type(e).__name__}: {e}"}
        report[name]["section_seconds"] = round(time.perf_counter() - t0, 1)
        print(f"gpu_check {name}: {json.dumps(report[name])}", flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"gpu_check: wrote {args.out}")
    return report


if __name__ == "__main__":
    main()
