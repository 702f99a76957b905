"""Replicas that disagree on the optimizer's hyper-parameters or the global batch, or train a
model built outside strategy.scope(), fail at their first step with a named error naming the
rank and the differing value, on MirroredStrategy and on MultiWorkerMirroredStrategy."""

from __future__ import annotations

import os

import agreement_fns as fns
import numpy as np
import pytest

from unison.errors import ReplicaFailedError
from unison.testing import run_distributed, run_multi_worker

HERE = os.path.dirname(os.path.abspath(__file__))
LR = "learning_rate is 0.2 on rank 1 but 0.1 on rank 0"


@pytest.mark.timeout(200)
def test_mirrored_replicas_with_different_learning_rates_fail_at_the_first_step(tmp_path) -> None:
    with pytest.raises(
        ReplicaFailedError, match=rf"ReplicaMismatchError: Replicas train with different optimizer.*{LR}"
    ):
        run_distributed(fns.fit, 2, args=("mirrored", [0.1, 0.2], False, str(tmp_path)), timeout=150)
    assert not list(tmp_path.iterdir())  # no replica finished a step


@pytest.mark.timeout(200)
def test_mirrored_model_built_outside_the_scope_is_refused(tmp_path) -> None:
    with pytest.raises(
        ReplicaFailedError,
        match=r"UnsynchronizedTrainingError: Optimizer 'sgd' .* rank \d of 2 .*outside strategy.scope",
    ):
        run_distributed(fns.fit, 2, args=("mirrored", [0.1, 0.1], True, str(tmp_path)), timeout=150)
    assert not list(tmp_path.iterdir())


@pytest.mark.timeout(200)
def test_mirrored_replicas_agreeing_train_together() -> None:
    a, b = run_distributed(fns.fit, 2, args=("mirrored", [0.1, 0.1]), timeout=150)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.timeout(200)
def test_a_different_global_batch_size_is_named() -> None:
    with pytest.raises(
        ReplicaFailedError, match=r"different global batch \(compute_average_loss's global_batch_size\): rank 1 has 16"
    ):
        run_distributed(fns.custom_loop, 2, args=([8, 16],), timeout=150)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_multi_worker_with_a_different_learning_rate_fails_on_every_worker(tmp_path) -> None:
    kwargs = {"kind": "mwms", "learning_rates": [0.1, 0.2], "log_dir": str(tmp_path)}
    with pytest.raises(ReplicaFailedError, match=rf"(?s)workers \[0, 1\] of 2 failed.*{LR}"):
        run_multi_worker("agreement_fns:fit", 2, kwargs=kwargs, timeout=240, sys_path=[HERE])
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_multi_worker_model_outside_the_scope_is_refused(tmp_path) -> None:
    kwargs = {"kind": "mwms", "learning_rates": [0.1, 0.1], "outside_scope": True, "log_dir": str(tmp_path)}
    with pytest.raises(ReplicaFailedError, match=r"(?s)UnsynchronizedTrainingError.*outside strategy.scope"):
        run_multi_worker("agreement_fns:fit", 2, kwargs=kwargs, timeout=240, sys_path=[HERE])
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize(
    "what,message",
    [
        (
            "loss",
            r"different loss \(fit's compiled loss\): class is 'MeanAbsoluteError' on rank 1 but 'MeanSquaredError'",
        ),
        ("batch", r"different global batch \(fit's batch_size\): rank 1 has 16 where rank 0 has 8"),
        ("data", r"different training data \(the number of samples in fit's x\): rank 1 has 24 where rank 0 has 32"),
    ],
)
def test_fit_replicas_with_another_loss_batch_or_data_fail_at_the_first_step(tmp_path, what, message) -> None:
    with pytest.raises(ReplicaFailedError, match=rf"ReplicaMismatchError: Replicas train with {message}"):
        run_distributed(fns.fit_disagreeing, 2, args=(what, str(tmp_path)), timeout=150)
    assert not list(tmp_path.iterdir())  # no replica finished a step


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_replicas_that_drift_apart_are_caught_by_the_periodic_recheck() -> None:
    # checks before steps 1, 5 and 9 (every 4); replica 1 changes a weight before step 6: step 9's check names it
    with pytest.raises(ReplicaFailedError, match=r"different values for parameter 'bias': ranks \[1\] differ"):
        run_distributed(fns.drift_after, 2, args=(5, 4), timeout=150)
    # agreeing replicas: checked before steps 1, 5 and 9 of 12, and nothing raised
    assert run_distributed(fns.drift_after, 2, args=(99, 4), timeout=150) == [3, 3]


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_a_torch_optimizer_with_another_learning_rate_is_named() -> None:
    with pytest.raises(
        ReplicaFailedError,
        match=r"different torch optimizer \(class and param groups\): param_groups\[0\].lr is 0.2 on rank 1 but 0.1",
    ):
        run_distributed(fns.torch_loop, 2, args=([0.1, 0.2],), timeout=150)
