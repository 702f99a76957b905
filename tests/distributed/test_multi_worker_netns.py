"""Two workers on two "hosts": network namespaces joined by a veth pair (needs root and `ip netns`).

Each worker runs in its own namespace with its own address (10.200.0.1 and 10.200.0.2) and sees
only that link and its own loopback: no route leads anywhere else, so every byte the job sends
goes over the veth pair between the two namespaces this test creates (and deletes afterwards).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass

import numpy as np
import pytest
from multi_worker_fns import (
    Zygote,
    keras_and_custom_loops,
    shared_zygote,
)

from unison.testing.multi_worker import log_of, tf_config, wait_all

ADDRESSES = ["10.200.0.1", "10.200.0.2"]
PORT = 2222


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)


def _unavailable() -> str | None:
    if os.name != "posix" or os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "`ip` (iproute2) is not installed"
    probe = f"unison-probe-{uuid.uuid4().hex[:6]}"
    made = _ip("netns", "add", probe)
    _ip("netns", "del", probe)
    if made.returncode != 0:
        return f"`ip netns add` fails here: {made.stderr.strip()}"
    return None


REASON = _unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@dataclass
class Hosts:
    namespaces: list[str]
    links: list[str]

    def rx_bytes(self, i: int) -> int:
        out = _ip("-n", self.namespaces[i], "-s", "-j", "link", "show", "dev", self.links[i])
        return int(json.loads(out.stdout)[0]["stats64"]["rx"]["bytes"])


@pytest.fixture
def zygote() -> Zygote:
    return shared_zygote()


@pytest.fixture
def two_hosts():
    tag = uuid.uuid4().hex[:6]
    etc_netns_existed = os.path.isdir("/etc/netns")
    namespaces = [f"unison-a-{tag}", f"unison-b-{tag}"]
    links = [f"una{tag}", f"unb{tag}"]  # interface names: at most 15 characters
    try:
        for ns, _ip_address in zip(namespaces, ADDRESSES):
            assert _ip("netns", "add", ns).returncode == 0
            # Name lookups inside the namespace stay inside it: its own hosts file, no resolver.
            etc = f"/etc/netns/{ns}"
            os.makedirs(etc, exist_ok=True)
            with open(f"{etc}/hosts", "w") as fh:
                fh.write("127.0.0.1 localhost\n" + "".join(f"{a} unison-host-{k}\n" for k, a in enumerate(ADDRESSES)))
            with open(f"{etc}/resolv.conf", "w") as fh:
                fh.write("options timeout:1 attempts:1\n")
        # Both ends are created directly inside the namespaces: the link never exists outside them.
        made = _ip(
            "link",
            "add",
            links[0],
            "netns",
            namespaces[0],
            "type",
            "veth",
            "peer",
            "name",
            links[1],
            "netns",
            namespaces[1],
        )
        assert made.returncode == 0, made.stderr
        for ns, link, ip_address in zip(namespaces, links, ADDRESSES):
            for args in (
                ("addr", "add", f"{ip_address}/24", "dev", link),
                ("link", "set", "lo", "up"),
                ("link", "set", link, "up"),
            ):
                done = _ip("-n", ns, *args)
                assert done.returncode == 0, done.stderr
        yield Hosts(namespaces, links)
    finally:
        for ns in namespaces:
            _ip("netns", "del", ns)  # deletes the veth end inside it too
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
        if not etc_netns_existed and os.path.isdir("/etc/netns") and not os.listdir("/etc/netns"):
            os.rmdir("/etc/netns")


def _config(i: int) -> str:
    return tf_config([f"{a}:{PORT}" for a in ADDRESSES], i)


def test_two_hosts_train_like_one_process(tmp_path, zygote, two_hosts) -> None:
    workers = [
        zygote.start(
            "keras_and_custom_loops", str(tmp_path), i, _config(i), {"keras_only": True}, netns=two_hosts.namespaces[i]
        )
        for i in range(2)
    ]
    wait_all(workers, str(tmp_path), timeout=240)
    ref = keras_and_custom_loops(single=True, keras_only=True)
    for w in workers:
        res = w.result()
        assert res["replicas"] == 2
        for got, want in zip(res["keras"], ref["keras"]):
            assert np.allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max()))), float(
                np.abs(got - want).max()
            )
    # the gradients really crossed the link between the two namespaces
    assert two_hosts.rx_bytes(0) > 20_000 and two_hosts.rx_bytes(1) > 20_000


def test_cut_link_names_the_unreachable_task_within_the_timeout(tmp_path, zygote, two_hosts) -> None:
    timeout = 8
    markers = tmp_path / "markers"
    markers.mkdir()
    kwargs = {"marker_dir": str(markers), "timeout": timeout}
    workers = [
        zygote.start("collective_loop", str(tmp_path), i, _config(i), kwargs, netns=two_hosts.namespaces[i])
        for i in range(2)
    ]
    try:
        deadline = time.monotonic() + 180
        while not all((markers / f"running.{i}").exists() for i in range(2)):
            assert time.monotonic() < deadline, "the workers never started training"
            assert all(w.proc.poll() is None for w in workers), log_of(str(tmp_path), 0) + log_of(str(tmp_path), 1)
            time.sleep(0.05)
        cut = _ip("-n", two_hosts.namespaces[1], "link", "set", two_hosts.links[1], "down")
        assert cut.returncode == 0, cut.stderr
        cut_at = time.monotonic()
        exit_after = []
        for w in workers:
            w.proc.wait(timeout=timeout + 60)
            exit_after.append(time.monotonic() - cut_at)
    finally:
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
    chief_log, worker_log = log_of(str(tmp_path), 0), log_of(str(tmp_path), 1)
    assert all(w.proc.returncode != 0 for w in workers)
    assert f"Unreachable: worker:1 ({ADDRESSES[1]}:{PORT})" in chief_log, chief_log[-3000:]
    assert f"The chief worker:0 ({ADDRESSES[0]}:{PORT}) is unreachable" in worker_log, worker_log[-3000:]
    for log in (chief_log, worker_log):
        assert "Collective 'strategy.reduce.SUM'" in log and f"after at most {timeout}s" in log
    # the named error within the timeout (gloo gets the timeout minus the heartbeat post-mortem);
    # 2 s more for the process to print and exit
    assert max(exit_after) < timeout + 2, exit_after
