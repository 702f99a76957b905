"""``tf.compat``: the text and path helpers TF 2 programs still call (``as_bytes``, ``as_str``).

``tf.compat.v1`` (graphs, sessions, placeholders) has no meaning in eager torch and is refused
with an error that says so.

Example:
    >>> import unison as tf
    >>> tf.compat.as_bytes("JFIF")
    b'JFIF'
    >>> tf.compat.as_str(b"caf\\xc3\\xa9")
    'café'
"""

from __future__ import annotations

import os
from typing import Any

from unison.ops._unsupported import unsupported

__all__ = ["as_bytes", "as_str", "as_str_any", "as_text", "path_to_str"]


def as_bytes(bytes_or_text: bytes | bytearray | str, encoding: str = "utf-8") -> bytes:
    """``tf.compat.as_bytes``: ``str`` encoded with ``encoding``; bytes as they are."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: bytes | bytearray | str, encoding: str = "utf-8") -> str:
    """``tf.compat.as_text`` (also ``as_str``): bytes decoded with ``encoding``; ``str`` as it is."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text).decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value: Any, encoding: str = "utf-8") -> str:
    """``tf.compat.as_str_any``: bytes decoded, anything else through ``str()``."""
    return as_text(value, encoding) if isinstance(value, (bytes, bytearray)) else str(value)


def path_to_str(path: Any) -> Any:
    """``tf.compat.path_to_str``: a path-like object as its string; anything else unchanged."""
    return os.fspath(path) if isinstance(path, os.PathLike) else path


def __getattr__(name: str) -> Any:
    raise unsupported("tf.compat", name)
