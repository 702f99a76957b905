"""hvd.elastic under `unison launch --max-restarts`: a job that loses a process resumes from its last commit."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

TIMEOUT = 240


@pytest.mark.slow
@pytest.mark.timeout(TIMEOUT + 60)
def test_elastic_run_resumes_from_the_last_commit_after_a_restart(tmp_path: pathlib.Path) -> None:
    script = pathlib.Path(__file__).with_name("horovod_elastic_script.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(UNISON_ELASTIC_DIR=str(tmp_path / "commits"), EVENTS_DIR=str(tmp_path), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "unison.cli", "launch", "--nproc-per-node", "2", "--max-restarts", "1", str(script)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=tmp_path)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    events = [json.loads(line) for r in (0, 1) for line in (tmp_path / f"rank{r}.jsonl").read_text().splitlines()]

    def find(**match: object) -> list[dict]:
        return [e for e in events if all(e.get(k) == v for k, v in match.items())]

    # attempt 0: both ranks start from rank 0's weights (sync), commit epochs 0 and 1, then rank 1 dies
    starts0 = find(attempt=0, event="start")
    assert len(starts0) == 2 and starts0[0]["weights"] == starts0[1]["weights"]
    committed = find(attempt=0, event="commit", rank=0, epoch=1)
    assert committed, events
    # attempt 1: the reset callbacks ran, and training resumed at the committed epoch with its weights
    assert len(find(attempt=1, event="reset", size=2)) == 2
    starts1 = find(attempt=1, event="start")
    assert len(starts1) == 2
    for start in starts1:
        assert start["epoch"] == 1
        assert start["weights"] == pytest.approx(committed[0]["weights"])
    assert [e["epoch"] for e in find(attempt=1, event="commit", rank=0)] == [1, 2, 3]
    done = find(event="done")
    assert len(done) == 2 and done[0]["weights"] == pytest.approx(done[1]["weights"])
    assert os.path.isfile(tmp_path / "commits" / "state.pt")  # rank 0's last commit
