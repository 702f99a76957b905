"""Security of the parameter-server transport (issue 12): mutual authentication with a token that
never travels, rogue servers and rogue clients, weak tokens, TLS certificates and mismatches.

Real gRPC servers on loopback in this process; a rogue is a plain grpcio server or channel."""

from __future__ import annotations

import base64
import os
import pickle
import socket
import threading
import time
import warnings
from concurrent import futures

import grpc
import pytest
import torch

import unison as tf
from unison.cli import main as unison_main
from unison.cluster import ClusterSpec, SimpleClusterResolver
from unison.comm import auth
from unison.comm.rpc import (
    CHUNK_BYTES,
    UNARY_MAX_BYTES,
    InsecureTransportWarning,
    RpcClient,
    RpcServer,
    TaskUnavailableError,
    TlsConfig,
    UnauthenticatedError,
    pack,
)
from unison.distribute.parameter_server import Server
from unison.distribute.parameter_server.worker import ParameterServerUnavailableError
from unison.testing.ps_cluster import free_ports

pytestmark = pytest.mark.timeout(120)

TOKEN = auth.generate_token()


class _Boom:
    """Unpickling this creates a file: proof that something was deserialised."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _boom_tensor(path) -> torch.Tensor:
    return torch.frombuffer(bytearray(pickle.dumps(_Boom(str(path)))), dtype=torch.uint8)


def _encodings(secret: str) -> list[bytes]:
    raw = secret.encode()
    key = auth.derive_key(secret)
    return [
        raw,
        raw.hex().encode(),
        base64.b64encode(raw),
        base64.urlsafe_b64encode(raw),
        key,
        key.hex().encode(),
        base64.b64encode(key),
    ]


class _Rogue:
    """A plain grpcio server at a task's address, no token: records what it receives and answers
    every call with a reply whose result is a malicious pickle (as if it were a worker)."""

    def __init__(self, address: str, marker) -> None:
        self.received: list[bytes] = []
        self.metadata: list[tuple] = []
        reply = pack({"incarnation": "rogue", "result": {"__p": 0}}, [_boom_tensor(marker)], None)[0]
        self._reply = os.urandom(32) + reply  # a tag it cannot compute

        def unary(request, context):
            self.received.append(bytes(request))
            self.metadata.append(tuple(context.invocation_metadata()))
            return self._reply

        def stream(requests, context):
            for r in requests:
                self.received.append(bytes(r))
            self.metadata.append(tuple(context.invocation_metadata()))
            yield self._reply

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers(
            [
                grpc.method_handlers_generic_handler(
                    "unison.Task",
                    {
                        "Call": grpc.unary_unary_rpc_method_handler(unary),
                        "Stream": grpc.stream_stream_rpc_method_handler(stream),
                    },
                )
            ]
        )
        assert self.server.add_insecure_port(address)
        self.server.start()

    def wire(self) -> bytes:
        return b"".join(self.received) + repr(self.metadata).encode()

    def stop(self) -> None:
        self.server.stop(0).wait()


# --- a rogue server ---------------------------------------------------------------------------------
def test_a_rogue_worker_gets_neither_the_token_nor_the_code_and_its_pickle_is_never_decoded(tmp_path, monkeypatch):
    ports = free_ports(2)
    cluster = {"chief": ["127.0.0.1:1"], "worker": [f"127.0.0.1:{ports[0]}"], "ps": [f"127.0.0.1:{ports[1]}"]}
    monkeypatch.setenv(auth.TOKEN_ENV, TOKEN)
    marker = tmp_path / "coordinator-was-attacked"
    ps = Server(cluster, job_name="ps", task_index=0)
    rogue = _Rogue(cluster["worker"][0], marker)
    try:
        strategy = tf.distribute.ParameterServerStrategy(
            SimpleClusterResolver(ClusterSpec(cluster), task_type="chief", task_id=0), timeout_seconds=10
        )
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
        secret_code_marker = "user-function-body-7f3a"
        with pytest.raises(
            UnauthenticatedError,
            match=rf"worker:0 at 127.0.0.1:{ports[0]} could not prove it "
            r"holds the cluster token: its reply to 'worker.reset'",
        ) as info:
            coordinator.schedule(lambda: secret_code_marker).fetch()  # schedule raises if the worker failed first
        assert info.value.task == "worker:0" and info.value.op == "worker.reset"
        with pytest.raises(UnauthenticatedError):
            coordinator.join()
        coordinator.shutdown()
        assert rogue.received, "the rogue was never called: the test proves nothing"
        wire = rogue.wire()
        assert not any(e in wire for e in _encodings(TOKEN))
        assert b"worker.register" not in wire and secret_code_marker.encode() not in wire  # no code sent
        assert not marker.exists()
    finally:
        rogue.stop()
        ps.stop()


def test_a_rogue_reply_to_a_streamed_call_is_refused_before_a_chunk_is_written(tmp_path):
    address = f"127.0.0.1:{free_ports(1)[0]}"
    rogue = _Rogue(address, tmp_path / "m")
    try:
        client = RpcClient(address, "ps:1", token=TOKEN, tls=False, timeout_s=20)
        dest = [torch.full((UNARY_MAX_BYTES // 4 * 2,), 7.0)]
        with pytest.raises(
            UnauthenticatedError, match="ps:1 at .* could not prove it holds the cluster token.*'ps.pull'"
        ):
            client.call("ps.pull", {"names": ["w"]}, reply_bytes=dest[0].nbytes, into=dest)
        assert bool((dest[0] == 7.0).all())  # nothing was written into the caller's tensors
        client.close()
    finally:
        rogue.stop()


# --- a rogue client --------------------------------------------------------------------------------
def _worker_server(tmp_path):
    port = free_ports(1)[0]
    cluster = {"worker": [f"127.0.0.1:{port}"], "ps": [f"127.0.0.1:{free_ports(1)[0]}"]}
    return Server(cluster, job_name="worker", task_index=0, token=TOKEN), f"127.0.0.1:{port}"


def test_a_rogue_client_without_the_token_or_with_a_wrong_tag_is_refused_before_decoding(tmp_path):
    server, address = _worker_server(tmp_path)
    marker = tmp_path / "worker-was-attacked"
    try:
        body = pack({"op": "worker.register", "fid": "f0"}, [_boom_tensor(marker)])[0]
        channel = grpc.insecure_channel(address)
        call = channel.unary_unary("/unison.Task/Call")
        stream = channel.stream_stream("/unison.Task/Stream")
        wrong = auth.CallSigner(auth.derive_key(auth.generate_token()), "chief:0", "worker:0")
        _, wrong_md = wrong.sign("/unison.Task/Call")
        for metadata in [(), (("unison-token", TOKEN),), wrong_md]:
            with pytest.raises(grpc.RpcError) as info:
                call(os.urandom(32) + body, metadata=metadata, timeout=10)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as info:
            list(stream(iter([body] * 3), timeout=10))
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # right metadata (a call signed with the key), but a body that is not the one signed
        right = auth.CallSigner(auth.derive_key(TOKEN), "chief:0", "worker:0")
        _, md = right.sign("/unison.Task/Call")
        with pytest.raises(grpc.RpcError) as info:
            call(os.urandom(32) + body, metadata=md, timeout=10)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED and "request chunk" in info.value.details()
        channel.close()
        assert not marker.exists()
        assert server._rpc.decoded == 0 and server._rpc.refused == 5
    finally:
        server.stop()


def test_a_replayed_a_stale_or_a_misdirected_call_is_refused(tmp_path):
    server, address = _worker_server(tmp_path)
    try:
        key = auth.derive_key(TOKEN)
        channel = grpc.insecure_channel(address)
        call = channel.unary_unary("/unison.Task/Call")
        body = pack({"op": "ping"}, [], None)[0]

        def signed(metadata: tuple) -> bytes:
            nonce = dict(metadata)[auth.MD_NONCE].encode()
            return auth.chunk_tag(key, b"req", nonce, 0, body) + body

        nonce, md = auth.CallSigner(key, "chief:0", "worker:0").sign("/unison.Task/Call")
        reply = call(signed(md), metadata=md, timeout=10)
        assert auth.verify_chunk(key, b"rep", nonce.encode(), 0, reply, b"worker:0")  # the genuine reply verifies
        assert server._rpc.decoded == 1
        with pytest.raises(grpc.RpcError, match="replays an earlier one") as info:
            call(signed(md), metadata=md, timeout=10)  # the captured call, sent again
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        old = str(int((time.time() - 2 * auth.MAX_CLOCK_SKEW_S) * 1000))
        stale = dict(md, **{auth.MD_TIME: old, auth.MD_NONCE: "s.1"})
        stale[auth.MD_MAC] = auth.call_mac(key, "/unison.Task/Call", "chief:0", "worker:0", "s.1", old)
        with pytest.raises(grpc.RpcError, match="away from this task's clock"):
            call(signed(tuple(stale.items())), metadata=tuple(stale.items()), timeout=10)
        _, other = auth.CallSigner(key, "chief:0", "ps:0").sign("/unison.Task/Call")
        with pytest.raises(grpc.RpcError, match="meant for 'ps:0', and this is 'worker:0'"):
            call(signed(other), metadata=other, timeout=10)
        channel.close()
        assert server._rpc.decoded == 1 and server._rpc.refused == 3
    finally:
        server.stop()


# --- the token never travels ------------------------------------------------------------------------
class _Proxy:
    """A loopback TCP proxy that keeps every byte in both directions."""

    def __init__(self, target_port: int) -> None:
        self.captured = bytearray()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._target = target_port
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self._target))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(1 << 16):
                with self._lock:
                    self.captured += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self._listener.close()


def test_the_bytes_between_client_and_server_hold_no_token_without_tls():
    server = RpcServer("127.0.0.1:0", {"echo": lambda h, ts: (h, ts)}, token=TOKEN, task="ps:0")
    proxy = _Proxy(server.port)
    try:
        client = RpcClient(f"127.0.0.1:{proxy.port}", "ps:0", token=TOKEN, tls=False, timeout_s=30)
        header, _ = client.call("echo", {"probe": "visible-marker-5b1c"}, [torch.arange(4)])
        big = torch.randn(UNARY_MAX_BYTES // 4 + CHUNK_BYTES // 4)  # a streamed call too
        _, (back,) = client.call("echo", {}, [big], reply_bytes=big.nbytes)
        assert header["probe"] == "visible-marker-5b1c" and torch.equal(back, big)
        client.close()
        wire = bytes(proxy.captured)
        assert b"visible-marker-5b1c" in wire and len(wire) > 2 * big.nbytes  # the proxy saw the calls
        for encoding in _encodings(TOKEN):
            assert encoding not in wire
    finally:
        proxy.close()
        server.stop()


# --- tokens --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("weak", ["t", "s3cret", "a" * 64, "ab" * 32, "0123456789abcdef", "correct-horse"])
def test_a_weak_token_is_refused_with_a_command_that_makes_a_good_one(weak, monkeypatch):
    cluster = {"worker": ["127.0.0.1:2223"], "ps": ["127.0.0.1:2224"]}
    with pytest.raises(ValueError, match=r"too weak: .*unison token.*secrets.token_hex\(32\)") as info:
        Server(cluster, job_name="ps", task_index=0, token=weak, start=False)
    assert isinstance(info.value, auth.WeakTokenError)
    assert f"'{weak}'" not in str(info.value)  # the token itself is never printed
    with pytest.raises(auth.WeakTokenError):
        RpcClient("127.0.0.1:1", "ps:0", token=weak)
    with pytest.raises(auth.WeakTokenError):
        RpcServer("127.0.0.1:0", {}, token=weak)
    monkeypatch.setenv(auth.TOKEN_ENV, weak)
    with pytest.raises(auth.WeakTokenError):
        tf.distribute.ParameterServerStrategy(
            SimpleClusterResolver(ClusterSpec({"chief": ["127.0.0.1:1"], **cluster}), task_type="chief", task_id=0)
        )


def test_good_tokens_pass_and_unison_token_prints_one(capsys):
    import secrets

    for good in (secrets.token_hex(16), secrets.token_hex(32), secrets.token_urlsafe(16), auth.generate_token()):
        assert auth.check_token(good) == good
    assert unison_main(["token"]) == 0
    printed = capsys.readouterr().out.strip()
    assert len(printed) == 64 and auth.token_bits(printed) >= 128


def test_the_coordinator_refuses_to_connect_without_a_token(monkeypatch):
    monkeypatch.delenv(auth.TOKEN_ENV, raising=False)
    strategy = tf.distribute.ParameterServerStrategy(
        SimpleClusterResolver(
            ClusterSpec({"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "ps": ["127.0.0.1:3"]}),
            task_type="chief",
            task_id=0,
        )
    )
    with pytest.raises(ValueError, match="needs the cluster token.*UNISON_CLUSTER_TOKEN.*unison token"):
        tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)


# --- TLS -------------------------------------------------------------------------------------------------
def test_unison_certs_makes_files_the_tls_path_accepts_with_mutual_tls(tmp_path, capsys):
    pytest.importorskip("cryptography")
    out = tmp_path / "certs"
    assert unison_main(["certs", "--out", str(out), "--hosts", "127.0.0.1"]) == 0
    assert "UNISON_TLS_CERT=" in capsys.readouterr().out
    assert oct(os.stat(out / "127.0.0.1-key.pem").st_mode & 0o777) == "0o600"
    assert oct(os.stat(out / "ca-key.pem").st_mode & 0o777) == "0o600"
    from unison.comm.certs import make_cluster_certs, tasks_from_cluster

    tasks = tasks_from_cluster({"chief": ["127.0.0.1:1"], "ps": ["127.0.0.1:2"]})
    assert tasks == {"chief-0": "127.0.0.1", "ps-0": "127.0.0.1"}
    files = make_cluster_certs(tasks, str(out))
    ca = files["ca.pem"]
    server_tls = TlsConfig(files["ps-0.pem"], files["ps-0-key.pem"], ca, client_auth=True)
    server = RpcServer("127.0.0.1:0", {"echo": lambda h, ts: (h, ts)}, token=TOKEN, tls=server_tls, task="ps:0")
    try:
        chief = TlsConfig(files["chief-0.pem"], files["chief-0-key.pem"], ca)
        header, _ = RpcClient(f"127.0.0.1:{server.port}", "ps:0", token=TOKEN, tls=chief, timeout_s=10).call(
            "echo", {"a": 1}
        )
        assert header == {"a": 1}
        with pytest.raises(TaskUnavailableError):  # mutual TLS: a caller without a certificate is refused
            RpcClient(f"127.0.0.1:{server.port}", "ps:0", token=TOKEN, tls=TlsConfig(ca_file=ca), timeout_s=3).call(
                "echo"
            )
    finally:
        server.stop()


def test_unison_certs_without_cryptography_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "cryptography", None)
    assert unison_main(["certs", "--out", str(tmp_path), "--hosts", "h1"]) == 2
    assert "pip install 'unison[tls]'" in capsys.readouterr().err


def _ps_strategy(cluster: dict, timeout: float):
    return tf.distribute.ParameterServerStrategy(
        SimpleClusterResolver(ClusterSpec(cluster), task_type="chief", task_id=0), timeout_seconds=timeout
    )


def test_the_coordinator_refuses_worker_connections_without_the_token(monkeypatch):
    """The workers' clients are checked too: a token unset after the strategy connected is refused."""
    ports = free_ports(2)
    cluster = {"chief": ["127.0.0.1:1"], "worker": [f"127.0.0.1:{ports[0]}"], "ps": [f"127.0.0.1:{ports[1]}"]}
    monkeypatch.setenv(auth.TOKEN_ENV, TOKEN)
    ps = Server(cluster, job_name="ps", task_index=0)
    try:
        strategy = _ps_strategy(cluster, 10)
        strategy._connect()  # the parameter servers' clients hold the token
        monkeypatch.delenv(auth.TOKEN_ENV)
        with pytest.raises(ValueError, match=r"needs the cluster token to talk to worker:0.*UNISON_CLUSTER_TOKEN"):
            tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
        assert getattr(strategy, "_coordinator", None) is None  # nothing half-built is kept
    finally:
        ps.stop()


