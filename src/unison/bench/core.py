"""``unison bench`` end to end: check, prepare the data, run everything, report.

Example::

    from unison.bench.config import BenchConfig
    from unison.bench.core import run_bench
    run_bench(BenchConfig(model="mlp", dataset="synthetic", replicas=[1, 2], repeats=1))
"""

from __future__ import annotations

import datetime
import os
import platform
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

from unison.bench import config as cfg
from unison.bench import data, models, report, runner


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            names = [ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    gpus = (
        [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    )
    return {
        "cpu": cpu,
        "cores": cfg.cores(),
        "gpus": gpus,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "load_average_at_start": _load(),
    }


def _load() -> list[float] | None:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def core_division(config: cfg.BenchConfig, gpus: list[str]) -> str:
    """How the host's cores (or GPUs) are shared among replicas, in one paragraph."""
    if config.device == "gpu":
        return (
            f"GPU host: one replica per GPU, /gpu:0../gpu:{max(config.replicas) - 1} "
            f"({', '.join(gpus[: max(config.replicas)])}); one process per replica (unison, DDP)."
        )
    n = cfg.cores()
    parts = ", ".join(
        f"{r} replica{'s' if r > 1 else ''} -> {r} process{'es' if r > 1 else ''} x "
        f"{max(1, n // r)} thread{'s' if max(1, n // r) > 1 else ''}"
        for r in config.replicas
    )
    text = (
        f"CPU-only host with {n} cores: unison and DDP run one process per replica, each with "
        f"cores // replicas intra-op threads ({parts})."
    )
    if "tensorflow" in config.baselines:
        text += (
            " TensorFlow runs all replicas in one process, on that many logical CPU devices "
            "sharing TF's own thread pools."
        )
    if max(config.replicas) > n:
        text += (
            f" More replicas than cores ({max(config.replicas)} > {n}): replicas share cores, "
            "expect slow-downs, not speed-ups."
        )
    return text


def run_bench(config: cfg.BenchConfig, say: Callable[[str], None] = print) -> int:
    """Run the whole benchmark; 0 when every run succeeded, 1 otherwise.

    Raises:
        ValueError: a bad option or a missing data set (nothing has run yet).
    """
    cfg.check_strategy(config.strategy)
    out = cfg.check_out_dir(config.out)
    shape = models.input_shape(config.model)  # imports and builds a factory's model: fails early
    (arrays, info) = data.load(config.dataset, config.samples)
    skipped: dict[str, str] = {}
    tf_python = None
    if "tensorflow" in config.baselines:
        if models.is_custom(config.model):
            skipped["tensorflow"] = "a module:factory model is a unison model; TF runs the built-in cnn and mlp only"
        else:
            tf_python, why = cfg.find_tf_python()
            if tf_python is None:
                skipped["tensorflow"] = why
    systems = [s for s in config.systems if s not in skipped]
    host = machine()
    division = core_division(config, host["gpus"])
    date = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    say(f"unison bench  {date}\n$ {config.command()}")
    say(
        f"host: {host['cpu']}, {host['cores']} cores, load average {host['load_average_at_start']}"
        f" (other processes add noise: compare runs of the same repeat)"
    )
    say(
        f"data: {info['dataset']}, {info['train_samples']} training + {info['val_samples']} validation "
        f"samples; model {config.model}, input {shape}; global batch {config.batch_size}"
    )
    say(division)
    for system, why in skipped.items():
        say(f"skipping {system}: {why}")
    log_dir = os.path.join(out, "logs")
    os.makedirs(log_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="unison-bench-data-")
    try:
        data_path = os.path.join(work, "data.npz")
        data.save(data_path, arrays)
        del arrays
        plan = runner.plan(config, systems)
        say(
            f"{len(plan)} runs: systems {', '.join(systems)} x replicas {config.replicas} x "
            f"{config.repeats} repeats (systems interleaved within each repeat); logs in {log_dir}"
        )
        records = runner.run_all(config, plan, data_path, shape, tf_python, log_dir, say)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    host["load_average_at_end"] = _load()
    rows = report.summarize(records, info["train_samples"])
    comparisons = report.compare(records, rows, config.model)
    table = report.render(rows, comparisons)
    payload: dict[str, Any] = {
        "command": config.command(),
        "date": date,
        "machine": host,
        "core_division": division,
        "config": {
            **{k: getattr(config, k) for k in config.__dataclass_fields__},
            "out": out,
            "input_shape": list(shape),
            **info,
        },
        "systems": systems,
        "skipped": skipped,
        "summary": rows,
        "comparisons": comparisons,
        "runs": records,
    }
    plot_path = os.path.join(out, report.PLOT_FILE)
    why_no_plot = (
        report.plot(
            plot_path, rows, f"unison bench: {config.model} on {config.dataset}, global batch {config.batch_size}"
        )
        if rows
        else "no plot: no run succeeded"
    )
    payload["plot"] = None if why_no_plot else plot_path
    report.write_json(os.path.join(out, "results.json"), payload)
    report.write_csv(os.path.join(out, "results.csv"), rows)
    say("")
    say(table)
    say("")
    say(f"load average at the end: {host['load_average_at_end']}")
    say(
        f"wrote {os.path.join(out, 'results.json')}, {os.path.join(out, 'results.csv')}"
        + ("" if why_no_plot else f", {plot_path}")
    )
    if why_no_plot:
        say(why_no_plot)
    failed = [r for r in records if not r["ok"]]
    if failed:
        say(f"{len(failed)} of {len(records)} runs failed; see the messages above and the logs in {log_dir}")
    return 1 if failed else 0
