"""The TensorFlow baseline of ``unison bench``: the same model and data on TF's MirroredStrategy.

Run by file path with a Python that has TensorFlow (the current one, or ``$UNISON_TF_PYTHON``);
it imports only TensorFlow, numpy and the standard library, never unison or torch, so that
Python needs nothing else. On a CPU-only host TF sees one CPU device; it is split into N
logical devices (``/cpu:0`` .. ``/cpu:N-1``), one replica each, all in this one process and
sharing TF's thread pools. On a GPU host: one replica per GPU.

Writes ``<result-dir>/rank0.json`` with the fields of ``unison.bench._worker``'s results.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from typing import Any

T_PROCESS = time.time()


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=["cnn", "mlp"], required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--input-shape", required=True, type=lambda s: tuple(int(d) for d in s.split(",")))
    p.add_argument("--replicas", type=int, required=True)
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--epochs", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--result-dir", required=True)
    return p.parse_args()


def _model(tf: Any, name: str) -> Any:  # real TensorFlow, which ships no type information
    layers = tf.keras.layers
    if name == "cnn":
        return tf.keras.Sequential(
            [
                tf.keras.Input(shape=(28, 28, 1)),
                layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
                layers.MaxPooling2D(pool_size=(2, 2)),
                layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
                layers.MaxPooling2D(pool_size=(2, 2)),
                layers.Flatten(),
                layers.Dropout(0.5),
                layers.Dense(10, activation="softmax"),
            ]
        )
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(784,)),
            layers.Dense(128, activation="relu"),
            layers.Dense(10, activation="softmax"),
        ]
    )


def main() -> None:
    args = _args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    if args.device == "cpu":
        cpu = tf.config.list_physical_devices("CPU")[0]
        if args.replicas > 1:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(args.replicas)]
            )
        tf.config.set_visible_devices([], "GPU")
    devices = [f"/{args.device}:{i}" for i in range(args.replicas)]
    strategy = tf.distribute.MirroredStrategy(devices)
    with strategy.scope():
        model = _model(tf, args.model)
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    t_data = time.time()
    with np.load(args.data) as f:
        x = f["x_train"].reshape(-1, *args.input_shape).astype("float32") / 255.0
        x_val = f["x_test"].reshape(-1, *args.input_shape).astype("float32") / 255.0
        y, y_val = f["y_train"].astype("int64"), f["y_test"].astype("int64")
    data_s = time.time() - t_data

    class EpochTimer(tf.keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.times: list[float] = []
            self.logs: dict[str, float] = {}

        def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self.t0 = time.perf_counter()

        def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
            self.times.append(time.perf_counter() - self.t0)
            self.logs = {k: float(v) for k, v in (logs or {}).items()}

    timer = EpochTimer()
    t_train = time.time()
    model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, verbose=0, callbacks=[timer])
    t_eval = time.perf_counter()
    val = model.evaluate(x_val, y_val, batch_size=args.batch_size, verbose=0, return_dict=True)
    eval_s = time.perf_counter() - t_eval
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {
        "system": "tensorflow",
        "rank": 0,
        "world_size": strategy.num_replicas_in_sync,
        "strategy": "MirroredStrategy",
        "device": ",".join(devices),
        "threads": tf.config.threading.get_intra_op_parallelism_threads() or "tf-default",
        "startup_s": t_train - float(os.environ.get("UNISON_BENCH_T0", T_PROCESS)),
        "data_s": data_s,
        "epoch_times_s": timer.times,
        "eval_s": eval_s,
        "train_loss": timer.logs.get("loss"),
        "train_accuracy": timer.logs.get("accuracy"),
        "val_loss": float(val["loss"]),
        "val_accuracy": float(val["accuracy"]),
        "peak_rss_mb": rss / (1024.0 * 1024.0) if sys.platform == "darwin" else rss / 1024.0,
        "pid": os.getpid(),
        "tensorflow": tf.__version__,
    }
    path = os.path.join(args.result_dir, "rank0.json")
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
