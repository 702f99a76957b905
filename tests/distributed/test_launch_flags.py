"""`unison launch` as users of torchrun and horovodrun type it, with real processes.

Each launch runs with its own TMPDIR, so the test can see exactly what the launcher left there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.distributed

PROGRAM = """
import os, signal, sys, time
rank = int(os.environ["RANK"])
print(f"rank {rank} of {os.environ['WORLD_SIZE']}", flush=True)
mode = os.environ.get("MODE", "")
if mode == "raise" and rank == 1:
    def load_batch():
        raise ValueError("batch 7 has 3 columns, expected 4")
    load_batch()
if mode == "exit" and rank == 1:
    sys.exit(3)
if mode == "kill" and rank == 0:
    print("rank 0 is about to be killed", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
if mode in ("raise", "kill", "hang"):
    time.sleep(60)
"""


def _env(tmp_path, **extra: str) -> dict[str, str]:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_RANK", "TORCHELASTIC"))}
    env.update(TMPDIR=str(private_tmp), **extra)
    return env


def _launch(tmp_path, *flags: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(PROGRAM))
    cmd = [sys.executable, "-m", "unison.cli", "launch", *flags, str(prog)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(tmp_path, **env), cwd=tmp_path)


@pytest.mark.parametrize(
    "flags",
    [["--nproc_per_node=2"], ["-np", "2"], ["-H", "localhost:2"], ["--nproc_per_node", "2", "--nnodes=1:1"]],
    ids=["torchrun", "horovodrun-np", "horovodrun-H", "torchrun-nnodes"],
)
@pytest.mark.timeout(120)
def test_torchrun_and_horovodrun_spellings_run_two_processes(tmp_path, flags) -> None:
    proc = _launch(tmp_path, *flags)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split("\n")[:2]) == ["rank 0 of 2", "rank 1 of 2"], proc.stdout
    # no torchelastic_* (nor unison_launch_*) folder is left behind after a successful launch
    assert os.listdir(tmp_path / "tmp") == []
    assert "Failures:" not in proc.stderr and proc.stderr.strip() == ""


@pytest.mark.timeout(120)
def test_a_failed_rank_is_summarised_with_its_traceback_and_log(tmp_path) -> None:
    proc = _launch(tmp_path, "-np", "2", MODE="raise")
    assert proc.returncode == 1
    err = proc.stderr
    assert "Root Cause" not in err and "Failures:" not in err and "ChildFailedError" not in err, err
    assert "unison launch: the job failed: rank 1 of 2 exited with code 1" in err, err
    assert "- rank 1 (local rank 1, pid " in err
    summary = err[err.index("unison launch: the job failed") :]
    assert "ValueError: batch 7 has 3 columns, expected 4" in summary
    assert "(stopped by the launcher after rank 1 failed)" in summary  # rank 0, SIGTERMed by torchrun
    log = summary.split("last lines of its stderr (", 1)[1].split(")", 1)[0]
    assert log.endswith("rank1.log") and "batch 7 has 3 columns" in open(log).read()
    kept = os.listdir(tmp_path / "tmp")
    assert len(kept) == 1 and kept[0].startswith("unison_launch_") and not kept[0].startswith("torchelastic_")


@pytest.mark.timeout(120)
def test_an_exit_code_and_a_killed_rank_are_named(tmp_path) -> None:
    proc = _launch(tmp_path, "--nproc_per_node=2", MODE="exit")
    assert proc.returncode == 1
    assert "rank 1 of 2 exited with code 3" in proc.stderr, proc.stderr
    proc = _launch(tmp_path, "--nproc_per_node=2", MODE="kill")
    assert proc.returncode == 1
    assert "rank 0 of 2 killed by signal SIGKILL (9)" in proc.stderr, proc.stderr
    assert "    rank 0 is about to be killed" in proc.stderr  # written just before the kill, still in the log


@pytest.mark.timeout(120)
def test_sigterm_to_the_launcher_prints_one_line_and_stops_every_rank(tmp_path) -> None:
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(PROGRAM))
    cmd = [sys.executable, "-m", "unison.cli", "launch", "-np", "2", str(prog)]
    launcher = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path, MODE="hang"), cwd=tmp_path
    )
    assert launcher.stdout is not None
    # Both ranks are up. They share the pipe and print unbuffered (text, then newline: two writes), so
    # their lines can interleave ("rank 0 of 2rank 1 of 2\n\n"): read until both have spoken.
    seen = ""
    while not ("rank 0 of 2" in seen and "rank 1 of 2" in seen) and seen.count("\n") < 4:
        line = launcher.stdout.readline()
        if not line:
            break
        seen += line
    assert "rank 0 of 2" in seen and "rank 1 of 2" in seen, seen
    launcher.send_signal(signal.SIGTERM)
    out, err = launcher.communicate(timeout=60)
    assert launcher.returncode == 128 + signal.SIGTERM
    assert err.strip() == "unison launch: stopped by SIGTERM; its 2 local process(es) were stopped too.", err
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _running(prog):
        time.sleep(0.1)
    assert not _running(prog)
    assert os.listdir(tmp_path / "tmp") == []


def _running(prog) -> bool:
    found = subprocess.run(["pgrep", "-f", str(prog)], capture_output=True, text=True, check=False)
    return bool(found.stdout.strip())
