"""Start each timed run as its own processes, as a user would, and collect what they report.

One *run* is one system (unison, DDP or TensorFlow) at one replica count in one repeat. The
runs of a repeat interleave the systems (and rotate their order from repeat to repeat), so
that noise from other work on the machine falls on every system alike. Every run's output
goes to ``<out>/logs/``; each of its processes writes a JSON result (see
``unison.bench._worker``) that is read back here.

Example::

    runs = run_all(config, plan, data_path, tf_python, log_dir, print)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from unison.bench.config import BenchConfig
from unison.cluster import placement

TF_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_worker.py")
# Variables that place a process in a job: a child must start fresh, never join our job.
_PLACEMENT_VARS = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "GROUP_RANK",
    "TORCHELASTIC_RUN_ID",
    "TF_CONFIG",
    placement.ENV_RANK,
    placement.ENV_WORLD_SIZE,
    placement.ENV_LOCAL_RANK,
    placement.ENV_LOCAL_WORLD_SIZE,
    placement.ENV_MASTER_ADDR,
    placement.ENV_MASTER_PORT,
    placement.ENV_ERROR_FILE,
    placement.ENV_PARENT_PID,
)


@dataclass(frozen=True)
class RunSpec:
    """Which run: ``system`` at ``replicas`` replicas, repeat number ``repeat`` (from 0)."""

    system: str
    replicas: int
    repeat: int

    @property
    def tag(self) -> str:
        return f"r{self.repeat + 1}-{self.system}-x{self.replicas}"


def plan(config: BenchConfig, systems: list[str]) -> list[RunSpec]:
    """Every run in order: repeat by repeat, replica count by count, systems rotated."""
    order = []
    for repeat in range(config.repeats):
        k = repeat % len(systems)
        rotated = systems[k:] + systems[:k]
        for n in config.replicas:
            order += [RunSpec(s, n, repeat) for s in rotated]
    return order


def child_env(t0: float) -> dict[str, str]:
    """The environment of a child: ours, minus anything that would place it in another job."""
    # Under pytest, unison refuses to re-run the command (it would be pytest): the child is no test.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    for var in _PLACEMENT_VARS:
        env.pop(var, None)
    env["UNISON_BENCH_T0"] = repr(t0)
    env["UNISON_REPLICA_OUTPUT"] = "inherit"  # replicas 1.. write into the run's log too
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # one host: keep gloo on loopback (as unison does)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    # A `module:factory` model is importable from the folder the bench was started in.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), env.get("PYTHONPATH")) if p)
    return env


def _worker_args(
    config: BenchConfig, spec: RunSpec, data_path: str, shape: tuple[int, ...], result_dir: str
) -> list[str]:
    return [
        "--model",
        config.model,
        "--data",
        data_path,
        "--input-shape",
        ",".join(map(str, shape)),
        "--replicas",
        str(spec.replicas),
        "--device",
        config.device,
        "--epochs",
        str(config.epochs),
        "--batch-size",
        str(config.batch_size),
        "--result-dir",
        result_dir,
    ]


def commands(
    config: BenchConfig, spec: RunSpec, data_path: str, shape: tuple[int, ...], result_dir: str, tf_python: str | None
) -> list[tuple[list[str], dict[str, str]]]:
    """The command line(s) of one run, each with its extra environment (usually one command)."""
    args = _worker_args(config, spec, data_path, shape, result_dir)
    worker = [sys.executable, "-m", "unison.bench._worker"]
    if spec.system == "unison" and config.strategy == "mirrored":
        # Replica 0; MirroredStrategy re-runs this same command for replicas 1..N-1.
        return [([*worker, "--system", "unison", "--strategy", "mirrored", *args], {})]
    if spec.system == "unison":
        # MultiWorkerMirroredStrategy: one process per worker, each told its place by TF_CONFIG
        # (the strategy shares the cores among workers that sit on one host).
        hosts = [f"127.0.0.1:{port}" for port in _free_ports(spec.replicas)]
        return [
            (
                [*worker, "--system", "unison", "--strategy", "multi_worker", *args],
                {"TF_CONFIG": json.dumps({"cluster": {"worker": hosts}, "task": {"type": "worker", "index": i}})},
            )
            for i in range(spec.replicas)
        ]
    if spec.system == "ddp":
        return [
            (
                [
                    sys.executable,
                    "-m",
                    "torch.distributed.run",
                    "--standalone",
                    "--nproc-per-node",
                    str(spec.replicas),
                    "--local-addr",
                    "127.0.0.1",
                    "-m",
                    "unison.bench._worker",
                    "--system",
                    "ddp",
                    *args,
                ],
                {},
            )
        ]
    if spec.system == "tensorflow":
        if tf_python is None:
            raise ValueError("the TensorFlow baseline needs a Python with tensorflow")
        return [([tf_python, TF_WORKER, *args], {})]
    raise ValueError(f"Unknown system {spec.system!r}.")


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class RunFailed(RuntimeError):
    """A run exited with an error, timed out, or reported no result."""


def _tail(path: str, lines: int = 20) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return "".join(fh.readlines()[-lines:]).rstrip()
    except OSError:
        return "(no log)"


def run_one(
    config: BenchConfig, spec: RunSpec, data_path: str, shape: tuple[int, ...], tf_python: str | None, log_dir: str
) -> dict[str, Any]:
    """Start one run, wait for it (up to ``config.timeout_s``), return its record."""
    result_dir = tempfile.mkdtemp(prefix=f"unison-bench-{spec.tag}-")
    log_path = os.path.join(log_dir, f"{spec.tag}.log")
    cmds = commands(config, spec, data_path, shape, result_dir, tf_python)
    procs = []
    with open(log_path, "wb") as log:
        t0 = time.time()
        for cmd, extra in cmds:
            env = child_env(t0)
            env.update(extra)
            log.write(("$ " + " ".join(cmd) + "\n").encode())
            log.flush()
            procs.append(
                subprocess.Popen(
                    cmd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )
            )
        codes = _wait_all(procs, t0 + config.timeout_s)
        wall = time.time() - t0
    ranks = {}
    for name in os.listdir(result_dir):
        if name.endswith(".json"):
            with open(os.path.join(result_dir, name), encoding="utf-8") as fh:
                r = json.load(fh)
            ranks[int(r["rank"])] = r
            os.unlink(os.path.join(result_dir, name))
    os.rmdir(result_dir)
    if None in codes:
        raise RunFailed(
            f"{spec.system} x{spec.replicas} took longer than {config.timeout_s:.0f} s "
            f"(--timeout) and was stopped. Log: {log_path}\n{_tail(log_path)}"
        )
    if any(codes) or 0 not in ranks:
        raise RunFailed(
            f"{spec.system} x{spec.replicas} failed (exit code {max((c for c in codes if c is not None), key=abs)}). "
            f"Log: {log_path}\n{_tail(log_path)}"
        )
    return _record(spec, ranks, wall, log_path)


def _wait_all(procs: list[subprocess.Popen[bytes]], deadline: float) -> list[int | None]:
    """Exit codes of ``procs``; on the deadline, or when one fails, stop the rest (``None``)."""
    while any(p.poll() is None for p in procs):
        failed = any(p.returncode not in (None, 0) for p in procs)
        if failed or time.time() > deadline:
            for p in procs:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)  # the run's whole session: replicas too
                    p.wait()
            if not failed:
                return [None] * len(procs)
            break
        time.sleep(0.1)
    return [p.returncode for p in procs]


def _record(spec: RunSpec, ranks: dict[int, dict[str, Any]], wall: float, log: str) -> dict[str, Any]:
    chief = ranks[0]
    times = chief["epoch_times_s"]
    return {
        "system": spec.system,
        "replicas": spec.replicas,
        "repeat": spec.repeat + 1,
        "ok": True,
        "time_per_epoch_s": sum(times) / len(times),
        "epoch_times_s": times,
        "startup_s": chief["startup_s"],
        "data_s": chief["data_s"],
        "eval_s": chief["eval_s"],
        "wall_s": wall,
        "val_accuracy": chief["val_accuracy"],
        "val_loss": chief["val_loss"],
        "train_loss": chief["train_loss"],
        "train_accuracy": chief["train_accuracy"],
        "threads_per_replica": chief["threads"],
        "processes": len(ranks),
        "peak_rss_mb_per_process": [ranks[k]["peak_rss_mb"] for k in sorted(ranks)],
        "strategy": chief["strategy"],
        "device": chief["device"],
        "framework_version": chief.get("tensorflow"),
        "log": log,
    }


def run_all(
    config: BenchConfig,
    runs: list[RunSpec],
    data_path: str,
    shape: tuple[int, ...],
    tf_python: str | None,
    log_dir: str,
    say: Callable[[str], None],
) -> list[dict[str, Any]]:
    """Every run of ``runs`` in order, one progress line each; failures are recorded, not fatal."""
    records = []
    width = len(str(len(runs)))
    for i, spec in enumerate(runs, 1):
        head = (
            f"[{i:>{width}}/{len(runs)}] repeat {spec.repeat + 1}/{config.repeats}  {spec.system:<10} x{spec.replicas}:"
        )
        try:
            rec = run_one(config, spec, data_path, shape, tf_python, log_dir)
        except RunFailed as exc:
            records.append(
                {
                    "system": spec.system,
                    "replicas": spec.replicas,
                    "repeat": spec.repeat + 1,
                    "ok": False,
                    "error": str(exc),
                }
            )
            say(f"{head} FAILED: {exc}")
            continue
        records.append(rec)
        say(
            f"{head} {rec['time_per_epoch_s']:7.2f} s/epoch  start-up {rec['startup_s']:5.1f} s  "
            f"val_acc {rec['val_accuracy']:.4f}  peak {max(rec['peak_rss_mb_per_process']):.0f} MB"
        )
    return records
