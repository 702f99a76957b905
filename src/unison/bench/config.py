"""What one ``unison bench`` run measures, validated before any process starts.

Each check raises ``ValueError`` naming the value received and how to fix it, before any process
starts; the argparse ``type=`` helpers turn the same messages into ``unison bench: error: ...``.

Example:
    >>> parse_replicas("4,1,2")
    [1, 2, 4]
    >>> parse_baselines("ddp, tensorflow")
    ['ddp', 'tensorflow']
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

SYSTEMS = ("unison", "ddp", "tensorflow")
BASELINES = ("ddp", "tensorflow")
STRATEGIES = ("mirrored", "multi_worker")
ENV_TF_PYTHON = "UNISON_TF_PYTHON"


@dataclass(frozen=True)
class BenchConfig:
    """One ``unison bench`` invocation, every value checked.

    Attributes:
        model: ``"cnn"``, ``"mlp"`` or ``"module:factory"``.
        dataset: ``"mnist"``, ``"fashion_mnist"`` or ``"synthetic"``.
        replicas: replica counts to measure, ascending, e.g. ``[1, 2]``.
        strategy: ``"mirrored"`` or ``"multi_worker"`` (unison's strategy).
        epochs, batch_size, repeats: per run; ``batch_size`` is the global batch.
        samples: training rows to keep (``None``: the whole set).
        baselines: systems measured beside unison, from :data:`BASELINES`.
        out: folder for results.json, results.csv, the plot and the children's logs.
        device: ``"cpu"`` or ``"gpu"`` (one replica per GPU).
        timeout_s: the most one run (one system at one replica count) may take.
    """

    model: str
    dataset: str
    replicas: list[int]
    strategy: str = "mirrored"
    epochs: int = 1
    batch_size: int = 128
    repeats: int = 3
    samples: int | None = None
    baselines: list[str] = field(default_factory=list)
    out: str = "results"
    device: str = "cpu"
    timeout_s: float = 1800.0

    @property
    def systems(self) -> list[str]:
        return ["unison", *self.baselines]

    def command(self) -> str:
        """The command line that repeats this run, every option spelled out."""
        parts = [
            "unison",
            "bench",
            "--model",
            self.model,
            "--dataset",
            self.dataset,
            "--replicas",
            ",".join(map(str, self.replicas)),
            "--strategy",
            self.strategy,
            "--epochs",
            str(self.epochs),
            "--batch-size",
            str(self.batch_size),
            "--repeats",
            str(self.repeats),
        ]
        if self.samples is not None:
            parts += ["--samples", str(self.samples)]
        if self.baselines:
            parts += ["--baseline", ",".join(self.baselines)]
        parts += ["--out", self.out]
        return " ".join(shlex.quote(p) for p in parts)


def parse_replicas(text: str) -> list[int]:
    """``"1,2,4"`` -> ``[1, 2, 4]``; every count an integer >= 1."""
    values = []
    for item in str(text).split(","):
        item = item.strip()
        try:
            value = int(item)
        except ValueError:
            value = None
        if value is None or value < 1:
            raise ValueError(
                f"Replica counts must be integers >= 1, separated by commas, e.g. --replicas 1,2,4. "
                f"Received: --replicas {text!r} (bad entry {item!r})"
            )
        values.append(value)
    return sorted(set(values))


def parse_baselines(text: str) -> list[str]:
    """``"ddp,tensorflow"`` -> ``["ddp", "tensorflow"]``; ``""`` or ``"none"`` -> ``[]``."""
    names = [t.strip().lower() for t in str(text).split(",") if t.strip()]
    if names == ["none"]:
        return []
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(
            f"Unknown baseline {unknown[0]!r}. Choose from {', '.join(BASELINES)} (comma-separated), "
            f"or none. Received: --baseline {text!r}"
        )
    return [b for b in BASELINES if b in names]


def positive_int(name: str, value: int | None, low: int = 1) -> None:
    if value is not None and (not isinstance(value, int) or value < low):
        raise ValueError(f"{name} must be an integer >= {low}. Received: {name} {value!r}")


def check_out_dir(path: str) -> str:
    """Create ``path`` if needed and prove it is writable; return its absolute path."""
    absolute = os.path.abspath(os.path.expanduser(path))
    try:
        os.makedirs(absolute, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=absolute, prefix=".unison-bench-write-test-"):
            pass
    except OSError as exc:
        raise ValueError(
            f"Cannot write the results to --out {path!r}: {exc.strerror or exc} ({absolute}). "
            f"Choose a folder you can write to, e.g. --out ./results. Received: --out {path!r}"
        ) from None
    return absolute


def check_strategy(strategy: str) -> None:
    """``multi_worker`` needs ``unison.distribute.MultiWorkerMirroredStrategy``."""
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown strategy {strategy!r}. Choose from {', '.join(STRATEGIES)}.")
    if strategy == "multi_worker":
        import unison.distribute

        if not hasattr(unison.distribute, "MultiWorkerMirroredStrategy"):
            raise ValueError(
                "--strategy multi_worker needs unison.distribute.MultiWorkerMirroredStrategy, which "
                "this version of unison does not have yet. Use --strategy mirrored (one host, one "
                "process per replica). Received: --strategy multi_worker"
            )


def resolve_device(replicas: list[int]) -> str:
    """``"gpu"`` when CUDA GPUs are visible (one replica per GPU), else ``"cpu"``."""
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if gpus == 0:
        return "cpu"
    if max(replicas) > gpus:
        raise ValueError(
            f"This host has {gpus} GPU(s) and unison bench runs one replica per GPU, so at most "
            f"{gpus} replicas. Received: --replicas {','.join(map(str, replicas))}. Ask for at most "
            f"{gpus}, or hide the GPUs (CUDA_VISIBLE_DEVICES=) to measure CPU replicas."
        )
    return "gpu"


def cores() -> int:
    """CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def find_tf_python() -> tuple[str | None, str]:
    """The Python to run the TensorFlow baseline with, or ``None`` and a one-line reason.

    The current Python if it has ``tensorflow``; else ``$UNISON_TF_PYTHON`` if TensorFlow
    imports there.
    """
    if importlib.util.find_spec("tensorflow") is not None:
        return sys.executable, "tensorflow in this Python"
    other = os.environ.get(ENV_TF_PYTHON)
    if not other:
        return None, (
            f"tensorflow is not importable in this Python and ${ENV_TF_PYTHON} is not set "
            "(point it at a Python that has tensorflow, e.g. a venv with tensorflow-cpu)"
        )
    if not (os.path.exists(other) or shutil.which(other)):
        return None, f"${ENV_TF_PYTHON}={other} does not exist"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    try:
        probe = subprocess.run(
            [other, "-c", "import tensorflow as tf; print(tf.__version__)"],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"${ENV_TF_PYTHON}={other} cannot be run: {exc}"
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"`import tensorflow` fails with ${ENV_TF_PYTHON}={other}: {last}"
    return other, f"tensorflow {probe.stdout.strip().splitlines()[-1]} at {other}"
