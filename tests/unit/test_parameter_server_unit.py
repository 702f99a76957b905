"""Parameter-server pieces in one process: the wire format, partitioners and placement, the
parameter store's update rules, the token check and TLS (real gRPC servers on loopback), and
the user mistakes that must fail with a clear error before any connection."""

from __future__ import annotations

import datetime
import os
import pickle
import secrets
from concurrent import futures

import grpc
import numpy as np
import pytest
import torch

import unison as tf
from unison.cluster import ClusterSpec, SimpleClusterResolver
from unison.comm.rpc import (
    CHUNK_BYTES,
    UNARY_MAX_BYTES,
    RemoteError,
    RpcClient,
    RpcServer,
    TaskUnavailableError,
    TlsConfig,
    UnauthenticatedError,
    pack,
    unpack,
)
from unison.distribute.parameter_server import NoWorkerAvailableError, Server
from unison.distribute.parameter_server.codec import decode_tree, encode_tree
from unison.distribute.parameter_server.partitioners import shard_rows
from unison.distribute.parameter_server.store import ParameterStore
from unison.distribute.parameter_server.variables import Placement
from unison.testing.ps_cluster import free_ports

partitioners = tf.distribute.experimental.partitioners
# cluster tokens need 128 bits of entropy (a weak one is refused: see test_rpc_security.py)
TOKEN, WRONG_TOKEN = secrets.token_hex(32), secrets.token_hex(32)


