"""From the runs' records to the numbers a user reads: summary, table, JSON, CSV and plot.

Per system and replica count, over the repeats: the median time per epoch and its spread
(min-max), samples/s (training rows / median time per epoch), speedup and scaling efficiency
against the same system at 1 replica (``speedup = T1 / TN``, ``efficiency = speedup / N``),
median start-up, the largest process's peak memory, and the median final validation accuracy.
Comparisons between systems use the ratio of median times and, since noise comes and goes,
the range of the ratios taken within each repeat.

Example:
    >>> rows = summarize([{"system": "unison", "replicas": 1, "ok": True, "time_per_epoch_s": 2.0,
    ...     "startup_s": 3.0, "val_accuracy": 0.9, "peak_rss_mb_per_process": [300.0],
    ...     "threads_per_replica": 2, "repeat": 1}], train_samples=1000)
    >>> rows[0]["samples_per_s"], rows[0]["speedup"], rows[0]["efficiency"]
    (500.0, 1.0, 1.0)
"""

from __future__ import annotations

import csv
import json
import statistics
from typing import Any

from unison.bench.config import SYSTEMS
from unison.core.atomic_io import atomic_write_text

CSV_FIELDS = (
    "system",
    "replicas",
    "runs",
    "failed_runs",
    "threads_per_replica",
    "time_per_epoch_s_median",
    "time_per_epoch_s_min",
    "time_per_epoch_s_max",
    "samples_per_s",
    "speedup",
    "efficiency",
    "startup_s_median",
    "peak_rss_mb_max_process",
    "val_accuracy_median",
)
PLOT_FILE = "results.png"


def summarize(records: list[dict[str, Any]], train_samples: int) -> list[dict[str, Any]]:
    """One row per (system, replicas) that has at least one successful run."""
    rows = []
    for system in SYSTEMS:
        counts = sorted({r["replicas"] for r in records if r["system"] == system})
        for n in counts:
            runs = [r for r in records if r["system"] == system and r["replicas"] == n]
            ok = [r for r in runs if r["ok"]]
            if not ok:
                continue
            times = [r["time_per_epoch_s"] for r in ok]
            median = statistics.median(times)
            rows.append(
                {
                    "system": system,
                    "replicas": n,
                    "runs": len(ok),
                    "failed_runs": len(runs) - len(ok),
                    "threads_per_replica": ok[0]["threads_per_replica"],
                    "time_per_epoch_s_median": median,
                    "time_per_epoch_s_min": min(times),
                    "time_per_epoch_s_max": max(times),
                    "time_per_epoch_s_all": times,
                    "samples_per_s": train_samples / median,
                    "startup_s_median": statistics.median(r["startup_s"] for r in ok),
                    "peak_rss_mb_max_process": statistics.median(max(r["peak_rss_mb_per_process"]) for r in ok),
                    "val_accuracy_median": statistics.median(r["val_accuracy"] for r in ok),
                }
            )
    for row in rows:
        one = next((r for r in rows if r["system"] == row["system"] and r["replicas"] == 1), None)
        if one is None:
            row["speedup"] = row["efficiency"] = None
        else:
            row["speedup"] = one["time_per_epoch_s_median"] / row["time_per_epoch_s_median"]
            row["efficiency"] = row["speedup"] / row["replicas"]
    return rows


MIN_REPEATS = 3  # a median of three paired repeats is the least a target is judged from


def verdict(
    ratio: float, target: float | None, repeats: int, efficiencies: dict[str, float | None]
) -> tuple[bool | None, str]:
    """Whether ``ratio`` meets ``target``, or why it cannot be said yet (and what would make it sayable).

    A target is judged only from at least :data:`MIN_REPEATS` repeats in which both systems ran,
    and never when a system's scaling efficiency is above 100%: N replicas on a shared CPU cannot
    be more than N times as fast, so such a number says the 1-replica runs were slowed by other
    load, and any ratio taken with them is noise.

    Example::

        >>> verdict(0.8, 1.0, repeats=1, efficiencies={})
        (None, 'not judged: 1 repeat; a target needs at least 3 (rerun with --repeats 3)')
        >>> verdict(0.8, 1.0, repeats=3, efficiencies={"ddp x2": 4.45})[1]
        'not judged: ddp x2 scaling efficiency 445% > 100% (other load slowed its 1-replica runs); rerun on a quieter machine with --repeats 6'
        >>> verdict(0.8, 1.0, repeats=3, efficiencies={"ddp x2": 0.9})
        (True, 'met')
    """
    if target is None:
        return None, "-"
    if repeats < MIN_REPEATS:
        noun = "repeat" if repeats == 1 else "repeats"
        return None, (
            f"not judged: {repeats} {noun}; a target needs at least {MIN_REPEATS} (rerun with --repeats {MIN_REPEATS})"
        )
    for name, eff in efficiencies.items():
        if eff is not None and eff > 1.0 + 1e-9:
            return None, (
                f"not judged: {name} scaling efficiency {eff:.0%} > 100% (other load slowed its 1-replica runs); "
                f"rerun on a quieter machine with --repeats {max(MIN_REPEATS, 2 * repeats)}"
            )
    met = ratio <= target
    return met, "met" if met else "MISSED"


