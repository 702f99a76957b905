"""Step-time overhead of unison.debug: the flight recorder and the timeline, toggled in place.

The seed program's model (784-128-10 MLP, Adam, global batch 32) trains on two CPU replicas
through the DistributedOptimizer (the shared-memory all-reduce), as a raw loop so that the
per-step cost of unison.debug is not diluted by Keras. Three configurations alternate in blocks
of ``--steps`` steps inside the same two processes (order rotated every round), so a machine
whose load swings from one minute to the next hits all three alike:

* ``off``: recorder off (``UNISON_FLIGHT_RECORDER=0``'s state), no timeline;
* ``ring``: the flight recorder on (the default);
* ``timeline``: the recorder and the timeline on (``UNISON_TIMELINE``'s state);
* ``check`` (``--path gloo`` only): the recorder on and the per-collective signature check
  (``UNISON_CHECK_COLLECTIVES``, on by default on gloo: one 16-byte all-reduce per collective).

Reported: the median time per step of each configuration and the median of the per-round
ratios to ``off`` (rank 0's clock). The hang watchdog (one store request a second) runs in all three.

    python benchmarks/debug_overhead.py --rounds 15 --steps 200
    python benchmarks/debug_overhead.py --model gpt --rounds 9 --steps 20   # examples/gpt.py's model
    python benchmarks/debug_overhead.py --path gloo --rounds 15 --steps 200  # gloo: + the signature check
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any

CONFIGS = ("off", "ring", "timeline")


def _model_and_batch(model_name: str) -> tuple[Any, Any, Any]:
    """The seed MLP on a batch of 16 rows, or examples/gpt.py's model (d_model 128, 2 blocks) on 8 x 64 bytes."""
    import torch

    torch.manual_seed(0)
    if model_name == "mlp":
        model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
        return model, torch.randn(16, 784), torch.randint(0, 10, (16,))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
    from gpt import GPT

    model = GPT(256, 64, 128, 4, 2)
    model.build((1, 64))
    ids = torch.randint(0, 256, (8, 65))
    return model, ids[:, :-1], ids[:, 1:]


def replica(
    rounds: int, steps: int, trace: str, model_name: str = "mlp", configs: tuple[str, ...] = CONFIGS
) -> dict[str, Any]:
    import torch

    import unison
    from unison.comm.communicator import joined
    from unison.debug.timeline import Timeline

    unison.init(timeout_seconds=120)
    comm = joined()
    assert comm is not None
    model, x, y = _model_and_batch(model_name)
    opt = unison.DistributedOptimizer(torch.optim.Adam(model.parameters()), named_parameters=model.named_parameters())
    timeline = Timeline(trace, comm.rank, comm.world_size)
    recorder = comm.recorder

    def run(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            logits = model(x)
            torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).backward()
            opt.step()
            opt.zero_grad()
        return (time.perf_counter() - start) / n

    run(50)  # warm-up
    per_step: dict[str, list[float]] = {c: [] for c in configs}
    n = len(configs)
    for r in range(rounds):
        for config in configs[r % n :] + configs[: r % n]:
            recorder.enabled = config != "off"
            comm.check_signatures = config == "check"
            comm.timeline = opt._timeline = timeline if config == "timeline" else None
            timeline.events.clear()  # memory stays flat; the cost of appending is what is measured
            per_step[config].append(run(steps))
    return per_step


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
    from unison.testing import run_distributed

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--model", choices=("mlp", "gpt"), default="mlp", help="the seed MLP or the GPT example")
    parser.add_argument(
        "--path", choices=("shm", "gloo"), default="shm", help="the shared-memory all-reduce (default) or gloo alone"
    )
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    trace = os.path.join(tempfile.mkdtemp(prefix="debug-overhead-"), "t.json")
    configs = CONFIGS + ("check",) if args.path == "gloo" else CONFIGS
    env = {"UNISON_SHM_ALLREDUCE": "0" if args.path == "gloo" else "1"}
    per_step = run_distributed(
        replica, 2, args=(args.rounds, args.steps, trace, args.model, configs), timeout=3600, env=env
    )[0]
    figures = {}
    for config in configs:
        ratios = [t / b for t, b in zip(per_step[config], per_step["off"])]
        figures[config] = {
            "median_us_per_step": statistics.median(per_step[config]) * 1e6,
            "median_ratio_to_off": statistics.median(ratios),
        }
        print(
            f"{config:<9} median {figures[config]['median_us_per_step']:8.1f} us/step   "
            f"x{figures[config]['median_ratio_to_off']:.4f} of off (median of {len(ratios)} per-round ratios)"
        )
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"per_step_s": per_step, "figures": figures}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
