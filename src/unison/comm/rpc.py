"""gRPC transport for parameter-server traffic: tensors as raw buffers, large messages in chunks.

A message is a small JSON header plus a list of tensors. On the wire it is one byte stream:
``[u32 header length][header JSON][raw bytes of every tensor, back to back]``; the header lists
each tensor's dtype and shape, so the receiver rebuilds them from the bytes without pickle.
Messages up to :data:`UNARY_MAX_BYTES` travel in one unary call (decoded as views of the
received bytes); larger ones are streamed in :data:`CHUNK_BYTES` chunks (a 64 MB tensor never
has to fit in one gRPC message). A reply can be written straight into the caller's tensors
(``into=``), which is how workers refresh their copies of the variables.

Calls are authenticated both ways with the cluster's shared token (``UNISON_CLUSTER_TOKEN``),
which never travels (:mod:`unison.comm.auth`): the server checks the call's metadata before it
reads the request body, and refuses a call that does not prove its sender holds the token with
``UNAUTHENTICATED``, its body unread; every reply chunk carries a tag bound to the call, which
the client checks before it decodes anything. TLS is optional, through gRPC's own credentials
(:class:`TlsConfig`).

Example:
    >>> import torch
    >>> token = generate_token()
    >>> server = RpcServer("127.0.0.1:0", {"echo": lambda h, ts: ({"n": len(ts)}, ts)}, token=token)
    >>> client = RpcClient(f"127.0.0.1:{server.port}", task="ps:0", token=token)
    >>> header, tensors = client.call("echo", {}, [torch.arange(3.0)])
    >>> header["n"], tensors[0].tolist()
    (1, [0.0, 1.0, 2.0])
    >>> client.close(); server.stop()
"""

from __future__ import annotations

import ctypes
import ctypes.util
import ipaddress
import itertools
import json
import math
import os
import struct
import traceback
import warnings
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent import futures
from typing import Any

import grpc
import torch

from unison.comm import auth
from unison.comm.auth import TOKEN_ENV, generate_token
from unison.comm.tls import TlsConfig
from unison.errors import RemoteError, TaskUnavailableError, UnauthenticatedError, UnisonError

CHUNK_BYTES = 2 << 20
# Messages up to this size travel in one unary call; bigger ones stream in CHUNK_BYTES chunks
# (measured on loopback: unary is faster for a few MB, chunked streaming from about 16 MB on).
UNARY_MAX_BYTES = 8 << 20
_MAX_MESSAGE = 1 << 30  # a unary reply (e.g. a scheduled function's result) may exceed a chunk
_PREFIX = struct.Struct("<I")
# Unary messages are decoded as views of their received bytes (see unpack): torch warns that
# bytes are read-only; the views belong to that one message, so the warning says nothing here.
warnings.filterwarnings("ignore", message="The given buffer is not writable", category=UserWarning, module=__name__)
_SERVICE = "unison.Task"

# handler(header, tensors) -> (header, tensors) or (header, tensors, release): ``release()`` runs
# once the reply's bytes are packed (a parameter server holds a shard's lock until then, so a
# pull sends a consistent value without copying it first).
Handler = Callable[[dict, list[torch.Tensor]], tuple[Any, ...]]

# Keepalive finds a peer that vanished without closing its connection (a cut cable, a frozen
# host); short reconnect backoff lets a restarted task be used again within a second or so.
_CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", _MAX_MESSAGE),
    ("grpc.max_receive_message_length", _MAX_MESSAGE),
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1_000),
]
_SERVER_OPTIONS = [
    ("grpc.max_send_message_length", _MAX_MESSAGE),
    # requests are unary up to UNARY_MAX_BYTES, chunks of CHUNK_BYTES above: a larger message is
    # not one of ours, and a refused caller cannot make the server take in more than this
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 5_000),
    ("grpc.so_reuseport", 0),  # a second server on the same address is an error, not a silent split
]


