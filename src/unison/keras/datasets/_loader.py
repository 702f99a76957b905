"""The ``load_data()`` shared by the IDX data sets: locate the files, then read and check them.

Example:
    >>> from unison.keras.datasets import mnist
    >>> (x_train, y_train), (x_test, y_test) = load(mnist._SPEC)
    >>> len(x_train), len(x_test)
    (60000, 10000)
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from unison.errors import DatasetError
from unison.keras.datasets import _fetch, _idx

Split = tuple[np.ndarray, np.ndarray]

# Every data set of the MNIST family has 28x28 images; Keras returns them as (N, 28, 28).
IMAGE_SHAPE = (28, 28)


def keras_file(path: str) -> Path:
    """Keras's cache path: absolute as given, else under ``$KERAS_HOME/datasets`` (``~/.keras``)."""
    p = Path(path).expanduser()
    if p.is_absolute():
        return p
    home = os.environ.get("KERAS_HOME")
    root = Path(home).expanduser() if home else Path.home() / ".keras"
    return root / "datasets" / p


def read_npz(file: Path) -> tuple[Split, Split]:
    """Keras's ``mnist.npz`` (x_train, y_train, x_test, y_test), checked like the IDX files."""
    try:
        with np.load(file, allow_pickle=False) as data:
            arrays = [np.asarray(data[k]) for k in ("x_train", "y_train", "x_test", "y_test")]
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise DatasetError(
            f"Could not read the Keras data file {file}: {type(exc).__name__}: {exc}. Expected an .npz "
            "with the arrays x_train, y_train, x_test, y_test (as Keras writes it). To fix: delete it, or "
            "pass the right path= ."
        ) from None
    x_train, y_train, x_test, y_test = arrays
    for x, y, split in ((x_train, y_train, "train"), (x_test, y_test, "test")):
        if x.ndim != 3 or tuple(x.shape[1:]) != IMAGE_SHAPE or x.dtype != np.uint8 or y.shape != (len(x),):
            raise DatasetError(
                f"The Keras data file {file} is not MNIST-shaped: {split} images {x.shape} {x.dtype}, labels "
                f"{y.shape}. Expected uint8 images (N, 28, 28) and N labels. To fix: delete it or pass the "
                "right path= ."
            )
    return (x_train, y_train.astype(np.uint8)), (x_test, y_test.astype(np.uint8))


def load(spec: _fetch.DatasetSpec, npz: str | None = None, npz_required: bool = False) -> tuple[Split, Split]:
    """Return ``((x_train, y_train), (x_test, y_test))`` of ``spec``, like Keras's ``load_data``.

    Args:
        spec: the data set (name, mirror, sha256 of each file).
        npz: Keras's cache file name (``load_data(path=...)``), read when it exists.
        npz_required: ``npz`` was named by the user: read it first when present; when it is
            missing, the usual lookup still runs (Keras would download into that name).

    Returns:
        uint8 arrays: images ``(N, 28, 28)`` and labels ``(N,)`` for each split.

    Raises:
        DatasetError: a file is missing and cannot be downloaded, a download does not match
            its sha256, or a file is corrupt; the message names the file, what is wrong,
            every place unison looked and how to fix it.

    Example:
        >>> from unison.keras.datasets import mnist
        >>> (x_train, y_train), _ = load(mnist._SPEC)
        >>> x_train.shape, y_train.dtype
        ((60000, 28, 28), dtype('uint8'))
    """
    missing: Path | None = None
    if npz is not None:
        file = keras_file(npz)
        # Keras's own cache file comes right after the user's folder: it is what Keras reads
        if file.is_file() and (npz_required or _fetch.user_folder(spec) is None):
            return read_npz(file)
        # In Keras ``path`` only names the cache file: a missing one is downloaded, so programs pass
        # per-process names (Horovod's ``path="mnist-%d.npz" % hvd.rank()``). Fall back to the usual lookup.
        missing = file if npz_required else None
    try:
        folder = _fetch.locate(spec)
    except DatasetError as exc:
        if missing is None:
            raise
        raise DatasetError(
            f"load_data(path={npz!r}): the file {missing} does not exist, and the usual lookup found no copy "
            f"either.\n{exc}\nTo fix: pass the path of Keras's .npz file (absolute, or relative to "
            "~/.keras/datasets/), or make one of the places above hold the data."
        ) from None
    try:
        train = _idx.read_split(folder / _fetch.TRAIN_IMAGES, folder / _fetch.TRAIN_LABELS, IMAGE_SHAPE)
        test = _idx.read_split(folder / _fetch.TEST_IMAGES, folder / _fetch.TEST_LABELS, IMAGE_SHAPE)
    except _idx.IdxFormatError as exc:
        raise DatasetError(
            f"Could not load the '{spec.name}' data set: the file {exc.path} is corrupt: "
            f"{exc.problem}.\n{_fetch.describe_places(spec)}\n"
            f"To fix: replace {exc.path} with an intact copy, or delete it (unison then falls "
            f"back to the cache and a verified download); or {_fetch.fix_hint(spec)}"
        ) from None
    return train, test
