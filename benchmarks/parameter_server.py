"""ParameterServerStrategy speed: unison's PS transport against raw gRPC, worker scaling, sparse tables.

Everything is measured side by side in one run; each repeat measures every system of a part once,
in an order rotated from one repeat to the next, and the tables report medians over the repeats,
the spread ((max-min)/median) as the noise indicator, and each ratio as the median of the
per-repeat ratios (both sides measured in the same repeat, seconds apart).

(1) Transport throughput. One server process (started by this script with ``--serve``) holds a
    unison ``RpcServer`` serving a ``ParameterStore`` (plus an ``echo`` op) and a raw gRPC server
    (``grpc.method_handlers_generic_handler``, bytes in and out, no serialisation) with a unary
    echo and a stream-stream echo of 2 MiB chunks. This process is the client:

    * ``unison push+pull``: one ``ps.push`` of an N-byte float32 gradient (SGD, lr 0: the server
      applies it) + one ``ps.pull`` of the N-byte variable into a local tensor, through
      ``RpcClient.call`` as workers call it (one unary message up to 8 MiB, 2 MiB chunks above);
    * ``unison echo``: one ``RpcClient.call`` of a tensor the server sends back (the transport
      alone: pack/unpack and chunking, no parameter store);
    * ``raw unary`` / ``raw stream``: one echo of the same N bytes (pre-built ``bytes``, 2 MiB
      pre-sliced chunks for the stream; the stream server collects the whole message, then
      answers, as a request/response has to);
    * ``raw + tensor bytes``: the same echo when the payload is a tensor (its bytes made on the way
      out, a tensor made of the reply);
    * ``raw up+down``: the two calls of a push and a pull on raw gRPC, pre-built bytes: N bytes up
      (empty reply), then N bytes down (empty request): the fastest two calls can be;
    * ``raw PS push+pull``: unison's push (applied on the server) and pull written directly on
      grpcio with the fewest copies its API allows: what unison's own layer is measured against.

    Every round moves N bytes each way; MB/s = 2N / time per round. Ratio = raw time / unison
    time against the faster raw echo (>= 1: unison as fast as raw gRPC; the issue's target is
    >= 0.8), and against each of the other raw systems.
(2) Worker scaling: steps/s of a ``ClusterCoordinator`` scheduling steps on 1 and on 2 workers of
    one ``LocalParameterServerCluster`` (1 PS, 2 workers: real ``unison server`` processes on
    loopback, one torch thread each), on an MLP 512-1024-1024-1024-10 (10.5 MB of parameters
    pulled and pushed per step) and on Keras' mnist_convnet CNN (0.14 MB, compute-bound); batch
    256, synthetic batches built on the workers; SGD. Timed: ``schedule`` of N steps until every
    result is fetched, after warm-up steps and a ``join``.
(3) Sparse vs dense embedding tables, a click-through model: tables 200k x 32 and 50k x 16 (one
    random id each per example) + 13 dense features -> MLP 61-256-64-1, batch 256, SGD. "sparse":
    the tables are ``torch.nn.Embedding`` created under ``strategy.scope()`` (a step pulls and
    pushes only its rows); "dense": the same tables as plain ``nn.Parameter`` read with
    ``F.embedding`` (pulled and pushed whole every step). Bytes per step: the workers' tensor
    payload counters (``coordinator.worker_stats()``, sent + received) over the timed steps.

    python benchmarks/parameter_server.py --repeats 5 --out benchmarks/results/parameter_server.md
    python benchmarks/parameter_server.py --quick          # smoke run (2 repeats, smaller sizes)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import secrets
import shlex
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from concurrent import futures
from typing import Any, Self

import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
RAW_SERVICE = "unison.bench.Raw"
RAW_OPTIONS = [("grpc.max_send_message_length", 1 << 30), ("grpc.max_receive_message_length", 1 << 30)]


# --- statistics and tables ----------------------------------------------------------------------
def med(xs: list[float]) -> float:
    return statistics.median(xs)


def spread(xs: list[float]) -> float:
    return (max(xs) - min(xs)) / med(xs) if len(xs) > 1 and med(xs) else 0.0


def with_spread(xs: list[float], fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(med(xs))} ±{spread(xs) * 100:.0f}%"


def ratio_cell(rs: list[float], target: float | None = None) -> str:
    cell = f"{med(rs):.2f}x ({min(rs):.2f}-{max(rs):.2f})"
    if target is not None:
        cell += " met" if med(rs) >= target else " MISSED"
    return cell


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def rotate(items: list[str], k: int) -> list[str]:
    k %= len(items)
    return items[k:] + items[:k]


# --- (1) transport --------------------------------------------------------------------------------
def serve() -> None:
    """The server process of part (1): a unison PS (+ echo) and a raw gRPC echo, until stdin closes."""
    import grpc

    from unison.comm.rpc import CHUNK_BYTES as CHUNK
    from unison.comm.rpc import RpcServer, cluster_token, keep_freed_memory
    from unison.distribute.parameter_server.store import ParameterStore

    torch.set_num_threads(1)
    keep_freed_memory()  # as a `unison server` task does (the raw gRPC servers below share the process)
    store = ParameterStore("ps:0")
    ps = RpcServer("127.0.0.1:0", {**store.handlers(), "echo": lambda h, ts: ({}, ts)}, token=cluster_token())

    def stream_echo(requests: Any, context: Any) -> Any:
        chunks = list(requests)  # the whole message first, as a request/response does
        yield from chunks

    # "raw up+down": pre-built bytes one way, an empty message the other (no tensor in sight)
    blobs: dict[bytes, list[bytes]] = {}

    def blob(request: bytes) -> list[bytes]:
        n = int(request)
        if request not in blobs:
            payload = os.urandom(n)
            blobs[request] = [payload[i : i + CHUNK] for i in range(0, n, CHUNK)] if n > UNARY_MAX else [payload]
        return blobs[request]

    def drain(requests: Any) -> bytes:
        for _ in requests:  # every chunk received, none used
            pass
        return b""

    # "raw PS": the same push (applied: var -= lr * grad) and pull written straight on grpcio
    variables: dict[int, torch.Tensor] = {}

    def apply(grad: torch.Tensor) -> bytes:
        var = variables.get(grad.numel())
        if var is None:  # the first push creates the variable (not a setdefault: no zeros per push)
            var = variables[grad.numel()] = torch.zeros_like(grad)
        var.add_(grad, alpha=-0.0)  # SGD with lr 0, as unison's push in this benchmark
        return b""

    def tensor_of(data: bytes) -> torch.Tensor:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # read-only bytes: only read here
            return torch.frombuffer(data, dtype=torch.float32)

    def var_chunks(request: bytes) -> Any:
        view = memoryview(variables[int(request) // 4].numpy()).cast("B")
        return (bytes(view[i : i + CHUNK]) for i in range(0, len(view), CHUNK))

    raw = grpc.server(futures.ThreadPoolExecutor(max_workers=16), options=RAW_OPTIONS)
    raw.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                RAW_SERVICE,
                {
                    "Echo": grpc.unary_unary_rpc_method_handler(lambda request, context: request),
                    "StreamEcho": grpc.stream_stream_rpc_method_handler(stream_echo),
                    "Up": grpc.unary_unary_rpc_method_handler(lambda request, context: b""),
                    "StreamUp": grpc.stream_unary_rpc_method_handler(lambda requests, context: drain(requests)),
                    "Down": grpc.unary_unary_rpc_method_handler(lambda request, context: blob(request)[0]),
                    "StreamDown": grpc.unary_stream_rpc_method_handler(lambda request, context: iter(blob(request))),
                    "Push": grpc.unary_unary_rpc_method_handler(lambda request, context: apply(tensor_of(request))),
                    "StreamPush": grpc.stream_unary_rpc_method_handler(
                        lambda requests, context: apply(tensor_of(b"".join(requests)))
                    ),
                    "Pull": grpc.unary_unary_rpc_method_handler(
                        lambda request, context: variables[int(request) // 4].numpy().tobytes()
                    ),
                    "StreamPull": grpc.unary_stream_rpc_method_handler(lambda request, context: var_chunks(request)),
                },
            )
        ]
    )
    raw_port = raw.add_insecure_port("127.0.0.1:0")
    raw.start()
    print(json.dumps({"ps": ps.port, "raw": raw_port}), flush=True)
    try:
        sys.stdin.read()  # the benchmark closes our stdin when it is done (or dies)
    finally:
        raw.stop(0).wait()
        ps.stop(0)


class TransportServer:
    """Starts ``--serve`` in a subprocess; stops it on exit."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.proc: subprocess.Popen | None = None
        self.ports: dict[str, int] = {}

    def __enter__(self) -> Self:
        from unison.comm.rpc import TOKEN_ENV

        env = {**os.environ, TOKEN_ENV: self.token, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the transport server exited (rc={self.proc.wait(timeout=30)}) before it served")
            self.ports = json.loads(line)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.proc = None


class TransportBench:
    """The client side of part (1): every system's time per round for one payload size."""

    def __init__(self, server: TransportServer, sizes_mb: list[int]) -> None:
        import grpc

        from unison.comm.rpc import CHUNK_BYTES, RpcClient

        self.chunk = CHUNK_BYTES
        self.client = RpcClient(f"127.0.0.1:{server.ports['ps']}", "ps:0", server.token)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{server.ports['raw']}", options=RAW_OPTIONS)
        self.raw_unary = self.channel.unary_unary(f"/{RAW_SERVICE}/Echo")
        self.raw_stream = self.channel.stream_stream(f"/{RAW_SERVICE}/StreamEcho")
        self.raw_calls = {
            name: make(f"/{RAW_SERVICE}/{name}")
            for name, make in (
                ("Up", self.channel.unary_unary),
                ("StreamUp", self.channel.stream_unary),
                ("Down", self.channel.unary_unary),
                ("StreamDown", self.channel.unary_stream),
                ("Push", self.channel.unary_unary),
                ("StreamPush", self.channel.stream_unary),
                ("Pull", self.channel.unary_unary),
                ("StreamPull", self.channel.unary_stream),
            )
        }
        if not self.client.wait_ready(60):
            raise RuntimeError("the transport server does not answer")
        g = torch.Generator().manual_seed(0)
        self.tensors, self.payloads, self.chunks, self.local = {}, {}, {}, {}
        for mb in sizes_mb:
            n = mb << 20
            t = torch.randn(n // 4, generator=g)
            self.tensors[mb] = t
            self.local[mb] = torch.empty_like(t)
            self.payloads[mb] = t.numpy().tobytes()
            self.chunks[mb] = [self.payloads[mb][i : i + CHUNK_BYTES] for i in range(0, n, CHUNK_BYTES)]
            self.round("raw PS push+pull", mb)  # the raw PS creates its variable on the first push
            name = f"w{mb}"
            self.client.call("ps.create", {"names": [name], "if_absent": False}, [torch.zeros_like(t)])
            self.client.call("ps.set_optimizer", {"names": [name], "cls": "SGD", "hyper": {"lr": 0.0}})

    def close(self) -> None:
        self.client.close()
        self.channel.close()

    def round(self, system: str, mb: int) -> None:
        n = mb << 20
        if system == "unison push+pull":
            self.client.call("ps.push", {"names": [f"w{mb}"]}, [self.tensors[mb]])
            # as a worker pulls: into its local copy of the variable
            _, out = self.client.call("ps.pull", {"names": [f"w{mb}"]}, reply_bytes=n, into=[self.local[mb]])
        elif system == "unison echo":
            _, out = self.client.call("echo", {}, [self.tensors[mb]], reply_bytes=n)
        elif system == "raw unary":
            out = [self.raw_unary(self.payloads[mb])]
        elif system == "raw stream":
            out = list(self.raw_stream(iter(self.chunks[mb])))
        elif system == "raw up+down":
            size, c = str(n).encode(), self.raw_calls
            if n <= UNARY_MAX:
                c["Up"](self.payloads[mb])
                out = [c["Down"](size)]
            else:
                c["StreamUp"](iter(self.chunks[mb]))
                out = list(c["StreamDown"](size))
        elif system == "raw PS push+pull":
            t, local, size, c = self.tensors[mb], self.local[mb], str(n).encode(), self.raw_calls
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                if n <= UNARY_MAX:
                    c["Push"](t.numpy().tobytes())
                    local.copy_(torch.frombuffer(c["Pull"](size), dtype=torch.float32))
                else:
                    view = memoryview(t.numpy()).cast("B")
                    c["StreamPush"](bytes(view[i : i + self.chunk]) for i in range(0, n, self.chunk))
                    dest, pos = memoryview(local.numpy()).cast("B"), 0
                    for chunk in c["StreamPull"](size):  # each chunk straight into the local copy
                        dest[pos : pos + len(chunk)] = chunk
                        pos += len(chunk)
                    if pos != n:
                        raise RuntimeError(f"{system}: {pos} bytes came back, expected {n}")
            out = [local]
        elif system == "raw + tensor bytes":
            # what raw gRPC costs when the payload is a tensor: bytes made from it on the way out,
            # a tensor made from the bytes on the way back (the fewest copies gRPC allows)
            t = self.tensors[mb]
            if n <= UNARY_MAX:
                reply = self.raw_unary(t.numpy().tobytes())
            else:
                view = memoryview(t.numpy()).cast("B")
                reply = b"".join(self.raw_stream(bytes(view[i : i + self.chunk]) for i in range(0, n, self.chunk)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                out = [torch.frombuffer(reply, dtype=torch.float32)]
        else:
            raise ValueError(system)
        got = out[0].nbytes if isinstance(out[0], torch.Tensor) else sum(len(c) for c in out)
        if got != n:
            raise RuntimeError(f"{system}: {got} bytes came back, expected {n}")

    def time(self, system: str, mb: int, rounds: int) -> float:
        self.round(system, mb)  # warm-up
        t0 = time.perf_counter()
        for _ in range(rounds):
            self.round(system, mb)
        return (time.perf_counter() - t0) / rounds


TRANSPORT_SYSTEMS = [
    "unison push+pull",
    "unison echo",
    "raw unary",
    "raw stream",
    "raw + tensor bytes",
    "raw up+down",
    "raw PS push+pull",
]
UNARY_MAX = 8 << 20  # unison's UNARY_MAX_BYTES: the raw tensor variant makes the same unary/stream choice


def run_transport(args: argparse.Namespace, token: str, log: Callable[[str], None]) -> list[dict]:
    from unison.comm.rpc import keep_freed_memory

    # The client is a worker in real use, a `unison server` process that keeps freed memory;
    # so is this process from here on (raw gRPC's client shares it, so both sides get the same).
    keep_freed_memory()
    reps = []
    with TransportServer(token) as server:
        bench = TransportBench(server, args.sizes_mb)
        try:
            for r in range(args.repeats):
                rep: dict[str, Any] = {"load": loadavg()}
                for mb in args.sizes_mb:
                    rounds = max(2, round(args.transport_mb / mb))
                    rep[mb] = {s: bench.time(s, mb, rounds) for s in rotate(TRANSPORT_SYSTEMS, r)}
                    rep[mb]["rounds"] = rounds
                log(
                    f"  transport repeat {r}: "
                    + ", ".join(
                        f"{mb} MB " + "/".join(f"{rep[mb][s] * 1e3:.0f}" for s in TRANSPORT_SYSTEMS) + " ms"
                        for mb in args.sizes_mb
                    )
                )
                reps.append(rep)
        finally:
            bench.close()
    return reps


def report_transport(reps: list[dict], args: argparse.Namespace) -> str:
    rows = []
    for mb in args.sizes_mb:
        n = mb << 20
        best_raw = [min(r[mb]["raw unary"], r[mb]["raw stream"]) for r in reps]
        for s in TRANSPORT_SYSTEMS:
            ts = [r[mb][s] for r in reps]
            mbps = [2 * n / t / 1e6 for t in ts]
            if s.startswith("unison"):
                vs = ratio_cell([b / t for b, t in zip(best_raw, ts)], 0.8 if s == "unison push+pull" else None)
                others = [
                    ratio_cell([r[mb][base] / t for r, t in zip(reps, ts)])
                    for base in ("raw + tensor bytes", "raw up+down", "raw PS push+pull")
                ]
            else:
                vs, others = "-", ["-"] * 3
            rows.append(
                [
                    f"{mb} MB ({reps[0][mb]['rounds']} rounds)",
                    s,
                    with_spread([t * 1e3 for t in ts]),
                    with_spread(mbps, "{:.0f}"),
                    vs,
                    *others,
                ]
            )
    out = [
        "### (1) Transport: N bytes each way per round, one client, server in another process (loopback)\n",
        table(
            [
                "payload N",
                "system",
                "ms per round",
                "MB/s (2N / time)",
                "raw / unison vs faster raw echo (target >= 0.8)",
                "vs raw + tensor bytes",
                "vs raw up+down",
                "vs raw PS push+pull",
            ],
            rows,
        ),
        (
            "\nunison push+pull = `ps.push` (SGD lr 0, applied on the server) + `ps.pull` into the client's "
            "copy of the variable, two `RpcClient.call`s as a worker makes them (one unary message up to 8 MiB, "
            "2 MiB chunks above), N bytes each way in all; unison echo = one such call answered by a "
            "handler returning its tensors; raw unary / raw stream = a gRPC echo of the same N bytes with "
            "identity serialisers (unary: one message, max sizes raised to 1 GiB; stream: pre-sliced 2 MiB "
            "chunks, the server collects them all and sends them back); raw + tensor bytes = the same echo when the "
            "payload is a tensor: `tobytes()` (unary, up to 8 MiB) or 2 MiB `bytes` slices of it (stream) on the way "
            "out, `torch.frombuffer` of the (joined) reply on the way back, the fewest copies gRPC's Python API "
            "allows; raw up+down = the two calls a worker makes, on raw gRPC with pre-built bytes: N bytes up with an "
            "empty reply, then an empty request answered with N bytes (unary up to 8 MiB, pre-sliced 2 MiB chunks "
            "above), the fastest any push-then-pull can be on grpcio; raw PS push+pull = unison's two calls written "
            "directly on grpcio with the fewest copies it allows: the gradient's bytes up (`tobytes()` / 2 MiB "
            "slices), the server makes a tensor of them (`frombuffer`, joined first when streamed) and applies "
            "`var.add_(grad, alpha=-lr)`, then the variable's bytes back, written into the client's copy (it takes no "
            "lock, slices a streamed reply while sending it and joins a streamed push before using it, where unison "
            "packs a pull under the shard's lock, for a consistent value, and copies a push chunk by chunk as it "
            "arrives). "
            "unison's calls are authenticated both ways with the "
            "cluster token (`UNISON_CLUSTER_TOKEN`, never sent: an HMAC over the call's metadata checked by an "
            "interceptor before the body is read, and a Poly1305 tag on every chunk of the request and the reply, "
            "see docs/security.md); raw gRPC has no authentication. "
            "Ratios: median of per-repeat ratios (min-max); >= 1 means unison is as fast as raw gRPC. "
            "Time per round = mean over the rounds of a repeat (after one warm-up round). Both processes keep "
            "freed memory (`unison.comm.rpc.keep_freed_memory`, as every `unison server` task does), for unison "
            "and raw gRPC alike.\n"
        ),
    ]
    return "\n".join(out)


# --- (2), (3) training on a LocalParameterServerCluster ----------------------------------------------
class DenseTable(nn.Module):
    """An embedding table as a plain dense parameter: unison pulls and pushes it whole."""

    def __init__(self, rows: int, dim: int) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.randn(rows, dim))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.table)


class CTRModel(nn.Module):
    """Click-through model: two embedding tables + dense features -> MLP -> one logit."""

    def __init__(self, tables: list[tuple[int, int]], dense_features: int, sparse: bool) -> None:
        super().__init__()
        self.tables = nn.ModuleList([nn.Embedding(r, d) if sparse else DenseTable(r, d) for r, d in tables])
        width = sum(d for _, d in tables) + dense_features
        self.mlp = nn.Sequential(nn.Linear(width, 256), nn.ReLU(), nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, ids: list[torch.Tensor], dense: torch.Tensor) -> torch.Tensor:
        h = torch.cat([t(i) for t, i in zip(self.tables, ids)] + [dense], dim=1)
        return self.mlp(h).squeeze(1)


def build_mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(512, 1024),
        nn.ReLU(),
        nn.Linear(1024, 1024),
        nn.ReLU(),
        nn.Linear(1024, 1024),
        nn.ReLU(),
        nn.Linear(1024, 10),
    )


def build_cnn() -> nn.Module:  # Keras' mnist_convnet
    return nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.5),
        nn.Linear(1600, 10),
    )


