"""Memory per replica and step time: plain data parallelism vs ZeRO-1, ZeRO-2 and full sharding (FSDP2).

Every mode trains the same >= 100M-parameter model (a stack of Linear+ReLU layers) with Adam on
N replicas (real processes, gloo on CPU), each mode in fresh processes. After the timed steps
each replica reports the bytes of tensors it holds (parameters + gradients + optimizer state,
counting only the local shard of a sharded tensor) and its process memory (current and peak
RSS). A second table measures activation checkpointing (one process, a deep MLP): the same
step with and without ``checkpoint_activations`` on every block, peak RSS above the RSS
before the step. Run:

    PYTHONPATH=src python benchmarks/sharding_memory.py            # 2 replicas, ~100M params
    PYTHONPATH=src python benchmarks/sharding_memory.py --quick    # a small model, seconds

Results (markdown) go to benchmarks/results/sharding_memory.md unless --out says otherwise.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from typing import Any

import torch

MODES = ("plain", "zero1", "zero2", "fsdp", "fsdp_keep")
LABELS = {
    "plain": "plain data parallel (DistributedOptimizer)",
    "zero1": "ZeRO-1 (shard_optimizer_state=True)",
    "zero2": "ZeRO-2 (shard_gradients=True)",
    "fsdp": "full sharding (shard_model on a meta-device model, FSDP2)",
    "fsdp_keep": "full sharding, reshard_after_forward=False",
}


def _rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MiB."""
    with open("/proc/self/statm") as fh:
        current = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return current / 2**20, peak_kib / 2**10


def build(layers: int, width: int) -> torch.nn.Sequential:
    torch.manual_seed(0)
    mods: list[torch.nn.Module] = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*mods)


def replica(mode: str, layers: int, width: int, batch: int, steps: int) -> dict[str, Any]:
    torch.set_num_threads(1)
    import unison
    from unison.distribute.sharding import replica_state_bytes, shard_model

    unison.init(timeout_seconds=600)
    if mode.startswith("fsdp"):
        # built on the meta device: no replica ever holds the whole model, even at start
        with torch.device("meta"):
            model = build(layers, width)
        model = shard_model(model, reshard_after_forward=(mode == "fsdp"))
        opt: Any = torch.optim.Adam(model.parameters(), lr=1e-4)
    else:
        model = build(layers, width)
        opt = unison.DistributedOptimizer(
            torch.optim.Adam(model.parameters(), lr=1e-4),
            named_parameters=model.named_parameters(),
            shard_optimizer_state=(mode == "zero1"),
            shard_gradients=(mode == "zero2"),
        )
    gen = torch.Generator().manual_seed(unison.rank())
    x = torch.randn(batch, width, generator=gen)
    times = []
    for _ in range(steps + 1):  # the first step allocates the state: not timed
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        model(x).pow(2).mean().backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    unison.barrier()
    sizes = replica_state_bytes(model, opt)
    rss, peak = _rss_mb()
    return {
        "sizes": sizes,
        "rss_mb": rss,
        "peak_mb": peak,
        "step_s": statistics.median(times[1:]),
        "params": sum(p.numel() for p in model.parameters()),
    }


def remat_step(remat: bool, depth: int, width: int, batch: int) -> dict[str, float]:
    torch.set_num_threads(1)
    from unison.distribute.remat import checkpoint_activations

    torch.manual_seed(0)
    # Transformer-style MLP blocks: a block keeps its input, the 4x-wide hidden layer and its
    # activation for backward; rematerialised, only the input.
    blocks = [
        torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(), torch.nn.Linear(4 * width, width))
        for _ in range(depth)
    ]
    if remat:
        for b in blocks:
            checkpoint_activations(b)
    model = torch.nn.Sequential(*blocks)
    x = torch.randn(batch, width)
    model(x[:1]).sum().backward()  # gradients allocated before measuring
    before, _ = _rss_mb()
    t0 = time.perf_counter()
    loss = model(x).pow(2).mean()
    after_forward, _ = _rss_mb()  # what backward will need: the saved activations
    loss.backward()
    elapsed = time.perf_counter() - t0
    return {"held_mb": after_forward - before, "step_s": elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=8, help="rows per replica")
    parser.add_argument("--steps", type=int, default=3, help="timed steps per round (after one untimed)")
    parser.add_argument("--rounds", type=int, default=2, help="times each mode runs, modes taking turns")
    parser.add_argument("--quick", action="store_true", help="a small model (smoke run)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of " + ",".join(MODES))
    parser.add_argument("--out", default="benchmarks/results/sharding_memory.md")
    args = parser.parse_args()
    if args.quick:
        args.layers, args.width = 4, 256
    from unison.testing import run_distributed

    command = "PYTHONPATH=src python " + " ".join(sys.argv)
    # Replicas start with a fixed malloc mmap threshold: tensors of 64 KiB and more get their own
    # mappings and go back to the system when freed, so RSS follows the live tensors instead of
    # what glibc's heap keeps after its dynamic threshold has grown (it grows on the first large free).
    os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", "65536")
    rows: dict[str, list[dict[str, Any]]] = {}
    # The modes take turns, round after round, so a burst of load from other jobs on a shared
    # machine does not fall on one mode only; a mode's step time is its best round's median.
    for round_ in range(args.rounds):
        for mode in args.modes.split(","):
            t0 = time.perf_counter()
            results = run_distributed(
                replica, args.replicas, args=(mode, args.layers, args.width, args.batch, args.steps), timeout=900
            )
            if mode in rows:
                results[0]["step_s"] = min(results[0]["step_s"], rows[mode][0]["step_s"])
            rows[mode] = results
            print(
                f"round {round_ + 1} {mode}: {time.perf_counter() - t0:.0f}s, step {results[0]['step_s']:.2f}s",
                file=sys.stderr,
            )
    depth, rwidth, rbatch = (4, 128, 256) if args.quick else (16, 512, 1024)
    remat = {
        flag: run_distributed(remat_step, 1, args=(flag, depth, rwidth, rbatch), timeout=300)[0]
        for flag in (False, True)
    }
    text = report(rows, remat, args, command, (depth, rwidth, rbatch))
    print(text)
    if args.out:
        from unison.core.atomic_io import atomic_write_text

        atomic_write_text(args.out, text)


