"""``keras.utils.get_file``: a file from a URL, fetched only when the cache lacks it.

Keras 3's semantics: the file lands in ``<cache_dir>/<cache_subdir>/<fname>`` (``cache_dir`` defaults
to ``$KERAS_HOME`` or ``~/.keras``, ``cache_subdir`` to ``"datasets"``); a cached file is used as is
when it matches ``file_hash`` (sha256 or md5, told apart by length) and fetched again when it does not;
``extract=True`` unpacks a tar or zip archive into ``<fname>`` (or ``<stem>_extracted`` when ``fname``
has a suffix) next to it. Where Keras would download, a copy placed in ``$UNISON_DATA_DIR`` (named
``fname`` or as the URL's last part, and matching ``file_hash`` if given) is used instead, so that
programs run on machines without network. Unlike Keras, an archive member that would land outside the extraction
folder (``../``, an absolute path, a link pointing out) is skipped with a warning, as is any device
file, and the folder appears whole or not at all (extracted beside it, then renamed).

Example:
    >>> from unison.keras.utils import get_file
    >>> path = get_file("notes.txt", origin="https://example.org/notes.txt")  # doctest: +SKIP
    >>> path.endswith("datasets/notes.txt")  # doctest: +SKIP
    True
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import warnings
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TextIO

from unison.core.atomic_io import atomic_write
from unison.errors import DatasetError, DownloadError

__all__ = ["extract_archive", "get_file", "hash_file", "validate_file"]

_TIMEOUT_S = 60.0  # a stalled server must end in an error, never a hang
_CHUNK = 1 << 16


def keras_home() -> Path:
    """``$KERAS_HOME``, else ``~/.keras``: where Keras keeps its caches."""
    home = os.environ.get("KERAS_HOME")
    return Path(home).expanduser() if home else Path.home() / ".keras"


def hash_file(fpath: str | os.PathLike[str], algorithm: str = "sha256", chunk_size: int = 65535) -> str:
    """Return the hex digest of a file, ``algorithm`` being ``"sha256"`` or ``"md5"``.

    Example:
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "empty")
        >>> open(p, "wb").close()
        >>> hash_file(p)
        'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    """
    hasher = _hasher(algorithm)
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(
    fpath: str | os.PathLike[str], file_hash: str, algorithm: str = "auto", chunk_size: int = 65535
) -> bool:
    """Whether the file's sha256 or md5 equals ``file_hash`` (``"auto"``: sha256 for 64 hex digits).

    Example:
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "empty")
        >>> open(p, "wb").close()
        >>> validate_file(p, "d41d8cd98f00b204e9800998ecf8427e")  # md5 of nothing
        True
    """
    return hash_file(fpath, _resolve_algorithm(algorithm, file_hash), chunk_size) == str(file_hash).lower()


def extract_archive(
    file_path: str | os.PathLike[str],
    path: str | os.PathLike[str] = ".",
    archive_format: str | Sequence[str] | None = "auto",
) -> bool:
    """Unpack a tar (plain, gz, bz2, xz) or zip archive into ``path``; ``False`` if it is neither.

    Members that would land outside ``path`` and special files are skipped with a warning. The
    archive is unpacked into a temporary folder beside ``path`` that is renamed into place (merged
    into ``path`` if it already exists), so an interrupted extraction leaves no half folder.

    Example:
        >>> import io, os, tarfile, tempfile
        >>> d = tempfile.mkdtemp(); arc = os.path.join(d, "a.tar")
        >>> with tarfile.open(arc, "w") as t:
        ...     info = tarfile.TarInfo("x/hello.txt"); info.size = 2
        ...     t.addfile(info, io.BytesIO(b"hi"))
        >>> extract_archive(arc, os.path.join(d, "out"))
        True
        >>> open(os.path.join(d, "out", "x", "hello.txt")).read()
        'hi'
    """
    if archive_format is None:
        return False
    formats = (
        ["tar", "zip"]
        if archive_format == "auto"
        else [archive_format]
        if isinstance(archive_format, str)
        else list(archive_format)
    )
    src = Path(file_path)
    dest = Path(path)
    for fmt in formats:
        if fmt == "tar":
            if not tarfile.is_tarfile(src):
                continue
        elif fmt == "zip":
            if not zipfile.is_zipfile(src):
                continue
        else:
            raise ValueError(
                f"extract_archive(archive_format={fmt!r}): unknown archive format. Expected 'auto', 'tar', "
                "'zip', a list of those, or None."
            )
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
        try:
            if fmt == "tar":
                with tarfile.open(src) as archive:
                    _extract_tar(archive, staging)
            else:
                with zipfile.ZipFile(src) as archive:
                    _extract_zip(archive, staging)
            _move_into_place(staging, dest)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return True
    return False


