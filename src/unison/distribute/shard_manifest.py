"""A SHA-256 per file of a sharded checkpoint, so a damaged shard is named before it is loaded.

DCP's files carry no checksum: a flipped byte in ``__1_0.distcp`` would load as wrong numbers.
When a :class:`~unison.distribute.sharded_checkpoint.ShardedCheckpoint` is complete, the chief
writes ``.unison-manifest`` (a verified file: a SHA-256 over itself too) listing every file of
the checkpoint with its size and SHA-256; a restore checks them all first and names each
missing, truncated or changed file. The manifest is JSON: nothing in it is unpickled.

Example:
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "__0_0.distcp"), "wb") as fh:
    ...     _ = fh.write(b"shard")
    >>> write_manifest(d)
    >>> verify_manifest(d)
"""

from __future__ import annotations

import hashlib
import json
import os

from unison.core.atomic_io import VerificationError, read_verified, write_verified
from unison.errors import CorruptCheckpointError

MANIFEST = ".unison-manifest"
_KIND = "unison.ShardedCheckpoint manifest"


def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_manifest(directory: str) -> None:
    """Record every file of the finished checkpoint in ``directory`` (the chief, before publishing)."""
    files = {
        entry.name: {"size": entry.stat().st_size, "sha256": _digest(entry.path)}
        for entry in sorted(os.scandir(directory), key=lambda e: e.name)
        if entry.is_file() and entry.name != MANIFEST
    }
    body = json.dumps({"format": 1, "files": files}, sort_keys=True).encode()
    write_verified(os.path.join(directory, MANIFEST), body, kind=_KIND)


def verify_manifest(directory: str) -> None:
    """Check every file the manifest lists (a checkpoint written before manifests existed passes).

    Raises:
        CorruptCheckpointError: the manifest is damaged, or files are missing, truncated or
            changed; the message names each of them.
    """
    path = os.path.join(directory, MANIFEST)
    if not os.path.exists(path):
        return
    try:
        manifest = json.loads(read_verified(path, kind=_KIND))
    except (VerificationError, ValueError) as exc:
        raise CorruptCheckpointError(f"The sharded checkpoint at {directory!r} has a damaged manifest: {exc}") from exc
    problems = []
    for name, want in sorted(manifest.get("files", {}).items()):
        file = os.path.join(directory, name)
        if not os.path.isfile(file):
            problems.append(f"{name} is missing")
        elif os.path.getsize(file) != want["size"]:
            problems.append(f"{name} has {os.path.getsize(file)} bytes, {want['size']} were written")
        elif _digest(file) != want["sha256"]:
            problems.append(f"{name} is damaged (its SHA-256 does not match the one written with it)")
    if problems:
        raise CorruptCheckpointError(
            f"The sharded checkpoint at {directory!r} cannot be restored: {'; '.join(problems)}. Nothing was "
            "loaded. Restore these files from a copy, or restore an older checkpoint."
        )


__all__ = ["MANIFEST", "verify_manifest", "write_manifest"]
