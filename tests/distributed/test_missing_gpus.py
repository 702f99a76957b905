"""TF's guide writes MirroredStrategy(["/gpu:0", "/gpu:1"]); on a host without them it warns once
(naming the missing devices and the replicas used) and trains on two CPU replicas, as TF does."""

from __future__ import annotations

import pytest
import torch
from replica_fns import missing_gpus_strategy

from unison.testing import run_distributed


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a host without GPUs")
def test_two_missing_gpus_run_as_two_cpu_replicas() -> None:
    results = run_distributed(missing_gpus_strategy, world_size=2, timeout=120)
    assert [r["replicas"] for r in results] == [2, 2]
    expected = (
        "MirroredStrategy: devices ['/gpu:0', '/gpu:1'] are not available on this machine (0 visible "
        "GPU(s)); running 2 replica(s) on ['/cpu:0', '/cpu:1'] instead."
    )
    assert results[0]["warnings"] == [expected]
    assert results[1]["warnings"] == []  # the chief speaks for the job
    assert results[0]["sum"] == results[1]["sum"] == 3.0
