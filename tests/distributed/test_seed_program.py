"""The seed program, run as a user runs it, prints Keras's lines and reaches 97% on MNIST."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

LINE = re.compile(
    r"^1875/1875 - \d+s - \d+(ms|us)/step - accuracy: (?P<acc>[\d.]+) - loss: (?P<loss>[\d.]+) - "
    r"val_accuracy: (?P<val_acc>[\d.]+) - val_loss: (?P<val_loss>[\d.]+)$",
    re.M,
)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("devices", [None, "/cpu:0,/cpu:1"], ids=["default", "two-cpu-replicas"])
def test_seed_program_trains_to_97_percent(repo, mnist_dir, devices) -> None:
    cmd = [sys.executable, str(repo / "examples" / "mnist_seed.py"), "--verbose", "2"]
    if devices:
        cmd += ["--devices", devices]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["UNISON_DATA_DIR"] = str(mnist_dir)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=400, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    epochs = re.findall(r"^Epoch (\d)/5$", proc.stdout, re.M)
    lines = list(LINE.finditer(proc.stdout))
    assert epochs == ["1", "2", "3", "4", "5"], proc.stdout
    assert len(lines) == 5, proc.stdout
    losses = [float(m["loss"]) for m in lines]
    assert losses == sorted(losses, reverse=True)
    assert float(lines[-1]["val_acc"]) >= 0.97, proc.stdout
