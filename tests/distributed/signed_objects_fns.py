"""Replica functions for the signed object collectives' tests (module level, so picklable)."""

from __future__ import annotations

import os
from typing import Any

import unison
from unison.comm.communicator import joined
from unison.errors import CollectiveAuthenticationError


class Trap:
    """Unpickling it creates a file: proof that a payload was (or was not) unpickled."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def round_trips() -> dict[str, Any]:
    unison.init(timeout_seconds=60)
    comm = joined()
    rank = unison.rank()
    config = {"lr": 0.1, "files": ["a", "b"], "from": rank}
    return {
        "signed": comm.object_key is not None,
        "broadcast": comm.broadcast_object(config if rank == 1 else None, src=1, name="cfg"),
        "gathered": comm.all_gather_object({"rank": rank}, name="ranks"),
        "hvd": unison.broadcast_object([rank] * 3, root_rank=0),
    }


def forged(kind: str, trap_dir: str) -> dict[str, Any]:
    """Rank 1 signs with a key that is not the job's; rank 0 must refuse without unpickling."""
    unison.init(timeout_seconds=60)
    comm = joined()
    rank = unison.rank()
    if rank == 1 and kind != "replay":
        comm.object_key = b"\x00" * 32
    trap = Trap(os.path.join(trap_dir, f"unpickled-by-{1 - rank}"))
    try:
        if kind == "broadcast":
            comm.broadcast_object(trap if rank == 1 else None, src=1, name="state")
        elif kind == "gather":
            comm.all_gather_object(trap if rank == 1 else "plain", name="states")
        else:  # "replay": rank 1's message is of another operation (both keep the job's key)
            comm.broadcast_object("x", src=1, name="state" if rank == 0 else "other")
    except CollectiveAuthenticationError as exc:
        return {"error": str(exc)}
    return {"error": None}
