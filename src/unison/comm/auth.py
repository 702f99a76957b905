"""Mutual authentication of parameter-server calls with the cluster token, which never travels.

Every task derives one key from the shared token (``UNISON_CLUSTER_TOKEN``); the token itself
and the key stay in memory. A call proves its sender holds the key, and the reply proves the
same of the server, before either side decodes a byte the other sent:

- the call's metadata carries the sender's and the intended receiver's task names, a fresh
  nonce (a per-client session id and a counter), the time, and an HMAC-SHA256 over those and
  the method. The server checks it before it reads the request body: a wrong tag, a different
  receiver, a time outside :data:`MAX_CLOCK_SKEW_S` or a nonce seen before is refused;
- every chunk of the request body starts with a tag over (nonce, chunk index, bytes);
- every chunk of the reply starts with a tag over (the request's nonce, the server's
  task name, chunk index, bytes): a reply cannot be replayed to another call or come from a
  process that does not hold the token, and the client checks it before decoding anything.

Chunk tags are Poly1305 under a one-time key per chunk (derived with HMAC-SHA256 from the key
and the chunk's nonce, index and direction) where ``cryptography`` is installed, else
HMAC-SHA256; the call's nonce says which, under the call's tag.

Example:
    >>> key = derive_key(generate_token())
    >>> tag = chunk_tag(key, b"rep", b"nonce", 0, b"payload", b"ps:0")
    >>> verify_chunk(key, b"rep", b"nonce", 0, tag + b"payload", b"ps:0").tobytes()
    b'payload'
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import math
import os
import re
import secrets
import struct
import threading
import time
from typing import Any

from unison.errors import WeakTokenError

TOKEN_ENV = "UNISON_CLUSTER_TOKEN"
TOKEN_MIN_BITS = 128  # 16 bytes of entropy
TAG_BYTES = 32
# Two tasks' clocks may differ by this much; a captured call is refused once it is older.
MAX_CLOCK_SKEW_S = 60.0
# A call may arrive this far behind a later one of the same client (concurrent calls).
_REORDER_WINDOW = 4096
GOOD_TOKEN_HINT = (
    'Make one with `unison token` (or `python -c "import secrets; print(secrets.token_hex(32))"`) '
    "and set UNISON_CLUSTER_TOKEN to it on every task of the cluster."
)

# metadata keys of a call (gRPC metadata keys are lower-case ASCII)
MD_FROM, MD_TO, MD_NONCE, MD_TIME, MD_MAC = "unison-from", "unison-to", "unison-nonce", "unison-time", "unison-mac"
_U64 = struct.Struct("<Q")


def generate_token() -> str:
    """A fresh token with 256 bits of entropy (64 hex digits), what ``unison token`` prints."""
    return secrets.token_hex(32)


def token_bits(token: str) -> float:
    """A conservative estimate of the token's entropy in bits.

    The alphabet a token is written in bounds its entropy per character (hex 4 bits, base64 6,
    printable ASCII about 6.5); a token made of few distinct characters, or of one short
    pattern repeated, is bounded by its empirical (Shannon) entropy as well.
    """
    if not token:
        return 0.0
    if re.fullmatch(r"[0-9a-fA-F]+", token):
        per_char = 4.0
    elif re.fullmatch(r"[A-Za-z0-9+/=_-]+", token):
        per_char = 6.0
    else:
        per_char = math.log2(95)
    nominal = len(token.rstrip("=")) * per_char
    counts = collections.Counter(token)
    shannon = -sum(c / len(token) * math.log2(c / len(token)) for c in counts.values()) * len(token)
    # a random token's empirical entropy is a bit under its nominal one (32 random hex digits:
    # about 110 of 128 bits); a pattern ("aaaa...", "abab...") is far under
    return nominal if shannon >= nominal * 0.6 else shannon


def check_token(token: str) -> str:
    """Return ``token`` if it carries at least :data:`TOKEN_MIN_BITS` bits; raise otherwise.

    Raises:
        WeakTokenError: naming the token's length and estimated entropy and how to make a good one
            (the token itself is never printed).
    """
    bits = token_bits(token)
    if bits < TOKEN_MIN_BITS:
        raise WeakTokenError(
            f"The cluster token is too weak: {len(token)} characters, about {bits:.0f} bits of entropy; at least "
            f"{TOKEN_MIN_BITS} bits (16 random bytes, e.g. 32 hex digits) are needed, because whoever holds it can "
            f"run code on every worker. {GOOD_TOKEN_HINT}"
        )
    return token


def derive_key(token: str) -> bytes:
    """The HMAC key of a token (the token is never used as a key, nor sent, as such)."""
    return hmac.new(token.encode(), b"unison rpc authentication key v1", hashlib.sha256).digest()


def _mac(key: bytes, fields: tuple[bytes, ...], body: bytes | memoryview = b"") -> bytes:
    m = hmac.new(key, digestmod=hashlib.sha256)
    for f in fields:  # length-prefixed: no two field lists feed the same bytes
        m.update(struct.pack("<I", len(f)))
        m.update(f)
    m.update(body)
    return m.digest()


def call_mac(key: bytes, method: str, sender: str, receiver: str, nonce: str, ts_ms: str) -> str:
    """The tag of a call's metadata (hex)."""
    return _mac(
        key, (b"call", method.encode(), sender.encode(), receiver.encode(), nonce.encode(), ts_ms.encode())
    ).hex()


