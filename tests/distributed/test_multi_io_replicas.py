"""A two-input, two-output functional model trains on 2 replicas exactly as on one device."""

from __future__ import annotations

import numpy as np
import pytest
from multi_io_fns import multi_io_fit

from unison.testing import run_distributed

N_ROWS, BATCH = 19 * 16 + 2, 16  # 20 Adam steps, an uneven last batch

pytestmark = pytest.mark.timeout(300)


def test_multi_io_fit_on_two_replicas_matches_one_device() -> None:
    ref = multi_io_fit(None, N_ROWS, BATCH)
    for res in run_distributed(multi_io_fit, world_size=2, args=(["/cpu:0", "/cpu:1"], N_ROWS, BATCH), timeout=240):
        assert res["replicas"] == 2
        for got, want in zip(res["weights"], ref["weights"]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        for key, value in ref["history"].items():
            assert abs(res["history"][key][0] - value[0]) <= 1e-5, key
        for key, value in ref["evaluate"].items():
            assert abs(res["evaluate"][key] - value) <= 1e-5, key
        for got, want in zip(res["predict"], ref["predict"]):
            np.testing.assert_allclose(got, want, atol=1e-5)