def get_file(
    fname: str | os.PathLike[str] | None = None,
    origin: str | None = None,
    untar: bool = False,
    md5_hash: str | None = None,
    file_hash: str | None = None,
    cache_subdir: str = "datasets",
    hash_algorithm: str = "auto",
    extract: bool = False,
    archive_format: str | Sequence[str] | None = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
    force_download: bool = False,
) -> str:
    """Return the local path of ``origin``'s file, downloading it only when not cached.

    Args:
        fname: the file's name in the cache (default: the last part of ``origin``'s path). With
            ``extract``, a name without a suffix names the extraction folder.
        origin: the URL.
        untar: deprecated spelling of ``extract=True, archive_format="tar"``.
        md5_hash: deprecated spelling of ``file_hash`` with ``hash_algorithm="md5"``.
        file_hash: expected sha256 or md5 (hex) of the file; a cached file that does not match is
            fetched again, a download that does not match is an error.
        cache_subdir: folder under ``cache_dir`` (an absolute path is used as is).
        hash_algorithm: ``"auto"`` (sha256 for 64 hex digits, else md5), ``"sha256"`` or ``"md5"``.
        extract: unpack the tar or zip archive and return the extraction folder.
        archive_format: ``"auto"`` (tar then zip), ``"tar"``, ``"zip"``, a list, or ``None``.
        cache_dir: cache root, default ``$KERAS_HOME`` or ``~/.keras`` (``/tmp/.keras`` when that is
            not writable).
        force_download: fetch even when a cached copy exists.

    Returns:
        The path of the file, or of the extraction folder with ``extract``/``untar``.

    Raises:
        ValueError: no ``origin``, or ``fname`` is a path.
        DatasetError: the download failed (the message names the URL, the reason and where to put
            the file by hand) or does not match ``file_hash``.

    Example:
        >>> path = get_file(origin="https://example.org/data/words.txt")  # doctest: +SKIP
        >>> Path(path).name  # doctest: +SKIP
        'words.txt'
    """
    if origin is None:
        raise ValueError(
            "get_file() needs origin=, the URL of the file to download (it is fetched only when the cache "
            "lacks it). Pass origin='https://...'."
        )
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    _resolve_algorithm(hash_algorithm, file_hash)  # a bad algorithm name fails before any I/O
    datadir = _writable_cache_root(cache_dir) / cache_subdir
    name = os.fspath(fname) if fname else ""
    if not name:
        name = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not name:
            raise ValueError(
                f"get_file(origin={origin!r}): the URL names no file, so the cache name cannot be derived "
                "from it. Pass fname='name.ext'."
            )
    elif os.sep in name or (os.altsep and os.altsep in name):
        raise ValueError(
            f"get_file(fname={name!r}): fname must be a file name, not a path (as in Keras 3). To choose "
            "the folder, pass cache_dir= (and cache_subdir=)."
        )
    extraction_dir: Path | None = None
    if extract or untar:
        if fname and "." in name:
            download_target = datadir / name
            extraction_dir = datadir / f"{name[: name.find('.')]}_extracted"
        else:
            extraction_dir = datadir / name
            download_target = datadir / f"{name}_archive"
    else:
        download_target = datadir / name

    download = force_download or not download_target.exists()
    if not download and file_hash is not None and not validate_file(download_target, file_hash, hash_algorithm):
        print(
            f"A local file was found at {download_target}, but its {hash_algorithm} hash does not match "
            f"{file_hash}, so it will be downloaded again.",
            file=sys.stderr,
        )
        download = True
    source = download_target
    if download:
        provided = None if force_download else _provided_copy(name, origin, file_hash, hash_algorithm)
        if provided is None:
            try:
                download_url(origin, download_target, file_hash, hash_algorithm)
            except DatasetError as exc:
                if "UNISON_DATA_DIR" in os.environ:
                    raise
                raise DatasetError(f"{exc} (Or put it in a folder named by $UNISON_DATA_DIR.)") from exc.__cause__
        else:
            source = provided
            if extraction_dir is None:
                return str(provided)

    if extraction_dir is None:
        return str(download_target)
    if download or not extraction_dir.exists():
        fmt = "tar" if untar else archive_format
        if not extract_archive(source, extraction_dir, fmt):
            warnings.warn(f"Could not extract archive {source}: it is not a {fmt} archive.", stacklevel=2)
    return str(extraction_dir)


