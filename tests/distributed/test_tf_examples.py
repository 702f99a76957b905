"""TensorFlow's distributed-training tutorials, with `import tensorflow as tf` -> `import unison as tf`.

Each program under examples/tf/ is a tutorial's code cells in order; its header lists every
changed line. Here each runs as a user runs it (a fresh `python` process), shortened through the
environment variables its header names, and must exit 0 and print what the tutorial prints.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys

import pytest

TIMEOUT = 600


def _env(mnist_dir, tmp_path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(UNISON_DATA_DIR=str(mnist_dir), PYTHONUNBUFFERED="1", **extra)
    return env


def _run(cmd: list[str], env: dict[str, str], cwd) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=cwd)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc.stdout


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
@pytest.mark.parametrize("devices", ["", "/cpu:0,/cpu:1"], ids=["one-replica", "two-replicas"])
def test_custom_training_tutorial(repo, mnist_dir, tmp_path, devices):
    env = _env(
        mnist_dir,
        tmp_path,
        EPOCHS="2",
        TRAIN_SAMPLES="4096",
        TEST_SAMPLES="1024",
        CHECKPOINT_DIR=str(tmp_path / "ckpt"),
        UNISON_EXAMPLE_DEVICES=devices,
    )
    out = _run([sys.executable, str(repo / "examples" / "tf" / "custom_training.py")], env, tmp_path)
    assert f"Number of devices: {2 if devices else 1}" in out
    epochs = re.findall(
        r"^Epoch (\d+), Loss: ([\d.]+), Accuracy: ([\d.]+), Test Loss: ([\d.]+), "
        r"Test Accuracy: ([\d.]+)$",
        out,
        re.M,
    )
    assert [e[0] for e in epochs] == ["1", "2"], out
    assert float(epochs[1][1]) < float(epochs[0][1]), out  # the loss falls
    assert float(epochs[1][4]) > 60.0, out  # Fashion-MNIST test accuracy in percent after 2 short epochs
    restored = re.search(r"Accuracy after restoring the saved model without strategy: ([\d.]+)", out)
    assert restored and float(restored.group(1)) > 50.0, out
    saved = sorted(os.listdir(tmp_path / "ckpt"))  # saved at epochs 0 (ckpt-1), plus TF's state file
    assert "checkpoint" in saved and any(f.startswith("ckpt-1") for f in saved), saved


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
def test_keras_tutorial(repo, mnist_dir, tmp_path):
    env = _env(
        mnist_dir,
        tmp_path,
        EPOCHS="2",
        TRAIN_SAMPLES="4096",
        WORK_DIR=str(tmp_path),
        UNISON_EXAMPLE_DEVICES="/cpu:0,/cpu:1",
    )
    out = _run([sys.executable, str(repo / "examples" / "tf" / "keras_distributed.py")], env, tmp_path)
    assert "Number of devices: 2" in out
    rates = re.findall(r"Learning rate for epoch (\d) is ([\d.e-]+)", out)
    assert [e for e, _ in rates] == ["1", "2"] and all(abs(float(r) - 1e-3) < 1e-9 for _, r in rates), out
    assert "['ckpt_0001.weights.h5', 'ckpt_0002.weights.h5']" in out, out
    evals = re.findall(r"Eval (?:loss|Loss): ([\d.]+), Eval (?:accuracy|Accuracy): ([\d.]+)", out)
    assert len(evals) == 3 and all(float(acc) > 0.8 for _, acc in evals), out
    assert "['train']" in out or "['train', 'validation']" in out, out  # TensorBoard's sub-folders


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
def test_multi_worker_tutorial(repo, mnist_dir, tmp_path):
    folder = repo / "examples" / "tf" / "multi_worker"
    workers = [f"localhost:{p}" for p in _free_ports(2)]
    procs = []
    for index in range(2):
        tf_config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        env = _env(
            mnist_dir,
            tmp_path,
            TF_CONFIG=json.dumps(tf_config),
            EPOCHS="2",
            STEPS_PER_EPOCH="10",
            BACKUP_DIR=str(tmp_path / "backup"),
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, "main.py"],
                cwd=folder,
                env=env,
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        )
    outs = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=TIMEOUT)
            assert proc.returncode == 0, f"{out[-3000:]}\n{err[-5000:]}"
            outs.append(out)
    finally:
        for proc in procs:
            proc.kill()
    assert len(re.findall(r"^Epoch \d/2$", outs[0], re.M)) == 4, outs[0]  # two fits of two epochs, chief prints
    assert re.search(r"10/10 .*accuracy: [\d.]+ - loss: [\d.]+", outs[0]), outs[0]
