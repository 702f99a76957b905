"""The CNN training step on CPU: unison (custom loop and ``fit``) vs plain PyTorch vs TensorFlow, fp32 and bf16.

The model, batch and loop are those of TF's "Custom training with tf.distribute.Strategy"
tutorial (the seed exercise's CNN): ``cnn_step_programs/cnn_step.py`` run as ``import unison as
tf`` and as ``import tensorflow as tf`` (the Python given by ``--tf-python``; skipped with the
reason when TensorFlow does not import there), beside the same model and loop in plain PyTorch.
Every system runs under the ``float32`` and the ``mixed_bfloat16`` policy (plain PyTorch: its
step under ``torch.autocast(bfloat16)``). Each (system, policy) is a fresh process with the
same ``--threads``; all of them are interleaved within every repeat, the order rotated between
repeats. The table gives medians of wall time and of process CPU time per step (on a loaded,
shared machine the CPU time is the steadier figure: it leaves out the time spent waiting for a
core), and medians of per-repeat ratios. ``--profile`` adds the top kernels of each system's
loop step (torch profiler; TensorFlow's profiler's framework-op statistics).
``--accuracy-epochs n`` adds the test accuracy of the tutorial loop trained n epochs on MNIST.
Targets (issue 28): unison's step <= 0.9x TensorFlow's tf.function step in fp32, faster still
under mixed_bfloat16.

    python benchmarks/cnn_step.py --repeats 5 --threads 1 --tf-python /work/tfvenv/bin/python --profile
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "cnn_step_programs", "cnn_step.py")
REPO = os.path.dirname(HERE)
POLICIES = ("float32", "mixed_bfloat16")
SHORT = {"float32": "fp32", "mixed_bfloat16": "bf16"}


def run_child(system: str, policy: str, args: argparse.Namespace, extra: dict[str, str] | None = None) -> dict:
    env = {
        **os.environ,
        "BENCH_SYSTEM": system,
        "BENCH_POLICY": policy,
        "BENCH_ROWS": str(args.rows),
        "BENCH_THREADS": str(args.threads),
        # torch's OpenMP pool and TF's intra-/inter-op pools, the same count for every system
        "OMP_NUM_THREADS": str(args.threads),
        "TF_NUM_INTRAOP_THREADS": str(args.threads),
        "TF_NUM_INTEROP_THREADS": str(args.threads),
        "PYTHONUNBUFFERED": "1",
        **(extra or {}),
    }
    python = sys.executable
    src = os.path.join(REPO, "src")
    if system == "unison-base":
        env["BENCH_SYSTEM"], src = "unison", args.baseline_src
    if system == "tensorflow":
        env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
        env.pop("PYTHONPATH", None)
        python = args.tf_python
    else:
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run([python, PROGRAM], capture_output=True, text=True, env=env, timeout=args.timeout)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        raise SystemExit(f"{system} ({policy}) failed, exit {proc.returncode}: {tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tf_available(python: str | None) -> str | None:
    """None if TensorFlow imports with ``python``, else the reason it is skipped."""
    if not python:
        return "no --tf-python given"
    try:
        proc = subprocess.run(
            [python, "-c", "import tensorflow"],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{python}: {exc}"
    return None if proc.returncode == 0 else f"tensorflow does not import with {python}"


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        return "uptime unavailable"


NAMES = {
    "unison/loop": "unison, tutorial custom loop (`tf.function` + `strategy.run`)",
    "unison/fit": "unison, `model.fit`",
    "tensorflow/loop": "TensorFlow 2, tutorial custom loop (`tf.function`)",
    "tensorflow/fit": "TensorFlow 2, `model.fit`",
    "plain/eager": "plain PyTorch loop (NCHW, eager)",
    "unison-base/loop": "unison before this change (`--baseline-src`), custom loop",
    "unison-base/fit": "unison before this change (`--baseline-src`), `model.fit`",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=1920, help="rows per timed epoch (batch 64)")
    parser.add_argument("--threads", type=int, default=1, help="compute threads, the same for every system")
    parser.add_argument("--tf-python", default=None, help="a Python with tensorflow installed")
    parser.add_argument("--profile", action="store_true", help="add each system's top kernels (one extra run each)")
    parser.add_argument("--accuracy-epochs", type=int, default=0, help="add MNIST test accuracy after n epochs")
    parser.add_argument("--accuracy-rows", type=int, default=60000, help="MNIST training images for --accuracy-epochs")
    parser.add_argument(
        "--baseline-src", default=None, help="also time unison from this src/ (e.g. a checkout before a change)"
    )
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "cnn_step.md"))
    args = parser.parse_args()

    systems = ["unison", "plain"] + (["unison-base"] if args.baseline_src else [])
    tf_skip = tf_available(args.tf_python)
    if tf_skip is None:
        systems.append("tensorflow")
    runs = [(s, p) for p in POLICIES for s in systems]
    loads = [uptime()]
    wall: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    ratios: dict[str, list[float]] = {}
    for r in range(args.repeats):
        order = runs[r % len(runs) :] + runs[: r % len(runs)]
        got: dict[tuple[str, str], dict] = {}
        for system, policy in order:
            result = run_child(system, policy, args)
            for mode, m in result.items():
                key = (f"{system}/{mode}", policy)
                got[key] = m
                wall.setdefault(key, []).append(m["wall_ms"])
                cpu.setdefault(key, []).append(m["cpu_ms"])
                print(
                    f"repeat {r + 1}/{args.repeats} {system}/{mode} {SHORT[policy]}: wall {m['wall_ms']:.2f} ms, "
                    f"cpu {m['cpu_ms']:.2f} ms/step (loss {m['loss']:.4f})",
                    flush=True,
                )

        def ratio(name: str, a: tuple[str, str], b: tuple[str, str], got: dict = got) -> None:
            if a in got and b in got:
                ratios.setdefault(f"{name} (wall)", []).append(got[a]["wall_ms"] / got[b]["wall_ms"])
                ratios.setdefault(f"{name} (cpu)", []).append(got[a]["cpu_ms"] / got[b]["cpu_ms"])

        for p in POLICIES:
            s = SHORT[p]
            ratio(f"unison loop / TF loop, {s}", ("unison/loop", p), ("tensorflow/loop", p))
            ratio(f"unison fit / TF fit, {s}", ("unison/fit", p), ("tensorflow/fit", p))
            ratio(f"unison loop / plain PyTorch, {s}", ("unison/loop", p), ("plain/eager", p))
            ratio(f"unison loop / unison before, {s}", ("unison/loop", p), ("unison-base/loop", p))
            ratio(f"unison fit / unison before, {s}", ("unison/fit", p), ("unison-base/fit", p))
        ratio("unison loop bf16 / TF loop fp32", ("unison/loop", "mixed_bfloat16"), ("tensorflow/loop", "float32"))
        for key in ("unison/loop", "unison/fit", "tensorflow/loop", "tensorflow/fit", "plain/eager"):
            ratio(f"{key} bf16 / fp32", (key, "mixed_bfloat16"), (key, "float32"))
        loads.append(uptime())

    profiles = {}
    if args.profile:
        for system, policy in runs:
            if system == "unison-base":
                continue
            profiles[(system, policy)] = run_child(system, policy, args, {"BENCH_PROFILE": "1"}).get("profile")
    accuracy = {}
    if args.accuracy_epochs:
        for system, policy in runs:
            if system == "unison-base":
                continue
            extra = {"BENCH_ACCURACY_EPOCHS": str(args.accuracy_epochs), "BENCH_ACCURACY_ROWS": str(args.accuracy_rows)}
            accuracy[(system, policy)] = run_child(system, policy, args, extra)["test_accuracy"]
    loads.append(uptime())

    command = "python benchmarks/cnn_step.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [
        "# The CNN training step on CPU: unison vs plain PyTorch vs TensorFlow, fp32 and bf16",
        "",
        f"Command: `{command}`",
        "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} cores shared with other engineers' jobs, Python {platform.python_version()}; "
        f"{args.repeats} repeats, each (system, policy) a fresh process, interleaved; {args.rows // 64} steps "
        f"of batch 64 timed per run after a warm-up epoch; {args.threads} compute thread(s) for every system.",
        "",
        "Machine load (`uptime`) before, after each repeat and at the end:",
        "",
        *[f"    {u}" for u in loads],
        "",
        "| system | policy | median wall ms/step | median CPU ms/step | CPU runs (ms/step) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key in sorted(wall, key=lambda k: (list(NAMES).index(k[0]), k[1])):
        lines.append(
            f"| {NAMES[key[0]]} | {key[1]} | {statistics.median(wall[key]):.2f} | {statistics.median(cpu[key]):.2f} | "
            f"{', '.join(f'{t:.2f}' for t in cpu[key])} |"
        )
    lines += ["", "| ratio (median of per-repeat ratios) | wall | CPU | target |", "| --- | --- | --- | --- |"]
    targets = {"unison loop / TF loop, fp32": "<= 0.9", "unison loop / TF loop, bf16": "< the fp32 ratio"}
    for name in dict.fromkeys(n.rsplit(" (", 1)[0] for n in ratios):
        lines.append(
            f"| {name} | {statistics.median(ratios[name + ' (wall)']):.3f} | "
            f"{statistics.median(ratios[name + ' (cpu)']):.3f} | {targets.get(name, '')} |"
        )
    if tf_skip:
        lines.append(f"\nTensorFlow skipped: {tf_skip}.")
    if accuracy:
        lines += [
            "",
            f"Test accuracy on MNIST's 10,000 test images after {args.accuracy_epochs} epoch(s) of the tutorial "
            f"loop on its first {args.accuracy_rows} training images (one run each):",
            "",
            "| system | policy | test accuracy |",
            "| --- | --- | --- |",
            *[f"| {s} | {p} | {a:.4f} |" for (s, p), a in accuracy.items()],
        ]
    for (system, policy), prof in profiles.items():
        if not prof or "top" not in prof:
            lines += ["", f"Profile of {system} ({policy}): {prof}"]
            continue
        lines += [
            "",
            f"Top kernels of the loop step, {system}, {policy} (self time per step, profiler on; all ops "
            f"together {prof['total_ms']:.2f} ms/step):",
            "",
            "| op | ms/step | calls/step |",
            "| --- | --- | --- |",
            *[f"| `{op}` | {ms:.3f} | {n} |" for op, ms, n in prof["top"]],
        ]
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
