"""Where a data set's files come from: the user's data folder, the cache, or a download.

Lookup order (docs/semantics.md#data), per data set ``<name>``:

1. ``$UNISON_DATA_DIR/<name>/``, used when it holds all four IDX files;
2. the cache, ``$UNISON_CACHE_DIR/<name>/`` (default ``~/.cache/unison/datasets/<name>/``);
3. a download of the files the cache lacks from the data set's mirror (or
   ``$UNISON_DATASETS_MIRROR``), each verified against its sha256 before it enters the cache.

Only downloads are checked by hash; files found locally are checked by structure by the
loader, since users may hold their own, re-encoded copies.

Example:
    >>> from unison.keras.datasets import mnist
    >>> folder = locate(mnist._SPEC)  # a local folder here; a download only when none is complete
    >>> missing_files(folder)
    []
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from unison.core.atomic_io import atomic_write
from unison.errors import DatasetError
from unison.keras.utils.file_utils import _ProgressBar

ENV_DATA_DIR = "UNISON_DATA_DIR"
ENV_CACHE_DIR = "UNISON_CACHE_DIR"
ENV_MIRROR = "UNISON_DATASETS_MIRROR"

TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
FILE_NAMES = (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)

# A stalled mirror must end in an error, never a hang; 60 s per socket operation is generous.
_TIMEOUT_S = 60.0
_CHUNK = 1 << 16


@dataclass(frozen=True)
class DatasetSpec:
    """One IDX data set: its folder name, its canonical mirror, the sha256 of each file.

    Attributes:
        name: the folder name under the data and cache roots ("mnist", "fashion_mnist").
        mirror: base URL of the canonical mirror, ending with "/".
        sha256: expected sha256 (hex) of each ``.gz`` file as the mirror serves it.
    """

    name: str
    mirror: str
    sha256: Mapping[str, str]
    aliases: tuple[str, ...] = ()  # other folder names users already have (Debian's "fashion-mnist")


class _DownloadError(Exception):
    """The transfer itself failed (network, HTTP status, disk); ``reason`` says how."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _ChecksumMismatchError(Exception):
    """The transfer completed but the bytes are not the expected file."""

    def __init__(self, received: str, size: int) -> None:
        super().__init__(received)
        self.received = received
        self.size = size


def data_dir(name: str) -> Path | None:
    """Return ``$UNISON_DATA_DIR/<name>``, or None when the variable is unset or empty.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"UNISON_DATA_DIR": "/data"}):
        ...     data_dir("mnist")
        PosixPath('/data/mnist')
    """
    root = os.environ.get(ENV_DATA_DIR)
    return Path(root).expanduser() / name if root else None


def cache_dir(name: str) -> Path:
    """Return the cache folder of data set ``name``.

    ``$UNISON_CACHE_DIR`` replaces the default root ``~/.cache/unison/datasets``.

    Example:
        >>> cache_dir("mnist").name
        'mnist'
    """
    root = os.environ.get(ENV_CACHE_DIR)
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "unison" / "datasets"
    return base / name


def mirror_base(spec: DatasetSpec) -> str:
    """Return the base URL downloads come from: ``$UNISON_DATASETS_MIRROR`` or the spec's.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"UNISON_DATASETS_MIRROR": ""}):  # unset: the spec's
        ...     mirror_base(DatasetSpec("mnist", "https://example.org/mnist", {}))
        'https://example.org/mnist/'
    """
    base = os.environ.get(ENV_MIRROR) or spec.mirror
    return base if base.endswith("/") else base + "/"


def missing_files(folder: Path) -> list[str]:
    """Return the canonical file names that ``folder`` lacks, in canonical order.

    Example:
        >>> missing_files(Path("/nonexistent")) == list(FILE_NAMES)
        True
    """
    return [f for f in FILE_NAMES if not (folder / f).is_file()]


def describe_places(spec: DatasetSpec) -> str:
    """Return the "Looked in" lines of an error message: each place and what it holds now."""
    user = data_dir(spec.name)
    user_line = (
        f"${ENV_DATA_DIR}/{spec.name}: {ENV_DATA_DIR} is not set"
        if user is None
        else f"${ENV_DATA_DIR}/{spec.name} = {user}: {_folder_state(user)}"
    )
    system = SYSTEM_DATA_DIR / spec.name
    cache = cache_dir(spec.name)
    return (
        f"Looked in:\n  1. {user_line}\n  2. {system} (Debian's dataset packages): {_folder_state(system)}\n"
        f"  3. the cache {cache}: {_folder_state(cache)}"
    )


def fix_hint(spec: DatasetSpec) -> str:
    """Return the remedy shared by every data set error, to follow "To fix: "."""
    return (
        f"set {ENV_DATA_DIR} to a folder that contains '{spec.name}/' with the four "
        f"files {', '.join(FILE_NAMES)}; or allow the download from {mirror_base(spec)} "
        f"(network access, or {ENV_MIRROR} set to a reachable mirror)."
    )


