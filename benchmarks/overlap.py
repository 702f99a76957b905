"""How much of a step's communication the DistributedOptimizer hides behind backward (issue 28, item 2).

For each model, one ``torchrun --standalone --nproc-per-node N`` job (gloo on loopback, one torch
thread per rank, unison's shared-memory all-reduce between the ranks of this host) measures three
things per step, interleaved round by round (order rotated every round) so that load from other
programs hits all of them alike:

* ``compute``: zero_grad + forward + backward + fused Adam step, no communication at all (the
  ranks compute side by side, sharing the machine as in the real step);
* ``comm``: only the all-reduces of one step: unison's bucket layout for this model (same
  buffers, gradient-used and non-finite flags included) through the job's Communicator, no compute;
* ``step``: the real step, ``unison.DistributedOptimizer`` (defaults: buckets reduced as their
  last gradient arrives during backward) around the same fused Adam;
* ``step_small`` (``--small-cap-mb``): the same with small buckets, launched earlier in backward.

Each time is the slowest rank's. Per round: ratio = step / max(compute, comm) (target <= 1.15:
communication hidden behind compute, or compute behind communication, within 15%); beside it the
same step's CPU time over compute's (the slowest rank's ``process_time``: what the synchronisation
adds in work, which other programs on a shared machine do not inflate). The table gives medians
over the rounds with their min-max.

Models: ``cnn``: the CNN of TF's custom-training tutorial / the seed exercise (Conv 32 3x3 relu,
max-pool, Conv 64 3x3 relu, max-pool, flatten, Dense 64 relu, Dense 10; 28x28x1 inputs, NCHW),
global batch 64; ``gpt``: the GPT of examples/gpt.py (byte vocabulary, d_model 128, 2 blocks,
4 heads, sequence 64), global batch 32 sequences, as benchmarks/gpt_speed.py.

    python benchmarks/overlap.py --models cnn,gpt --rounds 7 --steps 10
    python benchmarks/overlap.py --models cnn --rounds 2 --steps 2      # smoke run
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
import tempfile
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SYSTEMS = ("compute", "comm", "step", "step_small")
BATCH = {"cnn": 64, "gpt": 32}
LABEL = {
    "cnn": "TF tutorial CNN (122,570 parameters), global batch 64",
    "gpt": "examples/gpt.py GPT (d_model 128, 2 blocks, seq 64), global batch 32",
}


# --- the worker (one per rank, under torchrun) ---------------------------------------------------
def _model(name: str) -> Any:
    import torch

    torch.manual_seed(0)
    if name == "cnn":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from tutorial_cnn import tutorial_cnn

        return tutorial_cnn()
    sys.path.insert(0, os.path.join(REPO, "examples"))
    from gpt import GPT

    model = GPT(256, 64, 128, 4, 2)
    model.build((1, 64))
    return model


def _batches(name: str, local: int, rank: int) -> list[tuple[Any, Any]]:
    import torch

    g = torch.Generator().manual_seed(1000 + rank)
    if name == "cnn":
        return [
            (torch.rand(local, 1, 28, 28, generator=g), torch.randint(0, 10, (local,), generator=g)) for _ in range(4)
        ]
    return [
        (torch.randint(0, 256, (local, 64), generator=g), torch.randint(0, 256, (local, 64), generator=g))
        for _ in range(4)
    ]


def _train_step(model: Any, opt: Any, data: list[tuple[Any, Any]]) -> Callable[[int], None]:
    import torch.nn.functional as F

    def step(i: int) -> None:
        x, y = data[i % len(data)]
        opt.zero_grad(set_to_none=True)
        logits = model(x)
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).backward()
        opt.step()

    return step


def _comm_step(model: Any, cap_mb: float) -> tuple[Callable[[int], None], int]:
    import torch

    from unison.comm.communicator import joined
    from unison.optim.buckets import plan_buckets

    comm = joined()
    params = [p for p in model.parameters() if p.requires_grad]
    bufs = [torch.ones(b.numel + len(b.params) + 1) for b in plan_buckets(params, int(cap_mb * 1024 * 1024))]

    def step(i: int) -> None:
        pending = [comm.all_reduce_async(b, name="bench.overlap") for b in bufs]
        for p in pending:
            comm.wait(p)

    return step, len(bufs)


def worker(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    import unison

    torch.set_num_threads(1)
    unison.init()
    rank, world = unison.rank(), unison.size()
    local = BATCH[args.model] // world
    data = _batches(args.model, local, rank)
    made: dict[str, Callable[[int], None]] = {}
    buckets: dict[str, int] = {}
    for system in SYSTEMS:
        model = _model(args.model)
        params = [p for p in model.parameters() if p.requires_grad]
        if system == "compute":
            made[system] = _train_step(model, torch.optim.Adam(params, lr=1e-3, fused=True), data)
        elif system == "comm":
            made[system], buckets[system] = _comm_step(model, 25.0)
        else:
            cap = 25.0 if system == "step" else args.small_cap_mb
            opt = unison.DistributedOptimizer(
                torch.optim.Adam(params, lr=1e-3, fused=True),
                named_parameters=model.named_parameters(),
                bucket_cap_mb=cap,
            )
            unison.broadcast_parameters(model.state_dict(), root_rank=0)
            made[system] = _train_step(model, opt, data)
            buckets[system] = len(opt._buckets)
    for system in SYSTEMS:  # warm-up: allocator, oneDNN primitives, the shared-memory segments
        for i in range(args.warmup):
            made[system](i)

    def timed(step: Callable[[int], None]) -> tuple[float, float]:
        dist.barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(args.steps):
            step(i)
        wall = torch.tensor([time.perf_counter() - t0, time.process_time() - c0], dtype=torch.float64)
        dist.all_reduce(wall, op=dist.ReduceOp.MAX)  # the slowest rank's time and CPU
        return float(wall[0]) / args.steps, float(wall[1]) / args.steps

    rounds: list[dict[str, dict[str, float]]] = []
    for r in range(args.rounds):
        order = list(SYSTEMS[r % len(SYSTEMS) :] + SYSTEMS[: r % len(SYSTEMS)])
        result = {}
        for system in order:
            wall, cpu = timed(made[system])
            result[system] = {"s_per_step": wall, "cpu_s_per_step": cpu}
        rounds.append(result)
    if rank == 0:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"model": args.model, "world": world, "buckets": buckets, "rounds": rounds}, fh)
    dist.barrier()


# --- the driver -----------------------------------------------------------------------------------
def run_model(model: str, args: argparse.Namespace) -> dict[str, Any]:
    out = os.path.join(tempfile.mkdtemp(prefix="overlap-"), f"{model}.json")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        str(args.replicas),
        os.path.abspath(__file__),
        "--worker",
        "--model",
        model,
        "--rounds",
        str(args.rounds),
        "--steps",
        str(args.steps),
        "--warmup",
        str(args.warmup),
        "--small-cap-mb",
        str(args.small_cap_mb),
        "--out",
        out,
    ]
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.join(REPO, "src"), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    if proc.returncode != 0 or not os.path.exists(out):
        raise SystemExit(f"{model}: the torchrun job failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
    with open(out, encoding="utf-8") as fh:
        return dict(json.load(fh))


def summarize(res: dict[str, Any]) -> list[list[str]]:
    rows = []
    rounds = res["rounds"]

    def med(xs: list[float]) -> float:
        return statistics.median(xs)

    comp = [r["compute"]["s_per_step"] for r in rounds]
    comm = [r["comm"]["s_per_step"] for r in rounds]
    for system in ("step", "step_small"):
        step = [r[system]["s_per_step"] for r in rounds]
        ratio = [s / max(c, m) for s, c, m in zip(step, comp, comm)]
        cpu = [r[system]["cpu_s_per_step"] / r["compute"]["cpu_s_per_step"] for r in rounds]
        buckets = res["buckets"][system]
        rows.append(
            [
                LABEL[res["model"]],
                f"{system} ({buckets} bucket{'s' if buckets != 1 else ''})",
                f"{med(comp) * 1e3:.2f}",
                f"{med(comm) * 1e3:.3f}",
                f"{med(step) * 1e3:.2f}",
                f"**{med(ratio):.3f}** ({min(ratio):.3f}-{max(ratio):.3f})",
                "met" if med(ratio) <= 1.15 else "not met",
                f"{med(cpu):.3f} ({min(cpu):.3f}-{max(cpu):.3f})",
            ]
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", default="cnn", help=argparse.SUPPRESS)
    ap.add_argument("--out", default="", help="worker: its JSON; driver: also write the markdown here")
    ap.add_argument("--models", default="cnn,gpt")
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds (the repeats the medians are over)")
    ap.add_argument("--steps", type=int, default=10, help="timed steps per system per round")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--small-cap-mb", type=float, default=0.25, help="bucket cap of the step_small system")
    ap.add_argument("--timeout", type=float, default=1800.0)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    load0 = os.getloadavg()
    results = [run_model(m, args) for m in args.models.split(",")]
    load1 = os.getloadavg()
    lines = [
        f"Command: `python benchmarks/overlap.py {shlex.join(sys.argv[1:])}`",
        "",
        f"{started}; {args.replicas} replicas (torchrun, 1 torch thread each, shared-memory all-reduce); "
        f"{args.rounds} rounds x {args.steps} steps per system; load average at start "
        f"{load0[0]:.2f} / end {load1[0]:.2f} ({os.cpu_count()} cores)",
        "",
        "| model | system | compute ms | comm ms | step ms | step / max(compute, comm), median (min-max) "
        "| target <= 1.15 | CPU time per step: step / compute, median (min-max) |",
        "|---|---|---:|---:|---:|---|---|---:|",
    ]
    for res in results:
        for row in summarize(res):
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Raw rounds: `" + json.dumps(results) + "`")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
