"""Where the data sets Keras ships as single files or archives are found on this machine.

CIFAR, IMDB, Reuters and the housing sets come in Keras's own formats (pickled batches in a
tarball, ``.npz`` files, JSON word indexes). For data set ``<name>`` and Keras file ``<fname>``,
unison looks, in order, in:

1. ``$UNISON_DATA_DIR/<name>/`` (the user's folder);
2. Keras's cache, ``$KERAS_HOME/datasets/`` (default ``~/.keras/datasets/``), in the layouts Keras 2
   and Keras 3 leave there, so a machine that ran TF or Keras needs nothing new and reads what
   Keras reads;
3. ``/usr/share/datasets/<name>/`` (Debian's dataset packages, also under the aliases);
4. unison's cache, ``$UNISON_CACHE_DIR/<name>/`` (default ``~/.cache/unison/datasets/<name>/``);

and otherwise downloads the file from Keras's URL into unison's cache, verified against Keras's
hash. Local files are never checked by hash (users may hold re-encoded copies); their readers check
their structure. A file that is nowhere and cannot be downloaded raises ``DatasetError`` naming
every place looked and how to provide the file.

Example:
    >>> from unison.keras.datasets import imdb
    >>> find_file(imdb._NPZ).name  # doctest: +SKIP
    'imdb.npz'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from unison.errors import DatasetError
from unison.keras.datasets import _fetch
from unison.keras.utils import file_utils


@dataclass(frozen=True)
class KerasFile:
    """One file Keras downloads for a data set.

    Attributes:
        name: unison's folder name for the data set ("imdb").
        fname: Keras's file name ("imdb.npz"), also the name looked for in every place.
        origin: Keras's download URL.
        file_hash: Keras's sha256 (64 hex digits) or md5 of the file.
        aliases: other folder names under the data roots.
    """

    name: str
    fname: str
    origin: str
    file_hash: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class KerasArchive:
    """A data set Keras downloads as a tarball and reads from the extracted folder.

    Attributes:
        name: unison's folder name ("cifar10").
        inner: the folder the tarball holds ("cifar-10-batches-py").
        files: the files that folder must hold for the set to be complete.
        origin: the tarball's URL; ``archive`` its file name.
        file_hash: the tarball's sha256; None for a form only read locally, never downloaded.
        keras_dirs: folders Keras's ``get_file`` leaves under ``~/.keras/datasets`` (Keras 3 extracts
            into ``<fname>/``, so the set sits one level deeper); ``keras_archives``: the names Keras
            gives the downloaded tarball there.
    """

    name: str
    inner: str
    files: tuple[str, ...]
    origin: str
    archive: str
    file_hash: str | None
    aliases: tuple[str, ...] = ()
    keras_dirs: tuple[str, ...] = ()
    keras_archives: tuple[str, ...] = field(default=())


def keras_datasets_dir() -> Path:
    """Keras's cache folder of data sets: ``$KERAS_HOME/datasets`` or ``~/.keras/datasets``."""
    return file_utils.keras_home() / "datasets"


def _roots(name: str, aliases: Sequence[str]) -> list[tuple[str, Path]]:
    """(label, folder) of every place a data set's files may be, in lookup order."""
    places: list[tuple[str, Path]] = []
    for n in (name, *aliases):
        user = _fetch.data_dir(n)
        if user is not None:
            places.append((f"${_fetch.ENV_DATA_DIR}/{n}", user))
    # Keras's cache before Debian's: unison reads the file Keras itself would read
    places.append(("Keras's cache", keras_datasets_dir()))
    for n in (name, *aliases):
        places.append(("Debian's dataset packages", _fetch.SYSTEM_DATA_DIR / n))
    places.append(("unison's cache", _fetch.cache_dir(name)))
    return places


def _user_hint() -> str:
    if _fetch.data_dir("x") is None:
        return f"  ${_fetch.ENV_DATA_DIR}: not set\n"
    return ""