def _provided_copy(name: str, origin: str, file_hash: str | None, algorithm: str) -> Path | None:
    """A copy the user put in ``$UNISON_DATA_DIR`` (under ``fname`` or the URL's file name), used
    instead of a download on machines without network; one that fails ``file_hash`` is ignored."""
    root = os.environ.get("UNISON_DATA_DIR")
    if not root:
        return None
    url_name = os.path.basename(urllib.parse.urlsplit(origin).path)
    for candidate in dict.fromkeys(n for n in (name, url_name) if n):
        path = Path(root).expanduser() / candidate
        if not path.is_file():
            continue
        if file_hash is not None and not validate_file(path, file_hash, algorithm):
            warnings.warn(f"Ignoring {path}: its hash does not match {file_hash}.", stacklevel=3)
            continue
        return path
    return None


def download_url(url: str, dest: Path, file_hash: str | None = None, algorithm: str = "auto") -> None:
    """Fetch ``url`` into ``dest`` through a temporary file renamed into place only when whole and,
    with ``file_hash``, matching it.

    Raises:
        DownloadError: (a ``DatasetError``) the transfer failed or the bytes do not match ``file_hash``.
    """
    hasher = _hasher(_resolve_algorithm(algorithm, file_hash))

    def fetch_into(out: IO[bytes]) -> None:
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
            length = response.headers.get("Content-Length")
            bar = _ProgressBar(url, int(length) if length and length.isdigit() else None)
            while chunk := response.read(_CHUNK):
                out.write(chunk)
                hasher.update(chunk)
                bar.update(len(chunk))
            bar.close()
        if file_hash is not None and hasher.hexdigest() != file_hash.lower():
            raise _HashMismatch(hasher.hexdigest())

    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(dest, fetch_into)
    except _HashMismatch as exc:
        reason = f"it does not match its expected hash (expected {file_hash}, received {exc.args[0]})"
        raise DownloadError(
            f"The download of {url} does not match its expected hash, so it was not kept.\n"
            f"  expected: {file_hash}\n  received: {exc.args[0]}\n"
            f"To fix: retry (the server may have sent a damaged file), or place the right file at {dest}.",
            reason,
        ) from None
    # URLError/HTTPError/timeouts/disk errors are OSErrors; IncompleteRead is an HTTPException;
    # a malformed URL ("unknown url type") is a ValueError.
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise DownloadError(
            f"Could not download {url} into {dest}: {_reason(exc)}.\n"
            f"To fix: allow network access, or download the file elsewhere and place it at {dest}.",
            _reason(exc),
        ) from exc


class _HashMismatch(Exception):
    pass


def _reason(exc: BaseException) -> str:
    code = getattr(exc, "code", None)
    if code is not None:
        return f"HTTP {code} {getattr(exc, 'reason', '')}".rstrip()
    cause = getattr(exc, "reason", None)
    if isinstance(cause, BaseException):
        exc = cause
    return f"{type(exc).__name__}: {exc}"


def _resolve_algorithm(algorithm: str, file_hash: str | None = None) -> str:
    if algorithm == "auto":
        return "sha256" if file_hash is not None and len(file_hash) == 64 else "md5"
    if algorithm not in ("sha256", "md5"):
        raise ValueError(f"hash_algorithm={algorithm!r} is not supported. Expected 'auto', 'sha256' or 'md5'.")
    return algorithm