def fixed_batches_fn(shape: tuple[int, ...], batch: int, classes: int = 10, count: int = 4) -> Callable:
    """A dataset_fn: ``count`` random batches built on the worker, cycled forever."""

    def dataset_fn(ctx: Any) -> Any:
        g = torch.Generator().manual_seed(ctx.input_pipeline_id)
        batches = [
            (torch.randn(batch, *shape, generator=g), torch.randint(0, classes, (batch,), generator=g))
            for _ in range(count)
        ]

        def gen() -> Any:
            while True:
                yield from batches

        return gen()

    return dataset_fn


def ctr_batches_fn(tables: list[tuple[int, int]], dense_features: int, batch: int) -> Callable:
    """A dataset_fn: fresh random ids, features and click labels every step."""

    def dataset_fn(ctx: Any) -> Any:
        g = torch.Generator().manual_seed(100 + ctx.input_pipeline_id)

        def gen() -> Any:
            while True:
                ids = [torch.randint(0, rows, (batch,), generator=g) for rows, _ in tables]
                yield (
                    ids,
                    torch.randn(batch, dense_features, generator=g),
                    torch.randint(0, 2, (batch,), generator=g).float(),
                )

        return gen()

    return dataset_fn


def classifier_step(model: nn.Module, optimizer: Any, strategy: Any) -> Callable:
    def step_fn(iterator: Any) -> torch.Tensor:
        def replica_fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss.detach()

        x, y = next(iterator)
        return strategy.run(replica_fn, args=(x, y))

    return step_fn