def compare(records: list[dict[str, Any]], rows: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """unison against each baseline at equal replicas, with the issue's targets.

    Targets: unison's time per epoch <= DDP's; for the seed program (``mlp``) <= 1/4 of
    TensorFlow MirroredStrategy's.
    """
    out = []
    by_key = {(r["system"], r["replicas"]): r for r in rows}
    for baseline, target in (("ddp", 1.0), ("tensorflow", 0.25 if model == "mlp" else None)):
        for n in sorted({r["replicas"] for r in rows if r["system"] == "unison"}):
            a, b = by_key.get(("unison", n)), by_key.get((baseline, n))
            if a is None or b is None:
                continue
            paired = []
            for rep in sorted({r["repeat"] for r in records}):
                x = [r for r in records if r["ok"] and r["repeat"] == rep and r["replicas"] == n]
                u = [r["time_per_epoch_s"] for r in x if r["system"] == "unison"]
                v = [r["time_per_epoch_s"] for r in x if r["system"] == baseline]
                if u and v:
                    paired.append(u[0] / v[0])
            ratio = a["time_per_epoch_s_median"] / b["time_per_epoch_s_median"]
            effs = {f"unison x{n}": a["efficiency"], f"{baseline} x{n}": b["efficiency"]} if n > 1 else {}
            met, why = verdict(ratio, target, len(paired), effs)
            out.append(
                {
                    "system": "unison",
                    "baseline": baseline,
                    "replicas": n,
                    "ratio": ratio,
                    "paired_min": min(paired) if paired else None,
                    "paired_max": max(paired) if paired else None,
                    "target": target,
                    "met": met,
                    "verdict": why,
                    "repeats": len(paired),
                }
            )
    return out


def _f(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _efficiency(value: float | None) -> str:
    if value is not None and value > 1.0 + 1e-9:
        return f"{value:.0%} (> 100%: noise, not scaling)"
    return _f(value, ".0%")


def render(rows: list[dict[str, Any]], comparisons: list[dict[str, Any]]) -> str:
    """The results as a Markdown table (readable on a terminal, pastable into a document)."""
    lines = [
        (
            "| system | replicas | threads/replica | time/epoch s (median) | spread min-max | samples/s "
            "| speedup | efficiency | start-up s | peak MB/process | val acc |"
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        spread = f"{r['time_per_epoch_s_min']:.2f}-{r['time_per_epoch_s_max']:.2f}"
        runs = "" if not r["failed_runs"] else f" ({r['failed_runs']} failed)"
        lines.append(
            f"| {r['system']}{runs} | {r['replicas']} | {r['threads_per_replica']} "
            f"| {r['time_per_epoch_s_median']:.2f} | {spread} | {r['samples_per_s']:,.0f} "
            f"| {_f(r['speedup'], '.2f')} | {_efficiency(r['efficiency'])} | {r['startup_s_median']:.1f} "
            f"| {r['peak_rss_mb_max_process']:.0f} | {r['val_accuracy_median']:.4f} |"
        )
    if comparisons:
        lines += [
            "",
            "| comparison (time/epoch) | replicas | ratio of medians | per-repeat ratios | target |",
            "| --- | ---: | ---: | ---: | --- |",
        ]
        for c in comparisons:
            target = "-" if c["target"] is None else f"<= {c['target']:.2f}: {c['verdict']}"
            paired = "-" if c["paired_min"] is None else f"{c['paired_min']:.2f}-{c['paired_max']:.2f}"
            lines.append(f"| unison / {c['baseline']} | {c['replicas']} | {c['ratio']:.2f} | {paired} | {target} |")
    return "\n".join(lines)


def write_json(path: str, payload: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(payload, indent=2) + "\n")


def write_csv(path: str, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def plot(path: str, rows: list[dict[str, Any]], title: str) -> str | None:
    """Write the plot (samples/s and efficiency vs replicas); return why not, or ``None``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not installed (pip install 'unison[plot]')"
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for system in SYSTEMS:
        mine = [r for r in rows if r["system"] == system]
        if not mine:
            continue
        xs = [r["replicas"] for r in mine]
        left.plot(xs, [r["samples_per_s"] for r in mine], marker="o", label=system)
        eff = [(r["replicas"], r["efficiency"]) for r in mine if r["efficiency"] is not None]
        if eff:
            right.plot([e[0] for e in eff], [e[1] for e in eff], marker="o", label=system)
            for x, e in eff:
                if e > 1.0 + 1e-9:  # more than N times as fast on N replicas: the 1-replica run was disturbed
                    right.annotate("> 100%: noise", (x, e), textcoords="offset points", xytext=(4, 4), fontsize=8)
    counts = sorted({r["replicas"] for r in rows})
    for ax, label in ((left, "samples/s (training)"), (right, "scaling efficiency (T1 / (N * TN))")):
        ax.set_xlabel("replicas")
        ax.set_ylabel(label)
        ax.set_xticks(counts)
        ax.grid(True, alpha=0.3)
        ax.legend()
    right.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    right.set_ylim(bottom=0)
    left.set_ylim(bottom=0)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None
