"""examples/dcgan.py (TF's DCGAN tutorial: two GradientTapes over one forward pass) trains."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_dcgan_example_trains_both_models(tmp_path, mnist_dir):
    data = str(mnist_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(UNISON_DATA_DIR=data, EPOCHS="3", STEPS_PER_EPOCH="3", BATCH_SIZE="16", TRAIN_SAMPLES="256", SEED="1")
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "dcgan.py")],
        capture_output=True,
        text=True,
        timeout=540,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert re.match(r"tf\.Tensor\(\[\[-?[\d.e-]+\]\], shape=\(1, 1\), dtype=float32\)", proc.stdout), proc.stdout
    losses = [(float(g), float(d)) for g, d in re.findall(r"gen_loss ([\d.]+), disc_loss ([\d.]+)", proc.stdout)]
    assert len(losses) == 3, proc.stdout
    gen, disc = [g for g, _ in losses], [d for _, d in losses]
    # both tapes gave gradients that moved their model: the discriminator learns to tell real
    # from fake (its loss falls from about 2*ln 2), the generator's loss moves with it
    assert disc[-1] < disc[0], losses
    assert max(gen) - min(gen) > 1e-3, losses
