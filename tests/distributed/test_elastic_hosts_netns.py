"""Elastic training across hosts: 3 "hosts" (network namespaces on one bridge), one lost, one added.

Needs root and `ip netns`; skips cleanly otherwise. Each host is a namespace with its own
address (10.201.0.1 ... 10.201.0.4) whose veth link ends on a bridge in a fifth "switch"
namespace: the hosts reach each other only over those links. The test starts
`unison launch --min-workers 2 --max-workers 4 --master 10.201.0.1:PORT --host-exec
'ip netns exec NS-{host}'` inside host 0's namespace (the chief: its membership store listens on
10.201.0.1, signed with the secret of UNISON_CLUSTER_TOKEN); the discovery script names hosts
h0, h1, h2 with one slot each. The test kills h2's worker (SIGKILL), checks that the survivors
on h0 and h1 keep their PIDs and go on at size 2 (the learning rate their reset callback sets),
then adds host h3 to the discovery script's answer and checks that its worker joins at size 3
and that every worker ends in the accuracy band of the uninterrupted run
(test_elastic_inplace.py::test_uninterrupted_run_reaches_the_band, the same script). It prints
the time from the kill to the first step at size 2 (BENCHMARKS.md records it).
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

import pytest

SCRIPT = pathlib.Path(__file__).with_name("elastic_inplace_script.py")
BAND = 0.9  # as test_elastic_inplace.py: the uninterrupted run's accuracy on its data is >= this
BASE_LR = 0.05
PORT = 29431
HOSTS = ["h0", "h1", "h2", "h3"]
ADDRESSES = {h: f"10.201.0.{i + 1}" for i, h in enumerate(HOSTS)}
TARGET_S = 5.0  # loss to the first step at the new size (issue 40)


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)


def _unavailable() -> str | None:
    if os.name != "posix" or os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "`ip` (iproute2) is not installed"
    probe = f"unison-probe-{uuid.uuid4().hex[:6]}"
    made = _ip("netns", "add", probe)
    bridge = _ip("-n", probe, "link", "add", "probebr", "type", "bridge") if made.returncode == 0 else made
    _ip("netns", "del", probe)
    if made.returncode != 0:
        return f"`ip netns add` fails here: {made.stderr.strip()}"
    if bridge.returncode != 0:
        return f"a bridge cannot be made in a network namespace here: {bridge.stderr.strip()}"
    return None


REASON = _unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@dataclass
class Hosts:
    prefix: str  # host h's namespace is prefix + h
    links: dict[str, str]

    def namespace(self, host: str) -> str:
        return self.prefix + host

    def rx_bytes(self, host: str) -> int:
        out = _ip("-n", self.namespace(host), "-s", "-j", "link", "show", "dev", self.links[host])
        return int(json.loads(out.stdout)[0]["stats64"]["rx"]["bytes"])


@pytest.fixture
def four_hosts() -> Iterator[Hosts]:
    tag = uuid.uuid4().hex[:6]
    hosts = Hosts(f"unison-el{tag}-", {h: f"ue{tag}{h}" for h in HOSTS})  # interface names: <= 15 characters
    switch = f"unison-el{tag}-sw"
    made: list[str] = []
    etc_netns_existed = os.path.isdir("/etc/netns")
    try:
        for ns in [switch, *(hosts.namespace(h) for h in HOSTS)]:
            assert _ip("netns", "add", ns).returncode == 0
            made.append(ns)
            # name lookups inside the namespace stay inside it: its own hosts file, no resolver
            os.makedirs(f"/etc/netns/{ns}", exist_ok=True)
            with open(f"/etc/netns/{ns}/hosts", "w") as fh:
                fh.write("127.0.0.1 localhost\n" + "".join(f"{a} {h}\n" for h, a in ADDRESSES.items()))
            with open(f"/etc/netns/{ns}/resolv.conf", "w") as fh:
                fh.write("options timeout:1 attempts:1\n")
        for args in (
            ("link", "add", "br0", "type", "bridge"),
            ("link", "set", "br0", "up"),
            ("link", "set", "lo", "up"),
        ):
            done = _ip("-n", switch, *args)
            assert done.returncode == 0, done.stderr
        for host in HOSTS:
            ns, link, port = hosts.namespace(host), hosts.links[host], f"us{hosts.links[host][2:]}"
            # both ends are created inside the namespaces: the links never exist outside them
            done = _ip("link", "add", link, "netns", ns, "type", "veth", "peer", "name", port, "netns", switch)
            assert done.returncode == 0, done.stderr
            for where, args in (
                (ns, ("addr", "add", f"{ADDRESSES[host]}/24", "dev", link)),
                (ns, ("link", "set", "lo", "up")),
                (ns, ("link", "set", link, "up")),
                (switch, ("link", "set", port, "master", "br0")),
                (switch, ("link", "set", port, "up")),
            ):
                done = _ip("-n", where, *args)
                assert done.returncode == 0, done.stderr
        yield hosts
    finally:
        for ns in made:
            _ip("netns", "del", ns)  # deletes the veth ends inside it too
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
        if not etc_netns_existed and os.path.isdir("/etc/netns") and not os.listdir("/etc/netns"):
            os.rmdir("/etc/netns")


def _steps(out: pathlib.Path, worker: int) -> list[dict]:
    path = out / f"steps.{worker}"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def _until(what: str, cond: Callable[[], bool], out: pathlib.Path, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{(out / 'agent.log').read_text()[-4000:]}")
        time.sleep(0.05)


def _launch(out: pathlib.Path, discovery: pathlib.Path, hosts: Hosts) -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    """`unison launch` in host h0's namespace: the chief, its store on h0's address."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "GLOO_SOCKET_IFNAME"}
    env.update(
        OUT=str(out),
        PYTHONUNBUFFERED="1",
        UNISON_COLLECTIVE_TIMEOUT="30",
        UNISON_CLUSTER_TOKEN=uuid.uuid4().hex * 2,
        OMP_NUM_THREADS="1",
    )
    cmd = [
        *("ip", "netns", "exec", hosts.namespace("h0")),
        *(sys.executable, "-m", "unison.cli", "launch"),
        *("--min-workers", "2", "--max-workers", "4", "--master", f"{ADDRESSES['h0']}:{PORT}"),
        *("--host-discovery-script", str(discovery)),
        *("--host-exec", f"ip netns exec {hosts.prefix}{{host}}"),
        str(SCRIPT),
    ]
    log = open(out / "agent.log", "wb")
    return subprocess.Popen(cmd, env=env, cwd=out, stdout=log, stderr=subprocess.STDOUT), log


