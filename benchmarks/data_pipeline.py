"""unison.data speed, side by side in one run (issue 14).

1. The seed program's ``fit`` (MLP on MNIST, batch 32, one epoch) on
   ``tf.data.Dataset.from_tensor_slices((x, y)).shuffle(60000).batch(32)`` vs on the arrays.
   Target: tf.data / arrays <= 1.05.
2. A per-element ``map`` doing a real transform (pad to 32x32, random 28x28 crop, random
   horizontal flip, on MNIST images) then ``batch(64)`` and ``prefetch``: samples/s of unison.data
   with ``num_parallel_calls=AUTOTUNE`` (which fuses map and batch into worker processes here) vs
   ``torch.utils.data.DataLoader(num_workers=2)`` on the same transform. Target: >= 1.0. Beside:
   unison with threads only (``options.threading.worker_processes = 0``) and the vectorised
   form (``batch`` then one ``map`` over the whole batch, as TF's docs recommend).
3. Where a Python with TensorFlow is given (``--tf-python``), the same pipelines on TF's tf.data.

Every figure is the median of ``--repeats`` runs; the systems alternate within each repeat (the
two unison fits in ABBA order), and each ratio is also given as the median of the per-repeat
ratios (runs of one repeat are seconds apart, so a shared machine's load hits both alike). The
map rows also give the CPU time of all processes (consumer and workers) per sample, which load
from other programs barely changes.

    UNISON_DATA_DIR=/work/shared/data PYTHONPATH=src python benchmarks/data_pipeline.py \\
        --repeats 3 --tf-python /path/to/python-with-tensorflow --out benchmarks/results/data_pipeline.md
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def load_mnist() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    import unison as tf

    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    return x_train, y_train, x_test, y_test


# --- 1. fit: tf.data vs arrays ---------------------------------------------------------------------
def fit_epoch(x: np.ndarray, y: np.ndarray, pipeline: bool) -> float:
    import unison as tf

    torch.manual_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(128, activation="relu", input_shape=(784,)),
            tf.keras.layers.Dense(10, activation="softmax"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    data = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(60000).batch(32) if pipeline else None
    start = time.perf_counter()
    if pipeline:
        model.fit(data, epochs=1, verbose=0)
    else:
        model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    return time.perf_counter() - start


# --- 2. a per-element transform --------------------------------------------------------------------
def augment(image: torch.Tensor, label: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad 28x28 to 32x32, take a random 28x28 crop, flip left-right with probability 1/2."""
    padded = torch.nn.functional.pad(image.float().div_(255.0), (2, 2, 2, 2))
    i, j = (int(v) for v in torch.randint(0, 5, (2,)))
    crop = padded[i : i + 28, j : j + 28]
    if torch.rand(()) < 0.5:
        crop = crop.flip(1)
    return crop.contiguous(), label


