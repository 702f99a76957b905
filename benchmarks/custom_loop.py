"""Custom-loop speed: TF's custom-training tutorial loop on unison vs plain PyTorch vs TensorFlow.

The loop is the one of "Custom training with tf.distribute.Strategy" (GradientTape +
``apply_gradients`` inside ``strategy.run`` in a ``tf.function``, MirroredStrategy with one CPU
replica): ``custom_loop_programs/tutorial_loop.py`` with ``import unison as tf`` (``unison``) and
with ``import tensorflow as tf`` (``tf``, run by ``--tf-python``, skipped with the reason when
TensorFlow does not import there), against the same model and loop written in plain PyTorch
(``custom_loop_programs/plain_torch_loop.py``, ``plain``). Each run is a fresh process; the
systems are interleaved within every repeat, their order rotated between repeats; each child
times its epochs after one warm-up epoch. The table gives medians and the median of the
per-repeat ratios. ``--compiled`` adds the plain loop with its model through
``torch.compile``, the measurement behind tf.function running eagerly. Targets (issue 15): unison <= 1.15x plain, unison <= 0.5x TF.

    python benchmarks/custom_loop.py --repeats 5 --tf-python /tmp/tfdata-tfvenv/bin/python
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
PROGRAMS = os.path.join(HERE, "custom_loop_programs")
REPO = os.path.dirname(HERE)


def run_child(system: str, args: argparse.Namespace) -> dict | str:
    env = {**os.environ, "BENCH_ROWS": str(args.rows), "BENCH_EPOCHS": str(args.epochs), "PYTHONUNBUFFERED": "1"}
    if args.threads:
        # torch's OpenMP threads and TF's intra-/inter-op pools, the same count for every system
        env.update(
            OMP_NUM_THREADS=str(args.threads),
            TF_NUM_INTRAOP_THREADS=str(args.threads),
            TF_NUM_INTEROP_THREADS=str(args.threads),
        )
    if system in ("plain", "plain-compiled"):
        if system == "plain-compiled":
            env["BENCH_COMPILE"] = "1"
        cmd = [sys.executable, os.path.join(PROGRAMS, "plain_torch_loop.py")]
    elif system == "unison":
        env["BENCH_TF_MODULE"] = "unison"
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        cmd = [sys.executable, os.path.join(PROGRAMS, "tutorial_loop.py")]
    else:
        env.update(BENCH_TF_MODULE="tensorflow", TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
        env.pop("PYTHONPATH", None)
        cmd = [args.tf_python, os.path.join(PROGRAMS, "tutorial_loop.py")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    if proc.returncode != 0:
        return f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ''}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tf_available(python: str | None) -> str | None:
    """None if TensorFlow imports with ``python``, else the reason it is skipped."""
    if not python:
        return "no --tf-python given"
    try:
        proc = subprocess.run(
            [python, "-c", "import tensorflow as tf; print(tf.__version__)"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{python}: {exc}"
    return None if proc.returncode == 0 else f"tensorflow does not import with {python}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=6400, help="rows per epoch (batch 64)")
    parser.add_argument("--epochs", type=int, default=1, help="timed epochs per run (after one warm-up)")
    parser.add_argument("--tf-python", default=None, help="a Python with tensorflow installed")
    parser.add_argument(
        "--threads", type=int, default=0, help="compute threads per system (0: each library's default, all cores)"
    )
    parser.add_argument(
        "--compiled",
        action="store_true",
        help="also time the plain loop with its model through torch.compile (what tf.function could use)",
    )
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "custom_loop.md"))
    args = parser.parse_args()

    systems = ["unison", "plain"] + (["plain-compiled"] if args.compiled else [])
    tf_skip = tf_available(args.tf_python)
    if tf_skip is None:
        systems.append("tf")
    times: dict[str, list[float]] = {s: [] for s in systems}
    ratios: dict[str, list[float]] = {"unison/plain": [], "unison/tf": [], "compiled/plain": []}
    warmups: list[float] = []
    for r in range(args.repeats):
        order = systems[r % len(systems) :] + systems[: r % len(systems)]
        got = {}
        for system in order:
            result = run_child(system, args)
            if isinstance(result, str):
                raise SystemExit(f"{system} failed: {result}")
            got[system] = result["seconds"] / result["steps"] * 1e3
            times[system].append(got[system])
            if system == "plain-compiled":
                warmups.append(result["warmup_seconds"])
            print(
                f"repeat {r + 1}/{args.repeats} {system}: {got[system]:.2f} ms/step (loss {result['loss']:.4f})",
                flush=True,
            )
        ratios["unison/plain"].append(got["unison"] / got["plain"])
        if "tf" in got:
            ratios["unison/tf"].append(got["unison"] / got["tf"])
        if "plain-compiled" in got:
            ratios["compiled/plain"].append(got["plain-compiled"] / got["plain"])

    command = "python benchmarks/custom_loop.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [
        "# Custom training loop: unison vs plain PyTorch vs TensorFlow",
        "",
        f"Command: `{command}`",
        "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; {args.repeats} repeats, "
        f"{args.rows // 64} steps of batch 64 timed per run after a warm-up epoch, one CPU replica, "
        f"{args.threads or 'default'} compute threads.",
        "",
        "| system | median ms/step | runs (ms/step) |",
        "| --- | --- | --- |",
    ]
    names = {
        "unison": "unison (tutorial loop, `import unison as tf`)",
        "plain": "plain PyTorch loop",
        "tf": "TensorFlow (tutorial loop, MirroredStrategy)",
        "plain-compiled": "plain PyTorch loop, model through `torch.compile`",
    }
    for s in systems:
        lines.append(f"| {names[s]} | {statistics.median(times[s]):.2f} | {', '.join(f'{t:.2f}' for t in times[s])} |")
    lines += [
        "",
        "| ratio (median of per-repeat ratios) | value | target |",
        "| --- | --- | --- |",
        f"| unison / plain PyTorch | {statistics.median(ratios['unison/plain']):.3f} | <= 1.15 |",
    ]
    if ratios["unison/tf"]:
        lines.append(f"| unison / TensorFlow | {statistics.median(ratios['unison/tf']):.3f} | <= 0.5 |")
    else:
        lines.append(f"| unison / TensorFlow | skipped: {tf_skip} | <= 0.5 |")
    if ratios["compiled/plain"]:
        lines.append(
            f"| plain PyTorch with torch.compile / eager plain PyTorch | "
            f"{statistics.median(ratios['compiled/plain']):.3f} | (decides tf.function's path) |"
        )
        lines.append(
            f"\nThe compiled loop's warm-up epoch (compilation included) took a median of "
            f"{statistics.median(warmups):.1f} s (torch.compile reuses its on-disk cache after the first run)."
        )
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