def _discovery(out: pathlib.Path, answer: str) -> tuple[pathlib.Path, pathlib.Path]:
    slots = out / "slots"
    slots.write_text(answer)
    discovery = out / "discover.sh"
    discovery.write_text(f"#!/bin/sh\ncat {slots}\n")
    discovery.chmod(0o700)
    return slots, discovery


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_host_no_longer_discovered_is_stopped_and_the_others_go_on(tmp_path: pathlib.Path, four_hosts: Hosts) -> None:
    slots, discovery = _discovery(tmp_path, "h0:1\nh1:1\nh2:1\n")
    (tmp_path / "hold").touch()
    agent, log = _launch(tmp_path, discovery, four_hosts)
    try:
        _until("3 workers training", lambda: all(len(_steps(tmp_path, w)) >= 3 for w in (0, 1, 2)), tmp_path)
        pids = {w: int((tmp_path / f"pid.{w}").read_text()) for w in (0, 1)}
        slots.write_text("h0:1\nh1:1\n")  # Horovod's removed host
        _until(
            "steps at size 2",
            lambda: all(s["size"] == 2 for w in (0, 1) for s in _steps(tmp_path, w)[-1:]),
            tmp_path,
            timeout=60,
        )
        (tmp_path / "hold").unlink()
        agent.wait(timeout=200)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        log.close()
    text = (tmp_path / "agent.log").read_text()
    assert agent.returncode == 0, text[-4000:]
    assert "host(s) h2 no longer discovered: stopping worker(s) [2]" in text, text[-4000:]
    results = {int(p.suffix[1:]): json.loads(p.read_text()) for p in tmp_path.glob("result.*")}
    assert sorted(results) == [0, 1], results
    assert all(r["size"] == 2 and r["pid"] == pids[w] and r["acc"] >= BAND for w, r in results.items()), results


