"""What a model or weights file is, from its first bytes: for load errors that say what to do.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.h5")
    >>> _ = open(path, "wb").write(b"\\x80\\x04K.")
    >>> describe_file(path)
    'a Python pickle'
"""

from __future__ import annotations

import os
import zipfile

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
UNISON_MAGIC = b"UNISON-VERIFIED\n"


def describe_file(path: str | os.PathLike[str]) -> str:
    """A few words on what ``path`` holds (Keras 3 zip, HDF5, unison checkpoint, pickle, ...)."""
    name = os.fspath(path)
    try:
        size = os.path.getsize(name)
        with open(name, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return "a file that cannot be read"
    if size == 0:
        return "an empty file (0 bytes)"
    if head.startswith(HDF5_SIGNATURE):
        return "an HDF5 file (Keras's .h5 / .weights.h5)"
    if head.startswith(UNISON_MAGIC):
        return "a unison checkpoint (unison's own checksummed format)"
    if head[:1] == b"\x80" and len(head) > 1 and head[1] <= 5:
        return "a Python pickle"
    if head.startswith(b"PK"):
        try:
            with zipfile.ZipFile(name) as archive:
                names = archive.namelist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            return f"a damaged zip archive ({size} bytes)"
        if "config.json" in names or "model.weights.h5" in names:
            return "a Keras 3 .keras zip archive"
        if any(n.endswith("data.pkl") for n in names):
            return "a torch.save zip archive (a pickle inside)"
        return f"a zip archive holding {names[:4]}"
    return f"a file of unknown format ({size} bytes, starting {head[:8]!r})"


__all__ = ["HDF5_SIGNATURE", "UNISON_MAGIC", "describe_file"]
