"""``unison doctor``: check a multi-worker cluster before training on it.

Run it on every task of the cluster, with the same ``TF_CONFIG`` the job will have (or under
``unison launch --tf-config``). The tasks meet at the chief's address, exactly where the job's
rendezvous will be, and check:

- **ports**: every task can listen on its own ``host:port`` (the chief's is the rendezvous);
- **reachability**: every task reaches the chief, and the chief reaches every task's port;
- **versions**: Python, torch and unison agree with the chief's;
- **clocks**: every task's clock is within 1 s of the chief's (timelines and logs line up);
- **shared memory**: ``/dev/shm`` can hold the all-reduce segment of several local replicas;
- **links**: the round-trip latency and bandwidth of a gloo exchange between the chief and
  each task.

The chief prints one report (every task prints it too) naming each failure with its task,
host and how to fix it; the exit status is 1 when anything failed. The values the tasks
exchange are JSON in the chief's store, signed with ``UNISON_CLUSTER_TOKEN`` when it is set.

``UNISON_DOCTOR_FAKE_VERSIONS`` (a JSON object such as ``{"torch": "0.0"}``) replaces this
task's reported versions: it exists for unison's own tests of the version check, not for users.

Example::

    TF_CONFIG='{"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]},
                "task": {"type": "worker", "index": 0}}' unison doctor
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import sys
import time
import warnings
from typing import Any

import torch
import torch.distributed as dist

from unison.cluster.resolvers import TFConfigClusterResolver
from unison.cluster.secret import cluster_secret
from unison.comm import shm as _shm
from unison.comm.store import AuthenticatedStore, serve_tcp_store
from unison.errors import RendezvousError
from unison.launch.rendezvous import use_interface_of
from unison.version import __version__

CLOCK_SKEW_S = 1.0
ENV_FAKE_VERSIONS = "UNISON_DOCTOR_FAKE_VERSIONS"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``unison doctor``."""
    parser.add_argument("--timeout", type=float, default=30.0, metavar="S", help="seconds to wait for the other tasks")
    parser.add_argument("--no-bandwidth", action="store_true", help="skip the all-reduce latency/bandwidth figures")


def versions() -> dict[str, str]:
    """This task's Python, torch and unison versions (``UNISON_DOCTOR_FAKE_VERSIONS``: tests only)."""
    found = {"python": platform.python_version(), "torch": torch.__version__, "unison": __version__}
    fake = os.environ.get(ENV_FAKE_VERSIONS)
    if fake:
        found.update({str(k): str(v) for k, v in json.loads(fake).items()})
    return found


def shared_memory_problem() -> str:
    """Why several replicas of this host could not all-reduce through ``/dev/shm`` (``""``: they can).

    Creates a segment of the size two replicas need, maps it twice (as two replicas would),
    writes through one mapping and reads through the other.
    """
    reason = _shm._wanted(torch.device("cpu"), "gloo")
    if reason:
        return f"the shared-memory all-reduce is off here ({reason}); replicas of one host use gloo over loopback"
    try:
        path, nonce = _shm._create_segment(2, _shm._SLOT_BYTES)
    except OSError as exc:
        return f"/dev/shm cannot hold a {_shm._segment_bytes(2, _shm._SLOT_BYTES) >> 20} MiB segment: {exc}"
    try:
        one, two = (_shm._map(path, nonce, 2, _shm._SLOT_BYTES) for _ in range(2))
        one[-1] = 7
        ok = two[-1] == 7
        one.close()
        two.close()
    except OSError as exc:
        return f"mapping the segment failed: {exc}"
    finally:
        os.unlink(path)
    return "" if ok else "two mappings of one segment do not share memory"


class _Report:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.failures = 0

    def ok(self, text: str) -> None:
        self.lines.append(f"OK    {text}")

    def fail(self, text: str) -> None:
        self.failures += 1
        self.lines.append(f"FAIL  {text}")

    def note(self, text: str) -> None:
        self.lines.append(f"      {text}")


def _label(task: Any, address: str) -> str:
    return f"{task.type}:{task.index} ({address})"


def _store(raw: Any) -> Any:
    secret = cluster_secret()
    return AuthenticatedStore(raw, secret) if secret is not None else raw


def _get_json(store: Any, key: str) -> Any:
    raw = store.get(key)
    return json.loads(raw.decode() if isinstance(raw, bytes) else raw)


