"""A custom loop (ExponentialDecay + Adam) checkpointed at step K by tf.train.Checkpoint and
resumed into a fresh model and optimizer ends exactly where the uninterrupted loop does:
parameters, Adam's slots and ``optimizer.iterations`` (the schedule and Adam's bias correction
read it), in one process and on 2 replicas, directly and through PreemptionCheckpointHandler."""

from __future__ import annotations

import numpy as np
import pytest
from optimizer_resume_fns import STEPS, K, resume

from unison.testing import run_distributed


def _assert_exact(result: dict) -> None:
    assert result["saved_iterations"] == K
    assert result["restored_iterations"] == K
    want, got = result["uninterrupted"], result["resumed"]
    assert got["iterations"] == want["iterations"] == STEPS
    for name in ("params", "slots", "ema"):
        assert len(got[name]) == len(want[name])
        for a, b in zip(got[name], want[name]):
            np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("through_handler", [False, True], ids=["checkpoint", "preemption_handler"])
def test_one_process_resume_is_exact(tmp_path, through_handler) -> None:
    _assert_exact(resume(str(tmp_path), 1, through_handler))


@pytest.mark.timeout(120)
def test_one_process_resume_keeps_the_ema_weights(tmp_path) -> None:
    result = resume(str(tmp_path), 1, False, ema=True)
    assert len(result["resumed"]["ema"]) == 4
    _assert_exact(result)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("through_handler", [False, True], ids=["checkpoint", "preemption_handler"])
def test_two_replicas_resume_is_exact(tmp_path, through_handler) -> None:
    results = run_distributed(resume, 2, args=(str(tmp_path), 2, through_handler), timeout=240)
    for result in results:
        _assert_exact(result)
    for a, b in zip(results[0]["resumed"]["params"], results[1]["resumed"]["params"]):
        np.testing.assert_array_equal(a, b)
