"""Real models' training step: unison vs TensorFlow vs a plain PyTorch loop, fp32 and mixed_bfloat16.

The models (``models_programs/keras_models.py``, one Keras source run as ``import unison as tf``
and as ``import tensorflow as tf``; ``models_programs/torch_models.py``, the same architectures in
plain PyTorch): ResNet-50 (``keras.applications.ResNet50(weights=None)``, 224x224, batch 4 and
32, SGD: Horovod's synthetic benchmark step), TF's DCGAN tutorial (generator and discriminator,
batch 64), keras.io's FCN time-series classifier (Conv1D + BatchNorm, 500 steps, batch 32), its
Embedding + Conv1D text classifier (500 tokens, batch 32), its one-block Transformer classifier
(MultiHeadAttention + LayerNorm, 200 tokens, batch 32) and TF's tutorial CNN (batch 64). Each
step is ``GradientTape`` in ``tf.function`` (the plain loop: ``loss.backward()``; under
``mixed_bfloat16`` it runs its forward in ``torch.autocast``).

Every (system, model, policy) is a fresh process (``--tf-python`` runs TensorFlow; default this
Python) that times ``steps`` steps after warm-up; the systems alternate within each round, in an
order rotated between rounds. The table gives the median step time over all rounds' steps and
the median of per-round ratios. ``--contend N`` starts N busy processes (``while True: pass``)
for the whole run, as a shared host has. The plain PyTorch loop runs with the OpenMP setting
unison's own processes end up with for that load, so that its column measures the architecture
and not OpenMP's spinning: ``GOMP_SPINCOUNT=30000`` on a quiet host (what ``import unison`` sets,
``core/threads.py``), ``OMP_WAIT_POLICY=PASSIVE`` with ``--contend`` (unison turns spinning down
under load, ``core/contention.py``); ``--torch-default-omp`` times torch's own default instead.

    python benchmarks/models_vs_tf.py --quick
    python benchmarks/models_vs_tf.py --models cnn,fcn,resnet50_b4 --rounds 3 --contend 2
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PROGRAM = os.path.join(HERE, "models_programs", "run_model.py")
# name: (model, batch, timed steps per process, warm-up steps)
MODELS = {
    "resnet50_b4": ("resnet50", 4, 5, 2),
    "resnet50_b32": ("resnet50", 32, 2, 1),
    "dcgan": ("dcgan", 64, 5, 2),
    "fcn": ("fcn", 32, 5, 2),
    "text": ("text", 32, 5, 2),
    "transformer": ("transformer", 32, 5, 2),
    "cnn": ("cnn", 64, 10, 3),
}
QUICK = ("cnn", "fcn", "resnet50_b4")
SYSTEMS = ("unison", "tensorflow", "torch")
SHORT = {"float32": "fp32", "mixed_bfloat16": "bf16"}


def run_child(system: str, model: str, policy: str, args: argparse.Namespace, profile: bool = False) -> dict:
    name, batch, steps, warmup = MODELS[model]
    env = {
        **os.environ,
        "BENCH_SYSTEM": system,
        "BENCH_MODEL": name,
        "BENCH_BATCH": str(batch),
        "BENCH_POLICY": policy,
        "BENCH_STEPS": str(max(1, round(steps * args.steps_scale))),
        "BENCH_WARMUP": str(warmup),
        "BENCH_PROFILE": "1" if profile else "0",
        "PYTHONUNBUFFERED": "1",
        "TF_CPP_MIN_LOG_LEVEL": "3",
    }
    python = sys.executable
    if system == "tensorflow":
        env.pop("PYTHONPATH", None)
        env["CUDA_VISIBLE_DEVICES"] = ""
        python = args.tf_python
    elif system == "unison":
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    elif not args.torch_default_omp and not any(k in env for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")):
        if args.contend:
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        else:
            env["GOMP_SPINCOUNT"] = "30000"
    proc = subprocess.run([python, PROGRAM], capture_output=True, text=True, env=env, timeout=args.timeout)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-3:] if proc.stderr.strip() else []
        raise SystemExit(f"{system} {model} ({policy}) failed, exit {proc.returncode}: {' | '.join(tail)}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        return "uptime unavailable"


def start_contenders(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_contenders(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait(timeout=30)


def ratio_cell(rounds: list[dict], a: str, b: str) -> str:
    values = [r[a] / r[b] for r in rounds if a in r and b in r and r[b] > 0]
    return f"{statistics.median(values):.2f}x" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    parser.add_argument("--policies", default="float32,mixed_bfloat16")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--rounds", type=int, default=3, help="rounds of interleaved processes")
    parser.add_argument("--steps-scale", type=float, default=1.0, help="multiply each model's timed steps")
    parser.add_argument("--contend", type=int, default=0, help="start N busy processes for the whole run")
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}, fp32, 2 rounds")
    parser.add_argument("--profile", action="store_true", help="add unison's top kernels per model (one more run)")
    parser.add_argument("--tf-python", default=sys.executable, help="a Python with tensorflow installed")
    parser.add_argument("--torch-default-omp", action="store_true", help="plain PyTorch with its own OpenMP policy")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--out", default=None, help="also write the markdown table to this file")
    args = parser.parse_args()
    models = list(QUICK) if args.quick else [m.strip() for m in args.models.split(",") if m.strip()]
    policies = ["float32"] if args.quick else [p.strip() for p in args.policies.split(",") if p.strip()]
    rounds = 2 if args.quick and args.rounds == 3 else args.rounds
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for m in models:
        if m not in MODELS:
            raise SystemExit(f"unknown model {m!r}; choose from {', '.join(MODELS)} (--models a,b)")
    command = "python benchmarks/models_vs_tf.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    print(f"Command: `{command}`", flush=True)
    loads = [uptime()]
    print(f"Load before: {loads[0]}; competing busy processes: {args.contend}", flush=True)
    contenders = start_contenders(args.contend)
    steps: dict[tuple[str, str, str], list[float]] = {}
    per_round: dict[tuple[str, str], list[dict]] = {}
    profiles: dict[tuple[str, str], list] = {}
    began = time.time()
    try:
        for r in range(rounds):
            for model in models:
                for policy in policies:
                    order = systems[r % len(systems) :] + systems[: r % len(systems)]
                    got: dict[str, float] = {}
                    for system in order:
                        result = run_child(system, model, policy, args)
                        steps.setdefault((model, policy, system), []).extend(result["wall_ms"])
                        got[system] = statistics.median(result["wall_ms"])
                        print(f"round {r} {model} {SHORT[policy]} {system}: {got[system]:.1f} ms", flush=True)
                    per_round.setdefault((model, policy), []).append(got)
            loads.append(uptime())
        if args.profile:
            for model in models:
                profiles[(model, "float32")] = run_child("unison", model, "float32", args, profile=True)["profile"]
    finally:
        stop_contenders(contenders)
    loads.append(uptime())
    lines = [
        f"Command: `{command}`; {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{(time.time() - began) / 60:.0f} min; competing busy processes: {args.contend}.",
        "",
        "Load (uptime) before, after each round, at the end: "
        + " / ".join(line.split("load average:")[-1].strip() for line in loads),
        "",
        "| model | policy | unison (ms) | TensorFlow (ms) | plain PyTorch (ms) | unison / TF | unison / PyTorch |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for model in models:
        for policy in policies:
            cells = []
            for system in SYSTEMS:
                values = steps.get((model, policy, system))
                cells.append(f"{statistics.median(values):.1f}" if values else "-")
            rr = per_round.get((model, policy), [])
            lines.append(
                f"| {model} | {SHORT[policy]} | {' | '.join(cells)} | {ratio_cell(rr, 'unison', 'tensorflow')} "
                f"| {ratio_cell(rr, 'unison', 'torch')} |"
            )
    for (model, _), top in profiles.items():
        lines += ["", f"unison's top kernels, {model} fp32 (name, calls, self CPU ms):", ""]
        lines += [f"- {name}: {calls} calls, {ms} ms" for name, calls, ms in top]
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