def _poly1305() -> Any:
    try:
        from cryptography.hazmat.primitives.poly1305 import Poly1305

        Poly1305(bytes(32)).finalize()  # some OpenSSL builds (FIPS) lack it
        return Poly1305
    except Exception:  # noqa: BLE001 - no cryptography, or no Poly1305 in it: HMAC-SHA256 then
        return None


_POLY1305 = _poly1305()
# The nonce names how its chunks are tagged (and the call's tag covers the nonce): "p:" Poly1305
# with a one-time key per chunk, about 5x faster than HMAC-SHA256 over megabytes; else HMAC-SHA256.
FAST_PREFIX = "p:"


def chunk_tag(
    key: bytes, kind: bytes, nonce: bytes, index: int, payload: bytes | memoryview, server: bytes = b""
) -> bytes:
    """The tag that prefixes chunk ``index`` of a request (``kind=b"req"``) or a reply (``b"rep"``).

    A nonce starting with ``p:`` asks for Poly1305 under a one-time key, HMAC-derived from the
    cluster key and everything that names the chunk (so no key authenticates two chunks);
    otherwise the tag is HMAC-SHA256. Either way it is :data:`TAG_BYTES` long.
    """
    fields = (kind, nonce, server, _U64.pack(index))
    if not nonce.startswith(FAST_PREFIX.encode()):
        return _mac(key, fields, payload)
    if _POLY1305 is None:
        raise ValueError(
            "the peer tags with Poly1305, which this process cannot check: install "
            "cryptography (pip install 'unison[tls]') here too"
        )
    poly = _POLY1305(_mac(key, (b"one-time key", *fields)))
    poly.update(payload)
    return poly.finalize() + bytes(TAG_BYTES - 16)


def verify_chunk(
    key: bytes, kind: bytes, nonce: bytes, index: int, chunk: bytes | memoryview, server: bytes = b""
) -> memoryview:
    """The payload of a tagged chunk, or ``ValueError`` if its tag is wrong (nothing is decoded)."""
    view = memoryview(chunk)
    if len(view) < TAG_BYTES:
        raise ValueError(f"chunk {index} is shorter than an authentication tag")
    payload = view[TAG_BYTES:]
    if not hmac.compare_digest(view[:TAG_BYTES].tobytes(), chunk_tag(key, kind, nonce, index, payload, server)):
        raise ValueError(f"chunk {index} carries a wrong authentication tag")
    return payload


