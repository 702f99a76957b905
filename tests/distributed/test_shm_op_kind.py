"""On the shared-memory path, one replica broadcasting while another all-reduces (even under the
same name) fails on every replica at once, not after the timeout, and the report names both
operation kinds (issue 40: the recorder stored no kind; each side waited in another transport)."""

from __future__ import annotations

import debug_fns as fns
import pytest

from unison.testing import run_distributed


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("scenario", ["op", "op_same_name"])
def test_broadcast_against_all_reduce_on_shared_memory_is_reported_at_once(scenario: str, tmp_path) -> None:
    env = {"UNISON_SHM_ALLREDUCE": "1"}
    results = run_distributed(fns.hang, 2, args=(scenario, 0, str(tmp_path)), timeout=150, env=env)
    for rank, res in enumerate(results):
        error = res["error"]
        assert res["elapsed"] < fns.TIMEOUT_S, (rank, res["elapsed"], error)  # at once, not the timeout
        assert "unison hang report" in error, (rank, error)
        divergence = error.split("First divergence:")[1].splitlines()[0]
        assert "collective #3: rank 0 issued" in divergence, divergence
        assert "broadcast" in divergence and "rank 1 issued all_reduce" in divergence, divergence
    culprit = results[0]["error"]
    assert culprit.startswith("CollectiveMismatchError: Collective "), culprit
    assert "an all-reduce through shared memory" in culprit, culprit