def augment_batch(images: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`augment` on a whole batch at once: one random crop and flip per image, vectorised."""
    n = images.shape[0]
    padded = torch.nn.functional.pad(images.float().div_(255.0), (2, 2, 2, 2))
    i, j = torch.randint(0, 5, (2, n))
    flip = torch.rand(n) < 0.5
    steps = torch.arange(28)
    rows = (i[:, None] + steps)[:, :, None]
    cols = j[:, None] + torch.where(flip[:, None], 27 - steps, steps)
    return padded[torch.arange(n)[:, None, None], rows, cols[:, None, :]], labels


class AugmentedMNIST(torch.utils.data.Dataset):
    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y.astype("int64"))

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return augment(self.x[i], self.y[i])


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the workers, once joined)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _throughput(make: Any) -> tuple[float, float]:
    """(samples/s, CPU microseconds per sample over all processes) of one pass over ``make()``.

    The clock starts before the iterator is made, so starting worker processes (DataLoader's in
    ``iter()``, unison's at the first batch) counts for both.
    """
    gc.collect()
    cpu, start, n = _cpu_seconds(), time.perf_counter(), 0
    batches = make()
    for xb, _ in batches:
        n += len(xb)
    wall = time.perf_counter() - start
    del batches
    gc.collect()
    time.sleep(0.05)  # the workers are joined when the iterator ends; let the accounting settle
    return n / wall, (_cpu_seconds() - cpu) / n * 1e6


def unison_map(
    x: np.ndarray, y: np.ndarray, batch: int, processes: int | None = None, vectorised: bool = False
) -> tuple[float, float]:
    import unison as tf

    options = tf.data.Options()
    options.threading.worker_processes = processes  # None: AUTOTUNE decides, 0: threads
    ds = tf.data.Dataset.from_tensor_slices((x, y.astype("int64"))).shuffle(len(x))
    if vectorised:
        ds = ds.batch(batch).map(augment_batch, num_parallel_calls=tf.data.AUTOTUNE)
    else:
        ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE).batch(batch)
    ds = ds.prefetch(tf.data.AUTOTUNE).with_options(options)
    return _throughput(lambda: iter(ds))


def torch_loader(x: np.ndarray, y: np.ndarray, batch: int, workers: int) -> tuple[float, float]:
    loader = torch.utils.data.DataLoader(
        AugmentedMNIST(x, y),
        batch_size=batch,
        shuffle=True,
        num_workers=workers,
        prefetch_factor=2 if workers else None,
    )
    return _throughput(lambda: iter(loader))


TF_PROGRAM = r"""
import json, resource, sys, time, numpy as np, tensorflow as tf
data = np.load(sys.argv[1]); x, y = data["x"], data["y"]; n_map = int(sys.argv[2]); which = sys.argv[3]
if which == "fit":
    out = {}
    for pipeline in (True, False):
        tf.keras.utils.set_random_seed(0)
        m = tf.keras.Sequential([tf.keras.layers.Input((784,)), tf.keras.layers.Dense(128, activation="relu"),
                                 tf.keras.layers.Dense(10, activation="softmax")])
        m.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        xf = x.reshape(-1, 784).astype("float32") / 255
        t = time.perf_counter()
        if pipeline:
            m.fit(tf.data.Dataset.from_tensor_slices((xf, y)).shuffle(60000).batch(32), epochs=1, verbose=0)
        else:
            m.fit(xf, y, batch_size=32, epochs=1, verbose=0)
        out["tfdata" if pipeline else "arrays"] = time.perf_counter() - t
    print(json.dumps(out))
else:
    def aug(img, label):
        img = tf.pad(tf.cast(img, tf.float32) / 255.0, [[2, 2], [2, 2]])
        img = tf.image.random_crop(img, (28, 28))
        img = tf.image.random_flip_left_right(img[..., None])[..., 0]
        return img, label
    ds = (tf.data.Dataset.from_tensor_slices((x[:n_map], y[:n_map])).shuffle(n_map)
          .map(aug, num_parallel_calls=tf.data.AUTOTUNE).batch(64).prefetch(tf.data.AUTOTUNE))
    u = resource.getrusage(resource.RUSAGE_SELF)
    cpu, t, n = u.ru_utime + u.ru_stime, time.perf_counter(), 0
    for xb, _ in ds:
        n += len(xb)
    w = time.perf_counter() - t
    u = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"samples_per_s": n / w, "cpu_us": (u.ru_utime + u.ru_stime - cpu) / n * 1e6}))
