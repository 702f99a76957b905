"""Preemption figures: time from a SIGTERM to the saved checkpoint, and to the resumed job.

Runs the custom loop of ``tests/distributed/resume_fns.py`` (``PreemptionCheckpointHandler.run``)
on 2 workers under ``unison launch --nproc-per-node 2 --max-restarts 1``; worker 1 waits for a
SIGTERM after 8 steps; the figures come from the files the workers write:

* SIGTERM -> saved: until both workers recorded their save (after the agreed step, the chief's
  write and the barrier), just before they exit with code 42;
* SIGTERM -> resumed: until the relaunched worker 0 restored the checkpoint and is about to run
  its next step (torchrun's restart, Python and unison imports, rendezvous, restore).

Usage: ``PYTHONPATH=src python benchmarks/preemption_times.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FNS = os.path.join(HERE, "..", "tests", "distributed", "resume_fns.py")


def once() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        logs = os.path.join(tmp, "logs")
        os.makedirs(logs)
        kwargs = {"ckpt_dir": os.path.join(tmp, "ckpt"), "log_dir": logs}
        cmd = [sys.executable, "-m", "unison.cli", "launch", "--nproc-per-node", "2", "--max-restarts", "1"]
        cmd += [FNS, "preempted_loop", os.path.join(tmp, "result"), json.dumps(kwargs)]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TORCHELASTIC", "UNISON_"))}
        with open(os.path.join(tmp, "log"), "wb") as log:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        ready = os.path.join(logs, "ready-for-sigterm")
        while not os.path.exists(ready):
            if proc.poll() is not None:
                raise RuntimeError(open(os.path.join(tmp, "log")).read()[-3000:])
            time.sleep(0.005)
        with open(os.path.join(logs, "pid.0.1")) as fh:
            pid = int(fh.read())
        sent = time.time()
        os.kill(pid, signal.SIGTERM)
        if proc.wait(timeout=300) != 0:
            raise RuntimeError(open(os.path.join(tmp, "log")).read()[-3000:])
        saved = max(os.path.getmtime(os.path.join(logs, f"saved.0.{r}")) for r in (0, 1))
        resumed = os.path.getmtime(os.path.join(logs, "resumed.1.0"))
        return saved - sent, resumed - sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs = [once() for _ in range(args.repeats)]
    saved = [r[0] for r in runs]
    resumed = [r[1] for r in runs]
    print(
        f"SIGTERM -> saved on both workers: median {statistics.median(saved) * 1e3:.0f} ms  {[round(s * 1e3) for s in saved]}"
    )
    print(
        f"SIGTERM -> resumed after restart: median {statistics.median(resumed):.1f} s  {[round(s, 1) for s in resumed]}"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