# statuses (and details of UNKNOWN) that mean the connection to the task is gone, not a refusal
_LOST = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.ABORTED)
_LOST_DETAILS = ("Stream removed", "Socket closed", "Connection reset", "failed to connect")


class InsecureTransportWarning(UserWarning):
    """A server listens on a non-loopback address without TLS: its traffic can be read and cut."""


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse instead of returning it to the OS (once per process).

    A task moves multi-megabyte messages all the time; by default glibc serves each with a fresh
    ``mmap`` and returns it when freed, so every message faults new pages in, which costs more
    than the copies themselves on virtual machines (64 MB: 170 ms of page faults vs 23 ms with
    the memory kept, measured here). One arena for all threads: gRPC's handler threads would
    otherwise get arenas of their own, whose large blocks are always fresh mappings (a 64 MB
    message decoded in a handler thread: 73-91 ms, 20 ms with one arena). ``unison server``
    processes call this first thing; the price is that a task's memory stays at its peak. That
    peak is set by authenticated calls only: a refused call's body is never read (see
    ``_CallCheck``), so an unauthenticated peer cannot inflate the memory a task keeps.
    Returns False where glibc's ``mallopt`` is not available.
    """
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        mallopt = None
    if mallopt is None:
        return False
    m_trim_threshold, m_top_pad, m_mmap_threshold, m_arena_max = -1, -2, -3, -8
    return all(
        mallopt(opt, value) == 1
        for opt, value in (
            (m_arena_max, 1),
            (m_mmap_threshold, 1 << 30),
            (m_trim_threshold, 1 << 30),
            (m_top_pad, 256 << 20),
        )
    )


def cluster_token(token: str | None = None) -> str | None:
    """The shared token: the argument if given, else ``$UNISON_CLUSTER_TOKEN``, else ``None``.

    Raises:
        WeakTokenError: the token has less than 128 bits of entropy (see :func:`auth.check_token`).
    """
    token = token if token is not None else os.environ.get(TOKEN_ENV)
    return auth.check_token(token) if token else None


def _is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name, or 0.0.0.0 / [::]: reachable from other hosts


# --- the wire format -------------------------------------------------------------------------
def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"Unknown tensor dtype {name!r} in a message.")
    return dtype


def _raw_bytes(t: torch.Tensor) -> memoryview:
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if not t.is_contiguous():
        t = t.contiguous()
    if t.numel() == 0:
        return memoryview(b"")
    if t.dim() == 0:
        t = t.reshape(1)
    # numpy's stubs declare ndarray's buffer protocol for Python >= 3.12 only (it has it on every version)
    return memoryview(t.view(torch.uint8).numpy()).cast("B")  # type: ignore[arg-type]


def pack(header: dict, tensors: Sequence[torch.Tensor] = (), chunk_bytes: int | None = CHUNK_BYTES) -> list[bytes]:
    """Encode a message as chunks of at most ``chunk_bytes`` (``None``: one chunk, a unary message).

    The header always travels whole in the first chunk (a header larger than a chunk gets a chunk
    of its own); tensor bytes follow, cut at chunk boundaries.
    """
    return list(iter_pack(header, tensors, chunk_bytes))


def iter_pack(
    header: dict, tensors: Sequence[torch.Tensor] = (), chunk_bytes: int | None = CHUNK_BYTES
) -> Iterator[bytes]:
    """:func:`pack`, one chunk at a time: gRPC sends a chunk while the next one is cut.

    The header and the tensors' byte views are made before the first chunk is asked for, so a
    message that cannot be encoded fails here, in the caller, not later inside gRPC.
    """
    head = json.dumps(
        {**header, "_t": [[_dtype_name(t.dtype), list(t.shape)] for t in tensors]}, separators=(",", ":")
    ).encode()
    raws = [_raw_bytes(t) for t in tensors]
    return _chunks([_PREFIX.pack(len(head)), head], raws, chunk_bytes)


def _chunks(parts: list[Any], raws: list[memoryview], chunk_bytes: int | None) -> Iterator[bytes]:
    if chunk_bytes is None:
        yield b"".join([*parts, *raws])
        return
    size = sum(len(p) for p in parts)
    sent = False
    if size >= chunk_bytes:
        yield b"".join(parts)
        parts, size, sent = [], 0, True
    for raw in raws:
        while len(raw):
            take = min(chunk_bytes - size, len(raw))
            parts.append(raw[:take])
            raw, size = raw[take:], size + take
            if size == chunk_bytes:
                yield b"".join(parts)
                parts, size, sent = [], 0, True
    if parts or not sent:
        yield b"".join(parts)


def unpack(chunks: Iterable[bytes], into: Sequence[torch.Tensor] | None = None) -> tuple[dict, list[torch.Tensor]]:
    """Decode the chunks of one message into ``(header, tensors)``.

    With ``into`` (tensors of the expected dtypes and shapes, e.g. the variables a pull refreshes)
    the bytes are written straight into them and they are returned: no buffer is allocated.
    Otherwise a single-chunk message is decoded into views of its bytes, and a chunked one into
    one new buffer.
    """
    it = iter(chunks)
    first = next(it)
    (n,) = _PREFIX.unpack_from(first)
    header = json.loads(bytes(first[_PREFIX.size : _PREFIX.size + n]))
    metas = header.pop("_t", [])
    specs = [(_dtype(d), tuple(shape)) for d, shape in metas]
    if into is not None and "_error" not in header:
        return header, _unpack_into(specs, memoryview(first)[_PREFIX.size + n :], it, into)
    sizes = [math.prod(shape) * dt.itemsize for dt, shape in specs]
    start = _PREFIX.size + n
    rest = next(it, None)
    if rest is None and isinstance(first, (bytes, memoryview)):
        # One message (a unary call): the tensors are views of the received bytes, no copy. They
        # belong to this message alone, so writing to them (torch warns that bytes are read-only)
        # changes nothing anyone else sees.
        if len(first) - start != sum(sizes):
            raise ValueError(f"Truncated message: expected {sum(sizes)} tensor bytes, received {len(first) - start}.")
        return header, _views(first, start, specs, sizes)
    # uninitialised (a bytearray would zero 64 MB first, 1.8 ms here): every byte is written below
    buf = memoryview(torch.empty(sum(sizes), dtype=torch.uint8).numpy())  # type: ignore[arg-type]  # as in _raw_bytes
    head = memoryview(first)[start:]
    offset = len(head)
    buf[:offset] = head
    for chunk in itertools.chain([] if rest is None else [rest], it):
        if offset + len(chunk) > len(buf):
            raise ValueError(f"The message holds more than the {len(buf)} tensor bytes its header announces.")
        buf[offset : offset + len(chunk)] = chunk
        offset += len(chunk)
    if offset != len(buf):
        raise ValueError(f"Truncated message: expected {len(buf)} tensor bytes, received {offset}.")
    return header, _views(buf, 0, specs, sizes)


def _views(
    buf: Any, offset: int, specs: list[tuple[torch.dtype, tuple[int, ...]]], sizes: list[int]
) -> list[torch.Tensor]:
    tensors = []
    for (dt, shape), size in zip(specs, sizes):
        if size == 0:
            tensors.append(torch.empty(shape, dtype=dt))
        else:
            flat = torch.frombuffer(buf, dtype=dt, count=size // dt.itemsize, offset=offset)
            tensors.append(flat if len(shape) == 1 else flat.reshape(shape))
        offset += size
    return tensors


def _unpack_into(
    specs: list[tuple[torch.dtype, tuple[int, ...]]],
    rest: memoryview,
    it: Iterator[bytes],
    into: Sequence[torch.Tensor],
) -> list[torch.Tensor]:
    if len(into) != len(specs) or any(
        t.dtype != dt or tuple(t.shape) != shape or not t.is_contiguous() for t, (dt, shape) in zip(into, specs)
    ):
        raise ValueError(
            f"The reply holds {[(str(d), s) for d, s in specs]}, which does not match the "
            f"destination tensors {[(str(t.dtype), tuple(t.shape)) for t in into]}."
        )
    targets = [_raw_bytes(t) for t in into]
    i, pos = 0, 0
    pieces: Iterator[memoryview | bytes] = itertools.chain([rest], it)
    for piece in pieces:
        data = memoryview(piece)
        while len(data):
            while i < len(targets) and pos == len(targets[i]):
                i, pos = i + 1, 0
            if i == len(targets):
                raise ValueError("The reply holds more bytes than its header announces.")
            take = min(len(targets[i]) - pos, len(data))
            targets[i][pos : pos + take] = data[:take]
            pos += take
            data = data[take:]
    while i < len(targets) and pos == len(targets[i]):
        i, pos = i + 1, 0
    if i != len(targets):
        raise ValueError("Truncated message: the reply ended before its last tensor.")
    return list(into)


# --- server --------------------------------------------------------------------------------
_REFUSAL_HINT = "set UNISON_CLUSTER_TOKEN to the same value on every task of the cluster"


class _ChunkRefused(Exception):
    """A request chunk failed its authentication tag (raised inside the request iterator)."""


class _CallCheck(grpc.ServerInterceptor):
    """Refuse a call whose metadata does not prove the token, before its body is read.

    The refusal is a streaming handler that never asks for a request message: gRPC then never
    assembles the body (not even of a unary call), so a refused peer makes this process hold
    no more than HTTP/2's flow-control window of its bytes.
    """

    def __init__(self, key: bytes | None, task: str | None) -> None:
        self.verifier = auth.CallVerifier(key, task) if key is not None else None
        self.refused = 0

    def intercept_service(self, continuation: Any, details: grpc.HandlerCallDetails) -> Any:
        if self.verifier is None:
            return continuation(details)
        try:
            self.verifier.verify(
                details.method, {k: v for k, v in details.invocation_metadata or () if isinstance(v, str)}
            )
            return continuation(details)
        except ValueError as exc:
            reason = str(exc)
        self.refused += 1

        def refuse(requests: Any, context: grpc.ServicerContext) -> Any:
            context.abort(
                grpc.StatusCode.UNAUTHENTICATED, f"missing or wrong cluster token ({reason}): {_REFUSAL_HINT}"
            )

        return grpc.stream_stream_rpc_method_handler(refuse)


def _metadata(context: grpc.ServicerContext) -> dict[str, str]:
    return {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}


class RpcServer:
    """A gRPC server that dispatches messages to ``handlers[header["op"]]``.

    Args:
        address: ``"host:port"`` to bind, exactly (port 0: any free port, see ``port``).
        handlers: op name -> ``handler(header, tensors) -> (header, tensors)``. An exception in a
            handler travels back to the caller as :class:`RemoteError` with its traceback.
        token: the shared cluster token (at least 128 bits); ``None`` accepts every call and
            signs no reply (loopback tests only; ``unison server`` never runs without one).
        tls: serve TLS with these files.
        max_workers: handler threads.
        task: this server's task name (e.g. ``"ps:0"``): a call meant for another task is
            refused, and replies are bound to it. ``None``: any name the caller uses.
    """

    def __init__(
        self,
        address: str,
        handlers: dict[str, Handler],
        token: str | None = None,
        tls: TlsConfig | None = None,
        max_workers: int = 16,
        task: str | None = None,
        allow_unauthenticated: bool = False,
    ) -> None:
        self._handlers = dict(handlers)
        self.decoded = 0  # messages decoded (tests check that refused calls add nothing)
        token = auth.check_token(token) if token else None
        if token is None and not allow_unauthenticated:
            # Handlers decode what they receive (a worker's unpickles functions): without a token
            # anyone who reaches the port would be believed. Only a measurement opts out.
            raise ValueError(
                f"RpcServer at {address!r} needs the cluster token: every call is authenticated with it "
                f"before its body is decoded. {auth.GOOD_TOKEN_HINT} (allow_unauthenticated=True exists "
                "for benchmarks of the transport alone; never use it for a server that runs handlers.)"
            )
        self._key = auth.derive_key(token) if token else None
        self._check = _CallCheck(self._key, task)
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="unison-rpc"),
            interceptors=[self._check],
            options=_SERVER_OPTIONS,
        )
        self._server.add_generic_rpc_handlers(
            [
                grpc.method_handlers_generic_handler(
                    _SERVICE,
                    {
                        "Call": grpc.unary_unary_rpc_method_handler(self._unary),
                        "Stream": grpc.stream_stream_rpc_method_handler(self._stream),
                    },
                )
            ]
        )
        try:
            if tls is not None:
                port = self._server.add_secure_port(address, tls.server_credentials())
            else:
                port = self._server.add_insecure_port(address)
        except RuntimeError:
            port = 0
        if not port:
            raise OSError(
                f"Could not bind {address!r}: the address is in use or not an address of this host. "
                "Check the cluster spec's entry for this task, or stop the process that holds the port."
            )
        if tls is None and not _is_loopback(address):
            warnings.warn(
                f"unison serves {task or 'a task'} on {address} without TLS: other hosts can reach it, and "
                "anyone on the network path can read (though not forge) its traffic. On a network you do "
                "not trust, make certificates with `unison certs` and set UNISON_TLS_CERT, UNISON_TLS_KEY "
                "and UNISON_TLS_CA (see docs/security.md).",
                InsecureTransportWarning,
                stacklevel=2,
            )  # once per address
        self.port = port
        self._server.start()

    @property
    def refused(self) -> int:
        """Calls refused before their body was read (missing or wrong authentication)."""
        return self._check.refused

    def _verified(self, chunks: Iterable[bytes], nonce: bytes) -> Iterator[memoryview]:
        for i, chunk in enumerate(chunks):
            try:
                yield auth.verify_chunk(self._key, b"req", nonce, i, chunk)  # type: ignore[arg-type]
            except ValueError as exc:
                raise _ChunkRefused(str(exc)) from None

    def _signed(self, chunks: Iterable[bytes], nonce: bytes, me: bytes) -> Iterator[bytes]:
        for i, chunk in enumerate(chunks):
            yield auth.chunk_tag(self._key, b"rep", nonce, i, chunk, me) + chunk  # type: ignore[arg-type]

    def _dispatch(self, chunks: Iterable[Any], chunk_bytes: int | None) -> Iterable[bytes]:
        try:
            header, tensors = unpack(chunks)
            self.decoded += 1
            op = header.pop("op", None)
            handler = self._handlers.get(op)
            if handler is None:
                raise ValueError(
                    f"This task does not serve the operation {op!r} (it serves "
                    f"{sorted(self._handlers)}); is the cluster spec pointing at the right task?"
                )
            reply, out, *release = handler(header, tensors)
            if not release:
                return iter_pack(reply, out, chunk_bytes)  # sent while being cut
            try:
                return pack(reply, out, chunk_bytes)  # cut while the handler's locks are held
            finally:
                for fn in release:
                    fn()
        except _ChunkRefused:
            raise
        except BaseException as exc:  # noqa: BLE001 - the caller gets it, named, with the traceback
            task = getattr(exc, "task", None)
            # the code is what callers match on; the class name is for people to read
            code = exc.wire_code if isinstance(exc, UnisonError) else None
            return pack(
                {
                    "_error": {
                        "code": code,
                        "type": type(exc).__name__,
                        "message": str(exc),
                        "task": task if isinstance(task, str) else None,
                        "traceback": traceback.format_exc(),
                    }
                },
                (),
                chunk_bytes,
            )

    def _serve(
        self, requests: Iterable[bytes], context: grpc.ServicerContext, chunk_bytes: int | None
    ) -> Iterator[bytes]:
        if self._key is None:
            yield from self._dispatch(requests, chunk_bytes)
            return
        md = _metadata(context)  # verified by _CallCheck before this handler ran
        nonce, me = md[auth.MD_NONCE].encode(), md[auth.MD_TO].encode()
        try:
            replies = self._dispatch(self._verified(requests, nonce), chunk_bytes)
        except _ChunkRefused as exc:
            self._check.refused += 1
            context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                f"a request chunk failed authentication ({exc}); nothing in it was decoded: {_REFUSAL_HINT}",
            )
        yield from self._signed(replies, nonce, me)

    def _unary(self, request: bytes, context: grpc.ServicerContext) -> bytes:
        return next(self._serve([request], context, None))

    def _stream(self, requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
        yield from self._serve(requests, context, CHUNK_BYTES)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server stops (or ``timeout``); True if it stopped."""
        return self._server.wait_for_termination(timeout)

    def stop(self, grace: float | None = None) -> None:
        self._server.stop(grace).wait()


