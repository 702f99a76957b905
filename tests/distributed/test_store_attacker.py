"""Attackers on the same machine against a job's rendezvous store (issue 12, item 3).

A real `python job.py` with MirroredStrategy of 2 CPUs. While it runs, another user's process
(uid nobody) tries to read and write the job's store; the job's replicas check that they never
served a rendezvous port, and the job finishes and removes its folder (issue 12, point 7). A
multi-worker chief's store answers only on the chief's address, and a task without the job's
token is not believed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

ATTACK = """
import json, os, sys
folder = sys.argv[1]
out = {}
for what, fn in [("list", lambda: os.listdir(folder)),
                 ("read", lambda: open(os.path.join(folder, "rendezvous.store"), "rb").read()),
                 ("write", lambda: open(os.path.join(folder, "rendezvous.store"), "ab").write(b"x"))]:
    try:
        fn()
        out[what] = "ok"
    except OSError as exc:
        out[what] = type(exc).__name__
print(json.dumps(out))
"""

JOB = """
import json, os, subprocess, sys
import psutil_free_listening  # noqa: placeholder replaced below
"""


def _listening_ports(pid: int) -> set[int]:
    """TCP ports ``pid`` listens on (from /proc, no extra tools)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for line in fh.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    ports.add(int(fields[1].split(":")[1], 16))
    return ports


SCRIPT = """
import json, os, subprocess, sys, torch
import unison as tf
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
rank = strategy.extended.replica_id
if rank == 1:
    folder = os.environ["UNISON_STORE_DIR"]
    attack = subprocess.run(["/usr/bin/python3", "-c", sys.argv[2], folder], capture_output=True, text=True,
                            timeout=60, preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)))
    with open(sys.argv[1], "w") as fh:
        json.dump({"folder": folder, "mode": oct(os.stat(folder).st_mode & 0o777),
                   "attack": attack.stdout, "attack_err": attack.stderr,
                   "secret": bool(os.environ.get("UNISON_JOB_SECRET"))}, fh)
total = strategy.reduce("SUM", torch.tensor(float(rank + 1))).item()
print(f"total={total}")
"""


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
    reason="needs root (to run the attacker as another user) and /usr/bin/python3",
)
@pytest.mark.slow
def test_another_user_can_neither_read_nor_write_the_one_host_store(tmp_path) -> None:
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_"))}
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, str(script), str(report), ATTACK],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "total=3.0"
    seen = json.loads(report.read_text())
    assert seen["mode"] == "0o700" and seen["secret"]
    attack = json.loads(seen["attack"])
    assert attack == {"list": "PermissionError", "read": "PermissionError", "write": "PermissionError"}, seen
    # the job ended normally: its private folder (store, logs) is gone
    assert not os.path.exists(seen["folder"])


@pytest.mark.slow
def test_store_is_a_file_and_a_failed_job_keeps_its_folder_and_says_where(tmp_path) -> None:
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent("""
        import json, sys, torch
        import unison as tf
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        if strategy.extended.replica_id == 0:
            from unison.distribute.join import _JOINED, LOCAL_JOB
            with open(sys.argv[1], "w") as fh:
                json.dump(type(_JOINED[LOCAL_JOB].store).__name__, fh)  # no port: a file in the folder
        strategy.reduce("SUM", torch.ones(1))
        if strategy.extended.replica_id == 1:
            raise RuntimeError("replica 1 fails on purpose")
        strategy.reduce("SUM", torch.ones(1))
    """)
    )
    report = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_"))}
    proc = subprocess.run(
        [sys.executable, str(script), str(report)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode != 0 and "replica 1 fails on purpose" in proc.stderr
    assert json.loads(report.read_text()) == "FileStore"
    match = re.search(r"logs and tracebacks are kept in (\S+)", proc.stderr)
    assert match, proc.stderr
    folder = match.group(1)
    try:
        assert os.path.isfile(os.path.join(folder, "replica-1.err"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


MULTI_WORKER = """
import json, os, socket, sys, torch
import unison as tf
strategy = tf.distribute.MultiWorkerMirroredStrategy()
total = strategy.reduce("SUM", torch.ones(1)).item()
port = int(sys.argv[1])
try:
    socket.create_connection(("127.0.0.2", port), timeout=2).close()
    other_address = "answered"
except OSError:
    other_address = "refused"
print(json.dumps({"total": total, "other_address": other_address}))
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _two_workers(tmp_path, tokens: tuple[str, str]) -> list[subprocess.CompletedProcess]:
    script = tmp_path / "mw.py"
    script.write_text(textwrap.dedent(MULTI_WORKER))
    ports = [_free_port(), _free_port()]
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    procs = []
    for index, token in enumerate(tokens):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "UNISON_", "TF_CONFIG"))}
        env.update(
            UNISON_CLUSTER_TOKEN=token,
            TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}}),
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, str(script), str(ports[0])],
                env=env,
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    done = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return done


@pytest.mark.slow  # two multi-worker jobs: about 50 s on a loaded 2-core machine
def test_multi_worker_store_binds_the_chief_address_and_signs_every_value(tmp_path) -> None:
    same = _two_workers(tmp_path, ("a" * 32, "a" * 32))
    for proc in same:
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"total": 2.0, "other_address": "refused"}
    # A task without the job's token is not believed: gloo's addresses it reads are refused by name.
    mixed = _two_workers(tmp_path, ("a" * 32, "b" * 32))
    for proc in mixed:
        assert proc.returncode != 0
        assert "StoreAuthenticationError" in proc.stderr and "was not written by this job" in proc.stderr
