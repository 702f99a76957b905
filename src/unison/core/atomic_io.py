"""The one way unison writes a file: atomically, durably, and (for binary data) verifiably.

Every writer in the package goes through here, so a crash at any moment leaves the previous
file or the new one, never half of one, and a file damaged later on disk is detected on read
instead of loading silently.

* ``atomic_write_bytes`` / ``atomic_write_text`` / ``atomic_torch_save``: write to a fresh
  temporary file in the same directory (so the rename is atomic), flush and fsync it, rename it
  over the target, then fsync the directory (or a crash can forget the rename).
* ``write_verified`` / ``read_verified``: the same, with a small header holding a format tag and
  the SHA-256 of the body, checked before anything in the body is decoded.

Example:
    >>> import os, tempfile
    >>> from unison.core.atomic_io import write_verified, read_verified
    >>> path = os.path.join(tempfile.mkdtemp(), "blob.bin")
    >>> write_verified(path, b"payload", kind="example/1")
    >>> read_verified(path, kind="example/1")
    b'payload'
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import uuid
from collections.abc import Callable
from typing import IO, Any

from unison.errors import VerificationError

__all__ = [
    "VerificationError",
    "atomic_torch_save",
    "atomic_write",
    "atomic_write_bytes",
    "atomic_write_text",
    "created_file_mode",
    "fsync_directory",
    "read_verified",
    "temp_path_for",
    "write_verified",
]

# header: magic, one line with the kind, one line with the hex digest, then the body
_MAGIC = b"UNISON-VERIFIED\n"


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Flush a directory entry (a rename or a new file) to disk; a no-op where unsupported."""
    try:
        fd = os.open(os.fspath(directory), os.O_RDONLY)
    except OSError:
        return  # Windows cannot open a directory; the rename is still atomic there
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def temp_path_for(path: str | os.PathLike[str]) -> str:
    """A fresh temporary path beside ``path`` that keeps its full file name ending.

    Same directory, so ``os.replace`` is an atomic rename; same ending, so a writer that picks
    its format from the suffix (``.keras``, ``.h5``, ``.pt``) still sees it.
    """
    directory, name = os.path.split(os.path.abspath(os.fspath(path)))
    return os.path.join(directory, f".tmp-{uuid.uuid4().hex[:12]}-{name}")


def created_file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: ``0o666`` less the process's umask.

    Example:
        >>> created_file_mode() & 0o600
        384
    """
    mask = _current_umask()
    return 0o666 & ~mask


def _current_umask() -> int:
    # Linux reports it without changing it; elsewhere set-and-restore is the only way to read it.
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], Any], mode: int | None = None) -> None:
    """Call ``write(fh)`` on a temporary binary file, then move it onto ``path`` atomically.

    The file gets ``mode`` where given (``0o600`` for a private key), else the umask's mode.
    """
    target = os.path.abspath(os.fspath(path))
    directory = os.path.dirname(target)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        # mkstemp creates 0600; a file unison saves gets the mode open() would give it (0644
        # under umask 022), as Keras's files do, so a teammate or a serving job can read it.
        if hasattr(os, "fchmod"):  # not on Windows, where the mode bits mean little
            os.fchmod(fd, created_file_mode() if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_directory(directory)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new one, never a part."""
    atomic_write(path, lambda fh: fh.write(data), mode)


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Text version of :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode(encoding))


def atomic_torch_save(obj: Any, path: str | os.PathLike[str]) -> None:
    """``torch.save(obj)`` to ``path`` atomically (temporary file, fsync, rename, fsync dir)."""
    import torch

    atomic_write(path, lambda fh: torch.save(obj, fh))


def write_verified(path: str | os.PathLike[str], body: bytes, *, kind: str) -> None:
    """Write ``body`` atomically behind a header naming ``kind`` and the body's SHA-256."""
    if "\n" in kind:
        raise ValueError(f"kind must be one line. Received: kind={kind!r}")
    digest = hashlib.sha256(body).hexdigest().encode()
    header = _MAGIC + kind.encode() + b"\n" + digest + b"\n"

    def write(fh: IO[bytes]) -> None:
        fh.write(header)
        fh.write(body)

    atomic_write(path, write)


def is_verified_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts with the verified-file header (written by :func:`write_verified`)."""
    with open(path, "rb") as fh:
        return fh.read(len(_MAGIC)) == _MAGIC


def read_verified(path: str | os.PathLike[str], *, kind: str) -> bytes:
    """Return the body written by :func:`write_verified`, after checking its kind and checksum.

    Raises:
        FileNotFoundError: ``path`` does not exist (the message names it).
        VerificationError: the file is empty, truncated, not a verified file, of another kind,
            or its body does not match its checksum (the message names the file and the cause).
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"No such file: {name!r}. Check the path, or write it first.") from None
    if not data:
        raise VerificationError(f"{name!r} is empty (0 bytes): it was never written completely.")
    stream = io.BytesIO(data)
    if stream.read(len(_MAGIC)) != _MAGIC:
        raise VerificationError(
            f"{name!r} is not a file written by unison (expected a {kind!r} file with a checksum "
            "header; found other bytes at its start)."
        )
    found_kind = stream.readline().rstrip(b"\n").decode(errors="replace")
    digest = stream.readline().rstrip(b"\n").decode(errors="replace")
    if found_kind != kind:
        raise VerificationError(f"{name!r} holds a {found_kind!r} file; expected a {kind!r} file.")
    body = stream.read()
    if hashlib.sha256(body).hexdigest() != digest:
        raise VerificationError(
            f"{name!r} is damaged: the SHA-256 of its {len(body)} data bytes does not match the "
            "checksum written with it (the file was truncated or changed on disk). Restore it "
            "from a copy, or write it again."
        )
    return body
