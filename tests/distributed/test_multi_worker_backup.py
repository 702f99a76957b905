"""BackupAndRestore across real workers: a killed job restarts and resumes, backups move between
topologies, and killing the chief while it writes never leaves a backup that cannot be restored."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
from multi_worker_fns import (
    FAULT_STEPS,
    HERE,
    Zygote,
    fault_program,
    shared_zygote,
    train_with_backup,
)

from unison.testing.multi_worker import clean_env, free_ports, tf_config, wait_all


def _close(a: np.ndarray, b: np.ndarray, tol: float = 1e-5) -> bool:
    return np.allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0.0))))


def _load(path: object) -> dict:
    with open(str(path), "rb") as fh:
        return pickle.load(fh)


def _progress(path: str) -> dict[int, list[int]]:
    steps: dict[int, list[int]] = {}
    if os.path.exists(path):
        with open(path) as fh:
            complete = fh.read().split("\n")[:-1]  # the chief may be writing the last line
        for line in complete:
            attempt, step = map(int, line.split())
            steps.setdefault(attempt, []).append(step)
    return steps


@pytest.mark.slow
def test_killed_worker_restarts_under_unison_launch_and_resumes(tmp_path) -> None:
    work, backup = tmp_path / "work", tmp_path / "backup"
    work.mkdir()
    result = tmp_path / "result"
    cmd = [
        sys.executable,
        "-m",
        "unison.cli",
        "launch",
        "--nproc-per-node",
        "2",
        "--max-restarts",
        "1",
        os.path.join(HERE, "multi_worker_fns.py"),
        "fault_program",
        str(result),
        json.dumps({"backup_dir": str(backup), "work_dir": str(work)}),
    ]
    log_path = tmp_path / "launch.log"
    with open(log_path, "wb") as log:
        launcher = subprocess.Popen(cmd, env=clean_env(), stdout=log, stderr=subprocess.STDOUT)
    try:
        # kill -9 worker 1 in the middle of the first epoch (70 steps), after the backup at step 50
        deadline = time.monotonic() + 180
        while max(_progress(str(work / "progress")).get(0, [-1])) < 60:
            assert launcher.poll() is None, log_path.read_text()[-3000:]
            assert time.monotonic() < deadline, "the job never reached step 60"
            time.sleep(0.05)
        os.kill(int((work / "pid.0.1").read_text()), signal.SIGKILL)
        assert launcher.wait(timeout=240) == 0, log_path.read_text()[-4000:]
    finally:
        if launcher.poll() is None:
            launcher.kill()
    steps = _progress(str(work / "progress"))
    assert sorted(steps) == [0, 1], "the job was restarted exactly once"
    out = _load(f"{result}.0")
    assert out["attempt"] == 1 and out["replicas"] == 2
    epoch, step = out["restored_from"]
    resumed_at = epoch * FAULT_STEPS + step
    assert steps[1][0] == resumed_at  # the restarted job continued exactly where the backup was
    assert steps[1] == list(range(resumed_at, 2 * FAULT_STEPS))
    redone = max(steps[0]) + 1 - resumed_at
    assert 0 <= redone <= 50, (max(steps[0]), resumed_at)
    assert not backup.exists() or not os.listdir(backup)  # deleted once training completed
    # the same weights as an uninterrupted run (same data order, same global batches)
    ref_work = tmp_path / "ref"
    ref_work.mkdir()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: one thread is fastest on a busy machine
    try:
        ref = fault_program(str(tmp_path / "ref-backup"), str(ref_work), single=True)
    finally:
        torch.set_num_threads(threads)
    for got, want in zip(out["weights"], ref["weights"]):
        assert _close(got, want), float(np.abs(got - want).max())


@pytest.fixture
def zygote() -> Zygote:
    return shared_zygote()


def test_backup_from_two_workers_restores_on_one_and_on_three(tmp_path, zygote) -> None:
    saved = tmp_path / "saved"
    (tmp_path / "two").mkdir()
    addresses = [f"127.0.0.1:{p}" for p in free_ports(2)]
    workers = [
        zygote.start(
            "train_with_backup",
            str(tmp_path / "two"),
            i,
            tf_config(addresses, i),
            {"backup_dir": str(saved), "stop_after": 13},
        )
        for i in range(2)
    ]
    wait_all(workers, str(tmp_path / "two"), timeout=240)
    assert [w.result() for w in workers] == [{"interrupted": True}] * 2
    # backups every 5 steps: the newest holds epoch 0, step 10 (and the one before it, step 5)
    assert sorted(os.listdir(saved)) == ["backup-000001.unison", "backup-000002.unison"]

    reference = train_with_backup(str(tmp_path / "fresh"), single=True)
    shutil.copytree(saved, tmp_path / "for-one")
    one = train_with_backup(str(tmp_path / "for-one"), single=True)

    shutil.copytree(saved, tmp_path / "for-three")
    (tmp_path / "three").mkdir()
    addresses = [f"127.0.0.1:{p}" for p in free_ports(3)]
    workers = [
        zygote.start(
            "train_with_backup",
            str(tmp_path / "three"),
            i,
            tf_config(addresses, i),
            {"backup_dir": str(tmp_path / "for-three")},
        )
        for i in range(3)
    ]
    wait_all(workers, str(tmp_path / "three"), timeout=240)
    three = [w.result() for w in workers]

    for res, replicas in [(one, 1)] + [(r, 3) for r in three]:
        assert res["restored_from"] == (0, 10)
        assert res["replicas"] == replicas
        for got, want in zip(res["weights"], reference["weights"]):
            assert _close(got, want), (replicas, float(np.abs(got - want).max()))


@pytest.mark.slow
def test_killing_the_writer_at_random_moments_never_breaks_a_restore(tmp_path) -> None:
    trials = 20
    result = tmp_path / "trials"
    cmd = [
        sys.executable,
        os.path.join(HERE, "multi_worker_fns.py"),
        "atomic_kill_trials",
        str(result),
        json.dumps({"backup_dir": str(tmp_path / "backup"), "trials": trials, "seed": 7}),
    ]
    proc = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, timeout=400, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = _load(result)
    assert out["errors"] == []
    assert len(out["resumed"]) == trials
    # every trial after the first restored a complete backup, never going back in time
    resumed = out["resumed"][1:]
    assert all(step is not None for step in resumed)
    assert resumed == sorted(resumed) and resumed[-1] > 0
    assert out["final_step"] is not None and out["final_step"] >= resumed[-1]
    # the kills really landed inside writes (a temporary file was left behind) many times
    assert out["mid_write"] >= 1, out
