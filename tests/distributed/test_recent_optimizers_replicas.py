"""Adafactor, Lamb, Muon and ScheduleFreeAdamW train the same weights on two CPU replicas as on one.

Their per-tensor statistics (Adafactor's RMS, Lamb's trust ratio, Muon's orthogonalisation) read
the whole gradient: they agree only if every replica steps on the same SUM-reduced gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from recent_optimizers_fns import NAMES, fit_each

from unison.testing import run_distributed

pytestmark = pytest.mark.timeout(300)


def test_recent_optimizers_on_two_replicas_match_one_device() -> None:
    whole = fit_each(None)
    for res in run_distributed(fit_each, world_size=2, args=(["/cpu:0", "/cpu:1"],), timeout=240):
        for name in NAMES:
            for got, want in zip(res[name], whole[name], strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)
