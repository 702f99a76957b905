"""unison bench: option checks and their messages, models, data, the arithmetic (in this
process), and the command end to end as a user runs it (real processes for every replica and
system: the last tests of this file).
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import torch

import unison.distribute
from unison.bench import cli, config, core, data, models, report, runner


def _main(argv: list[str]) -> int:
    return cli.main(argv)


def _argparse_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        _main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


# --- bad input: every one a clear message naming the value and the fix ----------------------------


@pytest.mark.parametrize("value", ["0", "1,0", "-1", "1,x", ""])
def test_replicas_must_be_integers_at_least_one(capsys, value) -> None:
    err = _argparse_error(capsys, ["--replicas", value])
    assert "argument --replicas" in err
    assert ">= 1" in err and f"Received: --replicas {value!r}" in err


def test_replicas_are_sorted_and_deduplicated() -> None:
    assert config.parse_replicas("4,1,2,2") == [1, 2, 4]


def test_unknown_model_lists_the_choices(capsys) -> None:
    err = _argparse_error(capsys, ["--model", "resnet"])
    assert "Unknown model 'resnet'" in err
    assert "'cnn'" in err and "'mlp'" in err and "module:factory" in err


def test_unknown_dataset_lists_the_choices(capsys) -> None:
    err = _argparse_error(capsys, ["--dataset", "cifar10"])
    assert "invalid choice: 'cifar10'" in err
    assert "synthetic" in err and "fashion_mnist" in err


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--baseline", "horovod"], "Unknown baseline 'horovod'"),
        (["--epochs", "0"], "--epochs must be an integer >= 1"),
        (["--batch-size", "x"], "--batch-size must be an integer >= 1"),
        (["--repeats", "0"], "--repeats must be an integer >= 1"),
        (["--strategy", "parameter_server"], "invalid choice: 'parameter_server'"),
    ],
)
def test_other_bad_options(capsys, argv, fragment) -> None:
    assert fragment in _argparse_error(capsys, argv)


def test_module_that_does_not_import(capsys, tmp_path) -> None:
    code = _main(["--model", "no_such_module_xyz:make", "--dataset", "synthetic", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2
    assert "the module 'no_such_module_xyz' does not import" in err
    assert "ModuleNotFoundError" in err and "PYTHONPATH" in err


def test_module_that_fails_while_importing(capsys, tmp_path, monkeypatch) -> None:
    (tmp_path / "broken_bench_model.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "broken_bench_model", raising=False)
    code = _main(["--model", "broken_bench_model:make", "--dataset", "synthetic", "--out", "o"])
    err = capsys.readouterr().err
    assert code == 2 and "RuntimeError: boom at import" in err


def test_factory_missing_or_not_a_model(tmp_path, monkeypatch) -> None:
    (tmp_path / "my_bench_models.py").write_text(
        "import torch\nVALUE = 3\ndef make_module():\n    return torch.nn.Linear(784, 10)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "my_bench_models", raising=False)
    with pytest.raises(ValueError, match="has no attribute 'make'. Its callables: make_module"):
        models.build_keras_model("my_bench_models:make")
    with pytest.raises(TypeError, match="is a int, not a function"):
        models.build_keras_model("my_bench_models:VALUE")
    with pytest.raises(TypeError, match="returned a Linear, but unison bench needs a unison.keras.Model"):
        models.build_keras_model("my_bench_models:make_module")


def test_unwritable_out(capsys, tmp_path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    code = _main(["--model", "mlp", "--dataset", "synthetic", "--out", str(blocker / "results")])
    err = capsys.readouterr().err
    assert code == 2
    assert "Cannot write the results to --out" in err and "Choose a folder you can write to" in err
    assert not (blocker.parent / "results").exists()


def test_out_that_is_a_file(tmp_path) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("")
    with pytest.raises(ValueError, match="Cannot write the results to --out"):
        config.check_out_dir(str(blocker))


def test_multi_worker_not_available_yet(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.delattr(unison.distribute, "MultiWorkerMirroredStrategy", raising=False)
    code = _main(["--strategy", "multi_worker", "--dataset", "synthetic", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "MultiWorkerMirroredStrategy" in err and "Use --strategy mirrored" in err


def test_missing_dataset_is_reported_before_anything_runs(capsys, tmp_path, monkeypatch) -> None:
    with socket.socket() as sock:  # bound, not listening: the download is refused at once
        sock.bind(("127.0.0.1", 0))
        monkeypatch.setenv("UNISON_DATASETS_MIRROR", f"http://127.0.0.1:{sock.getsockname()[1]}/")
        monkeypatch.setenv("UNISON_DATA_DIR", str(tmp_path / "data"))
        monkeypatch.setenv("UNISON_CACHE_DIR", str(tmp_path / "cache"))
        from unison.keras.datasets import _fetch

        monkeypatch.setattr(_fetch, "SYSTEM_DATA_DIR", tmp_path / "system")  # no Debian dataset package
        for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            monkeypatch.delenv(proxy, raising=False)
        code = _main(["--dataset", "fashion_mnist", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "Could not load the 'fashion_mnist' data set" in err
    assert not (tmp_path / "out" / "results.json").exists()


# --- models -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, params", [("cnn", 34826), ("mlp", 101770)])
def test_keras_and_torch_models_are_the_same_architecture(name, params) -> None:
    keras_model = models.build_keras_model(name)
    torch_model = models.build_torch_model(name)
    assert keras_model.count_params() == params
    assert sum(p.numel() for p in torch_model.parameters()) == params
    probs = keras_model(torch.rand(3, *models.input_shape(name)))
    logits = torch_model(torch.rand(3, *models.torch_input_shape(name)))
    assert probs.shape == logits.shape == (3, 10)
    assert torch.allclose(probs.sum(1), torch.ones(3), atol=1e-5)  # Keras's softmax output


def test_factory_model(tmp_path, monkeypatch) -> None:
    (tmp_path / "flat_bench_model.py").write_text(
        "from unison import keras\n"
        "def make():\n"
        "    return keras.Sequential([keras.layers.Dense(10, activation='softmax', input_shape=(784,))])\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "flat_bench_model", raising=False)
    assert models.input_shape("flat_bench_model:make") == (784,)
    module = models.build_torch_model("flat_bench_model:make")
    loss = models.torch_loss("flat_bench_model:make", module)
    x, y = torch.rand(4, 784), torch.tensor([0, 1, 2, 3])
    assert loss(module(x), y).shape == (4,)


def test_factory_with_a_non_image_input_shape(tmp_path, monkeypatch) -> None:
    (tmp_path / "wide_bench_model.py").write_text(
        "from unison import keras\n"
        "def make():\n"
        "    return keras.Sequential([keras.layers.Dense(10, input_shape=(100,))])\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "wide_bench_model", raising=False)
    with pytest.raises(ValueError, match=r"takes inputs of shape \(100,\).*784 values"):
        models.input_shape("wide_bench_model:make")


# --- data -------------------------------------------------------------------------------------------


def test_synthetic_is_fixed_and_learnable() -> None:
    (x, y), (xt, yt) = data.synthetic(3000, 500)
    (x2, y2), _ = data.synthetic(3000, 500)
    assert x.shape == (3000, 28, 28) and x.dtype == np.uint8 and xt.shape == (500, 28, 28)
    assert np.array_equal(x, x2) and np.array_equal(y, y2)
    assert set(np.unique(y)) == set(range(10))
    # The classes differ: a nearest-class-mean rule already does far better than chance (10%).
    means = np.stack([x[y == c].reshape(-1, 784).mean(0) for c in range(10)])
    dist = ((xt.reshape(-1, 1, 784).astype(np.float64) - means[None]) ** 2).sum(-1)
    assert (dist.argmin(1) == yt).mean() > 0.7


def test_samples_cut_train_and_validation(tmp_path) -> None:
    (train, val), info = data.load("synthetic", samples=1200)
    assert len(train[0]) == 1200 and len(val[0]) == 200
    assert info["train_samples"] == 1200 and info["val_samples"] == 200
    path = str(tmp_path / "d.npz")
    data.save(path, (train, val))
    (x, y), (_xt, _yt) = data.read(path, (28, 28, 1))
    assert x.shape == (1200, 28, 28, 1) and x.dtype == np.float32 and 0.0 <= x.min() <= x.max() <= 1.0
    assert y.dtype == np.int64 and np.array_equal(y, train[1])


# --- what is measured and how it is summarised -----------------------------------------------------


def _rec(system: str, n: int, t: float, repeat: int = 1, ok: bool = True) -> dict:
    return {
        "system": system,
        "replicas": n,
        "repeat": repeat,
        "ok": ok,
        "time_per_epoch_s": t,
        "startup_s": 1.0,
        "val_accuracy": 0.9,
        "peak_rss_mb_per_process": [100.0] * n,
        "threads_per_replica": 2 // n,
    }


def test_summary_speedup_and_efficiency_come_from_the_median_times() -> None:
    records = [
        _rec("unison", 1, 10.0, 1),
        _rec("unison", 1, 12.0, 2),
        _rec("unison", 1, 30.0, 3),
        _rec("unison", 2, 8.0, 1),
        _rec("unison", 2, 6.0, 2),
        {"system": "unison", "replicas": 2, "repeat": 3, "ok": False, "error": "x"},
    ]
    rows = {(r["system"], r["replicas"]): r for r in report.summarize(records, train_samples=6000)}
    one, two = rows[("unison", 1)], rows[("unison", 2)]
    assert one["time_per_epoch_s_median"] == 12.0 and (one["time_per_epoch_s_min"], one["time_per_epoch_s_max"]) == (
        10.0,
        30.0,
    )
    assert two["time_per_epoch_s_median"] == 7.0 and two["failed_runs"] == 1 and two["runs"] == 2
    assert two["samples_per_s"] == pytest.approx(6000 / 7.0)
    assert two["speedup"] == pytest.approx(12.0 / 7.0)
    assert two["efficiency"] == pytest.approx(12.0 / 7.0 / 2)
    assert one["efficiency"] == 1.0


def test_without_one_replica_there_is_no_speedup() -> None:
    rows = report.summarize([_rec("unison", 2, 5.0)], train_samples=100)
    assert rows[0]["speedup"] is None and rows[0]["efficiency"] is None
    assert "| unison | 2 | 1 | 5.00 | 5.00-5.00 | 20 | - | - |" in report.render(rows, [])


def test_comparisons_and_targets() -> None:
    records = [
        rec
        for repeat in (1, 2, 3)
        for rec in (
            _rec("unison", 1, 2.0, repeat),
            _rec("ddp", 1, 2.5, repeat),
            _rec("tensorflow", 1, 10.0, repeat),
            _rec("unison", 2, 3.0, repeat),
            _rec("ddp", 2, 2.0, repeat),
        )
    ]
    rows = report.summarize(records, train_samples=100)
    mlp = {(c["baseline"], c["replicas"]): c for c in report.compare(records, rows, "mlp")}
    assert mlp[("ddp", 1)]["ratio"] == pytest.approx(0.8) and mlp[("ddp", 1)]["met"] is True
    assert mlp[("ddp", 2)]["ratio"] == pytest.approx(1.5) and mlp[("ddp", 2)]["met"] is False
    assert mlp[("tensorflow", 1)]["target"] == 0.25 and mlp[("tensorflow", 1)]["met"] is True
    assert ("tensorflow", 2) not in mlp  # no TF run at 2 replicas
    cnn = {(c["baseline"], c["replicas"]): c for c in report.compare(records, rows, "cnn")}
    assert cnn[("tensorflow", 1)]["target"] is None and cnn[("tensorflow", 1)]["met"] is None
    table = report.render(rows, report.compare(records, rows, "mlp"))
    assert "| unison / ddp | 2 | 1.50 | 1.50-1.50 | <= 1.00: MISSED |" in table


def test_one_repeat_is_not_enough_to_call_a_target() -> None:
    records = [_rec("unison", 1, 2.0), _rec("ddp", 1, 2.5)]
    rows = report.summarize(records, train_samples=100)
    (c,) = report.compare(records, rows, "cnn")
    assert c["ratio"] == pytest.approx(0.8) and c["met"] is None and c["repeats"] == 1
    table = report.render(rows, [c])
    assert "<= 1.00: not judged: 1 repeat; a target needs at least 3 (rerun with --repeats 3) |" in table
    assert "met" not in table.replace("not judged", "")


def test_an_efficiency_above_100_percent_is_noise_not_a_met_target() -> None:
    # the case: under load, DDP's 1-replica runs took 4.45x as long as they should have
    records = [
        rec
        for repeat in (1, 2, 3)
        for rec in (
            _rec("unison", 1, 2.0, repeat),
            _rec("ddp", 1, 8.9, repeat),
            _rec("unison", 2, 1.8, repeat),
            _rec("ddp", 2, 1.0, repeat),
        )
    ]
    rows = report.summarize(records, train_samples=100)
    by = {(c["baseline"], c["replicas"]): c for c in report.compare(records, rows, "cnn")}
    assert by[("ddp", 1)]["met"] is True  # the 1-replica ratio itself is judged
    two = by[("ddp", 2)]
    assert two["met"] is None
    assert two["verdict"] == (
        "not judged: ddp x2 scaling efficiency 445% > 100% (other load slowed its 1-replica runs); "
        "rerun on a quieter machine with --repeats 6"
    )
    assert "| 445% (> 100%: noise, not scaling) |" in report.render(rows, [two])


def test_plot_without_matplotlib_says_how_to_get_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    rows = report.summarize([_rec("unison", 1, 2.0), _rec("unison", 2, 1.5)], train_samples=100)
    why = report.plot(str(tmp_path / "p.png"), rows, "t")
    assert why is not None and "pip install 'unison[plot]'" in why
    assert not (tmp_path / "p.png").exists()


def test_plot_with_matplotlib(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    rows = report.summarize([_rec("unison", 1, 2.0), _rec("unison", 2, 1.5), _rec("ddp", 1, 2.0)], 100)
    assert report.plot(str(tmp_path / "p.png"), rows, "t") is None
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_runs_interleave_systems_and_rotate_their_order() -> None:
    cfg = config.BenchConfig(model="mlp", dataset="synthetic", replicas=[1, 2], repeats=2)
    order = [(s.repeat, s.replicas, s.system) for s in runner.plan(cfg, ["unison", "ddp"])]
    assert order == [
        (0, 1, "unison"),
        (0, 1, "ddp"),
        (0, 2, "unison"),
        (0, 2, "ddp"),
        (1, 1, "ddp"),
        (1, 1, "unison"),
        (1, 2, "ddp"),
        (1, 2, "unison"),
    ]


def test_children_start_fresh(monkeypatch) -> None:
    for var in ("PYTEST_CURRENT_TEST", "UNISON_RANK", "RANK", "WORLD_SIZE", "TF_CONFIG"):
        monkeypatch.setenv(var, "1")
    monkeypatch.setenv("UNISON_DATA_DIR", "/data")
    env = runner.child_env(123.5)
    assert not {"PYTEST_CURRENT_TEST", "UNISON_RANK", "RANK", "WORLD_SIZE", "TF_CONFIG"} & set(env)
    assert env["UNISON_DATA_DIR"] == "/data" and env["UNISON_BENCH_T0"] == "123.5"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == os.getcwd()


def test_commands_of_each_system(tmp_path) -> None:
    cfg = config.BenchConfig(model="cnn", dataset="synthetic", replicas=[2], baselines=["ddp", "tensorflow"])
    args = ("d.npz", (28, 28, 1), str(tmp_path))
    [(uni, _)] = runner.commands(cfg, runner.RunSpec("unison", 2, 0), *args, None)
    assert uni[:3] == [sys.executable, "-m", "unison.bench._worker"] and "--replicas" in uni
    [(ddp, _)] = runner.commands(cfg, runner.RunSpec("ddp", 2, 0), *args, None)
    assert ddp[1:4] == ["-m", "torch.distributed.run", "--standalone"]
    assert ddp[ddp.index("--nproc-per-node") + 1] == "2"
    [(tfc, _)] = runner.commands(cfg, runner.RunSpec("tensorflow", 2, 0), *args, "/opt/tf/python")
    assert tfc[0] == "/opt/tf/python" and tfc[1].endswith("tf_worker.py")


def test_core_division_is_explained(monkeypatch) -> None:
    monkeypatch.setattr(config, "cores", lambda: 8)
    cfg = config.BenchConfig(model="mlp", dataset="synthetic", replicas=[1, 2, 4], baselines=["tensorflow"])
    text = core.core_division(cfg, [])
    assert "8 cores" in text and "1 replica -> 1 process x 8 threads" in text
    assert "4 replicas -> 4 processes x 2 threads" in text and "logical CPU devices" in text
    over = core.core_division(config.BenchConfig(model="mlp", dataset="synthetic", replicas=[16]), [])
    assert "More replicas than cores (16 > 8)" in over


def test_tensorflow_baseline_skipped_with_a_reason(monkeypatch, tmp_path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "tensorflow" else real(n, *a))
    monkeypatch.delenv(config.ENV_TF_PYTHON, raising=False)
    python, why = config.find_tf_python()
    assert python is None and "UNISON_TF_PYTHON" in why
    monkeypatch.setenv(config.ENV_TF_PYTHON, str(tmp_path / "nope" / "python"))
    python, why = config.find_tf_python()
    assert python is None and "does not exist" in why


# --- end to end: the command in its own processes ---------------------------------------------

RUN_FIELDS = {
    "system",
    "replicas",
    "repeat",
    "ok",
    "time_per_epoch_s",
    "epoch_times_s",
    "startup_s",
    "data_s",
    "eval_s",
    "wall_s",
    "val_accuracy",
    "val_loss",
    "train_loss",
    "train_accuracy",
    "threads_per_replica",
    "processes",
    "peak_rss_mb_per_process",
    "strategy",
    "device",
    "log",
}
SUMMARY_FIELDS = {
    "system",
    "replicas",
    "runs",
    "failed_runs",
    "threads_per_replica",
    "time_per_epoch_s_median",
    "time_per_epoch_s_min",
    "time_per_epoch_s_max",
    "time_per_epoch_s_all",
    "samples_per_s",
    "speedup",
    "efficiency",
    "startup_s_median",
    "peak_rss_mb_max_process",
    "val_accuracy_median",
}


def _bench(tmp_path, *args: str, timeout: float = 150) -> tuple[subprocess.CompletedProcess[str], dict]:
    """Run `python -m unison.bench ... --out <tmp>/results` as a user would; its output and JSON."""
    out = tmp_path / "results"
    cmd = [sys.executable, "-m", "unison.bench", *args, "--out", str(out)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, json.loads((out / "results.json").read_text())


def _check_run(run: dict) -> None:
    assert RUN_FIELDS <= set(run), sorted(RUN_FIELDS - set(run))
    assert run["ok"] is True
    assert run["time_per_epoch_s"] > 0 and len(run["epoch_times_s"]) == 1
    assert run["startup_s"] > 0 and run["wall_s"] > run["time_per_epoch_s"]
    assert 0.0 <= run["val_accuracy"] <= 1.0 and run["val_loss"] > 0
    assert run["val_accuracy"] > 0.3  # learnable data: far above chance (0.1) after one epoch
    assert run["processes"] == run["replicas"]  # one process per replica, each reported
    assert all(50 < mb < 10_000 for mb in run["peak_rss_mb_per_process"])
    assert os.path.exists(run["log"])


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_bench_mlp_synthetic_one_and_two_replicas(tmp_path) -> None:
    proc, result = _bench(
        tmp_path,
        "--model",
        "mlp",
        "--dataset",
        "synthetic",
        "--replicas",
        "1,2",
        "--epochs",
        "1",
        "--samples",
        "2400",
        "--repeats",
        "1",
    )
    out = tmp_path / "results"
    # progress, the core split and the table on the terminal
    assert "[1/2] repeat 1/1  unison     x1:" in proc.stdout and "[2/2] repeat 1/1  unison     x2:" in proc.stdout
    assert "each with cores // replicas intra-op threads" in proc.stdout
    assert "| system | replicas | threads/replica | time/epoch s (median) |" in proc.stdout

    assert result["config"]["train_samples"] == 2400 and result["config"]["val_samples"] == 400
    assert result["systems"] == ["unison"] and result["comparisons"] == []
    assert [(r["system"], r["replicas"]) for r in result["runs"]] == [("unison", 1), ("unison", 2)]
    for run in result["runs"]:
        _check_run(run)

    rows = {r["replicas"]: r for r in result["summary"]}
    assert set(rows) == {1, 2}
    for n, row in rows.items():
        assert SUMMARY_FIELDS <= set(row), sorted(SUMMARY_FIELDS - set(row))
        t1, tn = rows[1]["time_per_epoch_s_median"], row["time_per_epoch_s_median"]
        assert row["speedup"] == pytest.approx(t1 / tn)
        assert row["efficiency"] == pytest.approx(t1 / tn / n)
        assert row["samples_per_s"] == pytest.approx(2400 / tn)
        assert 0.0 <= row["val_accuracy_median"] <= 1.0
    assert rows[2]["threads_per_replica"] == max(1, len(os.sched_getaffinity(0)) // 2)

    with open(out / "results.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [(r["system"], r["replicas"]) for r in table] == [("unison", "1"), ("unison", "2")]
    assert float(table[1]["efficiency"]) == pytest.approx(rows[2]["efficiency"])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "pip install 'unison[plot]'" in proc.stdout and not (out / "results.png").exists()
    else:
        assert (out / "results.png").stat().st_size > 0 and result["plot"] == str(out / "results.png")


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_bench_ddp_baseline(tmp_path) -> None:
    proc, result = _bench(
        tmp_path,
        "--model",
        "mlp",
        "--dataset",
        "synthetic",
        "--replicas",
        "2",
        "--samples",
        "1200",
        "--repeats",
        "1",
        "--baseline",
        "ddp",
    )
    assert result["systems"] == ["unison", "ddp"]
    ddp = [r for r in result["runs"] if r["system"] == "ddp"]
    assert len(ddp) == 1
    _check_run(ddp[0])
    assert ddp[0]["strategy"] == "DistributedDataParallel"
    assert ddp[0]["threads_per_replica"] == max(1, len(os.sched_getaffinity(0)) // 2)
    [comparison] = result["comparisons"]
    times = {r["system"]: r["time_per_epoch_s"] for r in result["runs"]}
    assert comparison["baseline"] == "ddp" and comparison["ratio"] == pytest.approx(times["unison"] / times["ddp"])
    assert "| unison / ddp | 2 |" in proc.stdout


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_bench_multi_worker_strategy(tmp_path) -> None:
    import unison.distribute

    if not hasattr(unison.distribute, "MultiWorkerMirroredStrategy"):
        pytest.skip(
            "this unison has no MultiWorkerMirroredStrategy (test_multi_worker_not_available_yet checks the error)"
        )
    _, result = _bench(
        tmp_path,
        "--model",
        "mlp",
        "--dataset",
        "synthetic",
        "--replicas",
        "2",
        "--strategy",
        "multi_worker",
        "--samples",
        "1200",
        "--repeats",
        "1",
    )
    [run] = result["runs"]
    assert run["ok"] and run["strategy"] == "MultiWorkerMirroredStrategy"
    assert run["processes"] == 2 and run["time_per_epoch_s"] > 0 and 0.0 <= run["val_accuracy"] <= 1.0
    assert run["threads_per_replica"] == max(1, len(os.sched_getaffinity(0)) // 2)
