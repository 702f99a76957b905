"""Shared by the seed_mlp benchmark's children: timers and the one JSON result per process.

Each process writes ``$SEED_BENCH_OUT_DIR/rank<k>.json`` (the runner reads every rank's file) and
rank 0 also prints it on one line prefixed with ``SEED_BENCH_RESULT``. Times:

* ``startup_s``: from the runner's ``Popen`` (``$SEED_BENCH_T0``, wall clock) to the end of the
  imports and the strategy / process-group set-up, i.e. everything before the data is loaded;
* ``load_s``: loading MNIST and converting it to float32 arrays / tensors;
* ``train_s``: the training call only (``model.fit`` or the plain loop, validation included);
* ``train_cpu_s``: the process's CPU time (``time.process_time``) over the same span.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

T_PROCESS = time.time()  # set when the child's first benchmark import runs


def launch_time() -> float:
    """Wall-clock time at which the runner started this process (or our own start if unknown)."""
    return float(os.environ.get("SEED_BENCH_T0", T_PROCESS))


def floats(values: Any) -> list[float]:
    return [float(v) for v in values]


def emit(
    system: str,
    rank: int,
    world_size: int,
    *,
    t_ready: float,
    t_loaded: float,
    t_fit0: float,
    t_fit1: float,
    history: dict[str, list[float]],
    threads: int,
    cpu_fit0: float | None = None,
    cpu_fit1: float | None = None,
    extra: dict[str, Any] | None = None,
) -> None:
    """Write this process's result (and print it on rank 0)."""
    result = {
        "system": system,
        "rank": rank,
        "world_size": world_size,
        "startup_s": t_ready - launch_time(),
        "load_s": t_loaded - t_ready,
        "train_s": t_fit1 - t_fit0,
        # CPU seconds of this process (all its threads) during training: with one thread per
        # process it barely moves when other programs share the machine, unlike train_s.
        "train_cpu_s": None if cpu_fit0 is None or cpu_fit1 is None else cpu_fit1 - cpu_fit0,
        "fit_start_wall": t_fit0,
        "fit_end_wall": t_fit1,
        "threads": threads,
        "history": {k: floats(v) for k, v in history.items()},
    }
    if extra:
        result.update(extra)
    out_dir = os.environ.get("SEED_BENCH_OUT_DIR")
    if out_dir:
        with open(os.path.join(out_dir, f"rank{rank}.json"), "w", encoding="utf-8") as fh:
            json.dump(result, fh)
    if rank == 0:
        print("SEED_BENCH_RESULT " + json.dumps(result), flush=True)