@pytest.mark.parametrize("server_tls", [True, False])
def test_a_tls_mismatch_is_reported_as_such_naming_the_task(server_tls, tmp_path, monkeypatch):
    pytest.importorskip("cryptography")
    from unison.comm.certs import make_cluster_certs

    files = make_cluster_certs({"ps-0": "127.0.0.1"}, str(tmp_path))
    ports = free_ports(2)
    cluster = {"chief": ["127.0.0.1:1"], "worker": [f"127.0.0.1:{ports[0]}"], "ps": [f"127.0.0.1:{ports[1]}"]}
    monkeypatch.setenv(auth.TOKEN_ENV, TOKEN)
    tls_env = {
        "UNISON_TLS_CERT": files["ps-0.pem"],
        "UNISON_TLS_KEY": files["ps-0-key.pem"],
        "UNISON_TLS_CA": files["ca.pem"],
    }
    for k, v in tls_env.items():
        monkeypatch.setenv(k, v) if server_tls else monkeypatch.delenv(k, raising=False)
    server = Server(cluster, job_name="ps", task_index=0)
    try:
        for k, v in tls_env.items():  # the coordinator: the other way round
            monkeypatch.delenv(k, raising=False) if server_tls else monkeypatch.setenv(k, v)
        strategy = _ps_strategy(cluster, 2)
        expected = "closes them: it most likely serves TLS" if server_tls else "TLS handshake with it failed"
        with pytest.raises(
            ParameterServerUnavailableError,
            match=rf"ps:0 \(127.0.0.1:{ports[1]}\) TLS is set up differently.*{expected}",
        ):
            strategy._connect()
    finally:
        server.stop()