def run(args: Any) -> int:
    """Run ``unison doctor`` on this task; prints the cluster's report; returns 0 if all is well."""
    report = _Report()
    try:
        resolver = TFConfigClusterResolver()
        spec = resolver.cluster_spec()
        tasks = spec.training_tasks()
    except ValueError as exc:
        sys.stderr.write(f"unison doctor: error: {exc}\n")
        return 2
    if len(tasks) < 2:
        problem = shared_memory_problem()
        (report.fail if problem and "off here" not in problem else report.ok)(
            f"shared memory on {socket.gethostname()}: {problem or 'works for several local replicas'}"
        )
        report.note("TF_CONFIG names one task: nothing else to check (run it on every task of a cluster).")
        print("\n".join(report.lines))
        return 1 if report.failures else 0
    me = next(i for i, t in enumerate(tasks) if (t.type, t.index) == (resolver.task_type, resolver.task_id))
    addresses = [spec.task_address(t.type, t.index) for t in tasks]
    hosts = [a.rsplit(":", 1) for a in addresses]
    return _run_task(me, tasks, addresses, [(h, int(p)) for h, p in hosts], args, report)


def _run_task(
    me: int, tasks: list[Any], addresses: list[str], hosts: list[tuple[str, int]], args: Any, report: _Report
) -> int:
    timeout = float(args.timeout)
    label = [_label(t, a) for t, a in zip(tasks, addresses)]
    chief_host, chief_port = hosts[0]
    use_interface_of(hosts[me][0])
    info: dict[str, Any] = {
        "task": label[me],
        "host": socket.gethostname(),
        "versions": versions(),
        "cluster": label,  # this task's TF_CONFIG cluster: every task must list the same one
    }
    own_server = None
    try:  # this task's own port: the chief's is the rendezvous, the others' must be free for it
        own_server = serve_tcp_store(hosts[me][0], hosts[me][1], len(tasks), timeout)
        info["port"] = ""
    except (RuntimeError, OSError) as exc:
        info["port"] = str(exc).splitlines()[0]
    info["shm"] = shared_memory_problem()
    if me == 0:
        if own_server is None:
            report.fail(
                f"{label[0]}: the chief cannot listen on its port {chief_port}: {info['port']}. Fix: stop the "
                f"program holding it (`ss -ltnp 'sport = :{chief_port}'`) or give the chief another port in TF_CONFIG."
            )
            print("\n".join(report.lines))
            return 1
        store = _store(own_server)
    else:
        try:
            raw = dist.TCPStore(
                chief_host, chief_port, None, is_master=False, timeout=datetime.timedelta(seconds=timeout)
            )
        except RuntimeError as exc:
            report.fail(
                f"{label[me]} cannot reach the chief {label[0]}: {str(exc).splitlines()[0]}. Fix: start the doctor "
                f"on the chief too, check that {addresses[0]} is the chief's reachable address, open the port."
            )
            report.note(
                f"If the chief runs at another address, the TF_CONFIGs disagree: this task's cluster is "
                f"{', '.join(label)}; every task's TF_CONFIG must list the same cluster (only 'task' differs)."
            )
            print("\n".join(report.lines))
            return 1
        store = _store(raw)
    store.set(f"doctor/info/{me}", json.dumps(info))
    if me == 0:
        text = _chief(store, tasks, label, hosts, info, timeout, args, report)
        store.set("doctor/report", json.dumps({"text": text, "failures": report.failures}))
        # the others read the report before the chief's store goes away
        _wait(store, [f"doctor/read/{i}" for i in range(1, len(tasks))], min(timeout, 10.0))
        print(text)
        return 1 if report.failures else 0
    _worker(store, me, len(tasks), timeout, args)
    final = _get_json(store, "doctor/report")
    store.set(f"doctor/read/{me}", "1")
    print(final["text"])
    return 1 if final["failures"] else 0