@pytest.mark.slow
@pytest.mark.timeout(500)
def test_elastic_across_three_hosts_loses_one_and_adds_one(tmp_path: pathlib.Path, four_hosts: Hosts) -> None:
    slots, discovery = _discovery(tmp_path, "h0:1\nh1:1\nh2:1\n")
    (tmp_path / "hold").touch()  # pace the steps and wait before the last one until we are done
    chief = ADDRESSES["h0"]
    agent, log = _launch(tmp_path, discovery, four_hosts)
    try:
        _until("3 workers training", lambda: all(len(_steps(tmp_path, w)) >= 3 for w in (0, 1, 2)), tmp_path)
        pids = {w: int((tmp_path / f"pid.{w}").read_text()) for w in (0, 1, 2)}
        # each worker really runs in its host's namespace
        for worker, host in enumerate(HOSTS[:3]):
            inside = os.stat(f"/proc/{pids[worker]}/ns/net").st_ino
            assert inside == os.stat(f"/run/netns/{four_hosts.namespace(host)}").st_ino, (worker, host)
        os.kill(pids[2], signal.SIGKILL)  # host h2's worker
        killed_at = time.time()
        _until(
            "steps at size 2",
            lambda: all(s["size"] == 2 for w in (0, 1) for s in _steps(tmp_path, w)[-1:]),
            tmp_path,
            timeout=60,
        )
        slots.write_text("h0:1\nh1:1\nh2:1\nh3:1\n")  # a new host: the agent starts worker 3 there
        added_at = time.time()
        _until("the new host's worker in training", lambda: len(_steps(tmp_path, 3)) >= 1, tmp_path, timeout=120)
        (tmp_path / "hold").unlink()
        agent.wait(timeout=240)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        log.close()
    text = (tmp_path / "agent.log").read_text()
    assert agent.returncode == 0, text[-4000:]
    assert "worker 2 on host h2 (pid" in text and "killed by signal SIGKILL" in text, text[-4000:]
    assert "new slots found on host h3: starting worker(s) [3]" in text, text[-4000:]
    assert f"store on {chief}:{PORT}" in text
    survivors = {w: _steps(tmp_path, w) for w in (0, 1)}
    for worker, steps in survivors.items():
        assert {s["pid"] for s in steps} == {pids[worker]}, "a survivor was restarted"
        sizes = [s["size"] for s in steps]
        first2 = sizes.index(2)
        assert set(sizes[:first2]) == {3} and 3 in sizes[first2:], sizes  # 3, then 2, then 3 again
        at2 = [s for s in steps if s["size"] == 2]
        assert {s["rank"] for s in at2} == {worker}
        assert all(s["lr"] == pytest.approx(BASE_LR * 2) for s in at2)  # the global batch's learning-rate rule
        assert all(s["lr"] == pytest.approx(BASE_LR * 3) for s in steps if s["size"] == 3)
        assert {(s["local_rank"], s["local_size"]) for s in steps} == {(0, 1)}  # one worker per host
        assert steps[first2]["time"] > killed_at
    # the survivors rolled back to the same commit and went on from it together
    at2 = [[(s["epoch"], s["batch"]) for s in survivors[w] if s["size"] == 2] for w in (0, 1)]
    assert at2[0] == at2[1] and at2[0]
    new = _steps(tmp_path, 3)
    assert {s["rank"] for s in new} == {2} and {s["size"] for s in new} == {3}
    assert new[0]["pid"] == int((tmp_path / "pid.3").read_text())
    first_new = (new[0]["epoch"], new[0]["batch"])
    assert first_new in [(s["epoch"], s["batch"]) for s in survivors[0] if s["size"] == 3]
    results = {int(p.suffix[1:]): json.loads(p.read_text()) for p in tmp_path.glob("result.*")}
    assert sorted(results) == [0, 1, 3], results
    assert len({round(r["acc"], 6) for r in results.values()}) == 1  # one model on every host
    assert all(r["acc"] >= BAND and r["size"] == 3 for r in results.values()), results
    # the job's bytes crossed the links: every host that trained received over its veth
    assert all(four_hosts.rx_bytes(h) > 20_000 for h in ("h0", "h1", "h3"))
    loss_to_step = min(s["time"] for w in (0, 1) for s in survivors[w] if s["size"] == 2) - killed_at
    add_to_step = new[0]["time"] - added_at
    figures = {"loss_to_first_step_at_new_size_s": round(loss_to_step, 3), "add_to_first_step_s": round(add_to_step, 3)}
    print(f"elastic across hosts: {json.dumps(figures)}")
    record = os.environ.get("UNISON_ELASTIC_HOSTS_RECORD")
    if record:  # benchmarks: append this run's figures
        with open(record, "a") as fh:
            fh.write(json.dumps(figures) + "\n")
    assert loss_to_step <= TARGET_S * 3, figures  # the target is 5 s; 3x for a machine shared by many
