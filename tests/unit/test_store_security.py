"""Rendezvous stores bound to their job (issue 12, item 3), in one process.

The one-host store is a FileStore in a private folder; values carry the job's HMAC and a forged
one is refused naming its key; the multi-worker store listens only on the chief's interface; the
shared-memory path cannot be aimed at a file the job did not make.
"""

from __future__ import annotations

import datetime
import os
import socket
import stat
import tempfile

import pytest
import torch
import torch.distributed as dist

from unison.cluster.placement import resolve_placement
from unison.cluster.secret import cluster_secret, job_secret, launcher_secret_env
from unison.comm import shm
from unison.comm.store import (
    STORE_FILE,
    AuthenticatedStore,
    StoreAuthenticationError,
    bind_address,
    private_file_store,
    serve_tcp_store,
)

SECRET = b"s" * 32


def test_private_file_store_refuses_a_folder_others_can_enter(tmp_path) -> None:
    os.chmod(tmp_path, 0o755)
    with pytest.raises(PermissionError, match=r"must belong to this user and be private.*mode 0755"):
        private_file_store(str(tmp_path), 1, 5.0)
    os.chmod(tmp_path, 0o700)
    store = private_file_store(str(tmp_path), 1, 5.0)
    store.set("k", b"v")
    assert store.get("k") == b"v" and os.path.exists(tmp_path / STORE_FILE)


def test_forged_value_is_refused_naming_the_key(tmp_path) -> None:
    raw = dist.FileStore(str(tmp_path / "store"), 1)
    job = AuthenticatedStore(raw, SECRET)
    job.set("addr/0", b"127.0.0.1:4000")
    assert job.get("addr/0") == b"127.0.0.1:4000"
    raw.set("addr/1", b"10.6.6.6:4000")  # an attacker who can write the store, without the secret
    with pytest.raises(StoreAuthenticationError, match=r"'addr/1'.*not written by this job"):
        job.get("addr/1")
    # a value signed under another key (replayed) is refused too
    raw.set("addr/2", raw.get("addr/0"))
    with pytest.raises(StoreAuthenticationError, match="addr/2"):
        job.get("addr/2")
    other_job = AuthenticatedStore(raw, b"t" * 32)
    with pytest.raises(StoreAuthenticationError):
        other_job.get("addr/0")


def test_forged_shared_memory_segment_is_refused_before_it_is_mapped(tmp_path) -> None:
    raw = dist.FileStore(str(tmp_path / "store"), 1)
    prefix = f"unison/shm/{shm._ATTACHES[0] + 1}/"
    fd, victim = tempfile.mkstemp()
    os.close(fd)
    raw.set(prefix + "path", victim)  # aim rank 1 at a file of the user's
    raw.set(prefix + "nonce", b"00" * 16)
    with pytest.raises(StoreAuthenticationError, match=prefix + "path"):
        shm.attach(AuthenticatedStore(raw, SECRET), 1, 2, torch.device("cpu"), "gloo", 2.0)
    os.unlink(victim)


def test_segment_path_must_be_a_private_unison_segment(tmp_path) -> None:
    with pytest.raises(OSError, match="not a unison shared-memory segment name"):
        shm._map(str(tmp_path / "x"), b"n" * 16, 2, 64)
    if not os.path.isdir("/dev/shm") or os.geteuid() != 0:
        pytest.skip("needs /dev/shm and root (to plant a file owned by another user)")
    path = f"/dev/shm/unison-1-{os.urandom(6).hex()}"
    with open(path, "wb") as fh:
        fh.write(b"\0" * shm._segment_bytes(2, 64))
    try:
        os.chown(path, 65534, 65534)  # planted by another user
        with pytest.raises(OSError, match="not privately to this user"):
            shm._map(path, b"\0" * 16, 2, 64)
        os.chown(path, os.getuid(), os.getgid())
        os.chmod(path, 0o666)
        with pytest.raises(OSError, match="not privately to this user"):
            shm._map(path, b"\0" * 16, 2, 64)
    finally:
        os.unlink(path)


def _connects(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def test_multi_worker_store_listens_only_on_the_chiefs_interface() -> None:
    store = serve_tcp_store("127.0.0.1", 0, 1, 5.0)
    store.set("k", b"v")
    assert _connects("127.0.0.1", store.port)
    assert not _connects("127.0.0.2", store.port)  # another address of this host: nothing listens
    client = dist.TCPStore("127.0.0.1", store.port, None, is_master=False, timeout=datetime.timedelta(seconds=5))
    assert client.get("k") == b"v"


def test_only_addresses_of_this_machine_are_bound() -> None:
    assert bind_address("127.0.0.1") is not None and bind_address("localhost") is not None
    assert bind_address("192.0.2.1") is None  # TEST-NET-1: never a local address (store falls back)
    assert bind_address("no-such-host.invalid") is None


def test_job_secret_comes_from_the_token_or_the_launcher() -> None:
    token = {"UNISON_CLUSTER_TOKEN": "a" * 32}
    assert job_secret(token) == cluster_secret(token) and len(cluster_secret(token)) == 32
    assert launcher_secret_env(token) == {}  # the token already gives every task the secret
    made = launcher_secret_env({})
    assert len(bytes.fromhex(made["UNISON_JOB_SECRET"])) == 32
    assert job_secret(made) == bytes.fromhex(made["UNISON_JOB_SECRET"])
    assert launcher_secret_env(made) == made  # a launched launcher hands its own secret on
    with pytest.raises(ValueError, match="UNISON_JOB_SECRET must be 64 hexadecimal digits"):
        job_secret({"UNISON_JOB_SECRET": "short"})


def test_placement_of_a_one_host_job_names_its_private_store() -> None:
    placement = resolve_placement({"UNISON_RANK": "1", "UNISON_WORLD_SIZE": "2", "UNISON_STORE_DIR": "/x"})
    assert placement.store_dir == "/x" and placement.master_port == 0
    made = tempfile.mkdtemp()  # what the launcher makes
    try:
        assert stat.S_IMODE(os.stat(made).st_mode) == 0o700
    finally:
        os.rmdir(made)


def test_private_store_keeps_the_named_timeout_of_a_missing_rank(tmp_path) -> None:
    import time

    from unison.errors import UnisonError

    os.chmod(tmp_path, 0o700)
    store = AuthenticatedStore(private_file_store(str(tmp_path), 2, 2.0), SECRET)
    start = time.monotonic()
    with pytest.raises(UnisonError, match=r"waited 1s for ranks \[0\]"):
        shm.attach(store, 1, 2, torch.device("cpu"), "gloo", 1.0)
    assert time.monotonic() - start < 10