"""


def run_tf(tf_python: str, npz: str, n_map: int, which: str) -> dict:
    out = subprocess.run(
        [tf_python, "-c", TF_PROGRAM, npz, str(n_map), which],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    if out.returncode:
        raise RuntimeError(f"TensorFlow run failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


MAP_SYSTEMS = {  # key: (label, run)
    "map_unison": ("unison AUTOTUNE (map+batch fused in worker processes)", lambda x, y: unison_map(x, y, 64)),
    "map_loader2": ("DataLoader(num_workers=2)", lambda x, y: torch_loader(x, y, 64, 2)),
    "map_unison_threads": (
        "unison AUTOTUNE, threads only (worker_processes=0)",
        lambda x, y: unison_map(x, y, 64, processes=0),
    ),
    "map_unison_vec": (
        "unison vectorised: batch(64).map(crop+flip of the whole batch)",
        lambda x, y: unison_map(x, y, 64, vectorised=True),
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--map-samples", type=int, default=20000, help="images through the map pipeline per run")
    parser.add_argument("--tf-python", default=None, help="a Python with tensorflow (TF's tf.data beside)")
    parser.add_argument("--skip-fit", action="store_true")
    parser.add_argument("--skip-map", action="store_true")
    parser.add_argument("--note", default="", help="a line about the machine's state, printed with the table")
    parser.add_argument("--out", default=None, help="write the Markdown table here (rewritten after every repeat)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch intra-op threads in this process (1: steady timings on a shared machine)",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
    x_train, y_train, _, _ = load_mnist()
    xf = x_train.reshape(-1, 784).astype("float32") / 255
    xm, ym = x_train[: args.map_samples], y_train[: args.map_samples]
    npz = None
    if args.tf_python:
        npz = "/tmp/unison_data_pipeline_mnist.npz"
        np.savez(npz, x=x_train, y=y_train.astype("int64"))
    res: dict[str, list[float]] = {}
    if not args.skip_fit:
        fit_epoch(xf, y_train, pipeline=True)  # warm-up: imports and first-call costs stay out of both
    for r in range(args.repeats):
        if not args.skip_fit:
            # ABBA: the order flips every repeat, so a machine whose load drifts favours neither
            for pipeline in (False, True) if r % 2 == 0 else (True, False):
                key = "fit_tfdata" if pipeline else "fit_arrays"
                res.setdefault(key, []).append(fit_epoch(xf, y_train, pipeline=pipeline))
            if npz:
                tf_fit = run_tf(args.tf_python, npz, args.map_samples, "fit")
                res.setdefault("tf_fit_tfdata", []).append(tf_fit["tfdata"])
                res.setdefault("tf_fit_arrays", []).append(tf_fit["arrays"])
        if not args.skip_map:
            keys = list(MAP_SYSTEMS)
            for key in keys[r % len(keys) :] + keys[: r % len(keys)]:  # rotate who goes first
                rate, cpu = MAP_SYSTEMS[key][1](xm, ym)
                res.setdefault(key, []).append(rate)
                res.setdefault(key + "_cpu", []).append(cpu)
            if npz:
                out = run_tf(args.tf_python, npz, args.map_samples, "map")
                res.setdefault("map_tf", []).append(out["samples_per_s"])
                res.setdefault("map_tf_cpu", []).append(out["cpu_us"])
        print(f"repeat {r + 1}/{args.repeats}: " + ", ".join(f"{k}={v[-1]:.2f}" for k, v in res.items()), flush=True)
        write_table(res, args, command, done=r + 1)


def _ratio(res: dict[str, list[float]], a: str, b: str) -> tuple[float, float, float]:
    """(ratio of the medians, median of the per-repeat ratios, lowest..highest per-repeat ratio)."""
    per = [x / y for x, y in zip(res[a], res[b])]
    return statistics.median(res[a]) / statistics.median(res[b]), statistics.median(per), min(per), max(per)


def write_table(res: dict[str, list[float]], args: argparse.Namespace, command: str, done: int) -> None:
    """Print the table of the medians so far (and write it to ``--out``)."""
    med = {k: statistics.median(v) for k, v in res.items()}
    lines = [
        "# unison.data pipeline benchmark",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} "
        f"({args.threads} intra-op thread(s) for unison); medians of {done} of {args.repeats} repeats (systems "
        "alternate within each repeat). " + args.note,
        "",
        "| measurement | unison | baseline | ratio of medians | median of per-repeat ratios (range) | target |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    if "fit_arrays" in med:
        r = _ratio(res, "fit_tfdata", "fit_arrays")
        lines.append(
            f"| seed fit, 1 epoch (s): tf.data pipeline vs arrays | {med['fit_tfdata']:.2f} | "
            f"{med['fit_arrays']:.2f} | {r[0]:.3f}x | {r[1]:.3f}x ({r[2]:.2f}..{r[3]:.2f}) | <= 1.05x |"
        )
    if "map_loader2" in med:
        for key, (label, _) in MAP_SYSTEMS.items():
            if key == "map_loader2":
                continue
            r = _ratio(res, key, "map_loader2")
            target = ">= 1.0x" if key == "map_unison" else "(beside)"
            lines.append(
                f"| map(crop+flip) samples/s: {label} vs DataLoader(num_workers=2) | {med[key]:.0f} | "
                f"{med['map_loader2']:.0f} | {r[0]:.2f}x | {r[1]:.2f}x ({r[2]:.2f}..{r[3]:.2f}) | {target} |"
            )
    if "map_tf" in med:
        r = _ratio(res, "map_unison", "map_tf")
        lines.append(
            f"| map(crop+flip) samples/s: unison AUTOTUNE vs TF tf.data AUTOTUNE (beside) | "
            f"{med['map_unison']:.0f} | {med['map_tf']:.0f} | {r[0]:.2f}x | {r[1]:.2f}x ({r[2]:.2f}..{r[3]:.2f}) | |"
        )
    if "tf_fit_tfdata" in med:
        r = _ratio(res, "tf_fit_tfdata", "tf_fit_arrays")
        lines.append(
            f"| TF's own seed fit, 1 epoch (s): tf.data vs arrays (beside) | {med['tf_fit_tfdata']:.2f} | "
            f"{med['tf_fit_arrays']:.2f} | {r[0]:.3f}x | {r[1]:.3f}x ({r[2]:.2f}..{r[3]:.2f}) | |"
        )
    cpu = [(k[:-4], v) for k, v in med.items() if k.endswith("_cpu")]
    if cpu:
        names = {**{k: v[0] for k, v in MAP_SYSTEMS.items()}, "map_tf": "TF tf.data AUTOTUNE"}
        lines += [
            "",
            "CPU time per sample of the map pipelines, all processes (consumer + workers), median:",
            "",
            "| pipeline | CPU us/sample |",
            "| --- | --- |",
        ]
        lines += [f"| {names.get(k, k)} | {v:.1f} |" for k, v in cpu]
    lines += ["", "Raw runs: `" + json.dumps({k: [round(v, 3) for v in vs] for k, vs in res.items()}) + "`", ""]
    table = "\n".join(lines)
    print(table)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(table)


if __name__ == "__main__":
    main()