def find_file(spec: KerasFile, path: str | None = None) -> Path:
    """Return a local copy of ``spec``'s file, downloading it into unison's cache if none exists.

    Args:
        spec: the file.
        path: the ``path=`` a Keras ``load_data`` received: an absolute path (or one starting with
            ``~``) is the only place looked at and must exist; a bare name replaces ``spec.fname``
            in every place.

    Raises:
        DatasetError: the file is nowhere and the download failed or did not match Keras's hash.
    """
    fname = spec.fname
    if path is not None:
        given = Path(path).expanduser()
        if given.is_absolute() or len(given.parts) > 1:
            if given.is_file():
                return given
            relative = keras_datasets_dir() / given
            if not given.is_absolute() and relative.is_file():
                return relative
            raise DatasetError(
                f"load_data(path={path!r}): the file {given} does not exist. Pass the path of Keras's "
                f"{spec.fname} (absolute, or a file name looked up in the data folders), or leave path= "
                "at its default."
            )
        fname = path
    looked: list[str] = []
    for label, folder in _roots(spec.name, spec.aliases):
        candidate = folder / fname
        if candidate.is_file():
            return candidate
        looked.append(f"  {label}: {candidate} (absent)")
    target = _fetch.cache_dir(spec.name) / fname
    try:
        file_utils.download_url(spec.origin, target, spec.file_hash)
    except file_utils.DownloadError as exc:
        raise DatasetError(
            f"Could not load the '{spec.name}' data set: {fname} is not on this machine and downloading "
            f"it failed.\nLooked in:\n{_user_hint()}" + "\n".join(looked) + f"\n"
            f"Download of {spec.origin} into {target} failed: {exc.reason}.\n"
            f"To fix: put Keras's {fname} into ${_fetch.ENV_DATA_DIR}/{spec.name}/ (or "
            f"~/.keras/datasets/), or allow the download from {spec.origin}."
        ) from None
    return target


def find_folder(*forms: KerasArchive) -> tuple[KerasArchive, Path]:
    """Return the form found and a folder holding all of its files, extracting or downloading if needed.

    ``forms`` are the layouts the set is published in (CIFAR's python pickles, then its binary
    records); the first is the one Keras downloads. A complete extracted folder of any form, in any
    place, wins; then a tarball found locally (Keras's name or the original one) is extracted into
    unison's cache; then the first form's tarball is downloaded there, verified against Keras's
    hash, and extracted (path-traversal safe).

    Raises:
        DatasetError: nothing local and the download failed or did not match; or an archive
            does not contain the expected folder.
    """
    looked: list[str] = []
    archives: list[tuple[KerasArchive, Path]] = []
    for spec in forms:
        for label, root in _roots(spec.name, spec.aliases):
            keras_cache = root == keras_datasets_dir()
            folders = [root, root / spec.inner]
            if keras_cache:  # only the set's own folder there: ~/.keras/datasets holds every set
                folders = [root / spec.inner] + [root / d / spec.inner for d in spec.keras_dirs]
            for folder in folders:
                if all((folder / f).is_file() for f in spec.files):
                    return spec, folder
            names = (spec.archive, *spec.keras_archives) if keras_cache else (spec.archive,)
            archives.extend((spec, root / n) for n in names if (root / n).is_file())
            looked.append(
                f"  {label}: {' or '.join(str(f) for f in folders)} (no complete {spec.inner}/), "
                f"{' or '.join(str(root / n) for n in names)} (absent)"
            )
    for spec, archive in archives:
        return spec, _extract(archive, spec)
    spec = forms[0]
    target = _fetch.cache_dir(spec.name) / spec.archive
    try:
        file_utils.download_url(spec.origin, target, spec.file_hash)
    except file_utils.DownloadError as exc:
        raise DatasetError(
            f"Could not load the '{spec.name}' data set: it is not on this machine and downloading it "
            f"failed.\nLooked in:\n{_user_hint()}" + "\n".join(looked) + f"\n"
            f"Download of {spec.origin} into {target} failed: {exc.reason}.\n"
            f"To fix: put the folder {spec.inner}/ (with {', '.join(spec.files)}) or the tarball "
            f"{spec.archive} into ${_fetch.ENV_DATA_DIR}/{spec.name}/ (or ~/.keras/datasets/), or allow "
            f"the download from {spec.origin}."
        ) from None
    return spec, _extract(target, spec)


def _extract(archive: Path, spec: KerasArchive) -> Path:
    cache = _fetch.cache_dir(spec.name)
    extracted = cache / spec.inner
    try:
        ok = file_utils.extract_archive(archive, cache, "tar")
    except (OSError, EOFError, ValueError) as exc:
        ok, why = False, f"{type(exc).__name__}: {exc}"
    else:
        why = "it is not a tar archive"
    if ok and all((extracted / f).is_file() for f in spec.files):
        return extracted
    if ok:
        why = f"it has no complete {spec.inner}/ folder ({', '.join(spec.files)})"
    raise DatasetError(
        f"Could not load the '{spec.name}' data set from {archive}: {why}.\nTo fix: replace it with "
        f"the original {spec.archive} (from {spec.origin}), or delete it."
    )
