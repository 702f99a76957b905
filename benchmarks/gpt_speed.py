"""Tokens/s of the small GPT (examples/gpt.py): unison.keras fit vs a raw loop with
DistributedOptimizer vs the same model under torchrun + DistributedDataParallel.

Every configuration is a fresh job started the way its users start it:

* ``fit``: ``python gpt_speed.py --worker fit --replicas N`` (``MirroredStrategy`` over N CPU
  devices, ``model.fit``; the strategy starts the replica processes);
* ``raw``: ``python -m unison.cli launch --nproc-per-node N gpt_speed.py --worker raw``
  (a raw PyTorch loop, ``unison.DistributedOptimizer``, as examples/gpt_raw_loop.py);
* ``ddp``: ``python -m torch.distributed.run --standalone --nproc-per-node N gpt_speed.py
  --worker ddp`` (the same loop with the model wrapped in ``DistributedDataParallel``, gloo).

All train the same model (the ``GPT`` Keras model of examples/gpt.py, which is a
``torch.nn.Module``) with AdamW on the same global batch of byte sequences, every replica on its
share of the rows, with ``cores // N`` torch threads per process (``--threads`` sets it). Precision ``float32`` or
``mixed_bfloat16`` (autocast to bfloat16, variables float32). Each job times ``--steps`` steps
after ``--warmup`` untimed ones on rank 0; the table gives the median over ``--repeats`` jobs
(configurations take turns within each repeat, so machine noise hits them alike) of each job's
median step time, and tokens/s = global batch x sequence length / step time.

    PYTHONPATH=src python benchmarks/gpt_speed.py                 # the full table (~10 min)
    PYTHONPATH=src python benchmarks/gpt_speed.py --repeats 1 --steps 10 --out /tmp/gpt.md   # smoke

``--interleaved`` measures one replica differently: ``fit`` and the raw loop run in ONE process
on two copies of the same model, taking turns every ``--steps`` steps for ``--repeats`` rounds,
so that the host's noise between processes (on a shared VM the same job's step time varies up
to 2.5x from one start to the next) hits both alike. It prints the median step of each and the
median of the per-round ratios:

    PYTHONPATH=src python benchmarks/gpt_speed.py --interleaved --repeats 8 --steps 10 --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SYSTEMS = ("fit", "raw", "ddp")


# --- the program each job runs ------------------------------------------------------------------
def _setup(args: argparse.Namespace, world: int) -> tuple[Any, Any, Any]:
    import torch

    sys.path.insert(0, os.path.join(REPO, "examples"))
    from gpt import GPT, make_sequences, read_corpus

    torch.set_num_threads(_threads(args, world))
    x, y = make_sequences(read_corpus(400_000), args.seq_len)
    torch.manual_seed(0)
    model = GPT(256, args.seq_len, args.d_model, args.heads, args.layers)
    model.build((1, args.seq_len))
    return model, torch.from_numpy(x), torch.from_numpy(y)


def _threads(args: argparse.Namespace, replicas: int) -> int:
    """torch threads per process: ``--threads``, else the cores split over the replicas."""
    return args.threads or max(1, (os.cpu_count() or 1) // replicas)


def _raw_step(model: Any, opt: Any, xb: Any, yb: Any, autocast: Any) -> None:
    """One step of the raw loop: forward (autocast when bf16), float32 cross-entropy, update."""
    import torch.nn.functional as F

    with autocast:
        logits = model(xb)
    loss = F.cross_entropy(logits.float().reshape(-1, 256), yb.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()


def _loop(
    args: argparse.Namespace, model: Any, opt: Any, x: Any, y: Any, rank: int, world: int
) -> tuple[list[float], list[float]]:
    import torch

    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "mixed_bfloat16")
    model.train()
    times, cpu = [], []
    for step in range(args.warmup + args.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        rows = slice(
            step * args.batch + rank * args.batch // world, step * args.batch + (rank + 1) * args.batch // world
        )
        _raw_step(model, opt, x[rows], y[rows], autocast)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return times[args.warmup :], cpu[args.warmup :]


def worker(args: argparse.Namespace) -> None:
    import torch

    if args.worker == "fit":
        import unison as tf
        from unison import keras

        keras.mixed_precision.set_global_policy(args.precision)
        devices = [f"/cpu:{i}" for i in range(args.replicas)] if args.replicas > 1 else None
        strategy = tf.distribute.MirroredStrategy(devices)
        model, x, y = _setup(args, args.replicas)
        with strategy.scope():
            model = type(model)(256, args.seq_len, args.d_model, args.heads, args.layers)
            model.compile(
                optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.01),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            )
        model.build((1, args.seq_len))
        stamps: list[tuple[float, float]] = []

        class Clock(keras.callbacks.Callback):
            def needs_batch_logs(self) -> bool:
                return False  # it reads the clock, not the metrics: no per-step metric reduction

            def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
                stamps.append((time.perf_counter(), time.process_time()))

        n = (args.warmup + args.steps + 1) * args.batch
        model.fit(
            x[:n].numpy(),
            y[:n].numpy(),
            batch_size=args.batch,
            epochs=1,
            shuffle=False,
            verbose=0,
            steps_per_epoch=args.warmup + args.steps + 1,
            callbacks=[Clock()],
        )
        pairs = list(zip(stamps[args.warmup :], stamps[args.warmup + 1 :]))
        if strategy.extended.should_save_summary:
            _write(args.out, [b[0] - a[0] for a, b in pairs], [b[1] - a[1] for a, b in pairs])
        return
    if args.worker == "raw":
        import unison

        unison.init()
        rank, world = unison.rank(), unison.size()
        model, x, y = _setup(args, world)
        unison.broadcast_parameters(model.state_dict(), root_rank=0)
        opt = unison.DistributedOptimizer(
            torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01), named_parameters=model.named_parameters()
        )
        times, cpu = _loop(args, model, opt, x, y, rank, world)
    else:
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel

        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        model, x, y = _setup(args, world)
        ddp = DistributedDataParallel(model)
        opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3, weight_decay=0.01)
        times, cpu = _loop(args, ddp, opt, x, y, rank, world)
    if rank == 0:
        _write(args.out, times, cpu)


def _write(path: str, times: list[float], cpu: list[float]) -> None:
    # cpu_s: this process's CPU time per step (process_time), which time taken by other jobs on a
    # shared machine does not inflate, unlike the wall-clock step time.
    with open(path, "w") as fh:
        json.dump({"step_s": statistics.median(times), "cpu_s": statistics.median(cpu), "steps": len(times)}, fh)


def interleaved(args: argparse.Namespace) -> str:
    """One replica, one process: ``fit`` and the raw loop take turns (see the module docstring)."""
    import torch

    import unison as tf
    from unison import keras

    keras.mixed_precision.set_global_policy("float32")
    raw_model, x, y = _setup(args, 1)  # built under the float32 policy: the raw loop autocasts itself
    keras.mixed_precision.set_global_policy(args.precision)
    fit_model = type(raw_model)(256, args.seq_len, args.d_model, args.heads, args.layers)
    fit_model.build((1, args.seq_len))
    fit_model.load_state_dict(raw_model.state_dict())
    with tf.distribute.get_strategy().scope():
        fit_model.compile(
            optimizer=keras.optimizers.AdamW(1e-3, weight_decay=0.01),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
    opt = torch.optim.AdamW(raw_model.parameters(), lr=1e-3, weight_decay=0.01)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "mixed_bfloat16")
    stamps: list[float] = []

    class Clock(keras.callbacks.Callback):
        def needs_batch_logs(self) -> bool:
            return False

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            stamps.append(time.perf_counter())

    k, b = args.steps, args.batch
    xs, ys = x[: (k + 1) * b].numpy(), y[: (k + 1) * b].numpy()

    def fit_chunk() -> list[float]:
        stamps.clear()
        fit_model.fit(xs, ys, batch_size=b, epochs=1, shuffle=False, verbose=0, callbacks=[Clock()])
        return [t1 - t0 for t0, t1 in zip(stamps, stamps[1:])]  # k steps (the first has no start stamp)

    def raw_chunk() -> list[float]:
        times = []
        for step in range(k + 1):
            t0 = time.perf_counter()
            rows = slice(step * b, (step + 1) * b)
            _raw_step(raw_model, opt, x[rows], y[rows], autocast)
            times.append(time.perf_counter() - t0)
        return times[1:]

    fit_chunk(), raw_chunk()  # warm-up: first-call costs stay out of both
    fit_med, raw_med, ratios = [], [], []
    for r in range(args.repeats):
        chunks = {}
        for name in ("fit", "raw") if r % 2 == 0 else ("raw", "fit"):
            chunks[name] = statistics.median(fit_chunk() if name == "fit" else raw_chunk())
        fit_med.append(chunks["fit"])
        raw_med.append(chunks["raw"])
        ratios.append(chunks["fit"] / chunks["raw"])
        print(f"round {r + 1}: fit {chunks['fit'] * 1e3:.1f} ms, raw {chunks['raw'] * 1e3:.1f} ms", file=sys.stderr)
    return (
        f"{args.precision}, 1 replica, one process, {args.repeats} rounds of {k} steps each (taking turns): "
        f"fit {statistics.median(fit_med) * 1e3:.1f} ms/step, raw loop {statistics.median(raw_med) * 1e3:.1f} "
        f"ms/step; fit / raw loop = {statistics.median(ratios):.2f}x (median of per-round ratios, "
        f"{min(ratios):.2f}-{max(ratios):.2f}; target <= 1.15x: {'met' if statistics.median(ratios) <= 1.15 else 'NOT met'})"
    )


# --- the driver ---------------------------------------------------------------------------------
def command(system: str, replicas: int, precision: str, args: argparse.Namespace, out: str) -> list[str]:
    me = os.path.abspath(__file__)
    common = [
        "--worker",
        system,
        "--replicas",
        str(replicas),
        "--precision",
        precision,
        "--out",
        out,
        "--steps",
        str(args.steps),
        "--warmup",
        str(args.warmup),
        "--batch",
        str(args.batch),
        "--seq-len",
        str(args.seq_len),
        "--d-model",
        str(args.d_model),
        "--layers",
        str(args.layers),
        "--heads",
        str(args.heads),
        "--threads",
        str(args.threads),
    ]
    if system == "fit":
        return [sys.executable, me, *common]
    if system == "fit-launch":  # the same fit program, its replicas started by `unison launch`
        common[1] = "fit"
        return [sys.executable, "-m", "unison.cli", "launch", "--nproc-per-node", str(replicas), me, *common]
    if system == "raw":
        return [sys.executable, "-m", "unison.cli", "launch", "--nproc-per-node", str(replicas), me, *common]
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        str(replicas),
        me,
        *common,
    ]


def run_one(system: str, replicas: int, precision: str, args: argparse.Namespace) -> tuple[float, float]:
    env = dict(os.environ)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    env["PYTHONPATH"] = os.path.join(REPO, "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = str(_threads(args, replicas))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        proc = subprocess.run(
            command(system, replicas, precision, args, out),
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            cwd=REPO,
        )
        if proc.returncode != 0 or not os.path.exists(out):
            raise RuntimeError(
                f"{system} x{replicas} {precision} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
            )
        with open(out) as fh:
            result = json.load(fh)
        return float(result["step_s"]), float(result["cpu_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=SYSTEMS, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results", "gpt.md"))
    parser.add_argument("--replicas", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--precision", default="float32", help=argparse.SUPPRESS)
    parser.add_argument("--precisions", default="float32,mixed_bfloat16")
    parser.add_argument("--replica-counts", default="1,2")
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help=f"of {', '.join(SYSTEMS)} and fit-launch (fit with its replicas started by `unison launch`)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch", type=int, default=32, help="global batch (sequences)")
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch threads per process (default: the cores split over the replicas); 1 keeps "
        "the one-replica rows from collapsing on a shared machine",
    )
    parser.add_argument(
        "--interleaved",
        action="store_true",
        help="one replica: fit and the raw loop take turns in one process (see the module docstring)",
    )
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if args.interleaved:
        torch_threads = args.threads or 1
        import torch

        torch.set_num_threads(torch_threads)
        print(f"Command: `PYTHONPATH=src python {' '.join(sys.argv)}`")
        for precision in args.precisions.split(","):
            args.precision = precision
            print("* " + interleaved(args))
        return
    configs = [
        (s, int(n), p)
        for p in args.precisions.split(",")
        for n in args.replica_counts.split(",")
        for s in args.systems.split(",")
    ]
    runs: dict[tuple[str, int, str], list[tuple[float, float]]] = {c: [] for c in configs}
    for repeat in range(args.repeats):
        for config in configs:
            t0 = time.perf_counter()
            runs[config].append(run_one(*config, args))
            print(
                f"repeat {repeat + 1} {config}: step {runs[config][-1][0] * 1e3:.1f} ms, "
                f"CPU {runs[config][-1][1] * 1e3:.1f} ms "
                f"({time.perf_counter() - t0:.0f}s)",
                file=sys.stderr,
            )
    text = report(runs, args, "PYTHONPATH=src python " + " ".join(sys.argv))
    print(text)
    from unison.core.atomic_io import atomic_write_text

    atomic_write_text(args.out, text)


def report(runs: dict[tuple[str, int, str], list[tuple[float, float]]], args: argparse.Namespace, cmd: str) -> str:
    tokens = args.batch * args.seq_len
    med = {c: statistics.median(step for step, _ in v) for c, v in runs.items()}
    cpu = {c: statistics.median(c_s for _, c_s in v) for c, v in runs.items()}
    names = {
        "fit": "unison.keras fit (MirroredStrategy)",
        "raw": "raw loop + unison.DistributedOptimizer",
        "ddp": "raw loop + torch DDP (torchrun)",
        "fit-launch": "unison.keras fit under unison launch",
    }
    lines = [
        "# GPT tokens/s: unison.keras fit, raw loop with DistributedOptimizer, torchrun + DDP",
        "",
        f"Command: `{cmd}`",
        "",
        f"Model: examples/gpt.py's GPT (byte vocabulary 256, d_model {args.d_model}, {args.layers} blocks, "
        f"{args.heads} heads, sequence {args.seq_len}), AdamW, global batch {args.batch} sequences = {tokens} "
        f"tokens per step, CPU, gloo, {os.cpu_count()} cores, "
        f"{f'{args.threads} torch thread(s) per process' if args.threads else 'split over the replicas'}. Step time: median of "
        f"{args.steps} steps after {args.warmup} untimed, per job; the median over {args.repeats} jobs "
        "(configurations interleaved). Machine: shared with other jobs while measured (noisy); the "
        "ratios come from one run, side by side.",
        "",
        "| precision | replicas | system | step ms | tokens/s | vs DDP | vs raw loop | CPU ms/step (rank 0) "
        "| CPU vs raw loop |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for (system, n, precision), step in med.items():
        ddp = med.get(("ddp", n, precision))
        raw = med.get(("raw", n, precision))
        raw_cpu = cpu.get(("raw", n, precision))
        c_s = cpu[(system, n, precision)]
        lines.append(
            f"| {precision} | {n} | {names[system]} | {step * 1e3:.1f} | {tokens / step:,.0f} | "
            f"{step / ddp if ddp else float('nan'):.2f}x | {step / raw if raw else float('nan'):.2f}x | "
            f"{c_s * 1e3:.1f} | {c_s / raw_cpu if raw_cpu else float('nan'):.2f}x |"
        )
    lines += ["", "Targets: raw loop <= 1.0x DDP's step time at 2 replicas; fit <= 1.15x the raw loop."]
    for precision in args.precisions.split(","):
        raw2, ddp2, fit2 = (med.get((s, 2, precision)) for s in ("raw", "ddp", "fit"))
        if raw2 and ddp2:
            lines.append(
                f"* {precision}, 2 replicas: raw loop / DDP = {raw2 / ddp2:.2f}x "
                f"({'met' if raw2 <= ddp2 else 'NOT met'})."
            )
        for n in (1, 2):
            raw, fit = med.get(("raw", n, precision)), med.get(("fit", n, precision))
            if raw and fit:
                lines.append(
                    f"* {precision}, {n} replica(s): fit / raw loop = {fit / raw:.2f}x "
                    f"({'met' if fit <= 1.15 * raw else 'NOT met'}); CPU time per step "
                    f"{cpu[('fit', n, precision)] / cpu[('raw', n, precision)]:.2f}x."
                )
    if "float32" in args.precisions and "mixed_bfloat16" in args.precisions:
        lines += ["", "bf16 vs fp32 (tokens/s ratio, > 1: bf16 faster):", ""]
        for system in args.systems.split(","):
            for n in (int(c) for c in args.replica_counts.split(",")):
                a, b = med.get((system, n, "float32")), med.get((system, n, "mixed_bfloat16"))
                if a and b:
                    lines.append(f"* {names[system]}, {n} replica(s): {a / b:.2f}x")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
