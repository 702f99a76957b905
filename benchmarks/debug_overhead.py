"""Step-time overhead of unison.debug on the seed program: the flight recorder and the timeline.

Three configurations of the seed program on two CPU replicas (``MirroredStrategy(["/cpu:0",
"/cpu:1"])``, the shared-memory all-reduce), each a fresh run, interleaved within every repeat
(order rotated) so that machine noise hits them alike:

* ``base``: unison without ``unison.debug`` (the source tree given by ``--base-src``, e.g. the
  commit before it: ``git archive <commit> src | tar -x -C /tmp/base``);
* ``ring``: this tree, flight recorder and hang watchdog on (the default);
* ``timeline``: this tree with ``UNISON_TIMELINE`` set as well.

Reported: median time per training step (``model.fit`` only, validation included) and the median
of the per-repeat ratios to ``base``.

    python benchmarks/debug_overhead.py --base-src /tmp/base/src --epochs 1 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import seed_mlp  # noqa: E402  (the seed benchmark's runner: fresh processes, rank 0's timings)

STEPS_PER_EPOCH = 1875  # 60,000 images, global batch 32


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-src", required=True, help="src/ folder of unison without unison.debug")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    ours = os.path.join(os.path.dirname(HERE), "src")
    trace_dir = tempfile.mkdtemp(prefix="debug-overhead-")
    configs = {
        "base": {"PYTHONPATH": os.path.abspath(args.base_src)},
        "ring": {"PYTHONPATH": ours},
        "timeline": {"PYTHONPATH": ours, "UNISON_TIMELINE": os.path.join(trace_dir, "t.json")},
    }
    step_s: dict[str, list[float]] = {name: [] for name in configs}
    names = list(configs)
    saved = dict(os.environ)
    for repeat in range(args.repeats):
        order = names[repeat % len(names) :] + names[: repeat % len(names)]
        for name in order:
            os.environ.clear()
            os.environ.update(saved)
            os.environ.pop("UNISON_TIMELINE", None)
            os.environ.update(configs[name])
            result = seed_mlp.run_once("unison2", args.epochs, sys.executable, trace_dir, f"r{repeat}", 1800)
            step_s[name].append(result["train_s"] / (args.epochs * STEPS_PER_EPOCH))
            print(f"repeat {repeat} {name:<9} {step_s[name][-1] * 1e3:.3f} ms/step", flush=True)
    os.environ.clear()
    os.environ.update(saved)
    figures = {}
    for name in names:
        ratios = [t / b for t, b in zip(step_s[name], step_s["base"])]
        figures[name] = {
            "median_ms_per_step": statistics.median(step_s[name]) * 1e3,
            "median_ratio_to_base": statistics.median(ratios),
            "runs_ms": [t * 1e3 for t in step_s[name]],
        }
        print(
            f"{name:<9} median {figures[name]['median_ms_per_step']:.3f} ms/step, "
            f"x{figures[name]['median_ratio_to_base']:.3f} of base (per-repeat ratios {[round(r, 3) for r in ratios]})"
        )
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(figures, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
