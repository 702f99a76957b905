"""The end-of-``fit`` scaling line: how fast N replicas went, against one, and why.

Two CPU replicas of a small model on a busy 2-core machine are slower than one (communication and
a second process cost more than they save), and nothing used to say so. At the end of a
multi-replica ``fit`` with ``verbose``, the chief prints one line built here:

- the measured throughput: samples/s in all and per replica;
- against one replica, when this machine ran the same model (same parameter count) with the
  same global batch on one replica before (a 1-replica ``fit`` records its throughput in
  ``$UNISON_CACHE_DIR/../scaling.json``, default ``~/.cache/unison/scaling.json``): the speedup;
- the share of the training time spent waiting in communication (the gradient all-reduces);
- when N replicas were slower than one (or communication took most of the time): why, and what
  would help (a bigger global batch, fewer replicas, GPUs).

Nothing is guessed: without a 1-replica measurement the line says there is none and how to get one.

Example::

    >>> fig = ScalingFigures(replicas=2, samples=60000, seconds=88.0, wait_seconds=40.0,
    ...                      global_batch=32, device="cpu", cores_per_replica=1, parameters=101770)
    >>> print(scaling_line(fig, one_replica_samples_per_s=60000 / 34.5))
    Scaling: 2 replicas ran 682 samples/s (341 per replica), 0.39x one replica's 1,739 samples/s: slower than one. Why: 45% of the time went to communication (101,770 parameters all-reduced every step for 16 samples per replica), and the CPU replicas share this host's cores (1 core each), so a second replica adds communication but no arithmetic. What would help: a bigger global batch (batch_size=256 all-reduces 8x less often per epoch), fewer replicas (MirroredStrategy() with one device), or one replica per GPU.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_COMM_HEAVY = 0.25  # above this share of the time in communication, say so even when it scaled
_SMALL_LOCAL_BATCH = 64


@dataclass(frozen=True)
class ScalingFigures:
    """What one ``fit`` measured, on the chief.

    Attributes:
        replicas: replicas in sync.
        samples: training samples processed (all replicas together).
        seconds: wall time of the training steps (validation and start-up left out).
        wait_seconds: time the chief spent blocked in collectives during those steps.
        global_batch: ``batch_size`` (the global batch).
        device: ``"cpu"`` or ``"gpu"``.
        cores_per_replica: CPU threads each replica had (``None``: unknown).
        parameters: trainable parameters of the model (what every step all-reduces).
    """

    replicas: int
    samples: int
    seconds: float
    wait_seconds: float
    global_batch: int
    device: str = "cpu"
    cores_per_replica: int | None = None
    parameters: int | None = None

    @property
    def samples_per_s(self) -> float:
        return self.samples / self.seconds if self.seconds > 0 else 0.0


def reference_path() -> Path:
    """The file where 1-replica throughputs are kept (next to unison's data set cache)."""
    root = os.environ.get("UNISON_CACHE_DIR")
    base = Path(root).expanduser().parent if root else Path.home() / ".cache" / "unison"
    return base / "scaling.json"


def reference_key(parameters: int | None, global_batch: int, device: str) -> str:
    """What makes two fits comparable: the same model size, global batch and device kind."""
    return f"{device}/params={parameters}/batch={global_batch}"


def remember_one_replica(key: str, samples_per_s: float, path: Path | None = None) -> None:
    """Record a 1-replica throughput for later multi-replica fits (best effort: never raises)."""
    path = path or reference_path()
    try:
        table = _read(path)
        table[key] = round(samples_per_s, 3)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home loses the comparison, never the fit


def one_replica_reference(key: str, path: Path | None = None) -> float | None:
    """The recorded 1-replica throughput for ``key``, or ``None``."""
    value = _read(path or reference_path()).get(key)
    return float(value) if isinstance(value, (int, float)) else None


def _read(path: Path) -> dict[str, float]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _why_and_help(fig: ScalingFigures, comm: float) -> tuple[list[str], list[str]]:
    local = fig.global_batch / max(1, fig.replicas)
    why, help_ = [], []
    if comm >= _COMM_HEAVY:
        params = f"{fig.parameters:,} parameters" if fig.parameters else "the gradients"
        why.append(
            f"{comm:.0%} of the time went to communication ({params} all-reduced every step for {local:g} samples per replica)"
        )
    if fig.device == "cpu" and fig.replicas > 1:
        cores = (
            f" ({fig.cores_per_replica} core{'s' if fig.cores_per_replica != 1 else ''} each)"
            if fig.cores_per_replica
            else ""
        )
        why.append(
            f"the CPU replicas share this host's cores{cores}, so a second replica adds communication but no arithmetic"
        )
    if comm >= _COMM_HEAVY or local < _SMALL_LOCAL_BATCH:
        bigger = max(256, 2 * fig.global_batch)
        help_.append(
            f"a bigger global batch (batch_size={bigger} all-reduces {bigger / fig.global_batch:g}x less often per epoch)"
        )
    help_.append("fewer replicas (MirroredStrategy() with one device)")
    if fig.device == "cpu":
        help_.append("or one replica per GPU")
    return why, help_


def scaling_line(fig: ScalingFigures, one_replica_samples_per_s: float | None) -> str:
    """The one line printed at the end of a multi-replica ``fit``."""
    sps = fig.samples_per_s
    comm = min(1.0, fig.wait_seconds / fig.seconds) if fig.seconds > 0 else 0.0
    head = f"Scaling: {fig.replicas} replicas ran {sps:,.0f} samples/s ({sps / fig.replicas:,.0f} per replica)"
    if one_replica_samples_per_s:
        speedup = sps / one_replica_samples_per_s
        head += f", {speedup:.2f}x one replica's {one_replica_samples_per_s:,.0f} samples/s"
        slower = speedup < 1.0
        if slower:
            head += ": slower than one"
    else:
        slower = False
        head += (
            f"; {comm:.0%} of the time in communication (no 1-replica fit of this model and batch_size on this "
            "machine to compare with: run one, then this line gives the speedup)"
        )
        return head + "."
    if not slower and comm < _COMM_HEAVY:
        return head + f"; {comm:.0%} of the time in communication."
    why, help_ = _why_and_help(fig, comm)
    if not slower:
        return head + f"; {comm:.0%} of the time in communication. What would help: " + ", ".join(help_) + "."
    reason = ", and ".join(why) if why else f"{comm:.0%} of the time went to communication"
    return head + f". Why: {reason}. What would help: " + ", ".join(help_) + "."


def fit_figures(
    model: Any, replicas: int, samples: int, seconds: float, global_batch: int, wait_seconds: float | None = None
) -> ScalingFigures:
    """The figures of a ``fit`` that just ended, the rest read from the model and this process.

    The communication time is ``wait_seconds`` (fit passes what its steps spent blocked in
    collectives), else what this process's ``DistributedOptimizer`` steps spent blocked since it
    started (``unison.debug``'s step timings); zero on one replica.
    """
    import torch

    from unison.debug.straggler import active_timings

    weights = getattr(model, "trainable_weights", None) or []
    parameters = sum(int(getattr(w, "numel", lambda: 0)()) for w in weights) or None
    device = "gpu" if any(getattr(getattr(w, "device", None), "type", "cpu") == "cuda" for w in weights) else "cpu"
    return ScalingFigures(
        replicas=replicas,
        samples=samples,
        seconds=seconds,
        wait_seconds=0.0 if replicas <= 1 else active_timings().total_wait_s if wait_seconds is None else wait_seconds,
        global_batch=global_batch,
        device=device,
        cores_per_replica=torch.get_num_threads() if device == "cpu" else None,
        parameters=parameters,
    )


def end_of_fit(fig: ScalingFigures, path: Path | None = None) -> str | None:
    """What ``fit`` calls on the chief at its end: records a 1-replica run, describes an N-replica one.

    Returns the line to print (``None`` for one replica, whose throughput is only recorded).
    """
    key = reference_key(fig.parameters, fig.global_batch, fig.device)
    if fig.replicas <= 1:
        if fig.seconds > 0 and fig.samples > 0:
            remember_one_replica(key, fig.samples_per_s, path)
        return None
    return scaling_line(fig, one_replica_reference(key, path))