def _wait(store: Any, keys: list[str], timeout: float) -> list[int]:
    """Wait for ``keys``; returns the indices of those still missing at the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        missing = [i for i, k in enumerate(keys) if not store.check([k])]
        if not missing:
            return []
        time.sleep(0.05)
    return [i for i, k in enumerate(keys) if not store.check([k])]


def _worker(store: Any, me: int, n: int, timeout: float, args: Any) -> None:
    store.wait(["doctor/clock/go"], datetime.timedelta(seconds=timeout + 30))
    store.set(f"doctor/clock/{me}", json.dumps(time.time()))
    store.wait(["doctor/links"], datetime.timedelta(seconds=timeout + 30))
    if json.loads(store.get("doctor/links")):
        _links(store, me, n, timeout)
    store.wait(["doctor/report"], datetime.timedelta(seconds=timeout + 60))


def _cluster_disagreements(infos: dict[int, Any], label: list[str], report: _Report) -> set[int]:
    """The tasks whose TF_CONFIG lists another cluster than the chief's, each reported with both
    lists (the chief would otherwise try the addresses it believes in and say it cannot reach them)."""
    disagree: set[int] = set()
    for i, got in sorted(infos.items()):
        theirs = got.get("cluster")
        if i == 0 or theirs is None or theirs == label:
            continue
        disagree.add(i)
        only_theirs = [t for t in theirs if t not in label]
        only_chiefs = [t for t in label if t not in theirs]
        detail = (
            f"it lists {', '.join(only_theirs) or 'nothing else'} where the chief lists {', '.join(only_chiefs) or 'nothing else'}"
            if only_theirs or only_chiefs
            else "the same tasks in another order"
        )
        report.fail(
            f"the TF_CONFIGs disagree: the task that checked in as {got['task']} on {got['host']} has another "
            f"cluster than the chief: {detail}. Its cluster: {', '.join(theirs)}; the chief's: {', '.join(label)}. "
            "Fix: give every task the same TF_CONFIG 'cluster' (only 'task' differs from one task to another)."
        )
    return disagree


def _chief(
    store: Any,
    tasks: list[Any],
    label: list[str],
    hosts: list[tuple[str, int]],
    info: dict[str, Any],
    timeout: float,
    args: Any,
    report: _Report,
) -> str:
    n = len(tasks)
    missing = _wait(store, [f"doctor/info/{i}" for i in range(n)], timeout)
    infos = {i: _get_json(store, f"doctor/info/{i}") for i in range(n) if i not in missing}
    for i in missing:
        report.fail(
            f"{label[i]} did not check in within {timeout:.0f}s: it cannot reach the chief at "
            f"{hosts[0][0]}:{hosts[0][1]}, its address is wrong or down, `unison doctor` is not running there, "
            "or its TF_CONFIG names another chief or index (every task must list the same cluster). "
            f"Fix: check the address in TF_CONFIG, the network and firewall between the hosts, and run the doctor on every task."
        )
    if missing:
        report.note(f"{len(infos)} of {n} tasks checked in")
    else:
        report.ok(f"every task reached the chief's rendezvous at {hosts[0][0]}:{hosts[0][1]}")
    disagree = _cluster_disagreements(infos, label, report)
    for i, got in sorted(infos.items()):
        if i == 0 or i in disagree:
            continue
        if got["port"]:
            report.fail(
                f"{label[i]} on {got['host']}: port {hosts[i][1]} is taken: {got['port']}. Fix: stop the program "
                f"holding it (`ss -ltnp 'sport = :{hosts[i][1]}'` there) or give the task another port in TF_CONFIG."
            )
            continue
        try:  # the other direction: gloo connects every pair of tasks
            dist.TCPStore(hosts[i][0], hosts[i][1], None, is_master=False, timeout=datetime.timedelta(seconds=5))
            report.ok(f"the chief reaches {label[i]}")
        except RuntimeError as exc:
            report.fail(
                f"the chief cannot reach {label[i]}: {str(exc).splitlines()[0]}. Fix: open port {hosts[i][1]} "
                f"on {hosts[i][0]} to the other hosts (firewall) or correct its address in TF_CONFIG."
            )
    mine = info["versions"]
    differ = False
    for i, got in sorted(infos.items()):
        bad = {k: v for k, v in got["versions"].items() if mine.get(k) != v}
        if bad:
            differ = True
            what = ", ".join(f"{k} {v} (the chief has {mine.get(k)})" for k, v in sorted(bad.items()))
            report.fail(
                f"{label[i]} on {got['host']} runs {what}. Fix: install the same versions on every host "
                f"(e.g. pip install torch=={mine['torch']})."
            )
    if not differ:
        report.ok("Python {python}, torch {torch}, unison {unison} on every task".format(**mine))
    for i, got in sorted(infos.items()):
        if got["shm"] and "off here" not in got["shm"]:
            report.fail(
                f"{label[i]} on {got['host']}: {got['shm']}. Fix: give /dev/shm more room (docker --shm-size=1g) "
                "or set UNISON_SHM_ALLREDUCE=0."
            )
    chief_time = time.time()
    store.set("doctor/clock/go", "1")
    late = _wait(store, [f"doctor/clock/{i}" for i in range(1, n) if i in infos], 5.0)
    skews = {
        i: _get_json(store, f"doctor/clock/{i}") - chief_time
        for i in range(1, n)
        if i in infos and store.check([f"doctor/clock/{i}"])
    }
    for i, skew in skews.items():
        if abs(skew) > CLOCK_SKEW_S:
            report.fail(
                f"{label[i]}'s clock is {skew:+.2f}s from the chief's (more than {CLOCK_SKEW_S:.0f}s). "
                "Fix: run NTP (chrony, systemd-timesyncd) on every host."
            )
    if skews and all(abs(s) <= CLOCK_SKEW_S for s in skews.values()) and not late:
        report.ok(f"clocks within {max(abs(s) for s in skews.values()):.3f}s of the chief's")
    links = not report.failures and not args.no_bandwidth
    store.set("doctor/links", json.dumps(links))
    if links:
        for line in _links(store, 0, n, timeout, label):
            report.note(line)
    verdict = "all checks passed" if not report.failures else f"{report.failures} problem(s) found"
    return "unison doctor: " + verdict + "\n" + "\n".join(report.lines)


def _links(store: Any, me: int, n: int, timeout: float, label: list[str] | None = None) -> list[str]:
    """Chief <-> task round trips through gloo: latency of 4 bytes, bandwidth of 4 MiB."""
    dist.init_process_group(
        "gloo",
        store=dist.PrefixStore("doctor/pg", store),
        rank=me,
        world_size=n,
        timeout=datetime.timedelta(seconds=timeout),
    )
    lines = []
    try:
        small, big = torch.zeros(1), torch.zeros(1 << 20)
        for peer in range(1, n):
            if me not in (0, peer):
                continue
            other = peer if me == 0 else 0
            rtts: list[float] = []
            bws: list[float] = []
            for buf, out in ((small, rtts), (big, bws)):
                for _ in range(10 if buf is small else 3):
                    start = time.perf_counter()
                    if me == 0:
                        dist.send(buf, other)
                        dist.recv(buf, other)
                    else:
                        dist.recv(buf, other)
                        dist.send(buf, other)
                    out.append(time.perf_counter() - start)
            if label is not None:
                rtt = sorted(rtts)[len(rtts) // 2]
                bw = 2 * big.numel() * 4 / sorted(bws)[len(bws) // 2]
                lines.append(f"link chief <-> {label[peer]}: {rtt * 1e3:.2f} ms round trip, {bw / 1e6:.0f} MB/s")
    finally:
        dist.destroy_process_group()
    return lines


def preflight(store: Any, plan: Any, timeout_s: float) -> None:
    """The doctor's cheap part, run by every replica of a multi-worker job right after the rendezvous.

    Each replica publishes its versions and clock in the store (one JSON value) and compares them
    with the chief's, and the chief compares everyone's: different torch or unison versions fail
    with an error naming the task on that task and on the chief (the job would break later in less
    clear ways); a different Python version or a clock more than 1 s off is a warning. Costs one
    store write and one read per replica (the chief reads one per replica).

    Raises:
        RendezvousError: a task runs other torch/unison versions than the chief.
    """
    store = _store(store)
    prefix = f"{plan.run_key}/preflight/"
    store.set(f"{prefix}{plan.rank}", json.dumps({"versions": versions(), "time": time.time()}))
    others = range(1, plan.world_size) if plan.rank == 0 else [plan.rank]
    timeout = datetime.timedelta(seconds=timeout_s)
    store.wait([f"{prefix}0", *(f"{prefix}{r}" for r in others)], timeout)
    chief = _get_json(store, f"{prefix}0")
    got = {rank: _get_json(store, f"{prefix}{rank}") for rank in others}
    if plan.rank == 0:
        # the chief may raise below and take its store with it: first let every replica read its values
        store.wait([f"{prefix}read/{r}" for r in others], timeout)
    else:
        store.set(f"{prefix}read/{plan.rank}", "1")
    for rank in others:
        _compare(plan, rank, got[rank], chief)


def _compare(plan: Any, rank: int, got: dict[str, Any], chief: dict[str, Any]) -> None:
    mine = got["versions"]
    here, there = plan.task_of_rank(rank), plan.task_of_rank(0)
    bad = {k: (v, chief["versions"].get(k)) for k, v in mine.items() if chief["versions"].get(k) != v}
    hard = {k: pair for k, pair in bad.items() if k != "python"}
    if hard:
        what = ", ".join(f"{k} {a} (the chief {there} has {b})" for k, (a, b) in sorted(hard.items()))
        raise RendezvousError(
            f"{here} runs {what}. Every task of a job must run the same torch and unison. Fix: install the "
            f"chief's versions on this host (pip install torch=={chief['versions'].get('torch')}); "
            "`unison doctor` checks a whole cluster before a job."
        )
    notes = []
    if "python" in bad:
        notes.append(f"Python {bad['python'][0]} (the chief has {bad['python'][1]})")
    skew = float(got["time"]) - float(chief["time"])
    if abs(skew) > CLOCK_SKEW_S:
        notes.append(f"a clock {skew:+.1f}s from the chief's (timelines and logs will not line up; run NTP)")
    if notes and rank == plan.rank:
        warnings.warn(f"{here} runs with {' and '.join(notes)}.", RuntimeWarning, stacklevel=2)
