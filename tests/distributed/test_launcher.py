"""The re-exec launcher as users meet it: `python script.py` with MirroredStrategy of 2 CPUs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

SCRIPT_HEAD = """
import sys, os, time, torch
import unison as tf
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
rank = strategy.extended.replica_id
"""


def _run(tmp_path, body: str, timeout: float = 120, stdin: str | None = None, args: list[str] | None = None):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT_HEAD + textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_RANK"))}
    start = time.monotonic()
    proc = subprocess.run(
        args or [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        input=stdin,
        cwd=tmp_path,
    )
    return proc, time.monotonic() - start


@pytest.mark.slow
def test_two_replicas_from_a_plain_python_command(tmp_path) -> None:
    proc, _ = _run(
        tmp_path,
        """
        total = strategy.reduce("SUM", torch.tensor(float(rank + 1))).item()
        print(f"rank={rank} replicas={strategy.num_replicas_in_sync} total={total}")
    """,
    )
    assert proc.returncode == 0, proc.stderr
    # only the chief's stdout reaches the terminal
    assert proc.stdout.strip() == "rank=0 replicas=2 total=3.0"


@pytest.mark.slow
def test_failing_replica_stops_the_job_and_is_named(tmp_path) -> None:
    proc, elapsed = _run(
        tmp_path,
        """
        if rank == 1:
            raise RuntimeError("replica one broke")
        for _ in range(1000):
            strategy.reduce("SUM", torch.ones(1))
    """,
    )
    assert proc.returncode != 0
    assert "replica 1 of 2" in proc.stderr
    assert "RuntimeError: replica one broke" in proc.stderr
    assert elapsed < 60


@pytest.mark.slow
def test_failing_chief_takes_the_other_replicas_down(tmp_path) -> None:
    marker = tmp_path / "child.pid"
    proc, elapsed = _run(
        tmp_path,
        f"""
        if rank == 1:
            open({str(marker)!r}, "w").write(str(os.getpid()))
            strategy.reduce("SUM", torch.ones(1))   # waits for the chief, which never comes
        else:
            while not os.path.exists({str(marker)!r}):
                time.sleep(0.05)
            raise KeyError("chief broke")
    """,
    )
    assert proc.returncode != 0
    assert "KeyError: 'chief broke'" in proc.stderr
    pid = int(marker.read_text())
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"replica 1 (pid {pid}) outlived the failed chief")
    assert elapsed < 60


def test_program_from_stdin_cannot_be_rerun(tmp_path) -> None:
    proc, _ = _run(tmp_path, "", stdin=SCRIPT_HEAD, args=[sys.executable, "-"])
    assert proc.returncode != 0
    assert "unison launch" in proc.stderr
    assert "cannot be re-run" in proc.stderr


def test_multi_replica_strategy_inside_pytest_points_to_the_harness() -> None:
    import unison as tf
    from unison.launch import LaunchError

    with pytest.raises(LaunchError, match="unison.testing.run_distributed"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
