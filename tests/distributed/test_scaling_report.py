"""The end-of-fit scaling line on two replicas: printed once, by the chief, from measured figures
(the samples every replica trained on, the global batch the steps took), compared with a recorded
one-replica throughput and explained when two replicas were slower."""

from __future__ import annotations

import pytest
from scaling_fns import fit_and_report

from unison.keras.utils import scaling
from unison.testing import run_distributed

pytestmark = [pytest.mark.timeout(400), pytest.mark.slow]


@pytest.mark.parametrize("kind,global_batch", [("arrays", 40), ("dataset", 16)])
def test_two_replicas_print_the_measured_scaling(monkeypatch, tmp_path, kind: str, global_batch: int) -> None:
    monkeypatch.setenv("UNISON_CACHE_DIR", str(tmp_path / "datasets"))
    # a one-replica run of this model and batch on this machine, far faster than two replicas can be
    key = scaling.reference_key(18, global_batch, "cpu")
    scaling.remember_one_replica(key, 1e9)
    results = run_distributed(fit_and_report, world_size=2, args=(kind,), timeout=300)
    chief, other = sorted(results, key=lambda r: r["rank"])
    assert chief["figures"] == [(2, 192, global_batch, 18)]  # 96 rows x 2 epochs, counted once
    assert other["figures"] == [] and "Scaling:" not in other["printed"]
    lines = [line for line in chief["printed"].splitlines() if line.startswith("Scaling:")]
    assert len(lines) == 1, chief["printed"]
    assert lines[0].startswith("Scaling: 2 replicas ran ") and "x one replica's 1,000,000,000 samples/s" in lines[0]
    assert ": slower than one. Why: " in lines[0] and "What would help: " in lines[0]
    assert "a bigger global batch" in lines[0]  # 8-20 samples per replica per step
