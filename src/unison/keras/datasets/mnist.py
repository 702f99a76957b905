"""The MNIST handwritten digits, loaded like ``tf.keras.datasets.mnist``.

60,000 training and 10,000 test images of the digits 0-9, 28x28 grayscale (LeCun, Cortes,
Burges; CC BY-SA 3.0). Files are looked up in ``$UNISON_DATA_DIR/mnist/``, then in the cache
(``$UNISON_CACHE_DIR/mnist/``, default ``~/.cache/unison/datasets/mnist/``), then downloaded
Keras's own cache ``~/.keras/datasets/mnist.npz`` (or ``path=``) is read before a download,
which comes from the CVDF mirror (or ``$UNISON_DATASETS_MIRROR``) with sha256 verification.

Example:
    >>> from unison.keras.datasets import mnist
    >>> (x_train, y_train), (x_test, y_test) = mnist.load_data()
    >>> x_train.shape, y_test.shape
    ((60000, 28, 28), (10000,))
"""

from __future__ import annotations

from unison.keras.datasets import _fetch, _loader

# sha256 of the canonical files as the CVDF mirror serves them (same bytes as
# yann.lecun.com/exdb/mnist: 9912422, 28881, 1648877 and 4542 bytes). These are the values
# pinned by tensorflow_datasets' and torchvision's users alike; they were cross-checked in
# several independent public checksum lists. A copy re-encoded by someone else (for example
# the project's shared/data/mnist) has other hashes, which is fine for a local copy: only
# downloads are checked by hash.
_SPEC = _fetch.DatasetSpec(
    name="mnist",
    mirror="https://storage.googleapis.com/cvdf-datasets/mnist/",
    sha256={
        _fetch.TRAIN_IMAGES: "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
        _fetch.TRAIN_LABELS: "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
        _fetch.TEST_IMAGES: "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
        _fetch.TEST_LABELS: "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    },
)


def load_data(path: str = "mnist.npz") -> tuple[_loader.Split, _loader.Split]:
    """Load MNIST as Keras does.

    Args:
        path: Keras's cache file, relative to ``~/.keras/datasets/`` (``$KERAS_HOME/datasets``)
            unless absolute. The default ``mnist.npz`` is read when neither ``$UNISON_DATA_DIR``
            nor unison's cache holds the IDX files (a machine that ran TF needs nothing new);
            any other ``path`` (Horovod's ``mnist-%d.npz``) is read first when present; when it
            is missing, the usual lookup runs.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 numpy arrays, images shaped
        ``(60000, 28, 28)`` and ``(10000, 28, 28)`` with values 0-255, labels shaped
        ``(60000,)`` and ``(10000,)`` with values 0-9.

    Raises:
        DatasetError: the files are missing and cannot be downloaded, a download does not
            match its sha256, or a local file is corrupt. The message names the file, every
            place unison looked and how to fix it.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data()
        >>> x_train.dtype, int(y_train.max())
        (dtype('uint8'), 9)
    """
    return _loader.load(_SPEC, npz=path, npz_required=path != "mnist.npz")
