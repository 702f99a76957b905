"""Preemption: a SIGTERM to worker 1 of 2 in epoch 2 makes both save at the same step, exit with
code 42, and the job restarted by ``unison launch --max-restarts 1`` resumes from that step; for a
custom loop under ``PreemptionCheckpointHandler.run`` and for ``fit`` with
``BackupAndRestore(save_before_preemption=True)``."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import resume_fns as fns

from unison.distribute.preemption import RESTARTABLE_EXIT_CODE
from unison.testing.multi_worker import clean_env


def _launch(tmp_path, fn: str, kwargs: dict) -> tuple[subprocess.Popen, str]:
    result = str(tmp_path / "result")
    cmd = [
        sys.executable,
        "-m",
        "unison.cli",
        "launch",
        "--nproc-per-node",
        "2",
        "--max-restarts",
        "1",
        os.path.join(fns.HERE, "resume_fns.py"),
        fn,
        result,
        json.dumps(kwargs),
    ]
    log = open(tmp_path / "launch.log", "wb")
    proc = subprocess.Popen(cmd, env=clean_env(), stdout=log, stderr=subprocess.STDOUT)
    log.close()
    return proc, result


def _sigterm_worker_1_when_ready(tmp_path, proc: subprocess.Popen, log_dir: str) -> float:
    ready = os.path.join(log_dir, "ready-for-sigterm")
    deadline = time.monotonic() + 180
    while not os.path.exists(ready):  # worker 1 waits at its step for the signal (no race)
        assert proc.poll() is None, (tmp_path / "launch.log").read_text()[-3000:]
        assert time.monotonic() < deadline, "worker 1 never reached the step of the SIGTERM"
        time.sleep(0.02)
    sent = time.monotonic()
    with open(os.path.join(log_dir, "pid.0.1")) as fh:
        os.kill(int(fh.read()), signal.SIGTERM)
    assert proc.wait(timeout=240) == 0, (tmp_path / "launch.log").read_text()[-4000:]
    return sent


def _saved(log_dir: str) -> list[str]:
    out = []
    for rank in (0, 1):
        with open(os.path.join(log_dir, f"saved.0.{rank}")) as fh:
            out.append(fh.read())
    return out


@pytest.mark.slow
def test_sigterm_to_worker_1_saves_both_at_the_same_step_and_the_restart_resumes_there(tmp_path) -> None:
    logs, ckpt = tmp_path / "logs", tmp_path / "ckpt"
    logs.mkdir()
    proc, result = _launch(tmp_path, "preempted_loop", {"ckpt_dir": str(ckpt), "log_dir": str(logs)})
    _sigterm_worker_1_when_ready(tmp_path, proc, str(logs))
    # worker 1 got the SIGTERM before its 9th run call: both saved after that call and exited 42
    assert _saved(str(logs)) == [f"9 {RESTARTABLE_EXIT_CODE}"] * 2
    with open(f"{result}.0", "rb") as fh:
        out = pickle.load(fh)
    assert out["attempt"] == 1 and out["replicas"] == 2
    assert out["started_at"] == 9  # the relaunched job resumed from the saved step
    reference = fns.preempted_loop(str(tmp_path / "ref-ckpt"), str(tmp_path), single=True)
    assert reference["started_at"] == 0
    for got, want in zip(out["weights"], reference["weights"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_fit_with_save_before_preemption_resumes_at_the_saved_batch(tmp_path) -> None:
    logs, backup = tmp_path / "logs", tmp_path / "backup"
    logs.mkdir()
    kwargs = {"backup_dir": str(backup), "log_dir": str(logs), "kind": "tfdata", "preempt_at": [1, 2]}
    proc, result = _launch(tmp_path, "train_ids", kwargs)
    _sigterm_worker_1_when_ready(tmp_path, proc, str(logs))
    # both backed up after batch 2 of epoch 1 (3 batches done) and exited 42
    assert _saved(str(logs)) == [f"1 3 {RESTARTABLE_EXIT_CODE}"] * 2
    with open(f"{result}.0", "rb") as fh:
        out = pickle.load(fh)
    assert out["restored_from"] == (1, 3) and out["replicas"] == 2
    ids = fns.read_ids(str(logs))
    assert min((e, s) for e, s, _ in ids[1]) == (1, 3)  # the first step of the restarted job
    (tmp_path / "ref").mkdir()
    reference = fns.train_ids(str(tmp_path / "ref-backup"), str(tmp_path / "ref"), "tfdata", single=True)
    for got, want in zip(out["weights"], reference["weights"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
