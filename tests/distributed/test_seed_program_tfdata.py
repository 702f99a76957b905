"""The seed program on a tf.data pipeline (shuffle(60000).batch(32)) reaches 97% on MNIST."""

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
def test_seed_program_on_tf_data_trains_to_97_percent(repo, mnist_dir, devices) -> None:
    cmd = [sys.executable, str(repo / "examples" / "mnist_tfdata.py"), "--verbose", "2"]
    if devices:
        cmd += ["--devices", devices]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["UNISON_DATA_DIR"] = str(mnist_dir)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = list(LINE.finditer(proc.stdout))
    assert len(lines) == 5, proc.stdout
    assert float(lines[-1]["val_acc"]) >= 0.97, proc.stdout
