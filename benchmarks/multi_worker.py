"""MultiWorkerMirroredStrategy on this machine: 1 worker against 2 workers, seed MLP and MNIST CNN.

Each configuration is a fresh job started the way users start it: one worker is
``python multi_worker.py --worker ...`` (``MultiWorkerMirroredStrategy()`` with no cluster: one
worker, all cores); two workers are ``unison launch --tf-config --nproc-per-node 2 multi_worker.py
--worker ...`` (each process gets its own TF_CONFIG on 127.0.0.1 and half of the cores). The
programs are the seed program (``Dense(128) -> Dense(10)``, Adam, batch 32, validation on the
test set) and the Keras ``mnist_convnet`` CNN (from :mod:`unison.bench.models`, batch 128).
Systems are interleaved within each repeat so that machine noise hits them alike; the table
reports medians over repeats of the median epoch time (validation included), the training
samples per second that implies, and the final validation accuracy.

    python benchmarks/multi_worker.py                         # seed 5 epochs, CNN 2, 1 repeat
    python benchmarks/multi_worker.py --repeats 2 --out benchmarks/results/multi_worker.json \\
        --md benchmarks/results/multi_worker.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TRAIN_SAMPLES = 60_000
BATCH = {"mlp": 32, "cnn": 128}
TITLES = {"mlp": "seed program (MLP)", "cnn": "mnist_convnet (CNN)"}


# --- the program each worker runs ---------------------------------------------------------------------
def worker(model_name: str, epochs: int, out: str) -> None:
    """Train ``model_name`` under MultiWorkerMirroredStrategy(); the chief writes the timings."""
    import unison as tf
    from unison.bench.models import build_keras_model

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = build_keras_model(model_name)
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    shape = (-1, 784) if model_name == "mlp" else (-1, 28, 28, 1)
    x_train = x_train.reshape(shape).astype("float32") / 255
    x_test = x_test.reshape(shape).astype("float32") / 255

    class EpochTimer(tf.keras.callbacks.Callback):
        times: list[float] = []  # noqa: RUF012  # one timer per process

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            EpochTimer.times.append(time.perf_counter() - self.start)

    history = model.fit(
        x_train,
        y_train,
        batch_size=BATCH[model_name],
        epochs=epochs,
        validation_data=(x_test, y_test),
        verbose=2,
        callbacks=[EpochTimer()],
    )
    if strategy.extended.should_checkpoint:
        import torch

        result = {
            "epoch_s": EpochTimer.times,
            "val_accuracy": history.history["val_accuracy"],
            "accuracy": history.history["accuracy"],
            "replicas": strategy.num_replicas_in_sync,
            "threads": torch.get_num_threads(),
        }
        with open(out, "w") as fh:
            json.dump(result, fh)


# --- the runner ----------------------------------------------------------------------------------------
def command(model_name: str, workers: int, epochs: int, out: str) -> list[str]:
    program = [os.path.abspath(__file__), "--worker", "--model", model_name, "--epochs", str(epochs), "--result", out]
    if workers == 1:
        return [sys.executable, *program]
    return [sys.executable, "-m", "unison.cli", "launch", "--tf-config", "--nproc-per-node", str(workers), *program]


def run_once(
    model_name: str, workers: int, epochs: int, log_dir: str, tag: str, one_thread: bool = False
) -> dict[str, Any]:
    out = os.path.join(log_dir, f"{tag}.json")
    env = dict(os.environ)
    if one_thread:
        env["OMP_NUM_THREADS"] = "1"
    env.setdefault("UNISON_DATA_DIR", os.path.normpath(os.path.join(REPO, "..", "shared", "data")))
    env["PYTHONUNBUFFERED"] = "1"
    start = time.time()
    with open(os.path.join(log_dir, f"{tag}.log"), "w") as log:
        proc = subprocess.run(
            command(model_name, workers, epochs, out),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=3600,
            check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"{tag} failed (exit {proc.returncode}); see {log.name}")
    with open(out) as fh:
        result = json.load(fh)
    result["wall_s"] = time.time() - start
    return result


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    epoch_s = statistics.median(statistics.median(r["epoch_s"]) for r in runs)
    return {
        "epoch_s": epoch_s,
        "samples_per_s": TRAIN_SAMPLES / epoch_s,
        "val_accuracy": statistics.median(r["val_accuracy"][-1] for r in runs),
        "replicas": runs[0]["replicas"],
        "threads": runs[0]["threads"],
        "runs": runs,
    }


def table(results: dict[str, dict[Any, dict[str, Any]]], epochs: dict[str, int]) -> str:
    lines = [
        "| model | workers (replicas x threads) | epochs | time / epoch | samples/s | speed-up vs 1 worker "
        "| final val_accuracy |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for model_name, by_config in results.items():
        base = by_config[1]["epoch_s"]
        for config, s in by_config.items():
            workers = "1" if config == "1t" else str(config)
            label = f"{workers} ({s['replicas']} x {s['threads']} thread{'s' if s['threads'] > 1 else ''})"
            lines.append(
                f"| {TITLES[model_name]} | {label} | {epochs[model_name]} | {s['epoch_s']:.1f} s | "
                f"{s['samples_per_s']:,.0f} | {base / s['epoch_s']:.2f}x | {s['val_accuracy']:.4f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", choices=sorted(BATCH), help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--epochs", type=int, default=5, help="epochs of the seed program (default 5)")
    parser.add_argument("--cnn-epochs", type=int, default=2, help="epochs of the CNN (default 2)")
    parser.add_argument("--models", default="mlp,cnn", help="comma-separated: mlp, cnn")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--one-thread-control",
        action="store_true",
        help="also run 1 worker with OMP_NUM_THREADS=1 (isolates thread effects)",
    )
    parser.add_argument("--out", default=None, help="write every measurement as JSON here")
    parser.add_argument("--md", default=None, help="write the Markdown table here")
    args = parser.parse_args()
    if args.worker:
        worker(args.model, args.epochs, args.result)
        return
    models = args.models.split(",")
    epochs = {m: args.epochs if m == "mlp" else args.cnn_epochs for m in models}
    log_dir = tempfile.mkdtemp(prefix="unison-multi-worker-bench-")
    configs = [1, 2] + (["1t"] if args.one_thread_control else [])
    runs: dict[str, dict[Any, list[dict[str, Any]]]] = {m: {c: [] for c in configs} for m in models}
    load_before = os.getloadavg()
    started = time.time()
    for repeat in range(args.repeats):
        order = [(m, c) for m in models for c in (configs if repeat % 2 == 0 else configs[::-1])]
        for model_name, config in order:
            tag = f"{model_name}-{config}w-r{repeat}"
            workers = 1 if config == "1t" else int(config)
            result = run_once(model_name, workers, epochs[model_name], log_dir, tag, one_thread=config == "1t")
            runs[model_name][config].append(result)
            print(
                f"{tag}: median epoch {statistics.median(result['epoch_s']):.1f} s, "
                f"val_accuracy {result['val_accuracy'][-1]:.4f}",
                flush=True,
            )
    results = {m: {w: summarise(r) for w, r in by.items()} for m, by in runs.items()}
    md = table(results, epochs)
    cmd = "python benchmarks/multi_worker.py " + " ".join(a for a in sys.argv[1:])
    meta = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cores": len(os.sched_getaffinity(0)),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "total_s": time.time() - started,
        "command": cmd,
        "logs": log_dir,
    }
    print(md)
    print(json.dumps({k: v for k, v in meta.items() if k != "logs"}))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"meta": meta, "results": results}, fh, indent=1)
    if args.md:
        with open(args.md, "w") as fh:
            fh.write(md + "\n")


if __name__ == "__main__":
    main()
