"""``tf.io.gfile``: TF's file functions on the local file system (``os``, ``shutil``, ``glob``).

Each function keeps TF's name, arguments and documented behaviour: ``makedirs`` succeeds when the
directory exists, ``mkdir`` fails when its parent is missing, ``rmtree`` removes a directory and
everything in it, ``glob`` returns matches sorted, ``listdir`` returns entry names (not paths),
``walk`` yields ``(dirname, subdirs, files)``. A missing path raises TF's ``NotFoundError`` and an
existing target ``AlreadyExistsError`` naming the path; both are also ``FileNotFoundError`` /
``FileExistsError``, so code written for Python's errors keeps working. ``file://`` URLs are local.

Example:
    >>> import os, tempfile, unison as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
    >>> with tf.io.gfile.GFile(path, "w") as f:
    ...     _ = f.write("hello")
    >>> tf.io.gfile.GFile(path).read()
    'hello'
"""

from __future__ import annotations

import glob as _glob
import os
import shutil
from collections.abc import Iterator
from typing import IO, Any

from unison import errors
from unison.ops._unsupported import unsupported

__all__ = [
    "GFile",
    "copy",
    "exists",
    "get_registered_schemes",
    "glob",
    "isdir",
    "join",
    "listdir",
    "makedirs",
    "mkdir",
    "remove",
    "rename",
    "rmtree",
    "stat",
    "walk",
]

_REMOTE = ("gs://", "s3://", "hdfs://", "ram://")


NotFoundError = errors.PathNotFoundError  # TF's NotFoundError, also Python's FileNotFoundError


AlreadyExistsError = errors.PathExistsError  # TF's AlreadyExistsError, also Python's FileExistsError


FailedPreconditionError = errors.PathIsDirectoryError  # a directory where a file was expected


class FileStatistics:
    """What ``tf.io.gfile.stat`` returns: ``length``, ``mtime_nsec``, ``is_directory`` (as TF's)."""

    def __init__(self, result: os.stat_result, is_directory: bool) -> None:
        self.length = int(result.st_size)
        self.mtime_nsec = int(result.st_mtime_ns)
        self.is_directory = is_directory
        self.st_size = self.length  # os.stat's name, for code written against an earlier unison

    def __repr__(self) -> str:
        return f"FileStatistics(length={self.length}, mtime_nsec={self.mtime_nsec}, is_directory={self.is_directory})"


def _local(path: Any, argument: str = "path") -> str:
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = text.decode()
    if text.startswith("file://"):
        text = text[len("file://") :]
    if text.startswith(_REMOTE) or "://" in text:
        raise ValueError(
            f"tf.io.gfile in unison reads and writes local paths only. Received: {argument}={text!r}. "
            "Copy the files to a local directory (or mount the bucket) and pass that path."
        )
    return text


def _not_found(path: str, what: str) -> NotFoundError:
    return NotFoundError(f"{what}: {path!r} does not exist. Check the path (it is relative to {os.getcwd()!r}).")


def get_registered_schemes() -> list[str]:
    """``tf.io.gfile.get_registered_schemes``: the URL schemes unison's gfile reads (local paths only)."""
    return ["file", ""]


def join(path: str, *paths: str) -> str:
    """``tf.io.gfile.join``: path components joined with ``/`` (``os.path.join``'s rules; URLs too)."""
    return os.path.join(os.fspath(path), *map(os.fspath, paths))


def exists(path: str) -> bool:
    """``tf.io.gfile.exists``: whether a file or directory exists at ``path``."""
    return os.path.exists(_local(path))


def isdir(path: str) -> bool:
    """``tf.io.gfile.isdir``: whether ``path`` is a directory."""
    return os.path.isdir(_local(path))


def makedirs(path: str) -> None:
    """``tf.io.gfile.makedirs``: make ``path`` and missing parents; nothing to do when it exists."""
    os.makedirs(_local(path), exist_ok=True)


