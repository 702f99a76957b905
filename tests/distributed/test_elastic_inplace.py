"""hvd.elastic under `unison launch --min-workers/--max-workers`: survivors re-form in place, workers join.

Real processes: the agent starts 3 workers of elastic_inplace_script.py; the test kills one with
SIGKILL, checks that the two survivors (same pids) go on at size 2 with the learning rate their
reset callback set, then lets a discovery script report a fourth slot and checks that the new
worker joins (rank 2, size 3 again, rank 0's state) and that training ends in the accuracy band
of an uninterrupted run.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

SCRIPT = pathlib.Path(__file__).with_name("elastic_inplace_script.py")
KERAS_SCRIPT = pathlib.Path(__file__).with_name("keras_elastic_script.py")  # model.fit in hvd.elastic.run
BAND = 0.9  # the uninterrupted run's accuracy on its own data is >= this (test_uninterrupted_...)
BASE_LR = 0.05


def _env(out: pathlib.Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(OUT=str(out), PYTHONUNBUFFERED="1", UNISON_COLLECTIVE_TIMEOUT="30")
    return env


def _launch(out: pathlib.Path, *flags: str, script: pathlib.Path = SCRIPT) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "unison.cli", "launch", *flags, str(script)]
    log = open(out / "agent.log", "wb")
    return subprocess.Popen(cmd, env=_env(out), cwd=out, stdout=log, stderr=subprocess.STDOUT)


def _steps(out: pathlib.Path, worker: int) -> list[dict]:
    path = out / f"steps.{worker}"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def _until(what: str, cond: Callable[[], bool], out: pathlib.Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{(out / 'agent.log').read_text()[-4000:]}")
        time.sleep(0.1)


def _finish(agent: subprocess.Popen[bytes], out: pathlib.Path, timeout: float = 120.0) -> str:
    try:
        agent.wait(timeout=timeout)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    return (out / "agent.log").read_text()


def _results(out: pathlib.Path) -> dict[int, dict]:
    return {int(p.suffix[1:]): json.loads(p.read_text()) for p in out.glob("result.*")}


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("script", [SCRIPT, KERAS_SCRIPT], ids=["torch_loop", "keras_fit"])
def test_survivors_reform_in_place_after_a_kill_and_a_new_worker_joins(
    tmp_path: pathlib.Path, script: pathlib.Path
) -> None:
    (tmp_path / "slots").write_text("localhost:3\n")
    discovery = tmp_path / "discover.sh"
    discovery.write_text(f"#!/bin/sh\ncat {tmp_path / 'slots'}\n")
    discovery.chmod(0o700)
    (tmp_path / "hold").touch()  # pace the steps and wait before the last one until we are done
    agent = _launch(
        tmp_path,
        "--nproc-per-node",
        "3",
        "--min-workers",
        "2",
        "--max-workers",
        "4",
        "--host-discovery-script",
        str(discovery),
        script=script,
    )
    try:
        _until("3 workers training", lambda: all(len(_steps(tmp_path, w)) >= 3 for w in (0, 1, 2)), tmp_path)
        pids = {w: int((tmp_path / f"pid.{w}").read_text()) for w in (0, 1, 2)}
        os.kill(pids[2], signal.SIGKILL)
        killed_at = time.time()
        _until(
            "steps at size 2", lambda: all(s["size"] == 2 for w in (0, 1) for s in _steps(tmp_path, w)[-1:]), tmp_path
        )
        (tmp_path / "slots").write_text("localhost:4\n")  # a fourth slot: the agent starts worker 3
        _until("the new worker in training", lambda: (tmp_path / "started.3").exists(), tmp_path)
        (tmp_path / "hold").unlink()
        log = _finish(agent, tmp_path)
    finally:
        if agent.poll() is None:
            agent.kill()
    assert agent.returncode == 0, log[-4000:]
    assert "worker 2 (pid" in log and "killed by signal SIGKILL" in log
    survivors = {w: _steps(tmp_path, w) for w in (0, 1)}
    for worker, steps in survivors.items():
        assert {s["pid"] for s in steps} == {pids[worker]}, "a survivor was restarted"
        sizes = [s["size"] for s in steps]
        first2 = sizes.index(2)
        assert set(sizes[:first2]) == {3} and 3 in sizes[first2:], sizes  # 3, then 2, then 3 again
        at2 = [s for s in steps if s["size"] == 2]
        assert {s["rank"] for s in at2} == {worker}
        assert all(s["lr"] == pytest.approx(BASE_LR * 2) for s in at2)  # the reset callback's rule
        assert all(s["lr"] == pytest.approx(BASE_LR * 3) for s in steps if s["size"] == 3)
        assert steps[first2]["time"] > killed_at
    # the survivors rolled back to the same commit and went on from it together
    at2 = [[(s["epoch"], s["batch"]) for s in survivors[w] if s["size"] == 2] for w in (0, 1)]
    assert at2[0] == at2[1] and at2[0]
    new = _steps(tmp_path, 3)
    assert new, "the new worker never trained"
    assert {s["rank"] for s in new} == {2} and {s["size"] for s in new} == {3}
    assert new[0]["pid"] == int((tmp_path / "pid.3").read_text())
    # it took over rank 0's position in training (state.sync) and trained the same steps
    first_new = (new[0]["epoch"], new[0]["batch"])
    assert first_new in [(s["epoch"], s["batch"]) for s in survivors[0] if s["size"] == 3]
    results = _results(tmp_path)
    assert sorted(results) == [0, 1, 3], results
    assert len({round(r["acc"], 6) for r in results.values()}) == 1  # one model on every worker
    assert all(r["acc"] >= BAND and r["size"] == 3 for r in results.values()), results


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_uninterrupted_run_reaches_the_band(tmp_path: pathlib.Path) -> None:
    agent = _launch(tmp_path, "--nproc-per-node", "3", "--min-workers", "2", "--max-workers", "4")
    log = _finish(agent, tmp_path, timeout=240)
    assert agent.returncode == 0, log[-4000:]
    results = _results(tmp_path)
    assert sorted(results) == [0, 1, 2]
    assert all(r["acc"] >= BAND for r in results.values()), results


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_fewer_workers_than_min_workers_after_a_loss_is_a_named_error(tmp_path: pathlib.Path) -> None:
    (tmp_path / "hold").touch()
    agent = _launch(tmp_path, "--nproc-per-node", "2", "--min-workers", "2")
    try:
        _until("2 workers training", lambda: all(len(_steps(tmp_path, w)) >= 2 for w in (0, 1)), tmp_path)
        os.kill(int((tmp_path / "pid.1").read_text()), signal.SIGKILL)
        log = _finish(agent, tmp_path, timeout=60)
    finally:
        if agent.poll() is None:
            agent.kill()
    assert agent.returncode == 1
    assert "has 1 worker(s) left, fewer than --min-workers 2" in log
    assert "ElasticMembershipError" in log  # the survivor reports it too, then exits


def test_min_workers_above_the_workers_available_is_refused_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    from unison.launch import cli

    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(["--nproc-per-node", "2", "--min-workers", "3", str(SCRIPT)])
    assert cli.run(args) == 2
    err = capsys.readouterr().err
    assert "--min-workers 3 is more than the 2 worker(s) available (--nproc-per-node 2)" in err
    args = parser.parse_args(["--min-workers", "3", "--max-workers", "2", "--nproc-per-node", "3", str(SCRIPT)])
    assert cli.run(args) == 2
    assert "--max-workers must be >= --min-workers" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_discovery_with_too_few_slots_errors_after_the_elastic_timeout(tmp_path: pathlib.Path) -> None:
    discovery = tmp_path / "discover.sh"
    discovery.write_text("#!/bin/sh\necho localhost:1\n")
    discovery.chmod(0o700)
    flags = ["--min-workers", "2", "--host-discovery-script", str(discovery), "--elastic-timeout", "1"]
    cmd = [sys.executable, "-m", "unison.cli", "launch", *flags, str(SCRIPT)]
    started = time.monotonic()
    proc = subprocess.run(cmd, env=_env(tmp_path), capture_output=True, text=True, timeout=100)
    assert proc.returncode == 1, proc.stderr
    assert "has 1 worker(s) available after waiting 1s, fewer than --min-workers 2" in proc.stderr
    assert time.monotonic() - started < 60
    assert not list(tmp_path.glob("pid.*"))  # no worker was started
