"""train_on_batch/test_on_batch/predict_on_batch on two replicas equal one replica's: each batch is
one global batch, split across the replicas, and the metrics describe the whole batch."""

from __future__ import annotations

import numpy as np
import pytest
from on_batch_fns import on_batch_run

from unison.testing import run_distributed

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def test_two_replicas_step_on_a_batch_as_one_does() -> None:
    want = on_batch_run(0)
    results = run_distributed(on_batch_run, world_size=2, args=(1,), timeout=240)
    assert want["replicas"] == 1 and want["iterations"] == 3
    for got in results:
        assert got["replicas"] == 2 and got["iterations"] == 3
        np.testing.assert_allclose(np.array(got["train"]), np.array(want["train"]), rtol=1e-5, atol=1e-6)
        assert got["test"].keys() == want["test"].keys()
        for key in want["test"]:
            assert got["test"][key] == pytest.approx(want["test"][key], rel=1e-5), key
        assert got["predict"].shape == (7, 3)
        np.testing.assert_allclose(got["predict"], want["predict"], rtol=1e-5, atol=1e-6)
        for g, w in zip(got["weights"], want["weights"]):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