# --- wire format ---------------------------------------------------------------------------------
def test_pack_unpack_round_trips_every_dtype_shape_and_chunks_large_messages():
    tensors = [
        torch.randn(3, 4),
        torch.tensor(7, dtype=torch.int64),
        torch.zeros(0, 5),
        torch.tensor([True, False]),
        torch.randn(5).to(torch.bfloat16),
        torch.arange(6).reshape(2, 3).t(),
    ]
    chunks = pack({"op": "x", "k": [1, 2]}, tensors)
    assert len(chunks) == 1
    header, out = unpack(chunks)
    assert header == {"op": "x", "k": [1, 2]}
    for a, b in zip(tensors, out):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    big = torch.randn(CHUNK_BYTES // 4 * 2 + 7)  # a bit over two chunks
    chunks = pack({}, [torch.ones(3), big])
    assert len(chunks) == 3 and all(len(c) <= CHUNK_BYTES for c in chunks)
    _, (small, back) = unpack(chunks)
    assert torch.equal(back, big) and torch.equal(small, torch.ones(3))
    with pytest.raises(ValueError, match="Truncated"):
        unpack(chunks[:2])
    # straight into the destination tensors (a worker's copy of its variables), across chunks
    dest = [torch.empty(3), torch.empty_like(big)]
    _, got = unpack(chunks, into=dest)
    assert got[1] is dest[1] and torch.equal(dest[1], big) and torch.equal(dest[0], torch.ones(3))
    with pytest.raises(ValueError, match="does not match the destination"):
        unpack(chunks, into=[torch.empty(3), torch.empty(4)])
    # a header larger than a chunk travels whole in the first chunk; no chunk exceeds the limit otherwise
    chunks = pack({"ids": list(range(400_000))}, [torch.randn(CHUNK_BYTES // 4)])
    assert all(len(c) <= CHUNK_BYTES for c in chunks[1:]) and len(chunks[0]) > CHUNK_BYTES
    assert unpack(chunks)[0]["ids"][-1] == 399_999
    assert len(pack({}, [big], chunk_bytes=None)) == 1  # a unary message is one chunk


def test_tree_codec_keeps_structure_and_sends_tensors_raw():
    value = {"loss": torch.tensor(0.5), "pair": (1, [2.0, "a"]), "none": None, "array": np.arange(3)}
    tree, tensors = encode_tree(value)
    assert tree["__dict"]["pair"] == {"__tuple": [1, [2.0, "a"]]}
    assert tensors[0].dtype == torch.float32  # raw, not pickled
    back = decode_tree(tree, tensors)
    assert back["pair"] == (1, [2.0, "a"]) and back["none"] is None
    assert torch.equal(back["loss"], torch.tensor(0.5)) and np.array_equal(back["array"], np.arange(3))


# --- partitioners and placement ------------------------------------------------------------------
def test_partitioners_follow_tf_arithmetic():
    assert partitioners.FixedShardsPartitioner(2)((10, 3), torch.float32) == [2, 1]
    assert partitioners.FixedShardsPartitioner(20)((10, 3), torch.float32) == [10, 1]  # at most one per row
    # 1000 x 64 float32 = 256000 bytes: ceil(256000 / 65536) = 4 shards, capped by max_shards
    assert partitioners.MinSizePartitioner(min_shard_bytes=65536, max_shards=8)((1000, 64), torch.float32) == [4, 1]
    assert partitioners.MinSizePartitioner(min_shard_bytes=65536, max_shards=2)((1000, 64), torch.float32) == [2, 1]
    # 256 bytes per row, at most 1024 per shard: 4 rows per shard, ceil(1000 / 4) = 250 shards -> capped
    assert partitioners.MaxSizePartitioner(max_shard_bytes=1024, max_shards=3)((1000, 64), torch.float32) == [3, 1]
    assert partitioners.MaxSizePartitioner(max_shard_bytes=1 << 30)((1000, 64), torch.float32) == [1, 1]
    assert shard_rows(10, 3) == [4, 3, 3] and shard_rows(2, 2) == [1, 1]


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: partitioners.FixedShardsPartitioner(0), "num_shards"),
        (lambda: partitioners.MinSizePartitioner(max_shards=0), "max_shards"),
        (lambda: partitioners.MinSizePartitioner(min_shard_bytes=0), "min_shard_bytes"),
        (lambda: partitioners.MaxSizePartitioner(max_shard_bytes=100, max_shards=0), "max_shards"),
        (lambda: partitioners.MaxSizePartitioner(max_shard_bytes=0), "max_shard_bytes"),
    ],
)
def test_partitioner_arguments_below_one_are_refused(make, match):
    with pytest.raises(ValueError, match=f"`{match}` must be an integer >= 1"):
        make()


def test_placement_balances_bytes_and_routes_ids_to_their_shards():
    placement = Placement(num_ps=2)
    big = placement.place("a", (1000, 10), torch.float32)
    small1 = placement.place("b", (10,), torch.float32)
    small2 = placement.place("c", (10,), torch.float32)
    assert big.shards[0].ps == 0 and small1.shards[0].ps == 1 and small2.shards[0].ps == 1  # by size
    sharded = Placement(2, partitioners.FixedShardsPartitioner(3)).place("t", (10, 2), torch.float32, sparse=True)
    routes = sharded.route(torch.tensor([9, 0, 4, 5, 3]))
    assert [(shard.offset, pos.tolist(), local.tolist()) for shard, pos, local in routes] == [
        (0, [1, 4], [0, 3]),
        (4, [2, 3], [0, 1]),
        (7, [0], [2]),
    ]


# --- the parameter store's updates -------------------------------------------------------------
def _store(value: torch.Tensor, cls: str, **hyper) -> tuple[ParameterStore, dict]:
    store = ParameterStore("ps:0")
    h = store.handlers()
    h["ps.create"]({"names": ["s/t"], "if_absent": True}, [value])
    h["ps.set_optimizer"]({"names": ["s/t"], "cls": cls, "hyper": hyper}, [])
    return store, h


def test_sparse_rows_update_only_the_touched_rows_with_sgd_and_adagrad():
    for cls in ("SGD", "Adagrad"):
        store, h = _store(torch.ones(6, 2), cls, lr=0.5)
        h["ps.push_rows"]({"names": ["s/t"]}, [torch.tensor([1, 4, 1]), torch.ones(3, 2)])
        value = h["ps.pull"]({"names": ["s/t"]}, [])[1][0]
        assert (value[[0, 2, 3, 5]] == 1).all(), cls
        assert (value[[1, 4]] < 1).all(), cls
        if cls == "SGD":  # duplicate ids add up: row 1 got gradient 2
            assert value[1].tolist() == [0.0, 0.0] and value[4].tolist() == [0.5, 0.5]


def test_adam_takes_row_gradients_densely_and_keeps_its_state_when_the_learning_rate_changes():
    store, h = _store(torch.ones(4, 2), "Adam", lr=0.1, betas=[0.9, 0.999])
    h["ps.push_rows"]({"names": ["s/t"]}, [torch.tensor([2]), torch.ones(1, 2)])
    state = h["ps.optimizer_state"]({"names": ["s/t"]}, [])
    assert state[0]["keys"] == [["exp_avg", "exp_avg_sq", "step"]]
    assert state[1][0].shape == (4, 2) and state[1][2].item() == 1.0
    h["ps.set_optimizer"]({"names": ["s/t"], "cls": "Adam", "hyper": {"lr": 0.01, "betas": [0.9, 0.999]}}, [])
    assert h["ps.optimizer_state"]({"names": ["s/t"]}, [])[1][2].item() == 1.0  # same moments, new lr
    with pytest.raises(ValueError, match="Received: optimizer 'LBFGS'"):
        h["ps.set_optimizer"]({"names": ["s/t"], "cls": "LBFGS", "hyper": {}}, [])


def test_a_gradient_for_a_variable_without_optimizer_or_unknown_name_is_a_clear_error():
    store = ParameterStore("ps:3")
    h = store.handlers()
    h["ps.create"]({"names": ["s/w"], "if_absent": True}, [torch.zeros(2)])
    with pytest.raises(RuntimeError, match="no optimizer"):
        h["ps.push"]({"names": ["s/w"]}, [torch.ones(2)])
    with pytest.raises(KeyError, match="ps:3 holds no variable 's/x'"):
        h["ps.pull"]({"names": ["s/x"]}, [])
    h["ps.reset"]({"session": "other"}, [])  # a new coordinator session drops the old variables
    with pytest.raises(KeyError, match="earlier coordinator session"):
        h["ps.pull"]({"names": ["s/w"]}, [])


# --- security: the token is checked before anything is decoded -------------------------------------
class _Boom:
    """Unpickling this creates a file: proof that something was deserialised."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_call_without_the_token_is_refused_before_any_payload_is_decoded(tmp_path):
    port = free_ports(1)[0]
    cluster = {"worker": [f"127.0.0.1:{port}"], "ps": [f"127.0.0.1:{free_ports(1)[0]}"]}
    server = Server(cluster, job_name="worker", task_index=0, token=TOKEN)
    try:
        marker = tmp_path / "deserialised"
        payload = torch.frombuffer(bytearray(pickle.dumps(_Boom(str(marker)))), dtype=torch.uint8)
        body = pack({"op": "worker.register", "fid": "f0"}, [payload])[0]
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        call = channel.unary_unary("/unison.Task/Call")
        for metadata in [(), (("unison-token", WRONG_TOKEN),)]:
            with pytest.raises(grpc.RpcError) as info:
                call(body, metadata=metadata, timeout=10)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        channel.close()
        assert not marker.exists()
        assert server._rpc.decoded == 0 and server._rpc.refused == 2
        with pytest.raises(UnauthenticatedError, match="worker:0 .* refused 'ping'.*UNISON_CLUSTER_TOKEN"):
            RpcClient(f"127.0.0.1:{port}", "worker:0", token=WRONG_TOKEN).call("ping")
        header, _ = RpcClient(f"127.0.0.1:{port}", "worker:0", token=TOKEN).call("ping")
        assert header["task"] == "worker:0" and server._rpc.decoded == 1
    finally:
        server.stop()


def test_a_coordinator_with_the_wrong_token_gets_a_clear_error(monkeypatch):
    ports = free_ports(2)
    cluster = {"chief": ["127.0.0.1:1"], "worker": [f"127.0.0.1:{ports[0]}"], "ps": [f"127.0.0.1:{ports[1]}"]}
    server = Server(cluster, job_name="ps", task_index=0, token=TOKEN)
    try:
        monkeypatch.setenv("UNISON_CLUSTER_TOKEN", WRONG_TOKEN)
        strategy = tf.distribute.ParameterServerStrategy(
            SimpleClusterResolver(ClusterSpec(cluster), task_type="chief", task_id=0), timeout_seconds=10
        )
        with strategy.scope():
            layer = torch.nn.Linear(2, 2)
        with pytest.raises(UnauthenticatedError, match="ps:0 .* refused 'ps.reset'"):
            strategy.variable_spec(layer.weight)
    finally:
        server.stop()


def _self_signed(tmp_path) -> tuple[str, str]:
    crypto = pytest.importorskip("cryptography")
    del crypto
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "unison-test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(cert_file), str(key_file)


def test_tls_serves_encrypted_calls_and_refuses_plaintext(tmp_path):
    cert, key = _self_signed(tmp_path)
    tls = TlsConfig(cert_file=cert, key_file=key, ca_file=cert)
    server = RpcServer("127.0.0.1:0", {"echo": lambda h, ts: (h, ts)}, token=TOKEN, tls=tls)
    try:
        header, out = RpcClient(f"127.0.0.1:{server.port}", "ps:0", token=TOKEN, tls=tls, timeout_s=10).call(
            "echo", {"a": 1}, [torch.arange(3)]
        )
        assert header == {"a": 1} and out[0].tolist() == [0, 1, 2]
        with pytest.raises(TaskUnavailableError, match="ps:0"):
            RpcClient(f"127.0.0.1:{server.port}", "ps:0", token=TOKEN, tls=False, timeout_s=5).call("echo")
    finally:
        server.stop()


def test_streamed_calls_round_trip_into_the_callers_tensors_and_errors_travel_back():
    """Above UNARY_MAX_BYTES a call streams; its reply is decoded as it arrives, into ``into``."""

    def fail(header, tensors):
        raise KeyError("no such variable")

    server = RpcServer("127.0.0.1:0", {"echo": lambda h, ts: (h, ts), "fail": fail}, token=TOKEN)
    try:
        client = RpcClient(f"127.0.0.1:{server.port}", "ps:0", token=TOKEN, tls=False, timeout_s=30)
        big = torch.randn(UNARY_MAX_BYTES // 4 + 3 * CHUNK_BYTES // 4 + 5)  # streamed, a partial last chunk
        dest = [torch.empty(2, dtype=torch.int64), torch.empty_like(big)]
        header, out = client.call("echo", {"a": 1}, [torch.tensor([4, 5]), big], reply_bytes=big.nbytes, into=dest)
        assert header == {"a": 1} and out[1] is dest[1] and torch.equal(dest[1], big) and dest[0].tolist() == [4, 5]
        _, (fresh,) = client.call("echo", {}, [big], reply_bytes=big.nbytes)
        assert torch.equal(fresh, big)
        with pytest.raises(RemoteError, match=r"ps:0 failed in 'fail': KeyError: .*no such variable"):
            client.call("fail", {}, [big], reply_bytes=big.nbytes)
    finally:
        server.stop()


def test_a_reply_stream_cut_midway_names_the_task_and_the_operation():
    """The server sends the first chunk of a big reply and goes away: the caller gets a named error."""

    def cut(requests, context):
        for _ in requests:
            pass
        yield pack({}, [torch.zeros(UNARY_MAX_BYTES // 4 * 2)])[0]
        context.abort(grpc.StatusCode.UNAVAILABLE, "the task is shutting down")

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("unison.Task", {"Stream": grpc.stream_stream_rpc_method_handler(cut)})]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        client = RpcClient(f"127.0.0.1:{port}", "ps:1", tls=False, timeout_s=30)
        with pytest.raises(TaskUnavailableError, match=r"ps:1 .* is unavailable for 'ps.pull'.*shutting down") as info:
            client.call(
                "ps.pull",
                {"names": ["w"]},
                reply_bytes=UNARY_MAX_BYTES * 2,
                into=[torch.empty(UNARY_MAX_BYTES // 4 * 2)],
            )
        assert info.value.task == "ps:1" and info.value.op == "ps.pull"
    finally:
        server.stop(0).wait()


def test_join_names_the_workers_when_none_answers_within_the_timeout():
    ports = free_ports(3)
    cluster = {
        "chief": ["127.0.0.1:1"],
        "worker": [f"127.0.0.1:{ports[0]}", f"127.0.0.1:{ports[1]}"],
        "ps": [f"127.0.0.1:{ports[2]}"],
    }
    server = Server(cluster, job_name="ps", task_index=0, token=TOKEN)
    try:
        os.environ["UNISON_CLUSTER_TOKEN"] = TOKEN
        strategy = tf.distribute.ParameterServerStrategy(_resolver(cluster), timeout_seconds=2)
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
        value = coordinator.schedule(lambda: 1)
        with pytest.raises(NoWorkerAvailableError, match=f"No worker answered for 2 s.*worker:0 .*{ports[0]}"):
            value.fetch()  # not only join(): a fetch does not wait forever either
        with pytest.raises(NoWorkerAvailableError):
            coordinator.join()
        coordinator.shutdown()
    finally:
        os.environ.pop("UNISON_CLUSTER_TOKEN", None)
        server.stop()


# --- user mistakes, before any connection ----------------------------------------------------------
def _resolver(cluster: dict) -> SimpleClusterResolver:
    return SimpleClusterResolver(ClusterSpec(cluster), task_type="chief", task_id=0)


def test_a_cluster_without_ps_or_worker_tasks_is_refused():
    with pytest.raises(ValueError, match="needs 'ps' tasks to hold the variables"):
        tf.distribute.ParameterServerStrategy(_resolver({"chief": ["a:1"], "worker": ["b:1"]}))
    with pytest.raises(ValueError, match="needs 'worker' tasks"):
        tf.distribute.experimental.ParameterServerStrategy(_resolver({"chief": ["a:1"], "ps": ["b:1"]}))
    with pytest.raises(TypeError, match="ParameterServerStrategy"):
        tf.distribute.experimental.coordinator.ClusterCoordinator(tf.distribute.MirroredStrategy())


def test_servers_refuse_bad_roles_and_unauthenticated_non_loopback_addresses(monkeypatch):
    monkeypatch.delenv("UNISON_CLUSTER_TOKEN", raising=False)
    cluster = {"chief": ["10.9.9.9:2222"], "worker": ["10.9.9.9:2223"], "ps": ["10.9.9.9:2224"]}
    with pytest.raises(ValueError, match="runs a 'ps' or a 'worker' task"):
        Server(cluster, job_name="chief", task_index=0, start=False)
    with pytest.raises(ValueError, match="task_index=5 is not a task of job 'ps'"):
        Server(cluster, job_name="ps", task_index=5, start=False)
    with pytest.raises(ValueError, match="without authentication.*UNISON_CLUSTER_TOKEN"):
        Server(cluster, job_name="ps", task_index=0, start=False)
    loopback = {"worker": ["127.0.0.1:2223"], "ps": ["127.0.0.1:2224"]}
    for token in (None, ""):  # loopback too: any local user could otherwise send a worker code to run
        with pytest.raises(ValueError, match="without authentication"):
            Server(loopback, job_name="worker", task_index=0, token=token, start=False)
    with pytest.raises(ValueError, match="protocol must be one of"):
        Server(cluster, job_name="ps", task_index=0, protocol="http", token=TOKEN, start=False)


def test_fit_under_ps_needs_steps_per_epoch_and_worker_buildable_data():
    strategy = tf.distribute.ParameterServerStrategy(
        _resolver({"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "ps": ["127.0.0.1:3"]})
    )
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        model.compile("sgd", loss="mse")
    creator = tf.keras.utils.experimental.DatasetCreator(lambda ctx: iter([]))
    with pytest.raises(ValueError, match="needs steps_per_epoch"):
        model.fit(creator, epochs=1)
    with tf.keras.distribution.ModelParallel(device_mesh=tf.keras.distribution.DeviceMesh((1,), ["batch"])).scope():
        with pytest.raises(
            ValueError, match="under ParameterServerStrategy the variables live on the parameter servers"
        ):
            model.fit(creator, epochs=1, steps_per_epoch=1)
    with pytest.raises(TypeError, match="DatasetCreator"):
        tf.keras.utils.experimental.DatasetCreator([1, 2])
    from unison.keras.trainers.coordinated_steps import dataset_function

    with pytest.raises(TypeError, match="data every worker can build on its own"):
        dataset_function(torch.utils.data.TensorDataset(torch.zeros(2)), None, None, 2, True, "fit")
    with pytest.raises(RuntimeError, match="only works inside a function given to ClusterCoordinator.schedule"):
        strategy.run(lambda: None)