def test_did_not_come_up_arrives_within_the_timeout_and_names_every_missing_task(monkeypatch):
    monkeypatch.setenv(auth.TOKEN_ENV, TOKEN)
    ports = free_ports(4)
    cluster = {
        "chief": ["127.0.0.1:1"],
        "worker": [f"127.0.0.1:{ports[0]}"],
        "ps": [f"127.0.0.1:{p}" for p in ports[1:]],
    }
    strategy = _ps_strategy(cluster, 2)
    start = time.monotonic()
    with pytest.raises(ParameterServerUnavailableError, match=r"ps:0 .* did not come up within 2 s") as info:
        strategy._connect()
    elapsed = time.monotonic() - start
    assert elapsed < 2 + 1.5, f"took {elapsed:.1f} s for a 2 s timeout"
    assert all(f"ps:{i}" in str(info.value) for i in range(3)) and "nothing accepts connections" in str(info.value)


def test_a_server_on_a_non_loopback_address_without_tls_warns_once():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        servers = [RpcServer("0.0.0.0:0", {}, token=TOKEN, task="ps:0") for _ in range(2)]
        loop = RpcServer("127.0.0.1:0", {}, token=TOKEN)
    for s in [*servers, loop]:
        s.stop()
    insecure = [w for w in caught if issubclass(w.category, InsecureTransportWarning)]
    assert len(insecure) == 1 and "0.0.0.0:0 without TLS" in str(insecure[0].message)
    assert "unison certs" in str(insecure[0].message)


