"""One timed run of one suite model on one system (a child of ``benchmarks/models_vs_tf.py``).

Reads ``BENCH_SYSTEM`` (``unison``, ``tensorflow`` or ``torch``), ``BENCH_MODEL``, ``BENCH_BATCH``,
``BENCH_POLICY`` (``float32`` or ``mixed_bfloat16``), ``BENCH_STEPS`` and ``BENCH_WARMUP``; builds
the model, runs the warm-up steps, times each of the steps (wall and process CPU time) and prints
one JSON line: ``{"wall_ms": [...], "cpu_ms": [...]}``. ``BENCH_PROFILE=1`` adds the top kernels of
one more step (torch profiler; unison and torch only).
"""

from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    system, model = os.environ["BENCH_SYSTEM"], os.environ["BENCH_MODEL"]
    batch, policy = int(os.environ["BENCH_BATCH"]), os.environ["BENCH_POLICY"]
    steps, warmup = int(os.environ["BENCH_STEPS"]), int(os.environ.get("BENCH_WARMUP", "2"))
    if system == "torch":
        import torch
        import torch_models

        torch.manual_seed(0)
        step, args = torch_models.BUILDERS[model](batch, policy == "mixed_bfloat16")
    else:
        if system == "tensorflow":
            import tensorflow as tf
        else:
            import unison as tf
        import keras_models

        tf.keras.mixed_precision.set_global_policy(policy)
        tf.keras.utils.set_random_seed(0)
        step, args = keras_models.BUILDERS[model](tf, batch)
    for _ in range(warmup):
        step(*args)
    wall, cpu = [], []
    for _ in range(steps):
        t, c = time.perf_counter(), time.process_time()
        loss = step(*args)
        float(loss.detach() if hasattr(loss, "detach") else loss)  # a host value: the step has finished
        wall.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    result: dict = {"wall_ms": wall, "cpu_ms": cpu}
    if os.environ.get("BENCH_PROFILE") == "1" and system != "tensorflow":
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            step(*args)
        top = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:8]
        result["profile"] = [[e.key, e.count, round(e.self_cpu_time_total / 1e3, 1)] for e in top]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
