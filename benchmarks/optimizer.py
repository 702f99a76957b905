"""DistributedOptimizer speed: unison against DistributedDataParallel, side by side in one run.

Every repeat starts fresh processes: one ``python -m torch.distributed.run --standalone
--nproc-per-node 2`` job (gloo, ``GLOO_SOCKET_IFNAME=lo``, one thread per rank) that measures all
the world-size-2 systems of every model interleaved (the timed steps are cut into ``--chunks``
slices and the systems take turns slice by slice, in an order rotated from one repeat to the next),
and one single-process plain loop (``plain1``, global batch, one thread); the two jobs alternate
which goes first. Tables report medians over the repeats, the spread ((max-min)/median) as the
noise indicator, and each ratio as the median of the per-repeat ratios (both sides measured in the
same job, minutes apart at most). The programs live in ``benchmarks/optimizer_programs/``:

(a) step time (zero_grad + forward + backward + optimizer step, Adam, synthetic fixed batches,
    fixed global batch split over the ranks) of ``unison.DistributedOptimizer`` (defaults; fp16
    compression; a small bucket cap) vs ``DistributedDataParallel`` (defaults), on the seed MLP,
    Keras' mnist_convnet CNN and 75 x Linear(64, 64) (150 tensors), plus ``plain1``;
(b) flat all-reduce throughput: raw ``torch.distributed.all_reduce`` vs unison's Communicator
    (``all_reduce_async`` + ``wait``) vs the whole DistributedOptimizer bucket path (pack 150
    gradients + flags, reduce, check flags, write back), and fused vs one all-reduce per tensor;
(c) overlap: compute-only step (no communication), communication-only step (the same bucket
    all-reduces, no compute), and hidden fraction = (compute + comm - step) / comm;
and bytes handed to all-reduce per step (``Communicator.bytes_reduced``), fp16 vs none.

    python benchmarks/optimizer.py --repeats 5 --json benchmarks/results/optimizer.json
    python benchmarks/optimizer.py --repeats 1 --steps-scale 0.1 --models many   # smoke run
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
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "optimizer_programs")
WORKER = os.path.join(PROGRAMS, "worker.py")
MODEL_LABEL = {"mlp": "seed MLP 784-128-10", "cnn": "mnist_convnet CNN", "many": "75 x Linear(64,64) (150 tensors)"}


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["GLOO_SOCKET_IFNAME"] = "lo"
    e["OMP_NUM_THREADS"] = "1"
    e["PYTHONUNBUFFERED"] = "1"
    return e


def job_command(kind: str, repeat: int, out: str, args: argparse.Namespace) -> list[str]:
    tail = [
        WORKER,
        "--models",
        args.models,
        "--repeat",
        str(repeat),
        "--steps-scale",
        str(args.steps_scale),
        "--big-mb",
        str(args.big_mb),
        "--chunks",
        str(args.chunks),
        "--out",
        out,
    ]
    if kind == "dist2":
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", *tail]
    return [sys.executable, *tail]


def run_job(kind: str, repeat: int, args: argparse.Namespace, tmp: str) -> dict:
    out = os.path.join(tmp, f"{kind}-r{repeat}.json")
    cmd = job_command(kind, repeat, out, args)
    log = os.path.join(tmp, f"{kind}-r{repeat}.log")
    t0 = time.time()
    with open(log, "w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env(), timeout=args.timeout, check=False)
    if proc.returncode != 0 or not os.path.exists(out):
        with open(log) as f:
            raise RuntimeError(f"{kind} repeat {repeat} failed (rc={proc.returncode}):\n{f.read()[-4000:]}")
    print(f"  repeat {repeat} {kind}: {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    with open(out) as f:
        return json.load(f)


def loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def spread(xs: list[float]) -> float:
    return (max(xs) - min(xs)) / med(xs) if len(xs) > 1 and med(xs) else 0.0


def ms(x: float) -> str:
    return f"{x * 1e3:.2f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def report(runs: list[dict], plain: list[dict], args: argparse.Namespace) -> str:
    models = args.models.split(",")
    out = []
    # (a) step time -----------------------------------------------------------------------------
    systems = ["ddp", "unison", "unison_fp16", "unison_small", "unison_gloo", "compute"]
    rows = []
    for m in models:
        cfg = runs[0]["models"][m]["config"]
        row = [f"{MODEL_LABEL[m]} (batch {cfg['batch']}, {cfg['steps']} steps)"]
        for s in systems:
            xs = [r["models"][m][s]["s_per_step"] for r in runs]
            row.append(f"{ms(med(xs))} ±{spread(xs) * 100:.0f}%")
        xs = [p["models"][m]["plain1"]["s_per_step"] for p in plain] if plain else []
        row.append(f"{ms(med(xs))} ±{spread(xs) * 100:.0f}%" if xs else "-")
        for s in ("unison", "unison_fp16", "unison_small", "unison_gloo"):
            ratios = [r["models"][m][s]["s_per_step"] / r["models"][m]["ddp"]["s_per_step"] for r in runs]
            row.append(f"{med(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")
        rows.append(row)
    out.append("### (a) Step time, world size 2 (ms per step: median over repeats ±spread)\n")
    out.append(
        table(
            [
                "model",
                "DDP",
                "unison",
                "unison fp16",
                "unison small buckets",
                "unison on gloo",
                "compute only (no comm)",
                "plain1 (1 process, global batch)",
                "unison/DDP (target <= 1.0)",
                "fp16/DDP",
                "small/DDP",
                "unison on gloo/DDP",
            ],
            rows,
        )
    )
    caps = ", ".join(
        f"{m}: {runs[0]['models'][m]['config']['small_cap_mb']} MB "
        f"({runs[0]['models'][m]['unison_small'].get('buckets')} buckets)"
        for m in models
    )
    out.append(
        f"\nunison default = bucket_cap_mb=25 (one bucket for each of these models); small-bucket "
        f"cap: {caps}. unison, fp16 and small buckets all-reduce through shared memory (both ranks "
        "on this host); 'unison on gloo' is the default configuration with gloo instead, as DDP "
        "uses. Ratios: median of per-repeat ratios (min-max).\n"
    )
    # bytes -----------------------------------------------------------------------------------
    rows = []
    for m in models:
        r0 = runs[0]["models"][m]
        b, b16 = r0["unison"]["bytes_per_step"], r0["unison_fp16"]["bytes_per_step"]
        rows.append(
            [
                MODEL_LABEL[m],
                f"{b:,.0f}",
                f"{b16:,.0f}",
                f"{b16 / b:.3f}",
                f"{r0['unison']['collectives_per_step']:.0f}",
                f"{r0['unison_small']['collectives_per_step']:.0f}",
            ]
        )
    out.append("### Bytes handed to all-reduce per step and rank (Communicator.bytes_reduced)\n")
    out.append(
        table(
            ["model", "none", "fp16", "fp16/none", "collectives/step (default)", "collectives/step (small buckets)"],
            rows,
        )
    )
    # (c) overlap -----------------------------------------------------------------------------
    rows = []
    for m in models:
        for label, s, c in (
            ("unison default (1 bucket, launched by the last hook)", "unison", "comm_1"),
            ("unison small buckets", "unison_small", "comm_small"),
            ("DDP (comm estimated by comm_1)", "ddp", "comm_1"),
        ):
            hid, comp, comm, step = [], [], [], []
            for r in runs:
                d = r["models"][m]
                cp, cm, st = d["compute"]["s_per_step"], d[c]["s_per_step"], d[s]["s_per_step"]
                hid.append((cp + cm - st) / cm)
                comp.append(cp)
                comm.append(cm)
                step.append(st)
            rows.append(
                [
                    MODEL_LABEL[m],
                    label,
                    ms(med(comp)),
                    ms(med(comm)),
                    ms(med(step)),
                    ms(med([s_ - c_ for s_, c_ in zip(step, comp)])),
                    f"{med(hid) * 100:.0f}% ({min(hid) * 100:.0f}..{max(hid) * 100:.0f})",
                ]
            )
    out.append("\n### (c) Overlap: how much communication is hidden\n")
    out.append(
        table(
            [
                "model",
                "system",
                "compute ms",
                "comm ms",
                "step ms",
                "step - compute ms",
                "hidden = (compute+comm-step)/comm (min..max)",
            ],
            rows,
        )
    )
    out.append(
        "\nNegative hidden fraction: the step costs more than compute + comm (overheads of the "
        "synchronisation path beyond the wire time).\n"
    )
    # (b) throughput --------------------------------------------------------------------------
    if "throughput" in runs[0]:
        rows = []
        for label, res in runs[0]["throughput"].items():
            for s in res:
                ts = [r["throughput"][label][s]["s_per_op"] for r in runs]
                raw = [r["throughput"][label]["raw"]["s_per_op"] for r in runs]
                ratio = [rw / t for rw, t in zip(raw, ts)]
                nbytes = res[s]["bytes"]
                rows.append(
                    [
                        f"{label} ({nbytes / 1e6:.2f} MB)",
                        s,
                        ms(med(ts)) + f" ±{spread(ts) * 100:.0f}%",
                        f"{nbytes / med(ts) / 1e9:.3f}",
                        f"{med(ratio):.2f}x ({min(ratio):.2f}-{max(ratio):.2f})",
                    ]
                )
        out.append("### (b) All-reduce throughput, world size 2 (raw: gloo on loopback)\n")
        out.append(
            table(["buffer", "path", "ms per op", "GB/s (bytes/time)", "throughput vs raw (target >= 0.9)"], rows)
        )
        out.append(
            "\nraw = dist.all_reduce (blocking); raw_async = async_op=True + wait; comm = unison "
            "Communicator.all_reduce_async + wait (shared memory); comm_gloo = the same through gloo; bucket_path = DistributedOptimizer.synchronize() "
            "with 150 gradients present (pack + all-reduce + flags + write-back); per_tensor* = one "
            "all-reduce per gradient tensor (blocking / async then wait all / via Communicator).\n"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--models", default="mlp,cnn,many")
    ap.add_argument("--steps-scale", type=float, default=1.0, help="multiply every model's timed steps")
    ap.add_argument("--big-mb", type=float, default=25.0, help="size of the large flat all-reduce in (b)")
    ap.add_argument(
        "--chunks",
        type=int,
        default=5,
        help="within a repeat, the systems take turns on this many slices of the timed steps",
    )
    ap.add_argument("--no-plain1", action="store_true")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", help="write every raw measurement here")
    ap.add_argument("--log-dir", help="keep the children's logs here")
    args = ap.parse_args()
    command = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0])] + sys.argv[1:])
    tmp = args.log_dir or tempfile.mkdtemp(prefix="unison-optbench-")
    os.makedirs(tmp, exist_ok=True)
    runs, plain, loads = [], [], []
    started = datetime.datetime.now()
    for r in range(args.repeats):
        kinds = ["dist2"] + ([] if args.no_plain1 else ["plain1"])
        if r % 2:
            kinds.reverse()
        for kind in kinds:
            loads.append(loadavg())
            (runs if kind == "dist2" else plain).append(run_job(kind, r, args, tmp))
    import torch  # only for the version line

    header = [
        f"command: `{command}`",
        f"date: {started:%Y-%m-%d %H:%M} (took {(datetime.datetime.now() - started).total_seconds() / 60:.1f} min)",
        (
            f"machine: {platform.node()}, {os.cpu_count()} CPUs, {platform.platform()}, Python "
            f"{platform.python_version()}, torch {torch.__version__}, gloo on lo, 1 thread per rank"
        ),
        f"1-min load average at the start of each job: {', '.join(f'{x:.1f}' for x in loads if x is not None)}",
        f"repeats: {args.repeats}, each with the timed steps cut into {args.chunks} slices the systems take turns on",
    ]
    text = "\n".join(f"- {h}" for h in header) + "\n\n" + report(runs, plain, args)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command, "header": header, "runs": runs, "plain1": plain}, f, indent=1)


if __name__ == "__main__":
    main()
