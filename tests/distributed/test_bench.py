"""`unison bench` end to end, as a user runs it: real processes for every replica and system."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

RUN_FIELDS = {
    "system", "replicas", "repeat", "ok", "time_per_epoch_s", "epoch_times_s", "startup_s",
    "data_s", "eval_s", "wall_s", "val_accuracy", "val_loss", "train_loss", "train_accuracy",
    "threads_per_replica", "processes", "peak_rss_mb_per_process", "strategy", "device", "log",
}
SUMMARY_FIELDS = {
    "system", "replicas", "runs", "failed_runs", "threads_per_replica", "time_per_epoch_s_median",
    "time_per_epoch_s_min", "time_per_epoch_s_max", "time_per_epoch_s_all", "samples_per_s",
    "speedup", "efficiency", "startup_s_median", "peak_rss_mb_max_process", "val_accuracy_median",
}


@pytest.mark.timeout(240)
def test_bench_mlp_synthetic_one_and_two_replicas(tmp_path) -> None:
    out = tmp_path / "results"
    cmd = [sys.executable, "-m", "unison.bench", "--model", "mlp", "--dataset", "synthetic",
           "--replicas", "1,2", "--epochs", "1", "--samples", "2400", "--repeats", "1",
           "--baseline", "ddp", "--out", str(out)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=220, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    # progress, the core split and the table on the terminal
    assert "[1/4] repeat 1/1  unison" in proc.stdout and "[4/4]" in proc.stdout
    assert "each with cores // replicas intra-op threads" in proc.stdout
    assert "| system | replicas | threads/replica | time/epoch s (median) |" in proc.stdout

    result = json.loads((out / "results.json").read_text())
    assert result["config"]["train_samples"] == 2400 and result["config"]["val_samples"] == 400
    assert result["systems"] == ["unison", "ddp"]
    assert len(result["runs"]) == 4
    for run in result["runs"]:
        assert RUN_FIELDS <= set(run), sorted(RUN_FIELDS - set(run))
        assert run["ok"] is True
        assert run["time_per_epoch_s"] > 0 and len(run["epoch_times_s"]) == 1
        assert run["startup_s"] > 0 and run["wall_s"] > run["time_per_epoch_s"]
        assert 0.0 <= run["val_accuracy"] <= 1.0 and run["val_loss"] > 0
        assert run["processes"] == run["replicas"]  # one process per replica, each reported
        assert all(50 < mb < 10_000 for mb in run["peak_rss_mb_per_process"])
        assert run["val_accuracy"] > 0.3  # learnable data: far above chance (0.1) after one epoch
        assert os.path.exists(run["log"])

    rows = {(r["system"], r["replicas"]): r for r in result["summary"]}
    assert set(rows) == {("unison", 1), ("unison", 2), ("ddp", 1), ("ddp", 2)}
    for (system, n), row in rows.items():
        assert SUMMARY_FIELDS <= set(row), sorted(SUMMARY_FIELDS - set(row))
        t1 = rows[(system, 1)]["time_per_epoch_s_median"]
        tn = row["time_per_epoch_s_median"]
        assert row["speedup"] == pytest.approx(t1 / tn)
        assert row["efficiency"] == pytest.approx(t1 / tn / n)
        assert row["samples_per_s"] == pytest.approx(2400 / tn)
        assert 0.0 <= row["val_accuracy_median"] <= 1.0
    cores = len(os.sched_getaffinity(0))
    assert rows[("unison", 2)]["threads_per_replica"] == max(1, cores // 2)
    assert rows[("ddp", 2)]["threads_per_replica"] == max(1, cores // 2)
    assert {(c["baseline"], c["replicas"]) for c in result["comparisons"]} == {("ddp", 1), ("ddp", 2)}

    with open(out / "results.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [(r["system"], r["replicas"]) for r in table] == [("unison", "1"), ("unison", "2"), ("ddp", "1"), ("ddp", "2")]
    assert float(table[1]["efficiency"]) == pytest.approx(rows[("unison", 2)]["efficiency"])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "pip install 'unison[plot]'" in proc.stdout and not (out / "results.png").exists()
    else:
        assert (out / "results.png").stat().st_size > 0 and result["plot"] == str(out / "results.png")


@pytest.mark.timeout(180)
def test_bench_multi_worker_strategy(tmp_path) -> None:
    import unison.distribute

    if not hasattr(unison.distribute, "MultiWorkerMirroredStrategy"):
        pytest.skip("this unison has no MultiWorkerMirroredStrategy (the error is tested in tests/unit)")
    out = tmp_path / "results"
    cmd = [sys.executable, "-m", "unison.bench", "--model", "mlp", "--dataset", "synthetic",
           "--replicas", "2", "--strategy", "multi_worker", "--samples", "1200", "--repeats", "1",
           "--out", str(out)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=160, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [run] = json.loads((out / "results.json").read_text())["runs"]
    assert run["ok"] and run["strategy"] == "MultiWorkerMirroredStrategy"
    assert run["processes"] == 2 and run["time_per_epoch_s"] > 0 and 0.0 <= run["val_accuracy"] <= 1.0
    assert run["threads_per_replica"] == max(1, len(os.sched_getaffinity(0)) // 2)