def mkdir(path: str) -> None:
    """``tf.io.gfile.mkdir``: make one directory; its parent must exist (TF raises otherwise)."""
    path = _local(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise _not_found(parent, "tf.io.gfile.mkdir needs the parent directory")
    os.makedirs(path, exist_ok=True)


def listdir(path: str) -> list[str]:
    """``tf.io.gfile.listdir``: the names of the entries of directory ``path`` (not full paths)."""
    path = _local(path)
    if not os.path.isdir(path):
        raise _not_found(path, "tf.io.gfile.listdir needs a directory")
    return sorted(os.listdir(path))


def glob(pattern: str | list[str]) -> list[str]:
    """``tf.io.gfile.glob``: the paths matching ``pattern`` (or any of a list of patterns), sorted."""
    patterns = [pattern] if isinstance(pattern, (str, os.PathLike)) else list(pattern)
    found: set[str] = set()
    for p in patterns:
        found.update(_glob.glob(_local(p, "pattern")))
    return sorted(found)


def remove(path: str) -> None:
    """``tf.io.gfile.remove``: delete the file at ``path``."""
    path = _local(path)
    if os.path.isdir(path):
        raise FailedPreconditionError(f"tf.io.gfile.remove: {path!r} is a directory; remove it with rmtree.")
    if not os.path.isfile(path):
        raise _not_found(path, "tf.io.gfile.remove needs a file")
    os.remove(path)


def rmtree(path: str) -> None:
    """``tf.io.gfile.rmtree``: delete directory ``path`` and everything below it."""
    path = _local(path)
    if not os.path.isdir(path):
        raise _not_found(path, "tf.io.gfile.rmtree needs a directory")
    shutil.rmtree(path)


def rename(oldname: str, newname: str, overwrite: bool = False) -> None:
    """``tf.io.gfile.rename``: move ``oldname`` to ``newname`` (an existing target needs ``overwrite=True``)."""
    oldname, newname = _local(oldname, "oldname"), _local(newname, "newname")
    if os.path.exists(newname) and not overwrite:  # TF checks the target first
        raise AlreadyExistsError(f"tf.io.gfile.rename: {newname!r} exists. Pass overwrite=True to replace it.")
    if not os.path.exists(oldname):
        raise _not_found(oldname, "tf.io.gfile.rename needs an existing source")
    os.replace(oldname, newname)


def copy(src: str, dst: str, overwrite: bool = False) -> None:
    """``tf.io.gfile.copy``: copy file ``src`` to ``dst`` (an existing target needs ``overwrite=True``)."""
    src, dst = _local(src, "src"), _local(dst, "dst")
    if not os.path.isfile(src):
        raise _not_found(src, "tf.io.gfile.copy needs a source file")
    if os.path.exists(dst) and not overwrite:
        raise AlreadyExistsError(f"tf.io.gfile.copy: {dst!r} exists. Pass overwrite=True to replace it.")
    shutil.copyfile(src, dst)


def stat(path: str) -> FileStatistics:
    """``tf.io.gfile.stat``: ``length``, ``mtime_nsec`` and ``is_directory`` of ``path``."""
    path = _local(path)
    if not os.path.exists(path):
        raise _not_found(path, "tf.io.gfile.stat")
    return FileStatistics(os.stat(path), os.path.isdir(path))


def walk(top: str, topdown: bool = True, onerror: Any = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """``tf.io.gfile.walk``: ``(dirname, subdirs, files)`` for each directory below ``top``."""
    yield from os.walk(_local(top, "top"), topdown=topdown, onerror=onerror)


class GFile:
    """``tf.io.gfile.GFile``: a local file object (``read``, ``write``, ``readlines``, iteration, ``with``).

    Example:
        >>> import os, tempfile, unison as tf
        >>> p = os.path.join(tempfile.mkdtemp(), "a.txt")
        >>> with tf.io.gfile.GFile(p, "w") as f:
        ...     _ = f.write("x\\ny\\n")
        >>> list(tf.io.gfile.GFile(p))
        ['x\\n', 'y\\n']
    """

    def __init__(self, name: str, mode: str = "r") -> None:
        self.name = _local(name, "name")
        self.mode = mode
        self._opened: IO[Any] | None = None  # opened on first use, as TF's GFile is

    @property
    def _file(self) -> IO[Any]:
        if self._opened is None:
            if "r" in self.mode and not os.path.exists(self.name):
                raise _not_found(self.name, "tf.io.gfile.GFile opened for reading")
            self._opened = open(self.name, self.mode)  # noqa: SIM115 (closed by close()/__exit__)
        return self._opened

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._file)

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file (nothing to do when it was never used)."""
        if self._opened is not None:
            self._opened.close()

    def size(self) -> int:
        """The file's length in bytes."""
        return os.path.getsize(self.name)


def __getattr__(name: str) -> Any:
    raise unsupported("tf.io.gfile", name)
