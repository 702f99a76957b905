"""The ``load_data()`` shared by the IDX data sets: locate the files, then read and check them.

Example:
    >>> from unison.keras.datasets import mnist
    >>> (x_train, y_train), (x_test, y_test) = load(mnist._SPEC)  # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np

from unison.errors import DatasetError
from unison.keras.datasets import _fetch, _idx

Split = tuple[np.ndarray, np.ndarray]

# Every data set of the MNIST family has 28x28 images; Keras returns them as (N, 28, 28).
IMAGE_SHAPE = (28, 28)


def load(spec: _fetch.DatasetSpec) -> tuple[Split, Split]:
    """Return ``((x_train, y_train), (x_test, y_test))`` of ``spec``, like Keras's ``load_data``.

    Args:
        spec: the data set (name, mirror, sha256 of each file).

    Returns:
        uint8 arrays: images ``(N, 28, 28)`` and labels ``(N,)`` for each split.

    Raises:
        DatasetError: a file is missing and cannot be downloaded, a download does not match
            its sha256, or a file is corrupt; the message names the file, what is wrong,
            every place unison looked and how to fix it.

    Example:
        >>> (x_train, y_train), _ = load(mnist._SPEC)  # doctest: +SKIP
        >>> x_train.shape, y_train.dtype  # doctest: +SKIP
        ((60000, 28, 28), dtype('uint8'))
    """
    folder = _fetch.locate(spec)
    try:
        train = _idx.read_split(
            folder / _fetch.TRAIN_IMAGES, folder / _fetch.TRAIN_LABELS, IMAGE_SHAPE
        )
        test = _idx.read_split(
            folder / _fetch.TEST_IMAGES, folder / _fetch.TEST_LABELS, IMAGE_SHAPE
        )
    except _idx.IdxFormatError as exc:
        raise DatasetError(
            f"Could not load the '{spec.name}' data set: the file {exc.path} is corrupt: "
            f"{exc.problem}.\n{_fetch.describe_places(spec)}\n"
            f"To fix: replace {exc.path} with an intact copy, or delete it (unison then falls "
            f"back to the cache and a verified download); or {_fetch.fix_hint(spec)}"
        ) from None
    return train, test
