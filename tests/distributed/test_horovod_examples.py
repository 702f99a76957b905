"""Horovod's own examples under `unison launch` with `import unison as hvd` (examples/horovod/)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

TIMEOUT = 300


def _launch(repo: pathlib.Path, mnist_dir: pathlib.Path, tmp_path: pathlib.Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(
        UNISON_DATA_DIR=str(mnist_dir),
        PYTHONUNBUFFERED="1",
        TRAIN_SAMPLES="2048",
        TEST_SAMPLES="1000",
        HOME=str(tmp_path),
        UNISON_ELASTIC_DIR=str(tmp_path / "commits"),
    )
    cmd = [sys.executable, "-m", "unison.cli", "launch", "--nproc-per-node", "2", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=tmp_path)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc.stdout


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
def test_pytorch_mnist_elastic_example(repo: pathlib.Path, mnist_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    script = str(repo / "examples" / "horovod" / "pytorch_mnist_elastic.py")
    out = _launch(repo, mnist_dir, tmp_path, "--max-restarts", "1", script, "--epochs", "2", "--lr", "0.05")
    # every rank prints its training lines (their lines may interleave): epoch 2 ran on 1024 rows per rank
    assert re.search(r"Train Epoch: 2 \[0/1024 \(0%\)\]\tLoss: [\d.]+", out), out
    tests = re.findall(r"Test set: Average loss: ([\d.]+), Accuracy: ([\d.]+)%", out)
    assert len(tests) == 1 and float(tests[0][1]) > 50.0, out  # printed by rank 0 after training
    assert (tmp_path / "commits" / "state.pt").is_file()  # rank 0 committed to disk (restarts allowed)


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
def test_pytorch_mnist_example_with_adasum(repo: pathlib.Path, mnist_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    script = str(repo / "examples" / "horovod" / "pytorch_mnist.py")
    out = _launch(repo, mnist_dir, tmp_path, script, "--epochs", "2", "--lr", "0.05", "--use-adasum")
    tests = re.findall(r"Test set: Average loss: ([\d.]+), Accuracy: ([\d.]+)%", out)
    assert len(tests) == 2 and float(tests[1][0]) < float(tests[0][0]), out