class CallSigner:
    """Makes the metadata of a client's calls: one session id per client, a counter per call."""

    def __init__(self, key: bytes, sender: str, receiver: str) -> None:
        self._key, self.sender, self.receiver = key, sender, receiver
        self._session = secrets.token_hex(16)
        self._counter = 0
        self._lock = threading.Lock()

    def sign(self, method: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        """``(nonce, metadata)`` for one call of ``method``."""
        with self._lock:
            self._counter += 1
            nonce = f"{FAST_PREFIX if _POLY1305 is not None else ''}{self._session}.{self._counter}"
        ts = str(int(time.time() * 1000))
        mac = call_mac(self._key, method, self.sender, self.receiver, nonce, ts)
        return nonce, ((MD_FROM, self.sender), (MD_TO, self.receiver), (MD_NONCE, nonce), (MD_TIME, ts), (MD_MAC, mac))


class CallVerifier:
    """Checks a call's metadata on the server: the tag, the receiver, the time, and no replay.

    Replays: a nonce is ``session.counter``; per session the verifier remembers the counters of
    the last :data:`_REORDER_WINDOW` calls and refuses one it saw, or one older than those. A
    session idle for longer than twice the clock skew is forgotten: any call of it would now be
    refused for its time anyway. Only calls whose tag verified reach this table, so a peer
    without the token cannot fill it.
    """

    def __init__(self, key: bytes, task: str | None) -> None:
        self._key, self.task = key, task
        self._sessions: dict[str, tuple[int, set[int], float]] = {}
        self._lock = threading.Lock()

    def verify(self, method: str, metadata: dict[str, str]) -> tuple[str, str, str]:
        """``(sender, receiver, nonce)`` of a call that verifies; ``ValueError`` naming why otherwise."""
        try:
            sender, receiver, nonce, ts, mac = (metadata[k] for k in (MD_FROM, MD_TO, MD_NONCE, MD_TIME, MD_MAC))
        except KeyError:
            raise ValueError(
                "the call carries no authentication (was it sent by a unison task of this cluster?)"
            ) from None
        expected = call_mac(self._key, method, sender, receiver, nonce, ts)
        if not hmac.compare_digest(expected.encode(), mac.encode() if isinstance(mac, str) else mac):
            raise ValueError("the call's authentication tag is wrong: the sender does not hold this cluster's token")
        if self.task is not None and receiver != self.task:
            raise ValueError(f"the call was meant for {receiver!r}, and this is {self.task!r}")
        now = time.time()
        try:
            age = now - int(ts) / 1000
            session, counter = nonce.rsplit(".", 1)
            count = int(counter)
        except ValueError:
            raise ValueError("the call's nonce or time is malformed") from None
        if abs(age) > MAX_CLOCK_SKEW_S:
            raise ValueError(
                f"the call is {age:+.0f} s away from this task's clock (at most {MAX_CLOCK_SKEW_S:g} s "
                "are accepted): a replayed call, or clocks that need syncing (NTP)"
            )
        self._check_replay(session, count, now)
        return sender, receiver, nonce

    def _check_replay(self, session: str, count: int, now: float) -> None:
        with self._lock:
            top, seen, _ = self._sessions.get(session, (0, set(), now))
            if count in seen or count <= top - _REORDER_WINDOW:
                raise ValueError("the call replays an earlier one (its nonce was used before)")
            seen.add(count)
            top = max(top, count)
            if len(seen) > 2 * _REORDER_WINDOW:
                seen = {c for c in seen if c > top - _REORDER_WINDOW}
            self._sessions[session] = (top, seen, now)
            if len(self._sessions) > 64:
                stale = [s for s, (_, _, t) in self._sessions.items() if now - t > 2 * MAX_CLOCK_SKEW_S]
                for s in stale:
                    del self._sessions[s]


def token_from_env() -> str | None:
    """``$UNISON_CLUSTER_TOKEN``, or ``None`` when it is unset or empty."""
    return os.environ.get(TOKEN_ENV) or None


__all__ = [
    "GOOD_TOKEN_HINT",
    "MAX_CLOCK_SKEW_S",
    "TAG_BYTES",
    "TOKEN_ENV",
    "TOKEN_MIN_BITS",
    "CallSigner",
    "CallVerifier",
    "WeakTokenError",
    "check_token",
    "chunk_tag",
    "derive_key",
    "generate_token",
    "token_bits",
    "verify_chunk",
]
