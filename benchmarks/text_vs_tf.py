"""``TextVectorization`` over a dataset of lines, unison vs TensorFlow/Keras, side by side (issue 39).

What a text program does with its data::

    ds = tf.data.TextLineDataset(path).batch(256)
    layer = keras.layers.TextVectorization(max_tokens=20000, output_sequence_length=64)
    layer.adapt(ds)                                   # "adapt": lines/s of learning the vocabulary
    for ids in ds.map(layer).prefetch(AUTOTUNE): ...  # "vectorize": lines/s of turning lines into ids

over ``--lines`` generated lines (``--words`` words each on average, Zipf-distributed over a
10,000-word vocabulary, with capitals and punctuation so that standardisation has work to do).
Each system runs in its own subprocess (unison with ``PYTHONPATH`` at this checkout's ``src``, TF
with ``--tf-python``, this Python by default): one warm-up pass, then the timed ones; the systems
alternate within each repeat (ABBA), each figure is the median of ``--repeats`` runs, and the load
average is printed with every run. The command is printed. Both sides' results are checked to be
the same vocabulary and the same ids (on the first 512 lines).

    python benchmarks/text_vs_tf.py --lines 50000 --repeats 5 [--mode int|multi_hot] [--tf-python PY]
"""

from __future__ import annotations

import argparse
import hashlib
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


def make_lines(path: str, lines: int, words: int) -> None:
    """``lines`` lines of Zipf-distributed words with capitals and punctuation (made once per setting)."""
    import numpy as np

    if os.path.exists(path):
        return
    rng = np.random.default_rng(39)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, int(rng.integers(2, 10)))) for _ in range(10_000)]
    vocab = [w.capitalize() if i % 7 == 0 else w for i, w in enumerate(vocab)]
    punct = ["", "", "", "", ",", ".", "!", "?", ";", "'s", '"']
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        for _ in range(lines):
            n = max(1, int(rng.poisson(words)))
            ids = np.minimum(rng.zipf(1.3, n) - 1, len(vocab) - 1)
            marks = rng.integers(0, len(punct), n)
            out.write(" ".join(vocab[i] + punct[m] for i, m in zip(ids, marks)) + "\n")
    os.replace(path + ".tmp", path)


def worker(system: str, path: str, batch: int, mode: str, max_tokens: int, length: int) -> None:
    """One system's run: adapt and vectorise, each a warm-up pass then a timed one; prints a JSON line."""
    if system == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        keras = tf.keras
    else:
        import unison as tf
        from unison import keras

    def lines() -> object:
        return tf.data.TextLineDataset(path).batch(batch)

    def new_layer() -> object:
        if mode == "int":
            return keras.layers.TextVectorization(max_tokens=max_tokens, output_sequence_length=length)
        return keras.layers.TextVectorization(max_tokens=max_tokens, output_mode=mode)

    count = sum(int(b.shape[0]) for b in lines())
    new_layer().adapt(lines())  # warm-up
    layer = new_layer()
    start = time.perf_counter()
    layer.adapt(lines())
    adapt_s = time.perf_counter() - start
    for _ in lines().map(layer).prefetch(tf.data.AUTOTUNE):  # warm-up
        pass
    start = time.perf_counter()
    for _ in lines().map(layer).prefetch(tf.data.AUTOTUNE):
        pass
    call_s = time.perf_counter() - start
    vocab = [t.decode() if isinstance(t, bytes) else str(t) for t in layer.get_vocabulary()]
    first = next(iter(tf.data.TextLineDataset(path).batch(512)))
    ids = layer(first).numpy()
    print(
        json.dumps(
            {
                "system": system,
                "lines": count,
                "adapt_lines_per_s": count / adapt_s,
                "call_lines_per_s": count / call_s,
                "vocab_sha": hashlib.sha256("\n".join(vocab).encode()).hexdigest()[:16],
                "ids_sha": hashlib.sha256(ids.astype("float64").tobytes()).hexdigest()[:16],
            }
        )
    )


def run(python: str, system: str, args: argparse.Namespace, path: str) -> dict:
    env = dict(os.environ)
    if system == "unison":
        env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [python, os.path.abspath(__file__), "--worker", system, "--file", path, "--batch", str(args.batch)]
    cmd += ["--mode", args.mode, "--max-tokens", str(args.max_tokens), "--length", str(args.length)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{system} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--words", type=int, default=20, help="mean words per line")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--mode", default="int", choices=("int", "multi_hot", "count", "tf_idf"))
    parser.add_argument("--max-tokens", type=int, default=20_000)
    parser.add_argument("--length", type=int, default=64, help="output_sequence_length (int mode)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--file", default=None, help="the text file (generated when missing)")
    parser.add_argument("--tf-python", default=sys.executable, help="a Python with TensorFlow (default: this one)")
    parser.add_argument("--worker", choices=("unison", "tf"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    path = args.file or os.path.join(tempfile.gettempdir(), f"unison-text-bench-{args.lines}-{args.words}.txt")
    if args.worker:
        worker(args.worker, path, args.batch, args.mode, args.max_tokens, args.length)
        return
    print("$ " + shlex.join([sys.executable, *sys.argv]), flush=True)
    make_lines(path, args.lines, args.words)
    results: dict[str, list[dict]] = {"unison": [], "tf": []}
    loads: list[float] = []
    for repeat in range(args.repeats):
        order = ("unison", "tf") if repeat % 2 == 0 else ("tf", "unison")  # ABBA: drift hits both alike
        for system in order:
            python = args.tf_python if system == "tf" else sys.executable
            result = run(python, system, args, path)
            results[system].append(result)
            loads.append(os.getloadavg()[0])
            print(
                f"repeat {repeat + 1}: {system:6s} adapt {result['adapt_lines_per_s']:9.0f} lines/s, "
                f"vectorize {result['call_lines_per_s']:9.0f} lines/s (load {loads[-1]:.1f})",
                flush=True,
            )
    same_vocab = results["unison"][0]["vocab_sha"] == results["tf"][0]["vocab_sha"]
    same_ids = results["unison"][0]["ids_sha"] == results["tf"][0]["ids_sha"]
    print(
        f"\n{args.lines} lines of ~{args.words} words, batch {args.batch}, output_mode={args.mode}, "
        f"max_tokens={args.max_tokens}, {os.cpu_count()} CPUs, load average {min(loads):.1f}-{max(loads):.1f}, "
        f"median of {args.repeats} interleaved repeats; same vocabulary: {same_vocab}, same ids: {same_ids}\n"
    )
    print("| step | unison lines/s | TF lines/s | unison / TF (median of per-repeat ratios) |\n|---|---:|---:|---:|")
    for key, label in (("adapt_lines_per_s", "adapt"), ("call_lines_per_s", "vectorize (ds.map(layer))")):
        mine = [r[key] for r in results["unison"]]
        theirs = [r[key] for r in results["tf"]]
        ratio = statistics.median(m / t for m, t in zip(mine, theirs))
        print(f"| {label} | {statistics.median(mine):.0f} | {statistics.median(theirs):.0f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