def report(
    rows: dict[str, list[dict[str, Any]]],
    remat: dict[bool, dict[str, float]],
    args: Any,
    command: str,
    remat_shape: tuple[int, int, int],
) -> str:
    mib = 2**20
    first = next(iter(rows.values()))
    params = first[0]["params"]
    plain_total = max(r["sizes"]["total"] for r in rows["plain"]) if "plain" in rows else float("nan")
    lines = [
        "# Sharded state: memory per replica and step time",
        "",
        f"Command: `{command}`",
        "",
        f"{params / 1e6:.1f}M parameters ({args.layers} x Linear({args.width}, {args.width}) + ReLU), Adam, "
        f"float32, {args.replicas} replicas (processes, gloo on CPU, one thread each), {args.batch} rows per "
        f"replica. Tensor bytes = parameters + gradients + optimizer state this replica holds after a "
        f"step (local shards only), the largest replica. Step time = median of {args.steps} steps after "
        f"one untimed step on replica 0, best of {args.rounds} rounds (the modes take turns each round). RSS: the replica's resident memory after the steps and its peak "
        "(replicas run with MALLOC_MMAP_THRESHOLD_=65536 so freed tensors leave RSS; torch's import is "
        "~290 MiB of it). Machine: a 2-core CPU shared with other jobs (timings are noisy).",
        "",
        "| mode | parameters MiB | gradients MiB | optimizer MiB | tensors MiB | vs plain | RSS MiB | peak RSS MiB | step s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for mode in [m for m in MODES if m in rows]:
        worst = max(rows[mode], key=lambda r: r["sizes"]["total"])
        s = worst["sizes"]
        lines.append(
            f"| {LABELS[mode]} | {s['parameters'] / mib:.0f} | {s['gradients'] / mib:.0f} | {s['optimizer'] / mib:.0f} "
            f"| {s['total'] / mib:.0f} | {s['total'] / plain_total:.3f} | {max(r['rss_mb'] for r in rows[mode]):.0f} "
            f"| {max(r['peak_mb'] for r in rows[mode]):.0f} | {rows[mode][0]['step_s']:.2f} |"
        )
    fsdp_ratio = max(r["sizes"]["total"] for r in rows["fsdp"]) / plain_total if "fsdp" in rows else float("nan")
    target = 1 / args.replicas * 1.1
    n = args.replicas
    lines += [
        "",
        f"Target: full sharding <= 1/N of plain + 10% = {target:.3f}. Measured: {fsdp_ratio:.3f} "
        f"({'met' if fsdp_ratio <= target else 'NOT met'}).",
        "",
        f"Expected with Adam (state = 2x parameters, plain = 4 parameter-sized copies): ZeRO-1 "
        f"(1 + 1 + 2/N) / 4 = {(2 + 2 / n) / 4:.3f}, ZeRO-2 (1 + 1/N + 2/N) / 4 = {(1 + 3 / n) / 4:.3f}, "
        f"full sharding 1/N = {1 / n:.3f}. ZeRO-2's peak RSS also falls: the gradients of parameters "
        "another replica owns are freed as soon as their bucket is packed, and at most two full-size "
        "buckets are on the wire at once.",
        "",
        "## Activation checkpointing (one process)",
        "",
        f"{remat_shape[0]} blocks of Linear({remat_shape[1]}, {4 * remat_shape[1]}) + GELU + "
        f"Linear({4 * remat_shape[1]}, {remat_shape[1]}), batch {remat_shape[2]}, "
        "one forward+backward; RSS growth from before the step to the end of forward (the activations "
        "kept for backward).",
        "",
        "| blocks | held after forward MiB | forward+backward s |",
        "| --- | ---: | ---: |",
        f"| kept (default) | {remat[False]['held_mb']:.0f} | {remat[False]['step_s']:.2f} |",
        f"| rematerialised (checkpoint_activations) | {remat[True]['held_mb']:.0f} | {remat[True]['step_s']:.2f} |",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
