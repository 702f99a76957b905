"""`unison doctor` run on two tasks whose TF_CONFIGs list different clusters (issue 40): the report
says the TF_CONFIGs disagree, naming the task and both lists, instead of "cannot reach"."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from unison.testing.multi_worker import clean_env, free_ports, tf_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def _doctor(addresses: list[str], index: int) -> subprocess.Popen[str]:
    env = clean_env(TF_CONFIG=tf_config(addresses, index), PYTHONPATH=os.path.abspath(SRC))
    cmd = [sys.executable, "-m", "unison.cli", "doctor", "--timeout", "20", "--no-bandwidth"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_doctor_says_the_tf_configs_disagree() -> None:
    chief, mine, theirs = (f"127.0.0.1:{p}" for p in free_ports(3))
    procs = [_doctor([chief, mine], 0), _doctor([chief, theirs], 1)]  # worker 1 sits where only it expects
    results = [(p.wait(timeout=180), p.stdout.read() if p.stdout else "") for p in procs]
    for code, out in results:  # every task prints the chief's report
        assert code == 1, out
        assert "FAIL  the TF_CONFIGs disagree: the task that checked in as worker:1" in out, out
        assert f"it lists worker:1 ({theirs}) where the chief lists worker:1 ({mine})" in out, out
        assert "Fix: give every task the same TF_CONFIG 'cluster'" in out, out
        assert "cannot reach worker:1" not in out, out
