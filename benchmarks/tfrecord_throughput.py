"""TFRecordDataset read throughput: unison vs TensorFlow on the same files (issue 25).

unison writes the files (``tf.io.TFRecordWriter`` of ``tf.train.Example`` records: a ~3 KB
image-like bytes feature, an int64 label and 16 floats; one uncompressed set, one GZIP set), then
both libraries read them in four configurations:

- ``raw``: ``tf.data.TFRecordDataset(files)``, the serialized records;
- ``parse``: the same ``.map(parse_single_example with a feature spec).batch(64)``;
- ``batch_parse``: the same ``.batch(64).map(parse_example with the spec)`` (TF's advice: vectorise the parse);
- ``gzip``: ``raw`` on the GZIP copies;
- ``parallel4``: ``raw`` with ``num_parallel_reads=4``;
- ``parse_varlen`` / ``batch_parse_varlen``: the two parse pipelines on a second set of files whose
  records vary in length (``VarLenFeature`` int64 ids of 0-30 multi-byte values, ``VarLenFeature``
  words of 0-5 strings, an int64 label): each batch becomes ``SparseTensor`` elements, and no two
  records share a layout (unison's per-record byte scan, not its one-layout batch path).

TensorFlow (``--tf-python``, TF 2.21 in its own venv) runs in one long-lived subprocess reading the
files unison wrote, so the run also checks byte compatibility: the record counts and the label sum
of both must agree. Both iterate the dataset from eager Python (``for x in ds``), both with one
compute thread (``OMP_NUM_THREADS=1``, torch threads 1, TF intra/inter-op threads 1) so that a
loaded machine slows both alike. Each round runs every configuration once per library; the library
order and the configuration order alternate between rounds; figures are medians over
``--repeats`` rounds after one untimed warm-up round.

    PYTHONPATH=src python benchmarks/tfrecord_throughput.py --repeats 5
    PYTHONPATH=src python benchmarks/tfrecord_throughput.py --unison-only --records 50 --repeats 1
    PYTHONPATH=src python benchmarks/tfrecord_throughput.py --profile parse   # cProfile of unison's loop
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
from typing import Any

CONFIGS = ("raw", "parse", "batch_parse", "gzip", "parallel4", "parse_varlen", "batch_parse_varlen")
DEFAULT_TF_PYTHON = sys.executable  # a Python with tensorflow (this one, when TF is installed beside unison)


def _pin_threads() -> None:
    # before torch / TF are imported: their thread pools read these at start-up
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def write_files(work: str, n_files: int, records: int) -> dict[str, list[str]]:
    """Write ``n_files`` plain and GZIP TFRecord files of ``records`` Examples each, with unison."""
    import numpy as np

    import unison

    tf: Any = unison  # its proto classes are built at run time, which mypy cannot see
    rng = np.random.default_rng(0)
    plain, gz = [], []
    for f in range(n_files):
        p, g = os.path.join(work, f"data-{f}.tfrecord"), os.path.join(work, f"data-{f}.tfrecord.gz")
        with tf.io.TFRecordWriter(p) as wp, tf.io.TFRecordWriter(g, "GZIP") as wg:
            for i in range(records):
                example = tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[rng.bytes(3072)])),
                            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[(f * records + i) % 10])),
                            "feats": tf.train.Feature(
                                float_list=tf.train.FloatList(value=rng.random(16, dtype=np.float32).tolist())
                            ),
                        }
                    )
                )
                data = example.SerializeToString()
                wp.write(data)
                wg.write(data)
        plain.append(p)
        gz.append(g)
    varlen = []
    for f in range(n_files):
        v = os.path.join(work, f"varlen-{f}.tfrecord")
        with tf.io.TFRecordWriter(v) as wv:
            for i in range(records):
                n_ids, n_words = int(rng.integers(0, 31)), int(rng.integers(0, 6))
                words = [rng.bytes(int(rng.integers(1, 12))) for _ in range(n_words)]
                feature = {
                    "ids": tf.train.Feature(
                        int64_list=tf.train.Int64List(value=rng.integers(0, 2**20, n_ids).tolist())
                    ),
                    "words": tf.train.Feature(bytes_list=tf.train.BytesList(value=words)),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[(f * records + i) % 10])),
                }
                wv.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
        varlen.append(v)
    return {"plain": plain, "gzip": gz, "varlen": varlen}


def run_config(tf: Any, files: dict[str, list[str]], config: str, graph: bool = False) -> dict[str, Any]:
    """Build and drain one pipeline with library ``tf`` (unison or TensorFlow); the same code for both."""
    start = time.perf_counter()
    cpu = time.process_time()  # every thread of the process: TF's tf.data threads count too
    n = 0
    label_sum = 0
    if config.startswith(("parse", "batch_parse")):
        if config.endswith("varlen"):
            paths = files["varlen"]
            spec = {
                "ids": tf.io.VarLenFeature(tf.int64),
                "words": tf.io.VarLenFeature(tf.string),
                "label": tf.io.FixedLenFeature([], tf.int64),
            }
        else:
            paths = files["plain"]
            spec = {
                "image": tf.io.FixedLenFeature([], tf.string),
                "label": tf.io.FixedLenFeature([], tf.int64),
                "feats": tf.io.FixedLenFeature([16], tf.float32),
            }
        if config.startswith("parse"):
            ds = tf.data.TFRecordDataset(paths).map(lambda r: tf.io.parse_single_example(r, spec)).batch(64)
        else:
            ds = tf.data.TFRecordDataset(paths).batch(64).map(lambda b: tf.io.parse_example(b, spec))
        if graph:  # TensorFlow only: consume inside one traced reduce, no per-element Python
            n = int(ds.reduce(tf.constant(0, tf.int64), lambda acc, b: acc + tf.shape(b["label"], tf.int64)[0]))
        else:
            for batch in ds:
                labels = batch["label"]
                n += int(labels.shape[0])
                label_sum += int(labels.numpy().sum())
    else:
        if config == "raw":
            ds = tf.data.TFRecordDataset(files["plain"])
        elif config == "gzip":
            ds = tf.data.TFRecordDataset(files["gzip"], compression_type="GZIP")
        elif config == "parallel4":
            ds = tf.data.TFRecordDataset(files["plain"], num_parallel_reads=4)
        else:
            raise ValueError(f"unknown configuration {config!r}; expected one of {CONFIGS}")
        if graph:
            n = int(ds.reduce(tf.constant(0, tf.int64), lambda acc, _: acc + 1))
        else:
            for _ in ds:
                n += 1
    seconds = time.perf_counter() - start
    return {"n": n, "seconds": seconds, "cpu_seconds": time.process_time() - cpu, "label_sum": label_sum}


def tf_worker(files_json: str) -> None:
    """The TensorFlow side: one config name per stdin line, one JSON result per stdout line."""
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    files = json.loads(files_json)
    print(json.dumps({"ready": tf.__version__}), flush=True)
    for line in sys.stdin:
        config, _, mode = line.strip().partition(" ")
        if not config:
            break
        print(json.dumps(run_config(tf, files, config, graph=mode == "graph")), flush=True)


class TFProcess:
    """A long-lived TensorFlow interpreter, so each measurement excludes TF's import."""

    def __init__(self, python: str, files: dict[str, list[str]]) -> None:
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__), "--tf-worker", json.dumps(files)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ, CUDA_VISIBLE_DEVICES=""),
        )
        self.version = self._read()["ready"]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the TensorFlow worker exited (code {self.proc.wait()}); see its stderr above")
        result: dict[str, Any] = json.loads(line)
        return result

    def run(self, config: str, graph: bool = False) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(config + (" graph" if graph else "") + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def profile_unison(files: dict[str, list[str]], config: str) -> None:
    import cProfile
    import pstats

    import unison as tf

    prof = cProfile.Profile()
    prof.enable()
    run_config(tf, files, config)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(15)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=4, help="number of TFRecord files (default 4)")
    parser.add_argument("--records", type=int, default=5000, help="records per file (default 5000)")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--tf-python", default=DEFAULT_TF_PYTHON, help="a Python with tensorflow")
    parser.add_argument("--unison-only", action="store_true", help="measure unison only (no TensorFlow)")
    parser.add_argument("--work", default=None, help="folder for the files (default: a temporary one)")
    parser.add_argument("--profile", choices=CONFIGS, default=None, help="cProfile unison's loop on one config")
    parser.add_argument("--tf-worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.tf_worker is not None:
        tf_worker(args.tf_worker)
        return {}
    if args.repeats < 1 or args.records < 1 or args.files < 1:
        parser.error("--repeats, --records and --files must be positive")

    import unison as tf

    command = "PYTHONPATH=src python benchmarks/" + " ".join(
        shlex.quote(a) for a in [os.path.basename(__file__), *(sys.argv[1:] if argv is None else argv)]
    )
    with tempfile.TemporaryDirectory(prefix="tfr_bench_") as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        t0 = time.perf_counter()
        files = write_files(work, args.files, args.records)
        write_s = time.perf_counter() - t0
        if args.profile:
            profile_unison(files, args.profile)
            return {}
        load_before = os.getloadavg()
        tf_proc = None if args.unison_only else TFProcess(args.tf_python, files)
        systems = ["unison"] + ([] if tf_proc is None else ["tf", "tf-graph"])
        results: dict[tuple[str, str], list[float]] = {(s, c): [] for s in systems for c in CONFIGS}
        cpu_results: dict[tuple[str, str], list[float]] = {(s, c): [] for s in systems for c in CONFIGS}
        expected = args.files * args.records
        try:
            for rnd in range(args.repeats + 1):  # round 0 is the warm-up and the compatibility check
                order = systems if rnd % 2 == 0 else systems[::-1]
                configs = CONFIGS if rnd % 2 == 0 else CONFIGS[::-1]
                for config in configs:
                    seen = {}
                    for system in order:
                        if system == "unison":
                            r = run_config(tf, files, config)
                        else:
                            assert tf_proc is not None
                            r = tf_proc.run(config, graph=system == "tf-graph")
                        if r["n"] != expected:
                            raise AssertionError(f"{system} read {r['n']} records in {config}, expected {expected}")
                        if system != "tf-graph":  # the traced reduce only counts
                            seen[system] = r["label_sum"]
                        if rnd > 0:
                            results[(system, config)].append(r["n"] / r["seconds"])
                            cpu_results[(system, config)].append(r["n"] / max(r["cpu_seconds"], 1e-9))
                    if len(set(seen.values())) != 1:
                        raise AssertionError(f"{config}: the label sums differ between libraries: {seen}")
        finally:
            if tf_proc is not None:
                tf_proc.close()
        load_after = os.getloadavg()

    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"# TFRecordDataset throughput: {args.files} files x {args.records} records (~3.2 KB each)")
    print(f"command: {command}")
    print(
        f"machine: {os.cpu_count()} cores, load average {load_before[0]:.1f} before / {load_after[0]:.1f} after "
        "(a LOADED shared machine when above the core count); one compute thread per library; "
        f"unison wrote the files in {write_s:.1f} s"
    )
    if tf_proc is not None:
        print(f"TensorFlow {tf_proc.version} read the files unison wrote: counts and label sums agree")
    print(
        f"records/s, median of {args.repeats} interleaved rounds (min-max); 'TF' and unison iterate in eager "
        "Python (for x in ds), 'TF in-graph' drains the same dataset with ds.reduce (no per-element Python)\n"
    )
    header = "| configuration | unison |" + (
        " TF | unison/TF | TF in-graph reduce | unison/TF in-graph |" if tf_proc else ""
    )
    print(header)
    print("| --- | ---: |" + (" ---: | ---: | ---: | ---: |" if tf_proc else ""))
    labels = {
        "raw": "TFRecordDataset, raw records",
        "parse": "+ map(parse_single_example).batch(64)",
        "batch_parse": "+ batch(64).map(parse_example)",
        "gzip": "GZIP files, raw records",
        "parallel4": "num_parallel_reads=4, raw records",
        "parse_varlen": "varied records (VarLenFeature x2): map(parse_single_example).batch(64)",
        "batch_parse_varlen": "varied records (VarLenFeature x2): batch(64).map(parse_example)",
    }
    _table(results, labels, tf_proc is not None)
    cpu_med = {k: statistics.median(v) for k, v in cpu_results.items()}
    print(
        "\nThe same runs per CPU-second (records / process CPU time, all threads of each library's process): on a "
        "loaded machine wall-clock figures mostly measure waiting for a core; this measures the work\n"
    )
    print(header)
    print("| --- | ---: |" + (" ---: | ---: | ---: | ---: |" if tf_proc else ""))
    _table(cpu_results, labels, tf_proc is not None)
    return {
        "median_records_per_s": {f"{s}/{c}": v for (s, c), v in med.items()},
        "median_records_per_cpu_s": {f"{s}/{c}": v for (s, c), v in cpu_med.items()},
    }


def _table(results: dict[tuple[str, str], list[float]], labels: dict[str, str], with_tf: bool) -> None:
    """One markdown row per configuration: medians (min-max) and the unison/TF ratios."""
    med = {k: statistics.median(v) for k, v in results.items()}
    for c in CONFIGS:
        u = results[("unison", c)]
        row = f"| {labels[c]} | {med[('unison', c)]:,.0f} ({min(u):,.0f}-{max(u):,.0f}) |"
        if with_tf:
            t = results[("tf", c)]
            g = results[("tf-graph", c)]
            row += (
                f" {med[('tf', c)]:,.0f} ({min(t):,.0f}-{max(t):,.0f}) | {med[('unison', c)] / med[('tf', c)]:.2f}x |"
            )
            row += f" {med[('tf-graph', c)]:,.0f} ({min(g):,.0f}-{max(g):,.0f}) |"
            row += f" {med[('unison', c)] / med[('tf-graph', c)]:.2f}x |"
        print(row)


if __name__ == "__main__":
    # pinned only when run as a program (the test calls main() inside pytest's process)
    _pin_threads()
    if "--tf-worker" not in sys.argv:  # the TensorFlow venv has no torch
        import torch

        torch.set_num_threads(1)
    main()