# --- client --------------------------------------------------------------------------------
class RpcClient:
    """Calls one task's :class:`RpcServer`; failures name the task and the operation.

    With a token, every call proves this process holds it (the token itself is never sent) and
    every reply must prove the same of the task before a byte of it is decoded; a reply that
    does not raises :class:`UnauthenticatedError` naming the task.

    Args:
        address: the task's ``"host:port"``.
        task: the task's name, e.g. ``"ps:0"``: calls are bound to it, and errors name it.
        token: the shared cluster token (default ``$UNISON_CLUSTER_TOKEN``; at least 128 bits).
        tls: TLS settings (the CA file); ``False``: plaintext; default: from ``UNISON_TLS_*``,
            else plaintext.
        timeout_s: default deadline of a call.
        sender: this process's task name, bound into every call (e.g. ``"chief:0"``).
    """

    def __init__(
        self,
        address: str,
        task: str,
        token: str | None = None,
        tls: TlsConfig | bool | None = None,
        timeout_s: float | None = None,
        sender: str = "client",
    ) -> None:
        self.address, self.task, self.timeout_s = address, task, timeout_s
        token = cluster_token(token)
        tls = TlsConfig.from_env() if tls is None else (tls or None)
        self.tls = tls if isinstance(tls, TlsConfig) else None
        if isinstance(tls, TlsConfig):
            self._channel = grpc.secure_channel(address, tls.channel_credentials(), options=_CHANNEL_OPTIONS)
        else:
            self._channel = grpc.insecure_channel(address, options=_CHANNEL_OPTIONS)
        self._key = auth.derive_key(token) if token else None
        self._signer = auth.CallSigner(self._key, sender, task) if self._key is not None else None
        self._unary = self._channel.unary_unary(f"/{_SERVICE}/Call")
        self._streaming = self._channel.stream_stream(f"/{_SERVICE}/Stream")
        self._pool: futures.ThreadPoolExecutor | None = None  # for submit(), made on first use

    @property
    def authenticated(self) -> bool:
        """True when calls and replies are authenticated (this client has a token)."""
        return self._key is not None

    def _sign(self, method: str) -> tuple[bytes, tuple[tuple[str, str], ...]]:
        if self._signer is None:
            return b"", ()
        nonce, metadata = self._signer.sign(method)
        return nonce.encode(), metadata

    def _tagged(self, chunks: Iterable[bytes], nonce: bytes) -> Iterator[bytes]:
        for i, chunk in enumerate(chunks):
            yield auth.chunk_tag(self._key, b"req", nonce, i, chunk) + chunk  # type: ignore[arg-type]

    def _checked(self, chunks: Iterable[bytes], nonce: bytes, op: str) -> Iterator[Any]:
        if self._key is None:
            yield from chunks
            return
        for i, chunk in enumerate(chunks):
            try:
                yield auth.verify_chunk(self._key, b"rep", nonce, i, chunk, self.task.encode())
            except ValueError as exc:
                raise UnauthenticatedError(
                    f"{self.task} at {self.address} could not prove it holds the cluster token: its reply to {op!r} "
                    f"failed authentication ({exc}), so nothing in it was decoded. Another process may be listening "
                    f"at {self.address}, or {self.task} runs with a different UNISON_CLUSTER_TOKEN; check the "
                    "cluster spec's address for it and the token on both sides.",
                    task=self.task,
                    op=op,
                ) from None

    def call(
        self,
        op: str,
        header: dict | None = None,
        tensors: Sequence[torch.Tensor] = (),
        timeout_s: float | None = None,
        reply_bytes: int = 0,
        into: Sequence[torch.Tensor] | None = None,
    ) -> tuple[dict, list[torch.Tensor]]:
        """Send one message and return the reply.

        Args:
            reply_bytes: the expected size of the reply's tensors (a large reply is streamed).
            into: write the reply's tensors into these (matching dtypes and shapes) instead of
                allocating new ones.

        Raises:
            UnauthenticatedError: the task refused the call, or its reply did not prove it holds
                the token (nothing in the reply was decoded).
            TaskUnavailableError: the task did not answer.
            RemoteError: the task's handler raised.
        """
        size = sum(t.nbytes for t in tensors)
        unary = size <= UNARY_MAX_BYTES and reply_bytes <= UNARY_MAX_BYTES
        timeout = timeout_s if timeout_s is not None else self.timeout_s
        nonce, metadata = self._sign(f"/{_SERVICE}/{'Call' if unary else 'Stream'}")
        try:
            if unary:
                request = pack({"op": op, **(header or {})}, tensors, None)[0]
                if self._key is not None:
                    request = next(self._tagged([request], nonce))
                reply: Iterable[bytes] = [self._unary(request, metadata=metadata, timeout=timeout)]
            else:
                chunks = iter_pack({"op": op, **(header or {})}, tensors)
                if self._key is not None:
                    chunks = self._tagged(chunks, nonce)
                responses = self._streaming(chunks, metadata=metadata, timeout=timeout)
        except grpc.RpcError as exc:
            raise self._translate(exc, op, timeout) from None
        if unary:
            return self._result(self._checked(reply, nonce, op), op, into)
        # A streamed reply is decoded chunk by chunk as it arrives (written into ``into``, or into
        # one buffer) while gRPC receives the next one, instead of after the last. A call that
        # fails midway raises as above and may leave ``into`` partly written.
        arriving = self._translated(responses, op, timeout)
        try:
            return self._result(self._checked(arriving, nonce, op), op, into)
        finally:
            arriving.close()

    def _translated(self, responses: Any, op: str, timeout: float | None) -> Generator[bytes, None, None]:
        try:
            yield from responses
        except grpc.RpcError as exc:
            raise self._translate(exc, op, timeout) from None
        finally:
            responses.cancel()  # nothing once the call completed; stops a reply nobody reads any more

    def submit(
        self,
        op: str,
        header: dict | None = None,
        tensors: Sequence[torch.Tensor] = (),
        timeout_s: float | None = None,
        reply_bytes: int = 0,
        into: Sequence[torch.Tensor] | None = None,
    ) -> futures.Future[tuple[dict, list[torch.Tensor]]]:
        """:meth:`call` in the background; ``result()`` returns or raises as ``call`` would."""
        if self._pool is None:
            self._pool = futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix=f"unison-rpc-{self.task}")
        return self._pool.submit(self.call, op, header, tensors, timeout_s, reply_bytes, into)

    def _result(
        self, reply: Iterable[bytes], op: str, into: Sequence[torch.Tensor] | None
    ) -> tuple[dict, list[torch.Tensor]]:
        header, tensors = unpack(reply, into)
        error = header.get("_error")
        if error is not None:
            raise RemoteError(
                f"{self.task} failed in {op!r}: {error['type']}: {error['message']}\n"
                f"--- traceback on {self.task} ---\n{error['traceback']}",
                self.task,
                op,
                error["type"],
                error["traceback"],
                error["message"],
                error.get("task"),
                error.get("code"),
            )
        return header, tensors

    def _translate(self, exc: grpc.RpcError, op: str, timeout: float | None) -> Exception:
        code = exc.code() if hasattr(exc, "code") else None
        details = exc.details() if hasattr(exc, "details") else str(exc)
        if code == grpc.StatusCode.UNAUTHENTICATED:
            return UnauthenticatedError(
                f"{self.task} ({self.address}) refused {op!r}: {details}.", task=self.task, op=op
            )
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return TaskUnavailableError(
                f"{self.task} ({self.address}) did not answer {op!r} within {timeout:g} s.", self.task, op
            )
        if code in _LOST or any(s in (details or "") for s in _LOST_DETAILS):
            return TaskUnavailableError(
                f"{self.task} ({self.address}) is unavailable for {op!r}: {code.name if code else 'error'}: {details}",
                self.task,
                op,
            )
        # the task answered, with an error of gRPC's own (a message it could not take, ...)
        name = f"grpc.{code.name}" if code else "grpc.error"
        return RemoteError(
            f"{self.task} ({self.address}) failed in {op!r}: {name}: {details}", self.task, op, name, "", str(details)
        )

    def wait_ready(self, timeout_s: float) -> bool:
        """Wait until the task accepts connections (it may still be starting); False on timeout."""
        ready = grpc.channel_ready_future(self._channel)
        try:
            ready.result(timeout=timeout_s)
            return True
        except grpc.FutureTimeoutError:
            ready.cancel()
            return False

    def unreachable_reason(self, timeout_s: float = 1.0) -> str:
        """Why the task does not accept this process's connections, in words (after ``wait_ready`` failed).

        Tells a TLS mismatch (a handshake that fails, or a TLS server that hangs up on plaintext)
        from nothing listening at the address, from gRPC's own report of its last attempt.
        """
        try:
            self._unary(b"", timeout=timeout_s)
            return "it answers now"
        except grpc.RpcError as exc:
            details = (exc.details() if hasattr(exc, "details") else str(exc)) or ""
        last = details.rsplit(f"{self.address.rsplit(':', 1)[-1]}: ", 1)[-1]
        ours = "uses TLS (UNISON_TLS_CA is set)" if self.tls else "uses plaintext (no UNISON_TLS_CA)"
        if "handshake" in details.lower() or "ssl" in details.lower():
            return (
                f"the TLS handshake with it failed ({last}); this process {ours}. Set UNISON_TLS_CERT/KEY on "
                "every server and UNISON_TLS_CA on every task, all from the same CA (`unison certs`)"
            )
        if "Socket closed" in details and not self.tls:
            return (
                f"it accepts connections but closes them: it most likely serves TLS while this process {ours}. "
                "Set UNISON_TLS_CA on this process to the cluster's CA (`unison certs`)"
            )
        if "refused" in details.lower():
            return f"nothing accepts connections at {self.address} ({last})"
        return last or "no answer"

    def tls_mismatch(self, reason: str) -> bool:
        """True when ``unreachable_reason()`` says TLS is set up differently on the two sides."""
        return reason.startswith(("the TLS handshake", "it accepts connections but closes them"))

    def close(self) -> None:
        self._channel.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False)


__all__ = [
    "CHUNK_BYTES",
    "TOKEN_ENV",
    "UNARY_MAX_BYTES",
    "InsecureTransportWarning",
    "RemoteError",
    "RpcClient",
    "RpcServer",
    "TaskUnavailableError",
    "TlsConfig",
    "UnauthenticatedError",
    "cluster_token",
    "generate_token",
    "iter_pack",
    "keep_freed_memory",
    "pack",
    "unpack",
]
