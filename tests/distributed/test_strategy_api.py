"""strategy.reduce / gather / InputContext / replica contexts across real replicas, and the harness."""

from __future__ import annotations

import time

import pytest
from replica_fns import raise_on_rank, reduce_and_gather, sleep_on_rank

from unison.errors import ReplicaFailedError
from unison.testing import run_distributed


@pytest.mark.slow
def test_reduce_gather_and_contexts_on_three_replicas() -> None:
    results = run_distributed(reduce_and_gather, world_size=3, args=(0,), timeout=120)
    # replica r holds r+1 rows [10r, 10r+1, ...]
    rows = [[0.0], [10.0, 11.0], [20.0, 21.0, 22.0]]
    flat = [v for r in rows for v in r]
    for rank, res in enumerate(results):
        assert res["sum"] == 0 + 1 + 2
        assert res["mean"] == pytest.approx(1.0)
        assert res["sum_axis"] == [sum(flat)]
        assert res["mean_axis"] == [pytest.approx(sum(flat) / len(flat))]
        assert res["gather"] == flat
        assert res["ctx"] == (3, rank, 3)
        assert res["replica_all_reduce"] == 3.0
        assert res["in_cross"] is True and res["no_replica_ctx"] is True


@pytest.mark.slow
def test_harness_reraises_the_failing_replicas_traceback() -> None:
    with pytest.raises(ReplicaFailedError) as info:
        run_distributed(raise_on_rank, world_size=2, args=(1,), timeout=60)
    assert info.value.rank == 1
    assert "deliberate failure on rank 1" in str(info.value)
    assert "raise_on_rank" in info.value.remote_traceback


@pytest.mark.slow
def test_harness_times_out_naming_the_missing_replica() -> None:
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"replicas \[1\] of 2 did not finish"):
        run_distributed(sleep_on_rank, world_size=2, args=(1,), timeout=15)
    assert time.monotonic() - start < 40


def test_process_group_is_torn_down_at_shutdown_even_after_the_first_torch_optimizer() -> None:
    from replica_fns import teardown_after_optimizer

    for res in run_distributed(teardown_after_optimizer, world_size=2, args=(0,), timeout=120):
        assert res["fresh"], "the replica must start without torch._dynamo imported"
        assert res["joined"] > res["before"]  # gloo's threads ran ...
        assert res["after"] <= res["before"], res  # ... and stopped at shutdown


def test_a_step_inside_run_is_synchronised_once_and_the_users_optimizer_is_not_marked() -> None:
    from replica_fns import synchronised_once

    for res in run_distributed(synchronised_once, world_size=2, args=(0,), timeout=120):
        assert res["plain"] == -3.0 and res["wrapped"] == -3.0, res  # -6.0: reduced twice
        assert res["same_synchronizer_False"] and res["same_synchronizer_True"], res
        assert res["attributes_False"] == [] and res["attributes_True"] == [], res
