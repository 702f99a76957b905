"""``tf.io``'s whole-file functions: ``read_file``, ``write_file``, ``matching_files`` and the
string codecs ``encode_base64``/``decode_base64``/``decode_compressed``, on the local file system.

A file's contents are a scalar ``tf.string`` (:class:`~unison.ops.string_tensor.StringTensor`
holding ``bytes``), which the image decoders of :mod:`unison.ops.image_codecs` take as they are.

Example:
    >>> import os, tempfile, unison as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "a", "b.txt")
    >>> tf.io.write_file(path, "hello")
    >>> tf.io.read_file(path).numpy()
    b'hello'
    >>> [os.path.basename(p) for p in tf.io.matching_files(os.path.dirname(path) + "/*.txt").numpy()]
    [b'b.txt']
"""

from __future__ import annotations

import base64
import glob
import gzip
import os
import zlib
from typing import Any

import numpy as np

from unison.errors import DataLossError, InvalidArgumentError, NotFoundError, PermissionDeniedError
from unison.ops.string_tensor import StringTensor

__all__ = [
    "match_filenames_once",
    "decode_base64",
    "decode_compressed",
    "encode_base64",
    "matching_files",
    "read_file",
    "write_file",
]


def _strings(value: Any) -> np.ndarray:
    return np.asarray(value.numpy() if isinstance(value, StringTensor) else value, dtype=object)


def _scalar_path(filename: Any, op: str, argument: str = "filename") -> str:
    array = _strings(filename)
    if array.ndim != 0:
        raise InvalidArgumentError(
            None, None, f"{op}: `{argument}` must be a scalar string, got shape {list(array.shape)}."
        )
    item = array.item()
    path = item.decode() if isinstance(item, (bytes, bytearray)) else str(os.fspath(item))
    if "://" in path:
        raise InvalidArgumentError(None, None, f"{op}: unison reads local paths only. Received {argument}={path!r}.")
    return path


def _scalar(data: bytes) -> StringTensor:
    out = np.empty((), dtype=object)
    out[()] = data
    return StringTensor(out)


def read_file(filename: Any, name: str | None = None) -> StringTensor:
    """``tf.io.read_file``: a file's whole contents as a scalar ``tf.string``.

    Raises:
        NotFoundError: the file does not exist (TF's error class), naming it.
    """
    path = _scalar_path(filename, "tf.io.read_file")
    try:
        with open(path, "rb") as handle:
            contents = _scalar(handle.read())
    except FileNotFoundError:
        raise NotFoundError(None, None, f"tf.io.read_file: {path}; No such file or directory") from None
    except IsADirectoryError:
        raise InvalidArgumentError(None, None, f"tf.io.read_file: {path} is a directory, not a file.") from None
    except PermissionError:
        raise PermissionDeniedError(
            None, None, f"tf.io.read_file: {path}; Permission denied. Make the file readable (chmod) or skip it."
        ) from None
    contents.source_file = path  # type: ignore[attr-defined]  # the decoders name the file in their errors
    return contents


def write_file(filename: Any, contents: Any, name: str | None = None) -> None:
    """``tf.io.write_file``: write a scalar string to ``filename``, making missing directories (as TF does)."""
    path = _scalar_path(filename, "tf.io.write_file")
    array = _strings(contents)
    if array.ndim != 0:
        raise InvalidArgumentError(
            None, None, f"tf.io.write_file: `contents` must be a scalar string, got shape {list(array.shape)}."
        )
    item = array.item()
    data = item.encode() if isinstance(item, str) else bytes(item)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def matching_files(pattern: Any, name: str | None = None) -> StringTensor:
    """``tf.io.matching_files``: the files matching a glob ``pattern`` (or a list of them), sorted.

    No match gives an empty 1-D string tensor, as in TF.
    """
    patterns = _strings(pattern)
    if patterns.ndim > 1:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.io.matching_files: `pattern` must be a scalar or a vector, got shape {list(patterns.shape)}.",
        )
    found: list[bytes] = []
    for item in patterns.reshape(-1).tolist():
        text = item.decode() if isinstance(item, (bytes, bytearray)) else str(item)
        found.extend(sorted(p.encode() for p in glob.glob(text)))
    return StringTensor(np.array(found, dtype=object).reshape(len(found)))


def match_filenames_once(pattern: Any, name: str | None = None) -> StringTensor:
    """``tf.io.match_filenames_once``: the files matching ``pattern`` when it is called, sorted.

    TF 2 returns a variable initialised, once, to ``tf.io.matching_files(pattern)``; unison has no
    string variables, so this is that value (files added later do not appear in it either).

    Example:
        >>> import tempfile
        >>> match_filenames_once(tempfile.mkdtemp() + "/*.none").shape
        (0,)
    """
    return matching_files(pattern, name)


def _map_strings(value: Any, fn: Any) -> StringTensor:
    array = _strings(value)
    out = np.empty(array.shape, dtype=object)
    for index, item in np.ndenumerate(array):
        out[index] = fn(item.encode() if isinstance(item, str) else bytes(item))
    return StringTensor(out)


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> StringTensor:
    """``tf.io.encode_base64``: web-safe base64 (``-`` and ``_``), without ``=`` padding unless ``pad``."""

    def encode(data: bytes) -> bytes:
        text = base64.urlsafe_b64encode(data)
        return text if pad else text.rstrip(b"=")

    return _map_strings(input, encode)


def decode_base64(input: Any, name: str | None = None) -> StringTensor:
    """``tf.io.decode_base64``: the inverse of :func:`encode_base64` (padding optional)."""

    def decode(data: bytes) -> bytes:
        stripped = data.rstrip(b"=")
        if len(stripped) % 4 == 1 or not all(c in _WEB_SAFE for c in stripped):
            raise InvalidArgumentError(
                None,
                None,
                f"tf.io.decode_base64: Invalid character found in base64 (web-safe alphabet expected). "
                f"Received {data[:40]!r}.",
            )
        return base64.urlsafe_b64decode(stripped + b"=" * (-len(stripped) % 4))

    return _map_strings(input, decode)


_WEB_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def decode_compressed(bytes: Any, compression_type: str = "", name: str | None = None) -> StringTensor:  # noqa: A002
    """``tf.io.decode_compressed``: decompress each string (``""``: as is, ``"ZLIB"`` or ``"GZIP"``)."""
    kind = str(compression_type).upper()
    if kind not in ("", "ZLIB", "GZIP"):
        raise InvalidArgumentError(
            None,
            None,
            f"tf.io.decode_compressed: compression_type must be '', 'ZLIB' or 'GZIP'. Received {compression_type!r}.",
        )

    def decode(data: bytes) -> bytes:
        try:
            return data if not kind else zlib.decompress(data) if kind == "ZLIB" else gzip.decompress(data)
        except (zlib.error, OSError, EOFError) as exc:
            raise DataLossError(None, None, f"tf.io.decode_compressed: the {kind} data is invalid ({exc}).") from None

    return _map_strings(bytes, decode)
