"""CIFAR-10, loaded like ``keras.datasets.cifar10``.

50,000 training and 10,000 test colour images, 32x32, in 10 classes: 0 airplane, 1 automobile,
2 bird, 3 cat, 4 deer, 5 dog, 6 frog, 7 horse, 8 ship, 9 truck (Krizhevsky 2009). The folder
``cifar-10-batches-py/`` (``data_batch_1`` ... ``data_batch_5``, ``test_batch``) or the tarball
``cifar-10-python.tar.gz`` (or the binary version, ``cifar-10-batches-bin/`` or
``cifar-10-binary.tar.gz``) is looked up in ``$UNISON_DATA_DIR/cifar10/``, Keras's cache
``~/.keras/datasets/`` (Keras 2's and Keras 3's layouts), Debian's ``/usr/share/datasets/cifar10/``
and unison's cache, else downloaded from Keras's URL and checked against Keras's sha256.

Example:
    >>> from unison.keras.datasets import cifar10
    >>> (x_train, y_train), (x_test, y_test) = cifar10.load_data()  # doctest: +SKIP
    >>> x_train.shape, y_train.shape  # doctest: +SKIP
    ((50000, 32, 32, 3), (50000, 1))
"""

from __future__ import annotations

import numpy as np

from unison.keras.datasets import _cifar, _keras_files

_TRAIN = tuple(f"data_batch_{i}" for i in range(1, 6))
_SPEC = _keras_files.KerasArchive(
    name="cifar10",
    inner="cifar-10-batches-py",
    files=(*_TRAIN, "test_batch"),
    origin="https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
    archive="cifar-10-python.tar.gz",
    file_hash="6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce",
    aliases=("cifar-10",),
    # Keras 3.15: get_file("cifar-10-batches-py-target", extract=True) (earlier Keras 3: without "-target")
    keras_dirs=("cifar-10-batches-py-target", "cifar-10-batches-py"),
    keras_archives=(  # Keras 2, Keras 3.15, earlier Keras 3
        "cifar-10-batches-py.tar.gz",
        "cifar-10-batches-py-target_archive",
        "cifar-10-batches-py_archive",
    ),
)
# The "binary version" from the same page: records of 1 label byte + 3072 pixels; read, never downloaded.
_BINARY = _keras_files.KerasArchive(
    name="cifar10",
    inner="cifar-10-batches-bin",
    files=(*(f"{n}.bin" for n in _TRAIN), "test_batch.bin"),
    origin="https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
    archive="cifar-10-binary.tar.gz",
    file_hash=None,
    aliases=("cifar-10",),
)


def load_data() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load CIFAR-10 as Keras does.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images ``(50000, 32, 32, 3)`` and
        ``(10000, 32, 32, 3)`` (channels last, values 0-255) and uint8 labels ``(50000, 1)`` and
        ``(10000, 1)`` (0-9). The training batches are concatenated in order, unshuffled.

    Raises:
        DatasetError: the files are nowhere on this machine and cannot be downloaded, a download does
            not match Keras's sha256, or a batch is corrupt or holds anything but arrays and numbers
            (it is never unpickled freely). The message names every place looked and how to fix it.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data()  # doctest: +SKIP
        >>> x_test.dtype, int(y_test.max())  # doctest: +SKIP
        (dtype('uint8'), 9)
    """
    form, folder = _cifar.find(_SPEC, _BINARY)
    if form is _BINARY:
        parts = [_cifar.read_binary(folder / f"{name}.bin", 1, 0) for name in _TRAIN]
        x_test, y_test = _cifar.read_binary(folder / "test_batch.bin", 1, 0)
    else:
        parts = [_cifar.load_batch(folder / name) for name in _TRAIN]
        x_test, y_test = _cifar.load_batch(folder / "test_batch")
    x_train = np.concatenate([x for x, _ in parts])
    y_train = np.concatenate([y for _, y in parts])
    return (
        (_cifar.channels_last(x_train), y_train.reshape(-1, 1)),
        (_cifar.channels_last(x_test), y_test.reshape(-1, 1)),
    )
