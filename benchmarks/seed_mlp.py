"""Seed program speed: unison against a plain PyTorch loop, DDP and (where installed) TensorFlow.

Each run is a fresh process (as a user starts it); systems are interleaved within every repeat
(and their order rotated from one repeat to the next) so that machine noise hits all of them
alike; the table reports medians over the repeats and, for each comparison, the median of the
per-repeat ratios (each ratio taken between runs of the same repeat).

Systems (the programs live in ``benchmarks/seed_mlp_programs/``):

* ``unison1``: the seed program with ``import unison as tf``, ``MirroredStrategy()`` (one CPU
  replica, torch's default threads = all cores), ``python seed_program.py``;
* ``plain``: the same model, data and optimizer as a plain PyTorch loop (same threads);
* ``unison2``: the seed program with ``MirroredStrategy(["/cpu:0", "/cpu:1"])``, started as
  ``python seed_program.py`` (unison re-runs the script to start replica 1);
* ``ddp2``: the plain loop in ``DistributedDataParallel`` (gloo on loopback), started with
  ``python -m torch.distributed.run --standalone --nproc-per-node 2`` (torchrun), 1 thread/rank;
* ``tf1`` / ``tf2``: the seed program on TensorFlow's MirroredStrategy (one CPU / two logical
  CPUs), run with the Python given by ``--tf-python`` (a separate venv; skipped with the reason
  if TensorFlow cannot be imported there);
* ``unison1t1`` / ``plaint1``: unison1 and plain with ``OMP_NUM_THREADS=1`` (a diagnostic: the
  per-step overhead of the front end without intra-op threading, which on a small shared
  machine dominates and collapses when other programs compete for the cores);
* ``unison2gloo``: unison2 with ``UNISON_SHM_ALLREDUCE=0`` (gloo for every collective, as DDP
  uses; shows what the shared-memory all-reduce of one host's replicas is worth).

Every child times only the training (``model.fit`` / the loop, validation included); start-up
(imports, strategy, process group, model) and data loading are reported separately.

    python benchmarks/seed_mlp.py --epochs 5 --repeats 3 --out results.json
    python benchmarks/seed_mlp.py --systems unison1,plain --epochs 1 --repeats 1 --warmup 0
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "seed_mlp_programs")
REPO = os.path.dirname(HERE)
ALL_SYSTEMS = ("unison1", "plain", "unison2", "ddp2", "tf1", "tf2", "unison1t1", "plaint1", "unison2gloo")
ONE_THREAD = {"unison1t1": "unison1", "plaint1": "plain"}  # same program, OMP_NUM_THREADS=1
GLOO_ONLY = {"unison2gloo": "unison2"}  # same program, UNISON_SHM_ALLREDUCE=0
UNISON_SYSTEMS = ("unison1", "unison2", "unison1t1", "unison2gloo")
# (system, baseline, target): ratio = system time / baseline time; target None = informative.
# Targets of issue 28 (issue 2's were 1.1 and 1.0).
COMPARISONS = (
    ("unison1", "plain", 0.9),
    ("unison2", "ddp2", 0.5),
    ("unison1", "tf1", None),
    ("unison2", "tf2", None),
    ("unison2", "unison1", None),  # < 1: two replicas are faster than one
    ("ddp2", "plain", None),
    ("tf2", "tf1", None),
    ("unison1t1", "plaint1", 0.9),  # per-step overhead without intra-op threading in the way
    ("unison2gloo", "ddp2", None),  # both on gloo
    ("unison2", "unison2gloo", None),  # what the shared-memory all-reduce saves
)
DEFAULT_TF_PYTHON = "/tmp/tfvenv/bin/python"


def command_for(system: str, epochs: int, tf_python: str) -> list[str]:
    system = {**ONE_THREAD, **GLOO_ONLY}.get(system, system)
    seed = os.path.join(PROGRAMS, "seed_program.py")
    if system in ("unison1", "unison2"):
        return [sys.executable, seed, "--framework", "unison", "--replicas", system[-1], "--epochs", str(epochs)]
    if system in ("tf1", "tf2"):
        return [tf_python, seed, "--framework", "tensorflow", "--replicas", system[-1], "--epochs", str(epochs)]
    if system == "plain":
        return [sys.executable, os.path.join(PROGRAMS, "plain_torch.py"), "--epochs", str(epochs)]
    if system == "ddp2":
        return [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            os.path.join(PROGRAMS, "ddp_torch.py"),
            "--epochs",
            str(epochs),
        ]
    raise ValueError(f"Unknown system {system!r}; choose from {', '.join(ALL_SYSTEMS)}.")


def base_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("UNISON_DATA_DIR", os.path.normpath(os.path.join(REPO, "..", "shared", "data")))
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # DDP: keep gloo on loopback, as unison does
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def tf_unavailable(tf_python: str) -> str | None:
    """None if TensorFlow imports with ``tf_python``; otherwise a one-line reason."""
    if not (os.path.exists(tf_python) or shutil.which(tf_python)):
        return (
            f"no Python at {tf_python} (create one: python -m venv /tmp/tfvenv && "
            "/tmp/tfvenv/bin/pip install tensorflow-cpu; or pass --tf-python)"
        )
    probe = subprocess.run(
        [tf_python, "-c", "import tensorflow as tf; print(tf.__version__)"],
        capture_output=True,
        text=True,
        env=base_env(),
        timeout=300,
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return f"`import tensorflow` fails with {tf_python}: {last}"
    return None


def tf_version(tf_python: str) -> str | None:
    probe = subprocess.run(
        [tf_python, "-c", "import tensorflow as tf; print(tf.__version__)"],
        capture_output=True,
        text=True,
        env=base_env(),
        timeout=300,
    )
    return probe.stdout.strip().splitlines()[-1] if probe.returncode == 0 else None


def source_state() -> str:
    """The commit the unison source is at, and whether src/ has uncommitted edits (read-only git)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=30
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"], cwd=REPO, capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}{' + uncommitted edits in src/' if dirty else ''}"