def _hasher(algorithm: str) -> hashlib._Hash:
    if algorithm == "sha256":
        return hashlib.sha256()
    if algorithm == "md5":
        return hashlib.md5(usedforsecurity=False)
    raise ValueError(f"algorithm={algorithm!r} is not supported. Expected 'sha256' or 'md5'.")


def _writable_cache_root(cache_dir: str | os.PathLike[str] | None) -> Path:
    """The cache root, or ``/tmp/.keras`` when it cannot be created or written (Keras's fallback)."""
    root = Path(cache_dir).expanduser() if cache_dir is not None else keras_home()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    if os.access(root, os.W_OK):
        return root
    return Path(tempfile.gettempdir()) / ".keras"


def _inside(base: Path, name: str) -> bool:
    """Whether archive member ``name`` stays inside ``base`` once joined and resolved."""
    if not name or os.path.isabs(name) or name.startswith(("/", "\\")):
        return False
    target = (base / name).resolve()
    return target == base or base in target.parents


def _skip(name: str, why: str) -> None:
    warnings.warn(f"Skipping archive member {name!r} during extraction: {why}.", stacklevel=3)


def _extract_tar(archive: tarfile.TarFile, dest: Path) -> None:
    base = dest.resolve()
    safe: list[tarfile.TarInfo] = []
    for member in archive.getmembers():
        if not _inside(base, member.name):
            _skip(member.name, "its path leaves the extraction folder")
        elif member.issym() or member.islnk():
            # A symlink resolves from its own folder, a hard link from the archive root.
            origin = (base / member.name).parent if member.issym() else base
            if os.path.isabs(member.linkname) or not _inside(base, os.path.relpath(origin / member.linkname, base)):
                _skip(member.name, f"it links to {member.linkname!r}, outside the extraction folder")
            else:
                safe.append(member)
        elif not (member.isfile() or member.isdir()):
            _skip(member.name, "it is a device, fifo or other special file")
        else:
            safe.append(member)
    if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: also drops setuid bits and odd modes
        archive.extractall(dest, members=safe, filter="data")
    else:  # pragma: no cover - older Pythons
        archive.extractall(dest, members=safe)


def _extract_zip(archive: zipfile.ZipFile, dest: Path) -> None:
    base = dest.resolve()
    for info in archive.infolist():
        if _inside(base, info.filename):
            archive.extract(info, dest)
        else:
            _skip(info.filename, "its path leaves the extraction folder")


def _move_into_place(staging: Path, dest: Path) -> None:
    if not dest.exists():
        try:
            os.replace(staging, dest)
            return
        except OSError:
            if not dest.exists():
                raise
    # Another process extracted first, or the folder already held files: merge, newest wins.
    for item in staging.iterdir():
        target = dest / item.name
        if target.is_dir() and item.is_dir():
            _move_into_place(item, target)
        else:
            os.replace(item, target)


class _ProgressBar:
    """A small download bar on stderr, redrawn in place on a terminal; one final line otherwise."""

    _WIDTH = 30

    def __init__(self, url: str, total: int | None, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._total = total
        self._done = 0
        self._shown = -1
        isatty = getattr(self._stream, "isatty", None)
        # Redrawing with "\r" into a log file would leave hundreds of lines; draw once there.
        self._live = bool(isatty and isatty())
        self._stream.write(f"Downloading data from {url}\n")
        self._stream.flush()

    def update(self, n: int) -> None:
        self._done += n
        if self._live:
            self._draw(final=False)

    def close(self) -> None:
        self._draw(final=True)

    def _draw(self, final: bool) -> None:
        if self._total:
            percent = min(100, self._done * 100 // self._total)
            if percent == self._shown and not final:
                return
            self._shown = percent
            filled = self._WIDTH * percent // 100
            arrow = ">" if filled < self._WIDTH else ""
            bar = "=" * filled + arrow + "." * (self._WIDTH - filled - len(arrow))
            line = f"{self._done}/{self._total} [{bar}] {percent:3d}%"
        else:
            line = f"{self._done} bytes"
        self._stream.write(("\r" if self._live else "") + line + ("\n" if final else ""))
        self._stream.flush()
