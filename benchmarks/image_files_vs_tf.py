"""The image-file pipeline, unison vs TensorFlow's tf.data, side by side (issue 34).

The pipeline every image-classification program that reads files has::

    ds = tf.data.Dataset.list_files(folder + "/*.jpg", shuffle=False)
    ds = ds.map(load, num_parallel_calls=tf.data.AUTOTUNE)   # read_file -> decode_jpeg -> resize
    ds = ds.batch(32).prefetch(tf.data.AUTOTUNE)

over a folder of ``--images`` generated JPEGs of varied sizes (``--min-side``..``--max-side``,
quality 90, smooth blocks plus noise so they compress like photos). Each system runs in its own
subprocess (unison with ``PYTHONPATH`` at this checkout's ``src``, TF with ``--tf-python``, this
Python by default), one full pass per run after one warm-up pass; the systems alternate within
each repeat and each figure is the median images/s of ``--repeats`` runs. The command is printed.

    python benchmarks/image_files_vs_tf.py --images 2000 --repeats 3 [--tf-python /path/to/python]
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


def worker(system: str, folder: str, size: int, batch: int) -> None:
    """One system's run: a warm-up pass, then a timed pass; prints a JSON line."""
    if system == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
    else:
        import unison as tf

    def load(path):  # noqa: ANN001, ANN202 - the same body runs on both
        image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
        return tf.image.resize(image, [size, size])

    def dataset():  # noqa: ANN202
        ds = tf.data.Dataset.list_files(os.path.join(folder, "*.jpg"), shuffle=False)
        return ds.map(load, num_parallel_calls=tf.data.AUTOTUNE).batch(batch).prefetch(tf.data.AUTOTUNE)

    for _ in dataset():  # warm-up: workers started, files in the page cache
        pass
    start, count = time.perf_counter(), 0
    for images in dataset():
        count += int(images.shape[0])
    seconds = time.perf_counter() - start
    print(json.dumps({"system": system, "images": count, "seconds": seconds, "images_per_s": count / seconds}))


def run(python: str, system: str, folder: str, size: int, batch: int) -> dict:
    env = dict(os.environ)
    if system == "unison":
        env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [python, os.path.abspath(__file__), "--worker", system, "--dir", folder, "--size", str(size)]
    cmd += ["--batch", str(batch)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{system} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--min-side", type=int, default=160)
    parser.add_argument("--max-side", type=int, default=640)
    parser.add_argument("--size", type=int, default=224, help="resize target (square)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default=None, help="folder of JPEGs (generated there when missing)")
    parser.add_argument("--tf-python", default=sys.executable, help="a Python with TensorFlow (default: this one)")
    parser.add_argument("--worker", choices=("unison", "tf"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    folder = args.dir or os.path.join(tempfile.gettempdir(), "unison-image-files-bench")
    if args.worker:
        worker(args.worker, folder, args.size, args.batch)
        return
    print("$ " + shlex.join([sys.executable, *sys.argv]), flush=True)
    os.makedirs(folder, exist_ok=True)
    make_images(folder, args.images, args.min_side, args.max_side)
    figures: dict[str, list[float]] = {"unison": [], "tf": []}
    for repeat in range(args.repeats):
        order = ("unison", "tf") if repeat % 2 == 0 else ("tf", "unison")  # ABBA: drift hits both alike
        for system in order:
            python = args.tf_python if system == "tf" else sys.executable
            result = run(python, system, folder, args.size, args.batch)
            figures[system].append(result["images_per_s"])
            print(f"repeat {repeat + 1}: {system:6s} {result['images_per_s']:8.1f} images/s", flush=True)
    ratios = [u / t for u, t in zip(figures["unison"], figures["tf"])]
    print(
        f"\n{args.images} JPEGs {args.min_side}-{args.max_side} px -> {args.size}x{args.size}, batch {args.batch}, "
        f"num_parallel_calls=AUTOTUNE, {os.cpu_count()} CPUs, median of {args.repeats}:"
    )
    print("| system | images/s |\n|---|---:|")
    for system, values in figures.items():
        print(f"| {'unison' if system == 'unison' else 'TensorFlow tf.data'} | {statistics.median(values):.1f} |")
    print(f"unison / TF: {statistics.median(ratios):.3f} (median of per-repeat ratios)")


if __name__ == "__main__":
    main()
