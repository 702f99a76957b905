"""`unison doctor` on a 2-worker TF_CONFIG cluster whose workers live in two network namespaces
(the fixture of test_multi_worker_netns.py; skipped without root and `ip netns`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from test_multi_worker_netns import ADDRESSES, PORT, REASON, two_hosts  # noqa: F401  (a fixture)

from unison.testing.multi_worker import clean_env, tf_config

pytestmark = [pytest.mark.skipif(REASON is not None, reason=REASON or ""), pytest.mark.slow, pytest.mark.timeout(300)]
SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def _doctor(namespace: str, addresses: list[str], index: int, timeout: int = 15, **extra: str) -> subprocess.Popen[str]:
    env = clean_env(TF_CONFIG=tf_config(addresses, index), PYTHONPATH=os.path.abspath(SRC), **extra)
    cmd = ["ip", "netns", "exec", namespace, sys.executable, "-m", "unison.cli", "doctor", "--timeout", str(timeout)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _finish(procs: list[subprocess.Popen[str]]) -> list[tuple[int, str]]:
    return [(p.wait(timeout=150), p.stdout.read() if p.stdout else "") for p in procs]


def test_doctor_passes_on_a_healthy_cluster_with_link_figures(two_hosts) -> None:  # noqa: F811
    addresses = [f"{a}:{PORT}" for a in ADDRESSES]
    results = _finish([_doctor(two_hosts.namespaces[i], addresses, i) for i in range(2)])
    for code, out in results:
        assert code == 0, out
        assert "unison doctor: all checks passed" in out and "FAIL" not in out
        assert f"link chief <-> worker:1 ({addresses[1]}): " in out and "MB/s" in out


def test_doctor_names_the_worker_whose_address_is_unreachable(two_hosts) -> None:  # noqa: F811
    addresses = [f"{ADDRESSES[0]}:{PORT}", f"10.200.0.9:{PORT}"]  # nothing answers there
    # A short timeout: nothing can answer, so waiting longer only costs CI time.
    [(code, out)] = _finish([_doctor(two_hosts.namespaces[0], addresses, 0, timeout=6)])
    assert code == 1
    assert f"FAIL  worker:1 (10.200.0.9:{PORT}) did not check in within 6s" in out, out


def test_doctor_names_the_worker_whose_port_is_taken_and_whose_versions_differ(two_hosts) -> None:  # noqa: F811
    addresses = [f"{a}:{PORT}" for a in ADDRESSES]
    squat = (
        f"import socket, time; s = socket.socket(); s.bind(({ADDRESSES[1]!r}, {PORT})); s.listen(); print('ready', flush=True); "
        "time.sleep(120)"
    )
    holder = subprocess.Popen(
        ["ip", "netns", "exec", two_hosts.namespaces[1], sys.executable, "-c", squat], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        fake = json.dumps({"torch": "0.0-test"})
        procs = [
            _doctor(two_hosts.namespaces[0], addresses, 0),
            _doctor(two_hosts.namespaces[1], addresses, 1, UNISON_DOCTOR_FAKE_VERSIONS=fake),
        ]
        results = _finish(procs)
    finally:
        holder.kill()
        holder.wait()
    for code, out in results:  # every task prints the chief's report
        assert code == 1, out
        assert f"FAIL  worker:1 ({addresses[1]}) on " in out and f"port {PORT} is taken" in out, out
        assert "runs torch 0.0-test (the chief has" in out, out
