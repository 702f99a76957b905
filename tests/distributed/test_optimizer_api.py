"""DistributedOptimizer is a torch.optim.Optimizer on real replicas: StepLR and GradScaler work
with it, and Horovod's gradient_predivide_factor keeps the average (issues 13 and 15)."""

from __future__ import annotations

import numpy as np
import optimizer_api_fns as fns
import pytest

from unison.testing import run_distributed

STEPS = 4


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_step_lr_on_distributed_optimizer_and_predivide_factor_keep_the_average() -> None:
    want = fns.reference(STEPS, 2)
    results = [
        by_factor[f]
        for by_factor in run_distributed(fns.scheduled_both, 2, args=(STEPS,), timeout=120)
        for f in (1.0, 2.0)
    ]
    for res in results:
        assert res["is_optimizer"]
        assert res["lrs"] == pytest.approx([0.1, 0.05, 0.025, 0.0125])
        for got, exp in zip(res["params"], want):
            np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_grad_scaler_skips_an_overflowing_step_on_every_replica() -> None:
    a, b = run_distributed(fns.scaled, 2, args=(STEPS, 2), timeout=120)
    assert a["scales"] == b["scales"]
    assert a["scales"][2] == a["scales"][1] / 2  # the overflow halved the scale on both
    np.testing.assert_array_equal(a["params"][2], a["params"][1])  # and both skipped that step
    assert not np.array_equal(a["params"][3], a["params"][2])  # then training went on
    for pa, pb in zip(a["params"], b["params"]):
        np.testing.assert_array_equal(pa, pb)
