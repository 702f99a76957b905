"""torch.amp.GradScaler with DistributedOptimizer on real replicas: one replica's overflow makes
every replica skip that step and lower the scale together (issue 16)."""

from __future__ import annotations

import amp_fns as fns
import numpy as np
import pytest

from unison.testing import run_distributed

pytestmark = pytest.mark.timeout(300)


@pytest.mark.slow
@pytest.mark.parametrize(
    "options,manual",
    [({}, False), ({"clip_grad_norm": 0.5}, False), ({"shard_gradients": True}, False), ({"nonfinite": "keep"}, True)],
    ids=["plain", "clip", "zero2", "synchronize_unscale_clip"],
)
def test_one_replica_overflow_skips_everywhere_and_matches_one_process(options: dict, manual: bool) -> None:
    one = run_distributed(fns.train, 1, args=(options, manual), timeout=120)[0]
    two = run_distributed(fns.train, 2, args=(options, manual), timeout=240)
    # only rank 1 saw a non-finite loss at the bad step; rank 0's own gradients were finite
    assert two[1]["local_nonfinite"][fns.BAD_STEP] and not two[0]["local_nonfinite"][fns.BAD_STEP]
    for res in two:
        assert res["scales"] == one["scales"]  # same skips and scale on every replica and one process
        assert res["skipped"] == one["skipped"] >= 2  # the natural early overflow(s) and the bad step
        assert res["scales"][fns.BAD_STEP] == res["scales"][fns.BAD_STEP - 1] / 2
        assert res["future_warnings"] == []  # GradScaler's notice to optimizer authors is not shown
        for got, want in zip(res["params"], one["params"]):
            # float16 autocast: half-batch vs whole-batch rounding, within fp16 precision
            assert np.allclose(got, want, rtol=1e-3, atol=1e-3), np.abs(got - want).max()
    for a, b in zip(two[0]["params"], two[1]["params"]):
        assert np.array_equal(a, b)


def test_unscale_before_the_reduction_is_an_error_with_the_fix() -> None:
    for message in run_distributed(fns.unscale_before_reduction, 2, timeout=120):
        assert "ran before the gradients were reduced across replicas" in message
        assert "optimizer.synchronize() before scaler.unscale_(optimizer)" in message
