"""Hangs that end and evidence kept (issue 40): a replica stuck in its own code while its peer's
collective failed exits by itself (no launcher) with the report; a replica killed with -9 leaves
every other replica's timeline and its own up to its last flush."""

from __future__ import annotations

import json
import os
import time

import faults_fns as fns
import pytest

from unison.debug.hang import STUCK_EXIT_CODE, HangExplainer
from unison.debug.timeline import merge
from unison.errors import ReplicaFailedError
from unison.testing import run_distributed


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("path", ["gloo", "shm"])
def test_a_replica_stuck_in_user_code_exits_after_the_timeout(path: str, tmp_path, capfd) -> None:
    env = {"UNISON_SHM_ALLREDUCE": "1" if path == "shm" else "0"}
    started = time.monotonic()
    # the harness sees the pipe close (or the exit code first): either way the process ended itself
    gone = rf"Replica 1 of 2 (died with exit code {STUCK_EXIT_CODE}|failed: exited without a result)"
    with pytest.raises(ReplicaFailedError, match=gone):
        run_distributed(fns.stuck_in_user_code, 2, args=(1, str(tmp_path)), timeout=150, env=env)
    elapsed = time.monotonic() - started
    stuck_at = os.path.getmtime(tmp_path / "stuck")
    # the peer fails after the timeout; the stuck one exits within timeout + the watchdog's bound after that
    bound = fns.TIMEOUT_S + HangExplainer.budget_s(fns.TIMEOUT_S) + 1.0
    assert time.time() - stuck_at < 2 * fns.TIMEOUT_S + bound + 10, elapsed
    err = capfd.readouterr().err
    assert "rank 1 of 2" in err and "exits: a collective of this job failed on another replica" in err, err[-3000:]
    assert "in stuck_in_user_code" in err, err[-3000:]  # where it was stuck
    assert err.count("sendBytes failed") <= 3, err[-3000:]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_kill_9_keeps_every_timeline(tmp_path) -> None:
    trace = str(tmp_path / "trace.json")
    env = {"UNISON_TIMELINE": trace, "UNISON_TIMELINE_FLUSH_S": "0.2", "UNISON_SHM_ALLREDUCE": "0"}
    with pytest.raises(ReplicaFailedError):
        run_distributed(fns.killed_rank, 2, args=(1, str(tmp_path)), timeout=150, env=env)
    time.sleep(0.5)
    assert merge(trace, 2, wait_s=0) == [0, 1]
    with open(trace) as fh:
        events = json.load(fh)["traceEvents"]
    for rank in (0, 1):
        steps = {e["name"] for e in events if e.get("pid") == rank and e.get("tid") == 1 and e["ph"] == "X"}
        assert steps == {f"step {i}" for i in range(5)}, (rank, steps)


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("path", ["gloo", "shm"])
def test_horovod_collectives_of_different_names_are_not_reduced_together(path: str) -> None:
    env = {"UNISON_SHM_ALLREDUCE": "1" if path == "shm" else "0"}
    results = run_distributed(fns.horovod_names, 2, args=(False,), timeout=150, env=env)
    for rank, res in enumerate(results):
        assert res["error"].startswith(f"CollectiveMismatchError: Collective 'metric_of_rank_{rank}' (#"), res
        assert f"name=metric_of_rank_{rank}" in res["error"], res
    same = run_distributed(fns.horovod_names, 2, args=(True,), timeout=150, env=env)
    assert [r["value"] for r in same] == [[1.0] * 4] * 2


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_multi_worker_worker_stuck_in_user_code_exits_without_a_launcher(tmp_path) -> None:
    from unison.testing import run_multi_worker

    here = os.path.dirname(os.path.abspath(__file__))
    kwargs = {"stuck": 1, "folder": str(tmp_path)}
    with pytest.raises(ReplicaFailedError, match=r"(?s)workers \[0, 1\] of 2 failed.*exits: a collective of this job"):
        run_multi_worker("faults_fns:mwms_stuck_in_user_code", 2, kwargs=kwargs, timeout=200, sys_path=[here])
    ended = time.time()
    stuck_at = os.path.getmtime(tmp_path / "stuck")
    bound = fns.TIMEOUT_S + HangExplainer.budget_s(fns.TIMEOUT_S) + 1.0
    # both workers ended: the peer after its timeout, the stuck one within the bound after that
    assert ended - stuck_at < 2 * fns.TIMEOUT_S + bound + 15, ended - stuck_at
    assert (tmp_path / "failed.0").exists()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("path", ["gloo", "shm"])
def test_a_sigstopped_replica_ends_with_the_job_within_the_timeout(path: str, tmp_path) -> None:
    env = {"UNISON_SHM_ALLREDUCE": "1" if path == "shm" else "0"}
    with pytest.raises(ReplicaFailedError, match=r"(?s)Replica 0 of 2 failed: .*(rank|Rank)s? \[?1\]?") as caught:
        run_distributed(fns.stopped_rank, 2, args=(1, str(tmp_path)), timeout=150, env=env)
    ended = time.time()
    stopped_at = os.path.getmtime(tmp_path / "stopped.pid")
    pid = int((tmp_path / "stopped.pid").read_text())
    # rank 0's collective reports rank 1 after the timeout; the harness (the launcher) then ends the stopped rank
    assert ended - stopped_at < fns.TIMEOUT_S + HangExplainer.budget_s(fns.TIMEOUT_S) + 10, str(caught.value)[:2000]
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid)