def locate(spec: DatasetSpec) -> Path:
    """Return a folder holding all four files of ``spec``, downloading into the cache if needed.

    Args:
        spec: the data set.

    Returns:
        ``$UNISON_DATA_DIR/<name>`` when it holds all four files, else the cache folder after
        downloading whatever it lacks.

    Raises:
        DatasetError: a download failed (no network, HTTP error, unwritable cache) or did not
            match its sha256; the message lists the places looked, the URL and the reason.

    Example:
        >>> from unison.keras.datasets import mnist
        >>> locate(mnist._SPEC).name
        'mnist'
    """
    found = local_folder(spec)
    if found is not None:
        return found
    cache = cache_dir(spec.name)
    # Describe the places as found, before a download attempt creates the cache folder.
    places = describe_places(spec)
    # Every file in the cache got there whole (atomic rename), so only absent ones are fetched.
    for name in missing_files(cache):
        url = mirror_base(spec) + name
        try:
            _download(url, cache / name, spec.sha256[name])
        except _DownloadError as exc:
            raise DatasetError(
                f"Could not load the '{spec.name}' data set: it is not on this machine and "
                f"downloading it failed.\n{places}\n"
                f"Download of {url} into the cache failed: {exc.reason}\nTo fix: {fix_hint(spec)}"
            ) from exc
        except _ChecksumMismatchError as exc:
            raise DatasetError(
                f"Could not load the '{spec.name}' data set: the download of {url} does not "
                f"match its expected sha256, so unison did not keep it.\n"
                f"  expected sha256: {spec.sha256[name]}\n"
                f"  received sha256: {exc.received} ({exc.size} bytes)\n"
                f"The mirror served a different or damaged file.\nTo fix: retry; if it "
                f"persists, check the mirror ({ENV_MIRROR}="
                f"{os.environ.get(ENV_MIRROR) or '<not set>'}), or {fix_hint(spec)}"
            ) from None
    return cache


# Where Debian's dataset packages put their files (e.g. `apt install dataset-fashion-mnist`).
SYSTEM_DATA_DIR = Path("/usr/share/datasets")


def user_folder(spec: DatasetSpec) -> Path | None:
    """``$UNISON_DATA_DIR/<name>`` (or an alias) when it holds all four files, else ``None``."""
    for name in (spec.name, *spec.aliases):
        user = data_dir(name)
        # A partial user folder is not an error: the cache or a download can still supply the set.
        if user is not None and not missing_files(user):
            return user
    return None


def keras_folder(spec: DatasetSpec) -> Path:
    """Keras's own cache folder of an IDX set: ``$KERAS_HOME/datasets/<alias>`` (``~/.keras``).

    Keras's ``fashion_mnist.load_data`` keeps its four ``.gz`` files in ``datasets/fashion-mnist``.
    """
    home = os.environ.get("KERAS_HOME")
    root = Path(home).expanduser() if home else Path.home() / ".keras"
    return root / "datasets" / (spec.aliases[0] if spec.aliases else spec.name)


def local_folder(spec: DatasetSpec) -> Path | None:
    """A folder on this machine that holds all four files: under ``$UNISON_DATA_DIR``, then
    Keras's cache (what Keras itself would read), then Debian's ``/usr/share/datasets`` (the data
    set's name or one of its aliases), else unison's cache; ``None`` when none is complete."""
    user = user_folder(spec)
    if user is not None:
        return user
    if spec.aliases and not missing_files(keras_folder(spec)):
        return keras_folder(spec)
    for name in (spec.name, *spec.aliases):
        if not missing_files(SYSTEM_DATA_DIR / name):
            return SYSTEM_DATA_DIR / name
    cache = cache_dir(spec.name)
    return cache if not missing_files(cache) else None


def _folder_state(folder: Path) -> str:
    if not folder.is_dir():
        return "folder does not exist"
    missing = missing_files(folder)
    if not missing:
        return "all four files present"
    if len(missing) == len(FILE_NAMES):
        return "folder holds none of the four files"
    return "missing " + ", ".join(missing)


def _download(url: str, dest: Path, expected_sha256: str) -> None:
    """Fetch ``url`` into ``dest`` through a temporary file, keeping it only if the hash matches.

    :func:`unison.core.atomic_io.atomic_write` gives each caller its own temporary file and renames it
    atomically (directory fsynced), so replicas that download the same set at once never see
    or leave a partial file; an error raised while writing drops the temporary file.
    """

    def fetch_into(out: IO[bytes]) -> None:
        digest = hashlib.sha256()
        size = 0
        try:
            with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
                length = response.headers.get("Content-Length")
                bar = _ProgressBar(url, int(length) if length and length.isdigit() else None)
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
                    bar.update(len(chunk))
                bar.close()
        # URLError/HTTPError/timeouts are OSErrors; IncompleteRead is an HTTPException;
        # a malformed mirror URL ("unknown url type") is a ValueError.
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise _DownloadError(_reason(exc)) from exc
        if digest.hexdigest() != expected_sha256:
            raise _ChecksumMismatchError(digest.hexdigest(), size)

    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _DownloadError(f"cannot write to the cache folder {dest.parent} ({exc})") from exc
    try:
        atomic_write(dest, fetch_into)
    except OSError as exc:  # the cache folder refused the temporary file or the rename
        raise _DownloadError(f"cannot write to the cache folder {dest.parent} ({exc})") from exc


def _reason(exc: BaseException) -> str:
    """Describe a transfer failure by its root cause, not urllib's wrapper."""
    code = getattr(exc, "code", None)
    if code is not None:
        return f"HTTP {code} {getattr(exc, 'reason', '')}".rstrip()
    cause = getattr(exc, "reason", None)
    if isinstance(cause, BaseException):
        exc = cause
    return f"{type(exc).__name__}: {exc}"
