"""Elastic figures: time from a worker's loss to the first step after it, in place vs a full restart.

Both systems run ``tests/distributed/elastic_inplace_script.py`` (an ``hvd.elastic.run`` loop with
``TorchState`` and a commit after every step) on 3 workers, and SIGKILL one worker (chosen, with
the step to kill at, by a seeded random draw) while the job trains (the ``hold`` file paces the
steps: 0.08 s of sleep each). The figure is the time from the kill to the first step at the new
size (in place) or of a restarted process (restart), from the workers' step logs:

* ``inplace``: ``unison launch --nproc-per-node 3 --min-workers 2 --max-workers 3``: the
  survivors roll back to the last commit in memory and re-form at size 2 (same processes);
* ``restart``: ``unison launch --nproc-per-node 3 --max-restarts 1`` (torchrun's agent): every
  process restarts, rank 0 loads the last commit from its file, the job goes on at size 3.

The systems alternate within each repeat. Each job is stopped once its first step after the
kill is seen.

Usage: ``PYTHONPATH=src python benchmarks/elastic_times.py --repeats 5 [--out benchmarks/results/elastic_times.md]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "tests", "distributed", "elastic_inplace_script.py")
FLAGS = {
    "inplace": ["--nproc-per-node", "3", "--min-workers", "2", "--max-workers", "3"],
    "restart": ["--nproc-per-node", "3", "--max-restarts", "1"],
}


def _steps(folder: str, worker: int) -> list[dict]:
    path = os.path.join(folder, f"steps.{worker}")
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [json.loads(line) for line in fh.read().splitlines() if line.endswith("}")]


def once(system: str, victim: int, after_steps: int) -> dict:
    """One job: kill worker ``victim`` after ``after_steps`` steps; the seconds to the next step."""
    with tempfile.TemporaryDirectory() as out:
        open(os.path.join(out, "hold"), "w").close()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TORCHELASTIC", "UNISON_"))}
        env.update(OUT=out, PYTHONUNBUFFERED="1", UNISON_COLLECTIVE_TIMEOUT="30", UNISON_ELASTIC_DIR=out)
        cmd = [sys.executable, "-m", "unison.cli", "launch", *FLAGS[system], SCRIPT]
        with open(os.path.join(out, "log"), "wb") as log:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 300
            while len(_steps(out, victim)) < after_steps:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(open(os.path.join(out, "log")).read()[-3000:])
                time.sleep(0.01)
            pids = {w: int(open(os.path.join(out, f"pid.{w}")).read()) for w in range(3)}
            killed = time.time()
            os.kill(pids[victim], signal.SIGKILL)
            survivors = [w for w in range(3) if w != victim or system == "restart"]
            after: list[dict] = []
            while not after:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(open(os.path.join(out, "log")).read()[-3000:])
                time.sleep(0.01)
                # in place: the first step at the new size (a step already past its all-reduce may
                # still finish at size 3); restart: the first step of a restarted process
                after = [
                    s
                    for w in survivors
                    for s in _steps(out, w)
                    if s["time"] > killed and (s["size"] == 2 if system == "inplace" else s["pid"] not in pids.values())
                ]
            first = min(after, key=lambda s: s["time"])
            same_pids = all(int(open(os.path.join(out, f"pid.{w}")).read()) == pids[w] for w in range(3) if w != victim)
            return {"seconds": first["time"] - killed, "size": first["size"], "survivor_pids_unchanged": same_pids}
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            for w in range(3):  # a worker left behind by its agent (by its own pid only)
                with contextlib.suppress(OSError, ValueError):
                    os.kill(int(open(os.path.join(out, f"pid.{w}")).read()), signal.SIGKILL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the table (markdown) here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    command = f"PYTHONPATH=src python benchmarks/elastic_times.py --repeats {args.repeats} --seed {args.seed}"
    load_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows: dict[str, list[dict]] = {"inplace": [], "restart": []}
    for repeat in range(args.repeats):
        victim, after_steps = rng.randrange(3), rng.randrange(3, 12)
        order = ["inplace", "restart"] if repeat % 2 == 0 else ["restart", "inplace"]
        for system in order:
            result = once(system, victim, after_steps)
            result.update(victim=victim, after_steps=after_steps)
            rows[system].append(result)
            print(f"repeat {repeat} {system}: {json.dumps(result)}", flush=True)
    load_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    med = {s: statistics.median(r["seconds"] for r in rows[s]) for s in rows}
    lines = [
        f"Command: `{command}`",
        "",
        f"Load: before `{load_before}`; after `{load_after}`",
        "",
        "| system | what happens after the SIGKILL | seconds to the first step after the loss (median) | each repeat | "
        "size after | survivors' pids unchanged |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    what = {
        "inplace": "`--min-workers 2`: survivors roll back in memory, re-form at size 2",
        "restart": "`--max-restarts 1`: torchrun restarts all 3, rank 0 loads the commit file",
    }
    for s in ("inplace", "restart"):
        each = ", ".join(f"{r['seconds']:.2f}" for r in rows[s])
        sizes = sorted({r["size"] for r in rows[s]})
        pids = all(r["survivor_pids_unchanged"] for r in rows[s])
        lines.append(f"| {s} | {what[s]} | {med[s]:.2f} | {each} | {sizes} | {pids} |")
    lines += ["", f"Ratio restart / in place (medians): {med['restart'] / med['inplace']:.1f}x"]
    table = "\n".join(lines)
    print(table)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(table + "\n")


if __name__ == "__main__":
    main()
