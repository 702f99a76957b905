"""Object collectives that unpickle only what a holder of the job's secret pickled.

``broadcast_object`` and ``all_gather_object`` carry pickles (states, configs, file lists)
between replicas. torch's own object collectives unpickle whatever arrives on gloo's or NCCL's
connections, and those connections are not authenticated: a process that got onto one (a local
user on a one-host job, a host on the network of a multi-host job) could have every replica run
code of its choosing. When the job has a secret (:mod:`unison.cluster.secret`), each pickle
travels as bytes with an HMAC-SHA256 over the operation's name, its position in this group's
sequence of object collectives, the sending rank and the bytes; a receiver checks it before
``pickle.loads`` and refuses anything else with :class:`~unison.errors.CollectiveAuthenticationError`.
The position makes a recorded message useless later (no replay); the key is derived from the
job's secret for this use only, so it never signs anything else.

Example:
    >>> key = object_key(b"s" * 32)
    >>> packed = pack({"epoch": 3}, key, header("sync", 1, 0))
    >>> unpack(packed, key, header("sync", 1, 0), "sync", src=0, rank=1)
    {'epoch': 3}
"""

from __future__ import annotations

import hashlib
import hmac
import pickle
from typing import Any

import torch

from unison.errors import CollectiveAuthenticationError

__all__ = ["header", "object_key", "pack", "unpack"]

_LABEL = b"unison object collectives/1"
_MAC = hashlib.sha256().digest_size


def object_key(secret: bytes) -> bytes:
    """The MAC key of object collectives, derived from the job's secret (used for nothing else)."""
    return hmac.new(secret, _LABEL, hashlib.sha256).digest()


def header(name: str, position: int, sender: int) -> bytes:
    """What a message's MAC binds besides its bytes: the operation, its position and the sender."""
    return f"{name}\x00{position}\x00{sender}\x00".encode()


def pack(obj: Any, key: bytes, head: bytes) -> torch.Tensor:
    """``obj`` pickled, followed by its MAC, as a uint8 tensor for a tensor collective."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    mac = hmac.new(key, head + data, hashlib.sha256).digest()
    return torch.frombuffer(bytearray(data + mac), dtype=torch.uint8)


def unpack(packed: torch.Tensor, key: bytes, head: bytes, name: str, src: int, rank: int) -> Any:
    """The object in ``packed``, unpickled only if its MAC is the one ``key`` gives.

    Raises:
        CollectiveAuthenticationError: the MAC is missing or wrong; nothing was unpickled.
    """
    raw = packed.cpu().numpy().tobytes()
    data, mac = raw[:-_MAC], raw[-_MAC:]
    expected = hmac.new(key, head + data, hashlib.sha256).digest()
    if len(raw) < _MAC or not hmac.compare_digest(mac, expected):
        raise CollectiveAuthenticationError(
            f"Rank {rank} refused the object of {name!r} from rank {src}: its bytes do not carry the job's "
            "MAC, so they were not unpickled. Another process wrote to the job's collective connections, "
            "or the replicas called their object collectives (broadcast_object, all_gather_object) in "
            "different orders. Run the collectives on a private network (docs/security.md) and make every "
            "replica make the same object collectives in the same order."
        )
    return pickle.loads(data)
