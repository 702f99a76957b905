"""Start-up of a one-host MirroredStrategy job: TCPStore (before) vs private FileStore + HMAC (after).

Runs `python job.py` (MirroredStrategy of 2 CPUs, one all-reduce) with two source trees, alternating,
and reports the wall time of the whole command and the time from strategy creation to the first
all-reduce done, as measured inside replica 0.

    python benchmarks/store_startup.py --before /tmp/base/src --after src --repeats 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

JOB = """
import time, torch
import unison as tf
t0 = time.perf_counter()
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
strategy.reduce("SUM", torch.ones(1))
if strategy.extended.replica_id == 0:
    print(f"join_s={time.perf_counter() - t0:.4f}")
"""


def _run(src: str, script: str) -> tuple[float, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_"))}
    env["PYTHONPATH"] = os.path.abspath(src)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, timeout=300, check=True)
    wall = time.perf_counter() - start
    join = float(out.stdout.strip().split("join_s=")[1])
    return wall, join


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    script = os.path.join(tempfile.mkdtemp(), "job.py")
    with open(script, "w") as fh:
        fh.write(JOB)
    runs: dict[str, list[tuple[float, float]]] = {"before (TCPStore)": [], "after (FileStore + HMAC)": []}
    for _ in range(args.repeats):
        for name, src in zip(runs, (args.before, args.after)):
            runs[name].append(_run(src, script))
    print("| store | command wall s (median, min-max) | strategy join + first all-reduce s (median, min-max) |")
    print("| --- | --- | --- |")
    for name, values in runs.items():
        walls, joins = [v[0] for v in values], [v[1] for v in values]
        print(
            f"| {name} | {statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | "
            f"{statistics.median(joins):.3f} ({min(joins):.3f}-{max(joins):.3f}) |"
        )


if __name__ == "__main__":
    main()
