"""Rendezvous stores bound to their job: private on one host, authenticated across hosts.

torch's ``TCPStore`` server listens on every interface and believes every client: any process
that can reach its port can read the keys (the addresses gloo will connect to) and write them
(point a replica at another address, or at another shared-memory segment). unison closes that
door three ways:

* **One host** (``MirroredStrategy``'s own launcher, ``unison.testing``): the replicas meet in a
  :func:`private_file_store`, a ``torch.distributed.FileStore`` in a fresh ``0700`` folder of
  the user who started the job. There is no port at all; other users cannot open the file.
* **Across hosts**: the chief's store listens only on the interface of the chief's address in
  the cluster spec (:func:`serve_tcp_store`), not on ``0.0.0.0``.
* **Every value a replica acts on** (gloo's addresses and ports, the shared-memory segment's
  name, nonce and owners) goes through :class:`AuthenticatedStore` when the job has a secret
  (derived from ``UNISON_CLUSTER_TOKEN``, or made by unison's launcher for its children): each
  value carries an HMAC-SHA256 of its key and bytes, and a value without the right one is
  refused with an error naming the key. Counters (``add``) carry no MAC; they are barriers and
  heartbeats, never addresses.

Example:
    >>> import datetime, tempfile
    >>> store = AuthenticatedStore(private_file_store(tempfile.mkdtemp(), 1, 10.0), b"k" * 32)
    >>> store.set("greeting", b"hello")
    >>> store.get("greeting")
    b'hello'
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import os
import socket
import stat
import warnings
from collections.abc import Sequence

import torch.distributed as dist

from unison.errors import StoreAuthenticationError

_MAC_BYTES = 32
STORE_FILE = "rendezvous.store"


def private_file_store(directory: str, world_size: int, timeout_s: float) -> dist.FileStore:
    """The job's ``FileStore`` inside ``directory``, which must be a ``0700`` folder of this user.

    Raises:
        PermissionError: ``directory`` is not owned by this user or other users can enter it
            (the store would no longer be private); the message says how to fix it.
    """
    info = os.stat(directory)
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077):
        raise PermissionError(
            f"The rendezvous folder {directory!r} must belong to this user and be private (mode "
            f"0700); it has owner uid {info.st_uid} and mode {stat.S_IMODE(info.st_mode):04o}. Another "
            "user could read or write the job's store. Let unison create the folder (it uses "
            "tempfile.mkdtemp), or `chmod 700` it."
        )
    store = dist.FileStore(os.path.join(directory, STORE_FILE), world_size)
    store.set_timeout(datetime.timedelta(seconds=timeout_s))
    return store


def bind_address(host: str) -> tuple[int, tuple[str, int]] | None:
    """``(family, address)`` of this machine's interface that holds ``host``, else ``None``."""
    try:
        infos = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)
    except OSError:
        return None
    # IPv4 first: torch's client tries every address of the name, and the cluster specs that
    # people write ("localhost", a host name) resolve to IPv4 everywhere.
    for family, _, _, _, sockaddr in sorted(infos, key=lambda i: i[0] != socket.AF_INET):
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((sockaddr[0], 0))
            except OSError:
                continue
        return int(family), (str(sockaddr[0]), 0)
    return None


def serve_tcp_store(host: str, port: int, world_size: int, timeout_s: float) -> dist.TCPStore:
    """Serve a ``TCPStore`` on ``host``'s interface only (torch alone would listen on all).

    When ``host`` is not an address of this machine (a NAT or a service name in front of it),
    the store falls back to every interface, with a warning saying so.

    Raises:
        OSError: the port cannot be bound (for example ``EADDRINUSE``).
    """
    timeout = datetime.timedelta(seconds=timeout_s)
    found = bind_address(host)
    if found is None:
        warnings.warn(
            f"The chief's address {host!r} is not an address of this machine, so its rendezvous "
            "store listens on every interface. Put the chief's own address in the cluster spec "
            "to bind only that interface.",
            RuntimeWarning,
            stacklevel=2,
        )
        return dist.TCPStore(host, port, world_size, is_master=True, wait_for_workers=False, timeout=timeout)
    family, (address, _) = found
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(socket.SOMAXCONN)
    except OSError:
        sock.close()
        raise
    # The store's server owns the listening descriptor from here on.
    return dist.TCPStore(
        address,
        sock.getsockname()[1],
        world_size,
        is_master=True,
        wait_for_workers=False,
        timeout=timeout,
        master_listen_fd=sock.detach(),
    )


class AuthenticatedStore(dist.Store):
    """A store whose values carry an HMAC of the job's secret; a forged value is refused.

    Args:
        inner: the store that holds the bytes (a ``FileStore``, ``TCPStore`` or ``PrefixStore``).
        secret: the job's secret (32 bytes from :func:`unison.cluster.secret.job_secret`).

    ``get`` of a value that another process wrote without the secret raises
    :class:`StoreAuthenticationError` naming the key. gloo reads its peers' addresses through
    ``get``, so it only ever connects to addresses the job itself published.
    """

    def __init__(self, inner: dist.Store, secret: bytes) -> None:
        super().__init__()
        if len(secret) < 16:
            raise ValueError(f"The job secret must be at least 16 bytes. Received: {len(secret)} bytes")
        self.inner = inner
        self._secret = secret

    def _mac(self, key: str, value: bytes) -> bytes:
        return hmac.new(self._secret, key.encode() + b"\0" + value, hashlib.sha256).digest()

    def set(self, key: str, value: str | bytes) -> None:
        data = value.encode() if isinstance(value, str) else bytes(value)
        # torch's stubs say str; every store takes bytes (the values are binary here).
        self.inner.set(key, data + self._mac(key, data))  # type: ignore[arg-type]

    def get(self, key: str) -> bytes:
        raw = self.inner.get(key)
        data, mac = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
        if len(raw) < _MAC_BYTES or not hmac.compare_digest(mac, self._mac(key, data)):
            raise StoreAuthenticationError(
                f"The value of {key!r} in the rendezvous store was not written by this job: its "
                "HMAC does not match the job's secret. Another process wrote into the store (or a "
                "task of the job has another UNISON_CLUSTER_TOKEN); unison refuses to act on it. "
                "Fix: give every task the same UNISON_CLUSTER_TOKEN, and keep the store's port "
                "unreachable from outside the cluster."
            )
        return data

    def add(self, key: str, amount: int) -> int:
        return self.inner.add(key, amount)

    def compare_set(self, key: str, expected: str, desired: str) -> bytes:
        # Only counter-like flags use this (never addresses); the bytes pass through as given.
        return self.inner.compare_set(key, expected, desired)

    def wait(self, keys: Sequence[str], timeout: datetime.timedelta | None = None) -> None:
        if timeout is None:
            self.inner.wait(list(keys))
        else:
            self.inner.wait(list(keys), timeout)

    def check(self, keys: Sequence[str]) -> bool:
        return self.inner.check(list(keys))

    def num_keys(self) -> int:
        return self.inner.num_keys()

    def delete_key(self, key: str) -> bool:
        return self.inner.delete_key(key)

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        self.inner.set_timeout(timeout)
