"""broadcast_object / all_gather_object with the job's secret (comm/signed_objects.py): real
replicas, real gloo. A pickle is unpickled only when it carries the job's MAC for this operation,
position and sender; a forged one is refused, naming the sender, and never unpickled."""

from __future__ import annotations

import os

import pytest
import signed_objects_fns as fns

from unison.testing import ReplicaFailedError, run_distributed


@pytest.mark.timeout(120)
def test_signed_object_collectives_round_trip():
    results = run_distributed(fns.round_trips, 2, timeout=100)
    for res in results:
        assert res["signed"]  # unison.testing hands its replicas the job's secret
        assert res["broadcast"] == {"lr": 0.1, "files": ["a", "b"], "from": 1}
        assert res["gathered"] == [{"rank": 0}, {"rank": 1}]
        assert res["hvd"] == [0, 0, 0]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ["broadcast", "gather"])
def test_a_pickle_without_the_jobs_mac_is_refused_and_not_unpickled(tmp_path, kind):
    try:
        results = run_distributed(fns.forged, 2, args=(kind, str(tmp_path)), timeout=100)
    except ReplicaFailedError as exc:  # rank 1 may fail on its own refused bytes first
        pytest.fail(f"a replica failed instead of refusing: {exc}")
    error = results[0]["error"]
    assert error is not None and "Rank 0 refused the object" in error and "from rank 1" in error
    assert "not unpickled" in error
    assert not os.path.exists(os.path.join(tmp_path, "unpickled-by-0"))


@pytest.mark.timeout(120)
def test_a_message_of_another_operation_is_refused():
    results = run_distributed(fns.forged, 2, args=("replay", "/nonexistent"), timeout=100)
    assert "Rank 0 refused the object of 'state' from rank 1" in results[0]["error"]
