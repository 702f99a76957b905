"""Weight constraints and use_ema's averages run after every synchronised update: 2 Mirrored
replicas end with the same weights as each other and as one replica on the same global batches.
A stateful LSTM is in the model: each replica carries the states of its own share of the batch."""

from __future__ import annotations

import numpy as np
import pytest
from surface_fns import constrained_ema_fit

from unison.testing import run_distributed

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def test_two_replicas_equal_one_with_constraints_and_ema() -> None:
    one = constrained_ema_fit(None)
    results = run_distributed(constrained_ema_fit, world_size=2, args=(["/cpu:0", "/cpu:1"],), timeout=240)
    assert [r["replicas"] for r in results] == [2, 2]
    for a, b, single in zip(results[0]["weights"], results[1]["weights"], one["weights"]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, single, rtol=1e-4, atol=1e-5)
    lstm_recurrent = results[0]["weights"][1]
    assert lstm_recurrent.shape == (4, 16)
