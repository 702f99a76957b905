"""gradient_accumulation_steps on 2 replicas: one synchronisation per update, the one-device result."""

from __future__ import annotations

import numpy as np
import pytest
from accumulation_fns import accumulated_fit

from unison.testing import run_distributed

pytestmark = pytest.mark.timeout(300)


def test_accumulation_on_two_replicas_matches_one_batch_of_k_times_b() -> None:
    whole = accumulated_fit(None, None, 32)
    for res in run_distributed(accumulated_fit, world_size=2, args=(["/cpu:0", "/cpu:1"], 4, 8), timeout=240):
        for got, want in zip(res["weights"], whole["weights"]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert res["iterations"] == 48
        assert res["synchronisations"] == 12  # only every 4th batch reached the other replica
