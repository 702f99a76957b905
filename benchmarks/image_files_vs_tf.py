"""The image-file pipeline, unison vs TensorFlow's tf.data, side by side (issues 34 and 39).

The pipelines every image-classification program that reads files has, over a folder of
``--images`` generated JPEGs of varied sizes (``--min-side``..``--max-side``, quality 90, smooth
blocks plus noise so they compress like photos):

* ``autotune``: ``list_files -> map(read_file -> decode_jpeg -> resize, AUTOTUNE) -> batch(32) -> prefetch``;
* ``one_thread``: the same with a sequential ``map`` and ``options.threading.private_threadpool_size = 1``,
  ``max_intra_op_parallelism = 1`` on both systems (TF's intra/inter-op pools at 1 thread too);
* ``augment``: ``autotune`` plus ``random_flip_left_right`` and a ``random_crop`` to 200x200;
* ``keras_dir``: ``keras.utils.image_dataset_from_directory(folder, labels=None, image_size=(224, 224))``.

Each system runs in one long-lived subprocess per configuration (unison with ``PYTHONPATH`` at this
checkout's ``src``, TF with ``--tf-python``, this Python by default; ``--baseline-src DIR`` adds a
third, unison at another checkout's ``src``, for a before/after table from the same run). In each
repeat every process runs one warm-up pass (threads started, files in the page cache) and one timed
pass; the order of the systems reverses every repeat (ABBA) and each figure is the median of
``--repeats`` runs: images/s (wall) and the process's CPU milliseconds per image (all its threads),
which a shared machine disturbs less. The load average is printed with every run, and the command.

    python benchmarks/image_files_vs_tf.py --images 2000 --repeats 5 [--configs autotune,one_thread] [--tf-python PY]
        [--baseline-src OTHER_CHECKOUT/src]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")


def make_images(folder: str, count: int, min_side: int, max_side: int) -> None:
    """``count`` JPEGs of random sizes in ``folder`` (kept between runs: made once per setting)."""
    import numpy as np
    from PIL import Image

    marker = os.path.join(folder, f".made-{count}-{min_side}-{max_side}")
    if os.path.exists(marker):
        return
    rng = np.random.default_rng(34)
    for index in range(count):
        height, width = (int(v) for v in rng.integers(min_side, max_side + 1, 2))
        blocks = rng.integers(0, 256, (height // 16 + 1, width // 16 + 1, 3), dtype=np.uint8)
        image = np.kron(blocks, np.ones((16, 16, 1), np.uint8))[:height, :width]
        noise = rng.integers(0, 24, (height, width, 3), dtype=np.uint8)
        Image.fromarray(image // 2 + noise).save(os.path.join(folder, f"{index:06d}.jpg"), quality=90)
    open(marker, "w").close()


CONFIGS = ("autotune", "one_thread", "augment", "keras_dir")


def worker(system: str, folder: str, size: int, batch: int, one_thread: bool) -> None:
    """One system's process: for each configuration named on stdin, a warm-up pass, then a timed
    pass; prints a JSON line per configuration. The framework is imported once."""
    if system == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        if one_thread:  # TF's process-wide pools, fixed once made: a process of their own
            tf.config.threading.set_intra_op_parallelism_threads(1)
            tf.config.threading.set_inter_op_parallelism_threads(1)

        keras = tf.keras
    else:
        import unison as tf
        from unison import keras

    def load(path):  # noqa: ANN001, ANN202 - the same body runs on both
        image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
        return tf.image.resize(image, [size, size])

    def augment(path):  # noqa: ANN001, ANN202
        image = tf.image.random_flip_left_right(load(path))
        return tf.image.random_crop(image, [200, 200, 3])

    def dataset(config: str):  # noqa: ANN202
        if config == "keras_dir":
            return keras.utils.image_dataset_from_directory(
                folder, labels=None, image_size=(size, size), batch_size=batch, shuffle=False, verbose=False
            )
        ds = tf.data.Dataset.list_files(os.path.join(folder, "*.jpg"), shuffle=False)
        if config == "one_thread":
            options = tf.data.Options()
            options.threading.private_threadpool_size = 1
            options.threading.max_intra_op_parallelism = 1
            return ds.map(load).batch(batch).prefetch(tf.data.AUTOTUNE).with_options(options)
        fn = augment if config == "augment" else load
        return ds.map(fn, num_parallel_calls=tf.data.AUTOTUNE).batch(batch).prefetch(tf.data.AUTOTUNE)

    for line in sys.stdin:
        config = line.strip()
        for _ in dataset(config):  # warm-up: threads started, files in the page cache
            pass
        start, cpu, count = time.perf_counter(), time.process_time(), 0
        for images in dataset(config):
            count += int(images.shape[0])
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        result = {"system": system, "config": config, "images": count}
        result.update(images_per_s=count / seconds, cpu_ms_per_image=1e3 * cpu / count)
        print(json.dumps(result), flush=True)


class Worker:
    """A system's long-lived worker process, asked for one configuration at a time."""

    def __init__(
        self, python: str, system: str, src: str | None, args: argparse.Namespace, folder: str, config: str
    ) -> None:
        env = dict(os.environ)
        if src is not None:
            env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        kind = "tf" if system == "tf" else "unison"
        cmd = [python, os.path.abspath(__file__), "--worker", kind, "--dir", folder, "--size", str(args.size)]
        cmd += ["--batch", str(args.batch), "--configs", config]
        self.name = system
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, config: str) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(config + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} {config} failed (exit status {self.proc.wait()}); its stderr is above")
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def run(python: str, system: str, folder: str, size: int, batch: int, config: str) -> dict:
    env = dict(os.environ)
    if system == "unison":
        env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [python, os.path.abspath(__file__), "--worker", system, "--dir", folder, "--size", str(size)]
    cmd += ["--batch", str(batch), "--configs", config]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{system} {config} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--min-side", type=int, default=160)
    parser.add_argument("--max-side", type=int, default=640)
    parser.add_argument("--size", type=int, default=224, help="resize target (square)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}")
    parser.add_argument("--dir", default=None, help="folder of JPEGs (generated there when missing)")
    parser.add_argument("--tf-python", default=sys.executable, help="a Python with TensorFlow (default: this one)")
    parser.add_argument("--baseline-src", default=None, help="another checkout's src: a 'before' unison column")
    parser.add_argument("--worker", choices=("unison", "tf"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    folder = args.dir or os.path.join(tempfile.gettempdir(), "unison-image-files-bench")
    if args.worker:
        worker(args.worker, folder, args.size, args.batch, args.configs == "one_thread")
        return
    configs = [c for c in args.configs.split(",") if c]
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown:
        parser.error(f"unknown --configs {unknown}; choose from {list(CONFIGS)}")
    print("$ " + shlex.join([sys.executable, *sys.argv]), flush=True)
    os.makedirs(folder, exist_ok=True)
    make_images(folder, args.images, args.min_side, args.max_side)
    names = ["unison", "before", "tf"] if args.baseline_src else ["unison", "tf"]
    sources = {"unison": SRC, "before": args.baseline_src and os.path.abspath(args.baseline_src), "tf": None}
    results: dict[tuple[str, str], list[dict]] = {(c, s): [] for c in configs for s in names}
    loads: list[float] = []
    for config in configs:  # one process per system and configuration, all repeats in it
        systems = {
            n: Worker(args.tf_python if n == "tf" else sys.executable, n, sources[n], args, folder, config)
            for n in names
        }
        for repeat in range(args.repeats):
            order = names if repeat % 2 == 0 else names[::-1]  # ABBA: drift hits every system alike
            for system in order:
                result = systems[system].run(config)
                results[(config, system)].append(result)
                loads.append(os.getloadavg()[0])
                print(
                    f"repeat {repeat + 1}: {config:10s} {system:6s} {result['images_per_s']:8.1f} images/s "
                    f"{result['cpu_ms_per_image']:6.2f} CPU ms/image (load {loads[-1]:.1f})",
                    flush=True,
                )
        for proc in systems.values():
            proc.close()
    print(
        f"\n{args.images} JPEGs {args.min_side}-{args.max_side} px -> {args.size}x{args.size}, batch {args.batch}, "
        f"{os.cpu_count()} CPUs, load average {min(loads):.1f}-{max(loads):.1f}, median of {args.repeats} "
        "interleaved repeats:\n"
    )
    mine = [n for n in names if n != "tf"]
    head = "| configuration | " + " | ".join(f"{n} images/s" for n in names)
    head += " | " + " | ".join(f"{n} / TF (median of per-repeat ratios)" for n in mine)
    head += " | " + " | ".join(f"{n} CPU ms/image" for n in names) + " |"
    print(head)
    print("|---|" + "---:|" * (2 * len(names) + len(mine)))

    def med(rows: list[dict], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    for config in configs:
        theirs = results[(config, "tf")]
        cells = [f"{med(results[(config, n)], 'images_per_s'):.1f}" for n in names]
        for n in mine:
            ratios = [m["images_per_s"] / t["images_per_s"] for m, t in zip(results[(config, n)], theirs)]
            cells.append(f"{statistics.median(ratios):.2f}x")
        cells += [f"{med(results[(config, n)], 'cpu_ms_per_image'):.2f}" for n in names]
        print(f"| {config} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
