"""Stragglers named and a timeline of every replica, on real processes (issue 26)."""

from __future__ import annotations

import json

import debug_fns as fns
import pytest

from unison.testing import run_distributed


@pytest.mark.timeout(180)
def test_the_slow_replica_is_named_with_its_wait_share_and_no_other() -> None:
    for res in run_distributed(fns.straggling_loop, 2, args=(1,), timeout=150):
        assert res["stragglers"] == [1]
        assert res["shares"][1] < 0.2 < res["shares"][0]  # the straggler hardly waits; the other waits for it
        assert len(res["warnings"]) == 1 and "Straggler: rank 1" in res["warnings"][0]
        assert "rank 0" not in res["warnings"][0].split("while")[0]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_fit_logs_the_straggler_and_writes_one_timeline_of_both_replicas(tmp_path) -> None:
    path = tmp_path / "timeline.json"
    results = run_distributed(fns.fit_slowed, 2, args=(1,), timeout=200, env={"UNISON_TIMELINE": str(path)})
    chief = results[0]
    assert "Straggler: rank 1" in chief["out"], chief["out"]
    assert "Straggler" not in results[1]["out"]  # only the chief prints
    trace = json.loads(path.read_text())  # merged by rank 0 at exit
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in spans} == {0, 1}
    names = {e["name"] for e in spans}
    assert {"forward", "backward", "optimizer", "next batch", "gradients.bucket0"} <= names, names
    # the all-reduce waits on the timeline add up to what the optimizers measured (the job's total)
    waits = sum(e["dur"] / 1e6 for e in spans if e["name"].startswith("gradients.bucket") and "queued" not in e["name"])
    assert waits == pytest.approx(sum(res["wait_s"] for res in results), rel=0.1), waits


@pytest.mark.timeout(240)
def test_the_preflight_names_the_worker_with_other_versions() -> None:
    import os

    from unison.testing import run_multi_worker

    here = os.path.dirname(__file__)
    chief, odd = run_multi_worker(
        "debug_fns:join_with_other_torch", 2, kwargs={"odd_worker": 1}, timeout=200, sys_path=[here]
    )
    for message in (chief, odd):  # the odd worker and the chief both name it
        assert message.startswith("RendezvousError: worker:1 (127.0.0.1:"), message
        assert "runs torch 0.0-test (the chief worker:0" in message, message


LAUNCHED = """
import torch, unison
unison.init(timeout_seconds=60)
torch.manual_seed(0)
model = torch.nn.Linear(8, 2)
opt = unison.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), named_parameters=model.named_parameters())
for _ in range(5):
    model(torch.ones(4, 8)).sum().backward()
    opt.step()
    opt.zero_grad()
"""


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_unison_launch_timeline_writes_one_trace_of_every_process(tmp_path) -> None:
    import os
    import subprocess
    import sys

    script, path = tmp_path / "train.py", tmp_path / "trace.json"
    script.write_text(LAUNCHED)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_"))}
    cmd = [sys.executable, "-m", "unison.cli", "launch", "--nproc-per-node", "2", "--timeline", str(path), str(script)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=200, env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    spans = [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in spans} == {0, 1}
    assert sum(e["name"] == "gradients.bucket0" for e in spans) == 10  # 5 steps x 2 ranks