def ctr_step(model: nn.Module, optimizer: Any, strategy: Any) -> Callable:
    def step_fn(iterator: Any) -> torch.Tensor:
        def replica_fn(ids: list[torch.Tensor], dense: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            loss = F.binary_cross_entropy_with_logits(model(ids, dense), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss.detach()

        ids, dense, y = next(iterator)
        return strategy.run(replica_fn, args=(ids, dense, y))

    return step_fn


def resolver_for(cluster: Any, workers: int) -> Any:
    """The chief's view of ``cluster`` restricted to its first ``workers`` workers."""
    from unison.cluster import ClusterSpec, SimpleClusterResolver

    spec = dict(cluster.cluster)
    spec["worker"] = spec["worker"][:workers]
    return SimpleClusterResolver(ClusterSpec(spec), task_type="chief", task_id=0, rpc_layer="grpc")


def retire(coordinator: Any, strategy: Any) -> None:
    """Stop a coordinator's threads and close the strategy's PS channels before the next one starts."""
    if coordinator is not None:
        coordinator.shutdown()
    for client in getattr(strategy, "_ps", []):  # the strategy has no close() of its own
        client.close()


def bytes_moved(coordinator: Any) -> int:
    stats = coordinator.worker_stats()
    down = [s["task"] for s in stats if not s.get("available", True)]
    if down:
        raise RuntimeError(f"worker(s) {down} did not answer worker_stats(): bytes per step would be wrong")
    return sum(s["bytes_sent"] + s["bytes_received"] for s in stats)


def measure(
    cluster: Any,
    workers: int,
    build: Callable[[], nn.Module],
    dataset_fn: Callable,
    make_step: Callable,
    warmup: int,
    steps: int,
) -> dict:
    """steps/s and bytes/step of ``steps`` scheduled steps on the first ``workers`` workers."""
    import unison as tf

    strategy = tf.distribute.ParameterServerStrategy(resolver_for(cluster, workers))
    coordinator = None
    try:
        torch.manual_seed(0)
        with strategy.scope():
            model = build()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
        iterator = iter(
            coordinator.create_per_worker_dataset(lambda: strategy.distribute_datasets_from_function(dataset_fn))
        )
        step_fn = make_step(model, optimizer, strategy)
        for _ in range(warmup * workers):
            coordinator.schedule(step_fn, args=(iterator,))
        coordinator.join()
        b0 = bytes_moved(coordinator)
        t0 = time.perf_counter()
        results = [coordinator.schedule(step_fn, args=(iterator,)) for _ in range(steps)]
        losses = [float(r.fetch()) for r in results]
        elapsed = time.perf_counter() - t0
        b1 = bytes_moved(coordinator)
        coordinator.join()
        return {
            "steps": steps,
            "s": elapsed,
            "steps_per_s": steps / elapsed,
            "bytes_per_step": (b1 - b0) / steps,
            "final_loss": losses[-1],
            "params_bytes": sum(p.nbytes for p in model.parameters()),
        }
    finally:
        retire(coordinator, strategy)


SCALING_MODELS = {"mlp": "MLP 512-1024-1024-1024-10", "cnn": "mnist_convnet CNN"}
CTR_SYSTEMS = ["sparse", "dense"]
WARMUP = 2  # untimed steps per worker before each measurement


def run_cluster_parts(args: argparse.Namespace, log: Callable[[str], None]) -> tuple[list[dict], list[dict]]:
    from unison.testing.ps_cluster import LocalParameterServerCluster

    batch = args.batch
    scaling = {
        "mlp": (build_mlp, fixed_batches_fn((512,), batch), args.mlp_steps),
        "cnn": (build_cnn, fixed_batches_fn((1, 28, 28), batch), args.cnn_steps),
    }
    tables = [(args.table_rows[0], 32), (args.table_rows[1], 16)]
    ctr_data = ctr_batches_fn(tables, 13, batch)
    ctr = {
        "sparse": (lambda: CTRModel(tables, 13, sparse=True), args.sparse_steps),
        "dense": (lambda: CTRModel(tables, 13, sparse=False), args.dense_steps),
    }
    systems = [f"{m}/{w}w" for m in args.models for w in (1, 2)] + [f"ctr/{s}" for s in args.ctr_systems]
    scale_reps, ctr_reps = [], []
    with LocalParameterServerCluster(num_workers=2, num_ps=1) as cluster:
        for r in range(args.repeats):
            srep: dict[str, Any] = {"load": loadavg()}
            crep: dict[str, Any] = {"load": srep["load"]}
            for system in rotate(systems, r):
                kind, which = system.split("/")
                t0 = time.perf_counter()
                if kind == "ctr":
                    build, steps = ctr[which]
                    res = measure(cluster, args.ctr_workers, build, ctr_data, ctr_step, WARMUP, steps)
                    crep[which] = res
                else:
                    build, data, steps = scaling[kind]
                    workers = int(which[0])
                    res = measure(cluster, workers, build, data, classifier_step, WARMUP, steps)
                    srep.setdefault(kind, {})[workers] = res
                log(
                    f"  repeat {r} {system}: {res['steps_per_s']:.2f} steps/s, "
                    f"{res['bytes_per_step'] / 1e6:.3f} MB/step ({time.perf_counter() - t0:.1f}s)"
                )
            scale_reps.append(srep)
            ctr_reps.append(crep)
    return scale_reps, ctr_reps


def report_scaling(reps: list[dict], args: argparse.Namespace) -> str:
    rows = []
    for m in args.models:
        r0 = reps[0][m]
        one = [r[m][1]["steps_per_s"] for r in reps]
        two = [r[m][2]["steps_per_s"] for r in reps]
        speedup = [r[m][2]["steps_per_s"] / r[m][1]["steps_per_s"] for r in reps]
        rows.append(
            [
                f"{SCALING_MODELS[m]} ({r0[1]['params_bytes'] / 1e6:.2f} MB params, {r0[1]['steps']} steps)",
                with_spread(one, "{:.2f}"),
                with_spread(two, "{:.2f}"),
                ratio_cell(speedup),
                f"{med([r[m][1]['bytes_per_step'] for r in reps]) / 1e6:.2f}",
                f"{med([r[m][1]['s'] / r[m][1]['steps'] for r in reps]) * 1e3:.0f}",
                f"{med([r[m][2]['s'] / r[m][2]['steps'] for r in reps]) * 1e3:.0f}",
            ]
        )
    return "\n".join(
        [
            f"### (2) Worker scaling: steps/s, 1 PS, batch {args.batch} per step, SGD\n",
            table(
                [
                    "model",
                    "1 worker steps/s",
                    "2 workers steps/s",
                    "speedup 2w/1w",
                    "MB/step (pull + push)",
                    "ms/step 1w",
                    "ms/step 2w",
                ],
                rows,
            ),
            (
                f"\nOne cluster (1 PS + 2 workers, `unison server` processes, OMP_NUM_THREADS=1) for the whole run; "
                f"each measurement is a fresh strategy + coordinator (a new session) using the first 1 or 2 workers. "
                f"Timed: scheduling the steps until every result is fetched, after {WARMUP} warm-up steps per worker "
                f"and a join. The PS, the workers and this coordinator share the machine's {os.cpu_count()} CPUs, "
                "which bounds the speedup. Speedup: median of per-repeat ratios (min-max).\n"
            ),
        ]
    )


def report_ctr(reps: list[dict], args: argparse.Namespace) -> str:
    rows = []
    for s in CTR_SYSTEMS:
        sps = [r[s]["steps_per_s"] for r in reps]
        bps = [r[s]["bytes_per_step"] for r in reps]
        rows.append(
            [
                s,
                f"{reps[0][s]['steps']}",
                with_spread(sps, "{:.2f}"),
                f"{med(bps) / 1e6:.3f}",
                f"{reps[0][s]['params_bytes'] / 1e6:.1f}",
            ]
        )
    bytes_ratio = [r["dense"]["bytes_per_step"] / r["sparse"]["bytes_per_step"] for r in reps]
    speed_ratio = [r["sparse"]["steps_per_s"] / r["dense"]["steps_per_s"] for r in reps]
    (a, b) = args.table_rows
    return "\n".join(
        [
            f"### (3) Sparse vs dense embedding tables: click-through model, {args.ctr_workers} worker(s), 1 PS\n",
            table(["tables", "timed steps", "steps/s", "MB per step (sent + received)", "model MB"], rows),
            (
                f"\ndense / sparse bytes per step: {ratio_cell(bytes_ratio)}; sparse / dense steps/s: "
                f"{ratio_cell(speed_ratio)}.\n"
            ),
            (
                f"Model: tables {a:,} x 32 and {b:,} x 16 (one random id per example each) + 13 dense features -> "
                f"MLP 61-256-64-1, batch {args.batch}, SGD lr 0.01. sparse = `torch.nn.Embedding` under "
                "`strategy.scope()` (`ps.pull_rows` / `ps.push_rows` of the touched rows); dense = the same tables as "
                "`nn.Parameter` read with `F.embedding` (a dense variable: `ps.pull` / `ps.push` of the whole table). "
                "Bytes: tensor payloads the workers sent to and received from the PS (`coordinator.worker_stats()` "
                "deltas over the timed steps, ids included; headers and gRPC framing not counted).\n"
            ),
        ]
    )


# --- main ---------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=None, help="default 5 (2 with --quick)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 2 repeats, 4/16 MB, fewer steps, smaller tables")
    ap.add_argument("--parts", default="transport,scaling,ctr", help="comma list of transport, scaling, ctr")
    ap.add_argument("--sizes-mb", default=None, help="transport payloads in MiB (default 4,64; --quick 4,16)")
    ap.add_argument(
        "--transport-mb",
        type=float,
        default=None,
        help="MiB moved per system, size and repeat (rounds = this / size, at least 2); default 640",
    )
    ap.add_argument("--models", default="mlp,cnn", help="scaling models: mlp, cnn")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps-scale", type=float, default=None, help="multiply every timed step count (--quick 0.4)")
    ap.add_argument("--ctr-workers", type=int, default=1, choices=(1, 2))
    ap.add_argument("--out", help="write the markdown report here")
    ap.add_argument("--json", help="write every raw measurement here")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve()
        return 0
    argv = sys.argv[1:] if argv is None else argv
    command = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(os.path.abspath(__file__)), *argv])
    args.repeats = args.repeats or (2 if args.quick else 5)
    args.sizes_mb = [int(x) for x in (args.sizes_mb or ("4,16" if args.quick else "4,64")).split(",")]
    args.transport_mb = args.transport_mb or (64.0 if args.quick else 640.0)
    scale = args.steps_scale or (0.4 if args.quick else 1.0)
    args.mlp_steps, args.cnn_steps = max(4, int(40 * scale)), max(4, int(16 * scale))
    args.sparse_steps, args.dense_steps = max(4, int(100 * scale)), max(4, int(12 * scale))
    args.table_rows = (50_000, 20_000) if args.quick else (200_000, 50_000)
    args.models = [m for m in args.models.split(",") if m]
    parts = [p for p in args.parts.split(",") if p]
    for p in parts:
        if p not in ("transport", "scaling", "ctr"):
            ap.error(f"unknown part {p!r}")
    for m in args.models:
        if m not in SCALING_MODELS:
            ap.error(f"unknown model {m!r}")
    if "scaling" not in parts:
        args.models = []
    args.ctr_systems = CTR_SYSTEMS if "ctr" in parts else []

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    torch.set_num_threads(1)  # the coordinator/client: the workers and servers run one thread each too
    started = datetime.datetime.now()
    token = secrets.token_hex(16)
    transport = scaling = ctr = None
    if "transport" in parts:
        transport = run_transport(args, token, log)
    if "scaling" in parts or "ctr" in parts:
        scaling, ctr = run_cluster_parts(args, log)
    import grpc

    loads = [r["load"] for r in (transport or []) + (scaling or []) if r.get("load") is not None]
    header = [
        f"command: `{command}`",
        f"date: {started:%Y-%m-%d %H:%M} (took {(datetime.datetime.now() - started).total_seconds() / 60:.1f} min)",
        (
            f"machine: {platform.node()}, {os.cpu_count()} CPUs, {platform.platform()}, Python "
            f"{platform.python_version()}, torch {torch.__version__}, grpcio {grpc.__version__}, loopback"
        ),
        f"1-min load average at the start of each repeat: {', '.join(f'{x:.1f}' for x in loads)}",
        f"repeats: {args.repeats} (systems in an order rotated each repeat); cells: median ±spread",
    ]
    sections = []
    if transport:
        sections.append(report_transport(transport, args))
    if scaling and args.models:
        sections.append(report_scaling(scaling, args))
    if ctr and args.ctr_systems:
        sections.append(report_ctr(ctr, args))
    text = "\n".join(f"- {h}" for h in header) + "\n\n" + "\n".join(sections)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(f"# ParameterServerStrategy benchmark\n\n{text}")
    if args.json:

        def plain(reps: Any) -> Any:
            return json.loads(json.dumps(reps, default=str))

        with open(args.json, "w") as f:
            json.dump(
                {
                    "command": command,
                    "header": header,
                    "transport": plain(transport),
                    "scaling": plain(scaling),
                    "ctr": plain(ctr),
                },
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