def test_without_poly1305_chunks_are_tagged_with_hmac_sha256_and_still_verified(monkeypatch):
    monkeypatch.setattr(auth, "_POLY1305", None)  # as where `cryptography` is not installed
    server = RpcServer("127.0.0.1:0", {"echo": lambda h, ts: (h, ts)}, token=TOKEN, task="ps:0")
    try:
        client = RpcClient(f"127.0.0.1:{server.port}", "ps:0", token=TOKEN, tls=False, timeout_s=30)
        big = torch.randn(UNARY_MAX_BYTES // 4 + 5)
        _, (back,) = client.call("echo", {}, [big], reply_bytes=big.nbytes)
        assert torch.equal(back, big)
        nonce, _ = auth.CallSigner(auth.derive_key(TOKEN), "a", "b").sign("/m")
        assert not nonce.startswith(auth.FAST_PREFIX)
        with pytest.raises(ValueError, match="install cryptography"):
            auth.chunk_tag(auth.derive_key(TOKEN), b"req", b"p:s.1", 0, b"x")
    finally:
        server.stop()


def test_a_worker_behind_a_tls_mismatch_is_named_with_the_reason(tmp_path, monkeypatch):
    pytest.importorskip("cryptography")
    from unison.comm.certs import make_cluster_certs
    from unison.distribute.parameter_server import NoWorkerAvailableError

    files = make_cluster_certs({"worker-0": "127.0.0.1"}, str(tmp_path))
    ports = free_ports(2)
    cluster = {"chief": ["127.0.0.1:1"], "worker": [f"127.0.0.1:{ports[0]}"], "ps": [f"127.0.0.1:{ports[1]}"]}
    monkeypatch.setenv(auth.TOKEN_ENV, TOKEN)
    ps = Server(cluster, job_name="ps", task_index=0)
    tls_env = {
        "UNISON_TLS_CERT": files["worker-0.pem"],
        "UNISON_TLS_KEY": files["worker-0-key.pem"],
        "UNISON_TLS_CA": files["ca.pem"],
    }
    for k, v in tls_env.items():
        monkeypatch.setenv(k, v)
    worker = Server(cluster, job_name="worker", task_index=0)
    for k in tls_env:
        monkeypatch.delenv(k)
    try:
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(_ps_strategy(cluster, 2))
        with pytest.raises(
            NoWorkerAvailableError,
            match=rf"worker:0 \(127.0.0.1:{ports[0]}: it accepts connections "
            "but closes them: it most likely serves TLS",
        ):
            coordinator.schedule(lambda: 1).fetch()
        coordinator.shutdown()
    finally:
        worker.stop()
        ps.stop()


def test_a_server_without_the_token_refuses_to_start():
    # the transport itself, not only `unison server`, refuses to run handlers unauthenticated
    with pytest.raises(ValueError, match="needs the cluster token.*unison token"):
        RpcServer("127.0.0.1:0", {"echo": lambda h, ts: (h, ts)}, token=None)