def _cpu_busy_s() -> tuple[float, float]:
    """(busy CPU seconds of the whole machine, steal seconds) since boot, from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as fh:
        fields = [int(v) for v in fh.readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq) / tick, steal / tick


def _own_children_cpu_s() -> float:
    t = os.times()
    return t.children_user + t.children_system + t.user + t.system


class OtherLoad:
    """CPU used by processes that are not ours (other users of a shared machine) over a span."""

    def __init__(self) -> None:
        self.busy0, self.steal0 = _cpu_busy_s()
        self.own0 = _own_children_cpu_s()
        self.t0 = time.perf_counter()

    def share(self) -> tuple[float, float]:
        """(others' CPU as a share of all cores, steal share) since construction."""
        busy, steal = _cpu_busy_s()
        wall = max(time.perf_counter() - self.t0, 1e-9)
        others = busy - self.busy0 - (_own_children_cpu_s() - self.own0)
        return max(0.0, others) / (wall * CORES), (steal - self.steal0) / (wall * CORES)


CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def wait_for_quiet(threshold: float, max_wait_s: float) -> float:
    """Wait (up to max_wait_s) until others use < threshold of the cores for 2 s; returns the wait."""
    t0 = time.perf_counter()
    while True:
        probe = OtherLoad()
        time.sleep(2.0)
        others, _ = probe.share()
        waited = time.perf_counter() - t0
        if others < threshold or waited >= max_wait_s:
            return waited


def run_once(system: str, epochs: int, tf_python: str, log_dir: str, tag: str, timeout_s: float) -> dict[str, Any]:
    """One fresh run of ``system``; returns rank 0's result plus the other ranks' timings."""
    out_dir = tempfile.mkdtemp(prefix=f"seed-bench-{system}-")
    env = base_env()
    env["SEED_BENCH_OUT_DIR"] = out_dir
    if system in ONE_THREAD:
        env["OMP_NUM_THREADS"] = "1"  # torch's intra-op threads: 1 instead of all cores
    if system in GLOO_ONLY:
        env["UNISON_SHM_ALLREDUCE"] = "0"
    cmd = command_for(system, epochs, tf_python)
    log_path = os.path.join(log_dir, f"{tag}-{system}.log")
    with open(log_path, "w", encoding="utf-8") as log:
        env["SEED_BENCH_T0"] = repr(time.time())
        load = OtherLoad()
        t0 = time.perf_counter()
        proc = subprocess.run(
            cmd,
            cwd=PROGRAMS,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=timeout_s,
        )
        wall = time.perf_counter() - t0
        others, steal = load.share()
    ranks = {}
    for name in sorted(os.listdir(out_dir)):
        with open(os.path.join(out_dir, name), encoding="utf-8") as fh:
            r = json.load(fh)
        ranks[r["rank"]] = r
    shutil.rmtree(out_dir, ignore_errors=True)
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        log_text = fh.read()
    # torch's gloo sometimes aborts a torchrun rank during interpreter teardown ("terminate
    # called without an active exception"), after the program finished and reported. That says
    # nothing about the training measured, so a baseline that reported from every rank counts
    # (noted in the result); unison gets no such pass.
    teardown_abort = (
        system not in UNISON_SYSTEMS
        and proc.returncode != 0
        and len(ranks) >= 1
        and len(ranks) == max(r["world_size"] for r in ranks.values())
        and "terminate called without an active exception" in log_text
    )
    if (proc.returncode != 0 and not teardown_abort) or 0 not in ranks:
        tail = "".join(log_text.splitlines(keepends=True)[-15:])
        raise RuntimeError(f"{system} failed (exit {proc.returncode}); log {log_path}:\n{tail}")
    if teardown_abort:
        print(f"note: {system} aborted at exit after every rank reported (torch gloo teardown)", flush=True)
    result = dict(ranks[0])
    result["wall_s"] = wall
    result["log"] = log_path
    result["other_load"] = others  # share of all cores used by other processes during the run
    result["steal"] = steal
    if len(ranks) > 1:
        result["ranks_train_s"] = [ranks[k]["train_s"] for k in sorted(ranks)]
        result["ranks_train_cpu_s"] = [ranks[k].get("train_cpu_s") for k in sorted(ranks)]
        starts = [ranks[k]["fit_start_wall"] for k in sorted(ranks)]
        result["fit_start_skew_s"] = max(starts) - min(starts)
    return result


def final(result: dict[str, Any], key: str) -> float | None:
    values = result["history"].get(key) or []
    return values[-1] if values else None


def summarize(runs: dict[str, list[dict[str, Any]]], clean_below: float) -> dict[str, Any]:
    """Medians per system and paired ratios per comparison (also over 'clean' pairs only:
    runs during which other processes used less than ``clean_below`` of the cores)."""
    systems: dict[str, Any] = {}
    for system, rs in runs.items():
        if not rs:
            continue
        times = [r["train_s"] for r in rs]
        systems[system] = {
            "train_s_median": statistics.median(times),
            "train_s_min": min(times),
            "train_s_max": max(times),
            "train_s_all": times,
            "train_cpu_s_median": statistics.median(r.get("train_cpu_s") or 0.0 for r in rs),
            "startup_s_median": statistics.median(r["startup_s"] for r in rs),
            "load_s_median": statistics.median(r["load_s"] for r in rs),
            "wall_s_median": statistics.median(r["wall_s"] for r in rs),
            "val_accuracy_median": statistics.median(final(r, "val_accuracy") for r in rs),
            "accuracy_median": statistics.median(final(r, "accuracy") for r in rs),
            "loss_median": statistics.median(final(r, "loss") for r in rs),
            "threads": rs[0]["threads"],
            "other_load_all": [r["other_load"] for r in rs],
            "clean_runs": sum(r["other_load"] < clean_below for r in rs),
        }
    comparisons = []
    for system, baseline, target in COMPARISONS:
        a, b = runs.get(system) or [], runs.get(baseline) or []
        pairs = [
            (x["train_s"] / y["train_s"], max(x["other_load"], y["other_load"]) < clean_below) for x, y in zip(a, b)
        ]  # same repeat index
        if not pairs:
            continue
        ratios = [r for r, _ in pairs]
        clean = [r for r, ok in pairs if ok]
        med = statistics.median(ratios)
        comparisons.append(
            {
                "system": system,
                "baseline": baseline,
                "target": target,
                "ratio_median": med,
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
                "ratio_all": ratios,
                "ratio_of_medians": systems[system]["train_s_median"] / systems[baseline]["train_s_median"],
                "cpu_ratio_median": statistics.median(
                    (x.get("train_cpu_s") or 0.0) / max(y.get("train_cpu_s") or 0.0, 1e-9) for x, y in zip(a, b)
                ),
                "clean_pairs": len(clean),
                "ratio_clean_median": statistics.median(clean) if clean else None,
                "met": None if target is None else med <= target,
            }
        )
    return {"systems": systems, "comparisons": comparisons, "clean_below": clean_below}


def render(summary: dict[str, Any], command: str, header: str) -> str:
    base_of: dict[str, tuple[str, float | None]] = {}
    for system, baseline, target in COMPARISONS[:4]:
        if system in summary["systems"] and baseline in summary["systems"]:
            base_of.setdefault(system, (baseline, target))  # the first present baseline
    cmp_of = {(c["system"], c["baseline"]): c for c in summary["comparisons"]}
    lines = [header, "", f"Command: `{command}`", ""]
    lines.append(
        "| system | train s (median) | spread (min-max) | vs baseline (median of paired ratios) "
        "| train CPU s (rank 0) | start-up s | data load s | process wall s | threads | other load (max) | final loss "
        "| final acc | final val_acc |"
    )
    lines.append("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for system in ALL_SYSTEMS:
        s = summary["systems"].get(system)
        if s is None:
            continue
        vs = ""
        if system in base_of and (system, base_of[system][0]) in cmp_of:
            c = cmp_of[(system, base_of[system][0])]
            target = "" if c["target"] is None else f" (target <= {c['target']:.1f}: {'met' if c['met'] else 'MISSED'})"
            vs = f"{c['ratio_median']:.2f}x {c['baseline']}{target}"
        lines.append(
            f"| {system} | {s['train_s_median']:.2f} | {s['train_s_min']:.2f}-{s['train_s_max']:.2f} | {vs} "
            f"| {s['train_cpu_s_median']:.2f} | {s['startup_s_median']:.2f} | {s['load_s_median']:.2f} | {s['wall_s_median']:.2f} | {s['threads']} "
            f"| {100 * max(s['other_load_all']):.0f}% | {s['loss_median']:.4f} | {s['accuracy_median']:.4f} "
            f"| {s['val_accuracy_median']:.4f} |"
        )
    clean_pct = 100 * summary["clean_below"]
    lines += [
        "",
        f"| comparison | ratio (median of paired) | paired min-max | ratio of medians "
        f"| clean pairs (other load < {clean_pct:.0f}%): n, median | CPU-time ratio (median) | target |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for c in summary["comparisons"]:
        target = "-" if c["target"] is None else f"<= {c['target']:.1f}: {'met' if c['met'] else 'MISSED'}"
        clean = f"{c['clean_pairs']}, {c['ratio_clean_median']:.3f}" if c["clean_pairs"] else "0, -"
        lines.append(
            f"| {c['system']} / {c['baseline']} | {c['ratio_median']:.3f} | "
            f"{c['ratio_min']:.3f}-{c['ratio_max']:.3f} | {c['ratio_of_medians']:.3f} | {clean} "
            f"| {c['cpu_ratio_median']:.3f} | {target} |"
        )
    lines += [
        "",
        "Other load: the share of all cores that processes other than the benchmark's used "
        "while a run was going (from /proc/stat minus the benchmark's own CPU time). Train CPU s: "
        "CPU time of rank 0's process (all its threads) during training; for one-thread "
        "processes (unison2, ddp2, *t1) it is what the work costs, nearly independent of "
        "other load; with 2 intra-op threads it also counts their spinning.",
    ]
    return "\n".join(lines)


def write_json(
    path: str,
    command: str,
    date: str,
    machine: dict[str, Any],
    args: Any,
    skipped: dict[str, str],
    runs: dict[str, list[dict[str, Any]]],
    summary: dict[str, Any] | None,
) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(
            {
                "command": command,
                "date": date,
                "machine": machine,
                "epochs": args.epochs,
                "repeats": args.repeats,
                "skipped": skipped,
                "runs": runs,
                "summary": summary,
            },
            fh,
            indent=1,
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--warmup", type=int, default=1, help="untimed 1-epoch runs of each system first (warm file caches); default 1"
    )
    p.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    p.add_argument(
        "--tf-python",
        default=os.environ.get("SEED_BENCH_TF_PYTHON", DEFAULT_TF_PYTHON),
        help="the Python of a venv with tensorflow-cpu (default %(default)s)",
    )
    p.add_argument("--out", help="write all runs and the summary as JSON here")
    p.add_argument("--log-dir", help="children's output (default: a fresh temporary folder)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    p.add_argument(
        "--quiet-below",
        type=float,
        default=0.10,
        help="before each run, wait until other processes use less than this share of "
        "the cores (shared machines); default %(default)s",
    )
    p.add_argument(
        "--max-wait",
        type=float,
        default=600.0,
        help="longest wait for a quiet machine before a run, seconds; default %(default)s",
    )
    p.add_argument(
        "--clean-below",
        type=float,
        default=0.10,
        help="a run is 'clean' if other processes used less than this share of the cores "
        "during it; default %(default)s",
    )
    p.add_argument(
        "--from-json",
        help="only print the tables for the runs saved in this JSON (e.g. a partial --out of an interrupted run)",
    )
    args = p.parse_args(argv)
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as fh:
            saved = json.load(fh)
        m = saved["machine"]
        done = min((len(v) for v in saved["runs"].values() if v), default=0)
        runs = {k: v[:done] for k, v in saved["runs"].items() if v}
        header = (
            f"Seed MLP, {saved['epochs']} epochs, batch 32, {done} complete repeats; "
            f"{saved['date']}; {m['cores']} cores, torch {m['torch']}, Python {m['python']}, "
            f"unison at {m['unison_source']}" + (f", tensorflow-cpu {m['tensorflow']}" if m.get("tensorflow") else "")
        )
        print(render(summarize(runs, args.clean_below), saved["command"], header))
        return 0

    command = "python " + " ".join(
        shlex.quote(a) for a in [os.path.relpath(__file__, os.getcwd()), *(argv if argv is not None else sys.argv[1:])]
    )
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in ALL_SYSTEMS:
            p.error(f"unknown system {s!r}; choose from {', '.join(ALL_SYSTEMS)}")
    skipped = {}
    tf_ver = None
    if any(s.startswith("tf") for s in systems):
        reason = tf_unavailable(args.tf_python)
        if reason:
            print(f"skipping tf1/tf2: {reason}", flush=True)
            skipped = {s: reason for s in systems if s.startswith("tf")}
            systems = [s for s in systems if not s.startswith("tf")]
        else:
            tf_ver = tf_version(args.tf_python)
    log_dir = args.log_dir or tempfile.mkdtemp(prefix="seed-bench-logs-")
    os.makedirs(log_dir, exist_ok=True)

    import torch  # only for the machine description

    machine = {
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "tensorflow": tf_ver,
        "platform": platform.platform(),
        "unison_source": source_state(),
    }
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    print(
        f"{date}  {machine}\nsystems: {systems}  epochs={args.epochs} repeats={args.repeats}  logs: {log_dir}",
        flush=True,
    )

    for w in range(args.warmup):
        for s in systems:
            wait_for_quiet(args.quiet_below, args.max_wait)
            r = run_once(s, 1, args.tf_python, log_dir, f"warmup{w}", args.timeout)
            print(f"  warm-up {s}: train {r['train_s']:.2f}s", flush=True)
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    for rep in range(args.repeats):
        k = rep % len(systems)
        for s in systems[k:] + systems[:k]:  # rotate the order: no system always goes first
            waited = wait_for_quiet(args.quiet_below, args.max_wait)
            r = run_once(s, args.epochs, args.tf_python, log_dir, f"rep{rep}", args.timeout)
            r["repeat"] = rep
            r["waited_for_quiet_s"] = waited
            runs[s].append(r)
            extra = (
                f"  ranks {[f'{t:.2f}' for t in r['ranks_train_s']]} skew {r['fit_start_skew_s']:.2f}s"
                if "ranks_train_s" in r
                else ""
            )
            if args.out:  # partial results survive an interrupted run
                write_json(args.out, command, date, machine, args, skipped, runs, None)
            print(
                f"  repeat {rep} {s}: train {r['train_s']:.2f}s  start-up {r['startup_s']:.2f}s  "
                f"load {r['load_s']:.2f}s  val_acc {final(r, 'val_accuracy'):.4f}  other load "
                f"{100 * r['other_load']:.0f}% (waited {waited:.0f}s){extra}",
                flush=True,
            )

    summary = summarize(runs, args.clean_below)
    header = (
        f"Seed MLP, {args.epochs} epochs, batch 32, {args.repeats} repeats; {date}; "
        f"{machine['cores']} cores, torch {machine['torch']}, Python {machine['python']}, "
        f"unison at {machine['unison_source']}" + (f", tensorflow-cpu {tf_ver}" if tf_ver else "")
    )
    print()
    print(render(summary, command, header))
    for s, reason in skipped.items():
        print(f"{s}: skipped ({reason})")
    if args.out:
        write_json(args.out, command, date, machine, args, skipped, runs, summary)
        print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
